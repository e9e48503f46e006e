/* The worker's long jobs (worker_job): the lens, attribution, patching,
 * circuits and the rest that the interface asks of the text the thread
 * computed last. A job runs after texts and predictions (rule 5 of worker.c),
 * asks between its steps whether a newer text waits, and is published only
 * if its text is still the latest. */
#include "worker_internal.h"

int worker_pending_job(const worker *w)
{
	for (int k = 0; k < JOB_NKINDS; k++)
		if (w->job_pending[k])
			return k;
	return -1;
}

void worker_run_job(worker *w, int k)
{
	w->job_pending[k] = false;
	worker_job j = w->job[k];
	if (j.seq != w->cur_seq || !w->cur_ok)
		return;
	w->computing = true;
	unlock(w);

	worker_job_result res;
	memset(&res, 0, sizeof res);
	res.job = j;
	double t0 = av_now_ms();
	if (w->ops.job)
		res.ok = w->ops.job(w->ops.ctx, w->cur, w->cur_n, &w->cur_opts, &j, &res,
				    text_waiting, w);
	else
		res.ok = av_fail(&res.err, _("this worker computes no jobs"));
	res.ms = av_now_ms() - t0;

	lock(w);
	w->computing = false;
	w->stats.jobs++;
	if (j.seq != w->text_seq) {
		w->stats.dropped++;
		w->stats.gave_up += !res.ok;
		worker_job_result_finish(&res);
		return;
	}
	if (w->job_ready[k])
		worker_job_result_finish(&w->job_res[k]);
	w->job_res[k] = res;
	w->job_ready[k] = true;
	unlock(w);
	wake(w);
	lock(w);
}

void worker_post_job(worker *w, const worker_job *j)
{
	if (j->kind < 0 || j->kind >= JOB_NKINDS)
		return;
	lock(w);
	if (j->seq == w->text_seq && !worker_new_model_waiting(w)) {
		w->job[j->kind] = *j;
		w->job_pending[j->kind] = true;
		must(pthread_cond_signal(&w->cv), "pthread_cond_signal");
	}
	unlock(w);
}

bool worker_take_job(worker *w, worker_job_result *out)
{
	bool got = false;
	lock(w);
	for (int k = 0; k < JOB_NKINDS && !got; k++) {
		if (!w->job_ready[k])
			continue;
		w->job_ready[k] = false;
		if (w->job_res[k].job.seq == w->text_seq) {
			*out = w->job_res[k];
			got = true;
		} else {
			w->stats.dropped++;
			worker_job_result_finish(&w->job_res[k]);
		}
		memset(&w->job_res[k], 0, sizeof w->job_res[k]);
	}
	unlock(w);
	return got;
}
