/* The inference worker thread.
 *
 * Ordering rules (the whole protocol; keep them true when changing anything):
 *  1. Everything in the "shared" part of struct worker is read and written
 *     only with `mu` held. The "thread" part belongs to the worker thread, the
 *     "fixed" part is written before the thread starts and only read after.
 *  2. The model runs with `mu` released, on the thread's private copy of the
 *     tokens (`cur`), so a post never waits for a computation: it copies at
 *     most AV_MAX_CONTEXT tokens under the lock and signals `cv`.
 *  3. A result is stored under `mu` before the wake byte is written, so when
 *     the interface sees the pipe readable the result is already there. A
 *     wake byte without a result (taken already, or dropped) is harmless.
 *  4. A result is published only if its sequence number is still the latest
 *     posted one (text_seq), checked under `mu` after the computation, and
 *     checked again when taken: the interface never sees a stale result.
 *  5. Text requests go before prediction requests, predictions before jobs;
 *     a prediction or a job is for the text the thread computed last
 *     (cur_seq) or it is dropped. A text's computation, a prediction and a
 *     long job ask stale() between their steps (the model's layers) and give
 *     up when a newer text is waiting: the newest text wins, and a burst of
 *     keystrokes does not queue one computation each.
 *  6. Shutdown: `stop` is set under `mu` and `cv` broadcast; the thread
 *     finishes the computation under way, sees `stop` and returns; then the
 *     owner joins and frees. The worker never calls curses.
 *  7. A reload goes before everything else. A successful one drops the
 *     texts, predictions and jobs waiting (posted with the old model's
 *     vocabulary), and posts are dropped until the interface has taken the
 *     new model: every text the new model runs was tokenized with its
 *     vocabulary. The interface posts its text again after taking it.
 *  8. A partial result (attn_result.partial) is a copy of the layers a
 *     pass has finished (a causal model's: a reference to the store the
 *     pass fills, whose finished layers it no longer writes), made on the
 *     worker thread between
 *     two layers and published under `mu` by rules 3 and 4 when the layer
 *     on screen is among them (worker_text_opts.partial_layer) and the
 *     layers still to come would take more than PARTIAL_MS: the interface
 *     draws that layer while the others are computed. The complete result
 *     of the same text replaces it; the pass never writes what a published
 *     result holds.
 *  9. Every head's roles (worker_text_opts.roles) are computed on the worker
 *     thread after a complete pass, with `mu` released, asking stale()
 *     between heads, and published with the result they describe (rules 3
 *     and 4): whoever drops a result frees its roles. A result published
 *     without them gets them as a job (JOB_ROLES, worker_model.c): the
 *     text's pass again, then the roles, after texts and predictions
 *     (rule 5).
 * A pthread_mutex/cond call failing on an initialised object means memory is
 * corrupt; that aborts (the view's SIGABRT handler restores the terminal). */
#include "worker_internal.h"

#include "attnview/i18n.h"
#include "attnview/infer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void keep_spare(worker *w, attn_result *r, attn_result *trash);
static void drop_published(worker *w, attn_result *trash);

/* Rule 8: the layers of w->live done so far, published if the layer on
 * screen is among them and the rest of the pass is long enough to see. */
static void publish_partial(worker *w)
{
	const attn_result *r = w->live;
	int done = r ? r->partial : 0, want = w->cur_opts.partial_layer;
	if (!r || w->live_sent || want < 1 || done < want || done >= r->layers)
		return;
	lock(w);
	double least = w->partial_ms;
	unlock(w);
	double spent = av_now_ms() - w->live_t0;
	if (spent * (r->layers - done) / done < least)
		return;
	w->live_sent = true;
	attn_result part, trash;
	memset(&trash, 0, sizeof trash);
	if (!attn_result_partial_copy(r, done, &part))
		return; /* out of memory: the complete result comes as before */
	lock(w);
	bool publish = w->cur_seq == w->text_seq;
	if (publish) {
		if (w->attn_ready)
			drop_published(w, &trash);
		w->attn.seq = w->cur_seq;
		w->attn.ok = true;
		w->attn.ms = spent;
		w->attn.r = part;
		w->attn_ready = true;
		w->stats.partials++;
	}
	unlock(w);
	attn_result_finish(&trash);
	if (publish)
		wake(w);
	else
		attn_result_finish(&part);
}

/* The text's pass between two layers: give up if a newer text is waiting,
 * else perhaps publish what is done (rule 8). */
static bool between_layers(void *p)
{
	worker *w = p;
	if (text_waiting(w))
		return true;
	publish_partial(w);
	return false;
}

/* Keep r's arrays as the spare if there is none, else move them to *trash
 * for the caller to free once it has let go of w->mu: freeing 100 MB takes
 * milliseconds, which a post must not wait for (rule 2). (w->mu held) */
static void keep_spare(worker *w, attn_result *r, attn_result *trash)
{
	if (w->have_spare) {
		*trash = *r;
	} else {
		attn_result_recycle(r);
		w->spare = *r;
		w->have_spare = true;
	}
	memset(r, 0, sizeof *r);
}

/* Rule 9: every head's roles of r, [layer * heads + head]; NULL when a newer
 * text is waiting (this result will not be published) or memory ran out
 * (the interface then labels the heads itself). */
static role_scores *every_roles(worker *w, const attn_result *r)
{
	role_scores *out = malloc((size_t)r->layers * (size_t)r->heads * sizeof *out);
	for (int l = 0; out && l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			if (text_waiting(w)) {
				free(out);
				return NULL;
			}
			attn_matrix a = attn_result_head(r, l, h);
			head_roles(&out[l * r->heads + h], &a, r->tokens);
		}
	return out;
}

/* Let go of the result waiting to be taken (w->mu held): its arrays to the
 * spare or *trash, its roles freed. */
static void drop_published(worker *w, attn_result *trash)
{
	keep_spare(w, &w->attn.r, trash);
	free(w->attn.roles);
	memset(&w->attn, 0, sizeof w->attn);
}

/* The text's attention (w->mu held on entry and on return). */
static void run_text(worker *w)
{
	w->text_pending = false;
	w->stats.taken++;
	memcpy(w->cur, w->text, (size_t)w->text_n * sizeof *w->cur);
	w->cur_n = w->text_n;
	w->cur_seq = w->text_seq;
	w->cur_opts = w->text_opts;
	w->computing = true;
	attn_result r, trash[2];
	memset(&r, 0, sizeof r);
	memset(trash, 0, sizeof trash);
	if (w->have_spare) {
		r = w->spare;
		w->have_spare = false;
		memset(&w->spare, 0, sizeof w->spare);
	}
	unlock(w);

	av_error err = {{0}};
	double t0 = av_now_ms();
	w->live = &r;
	w->live_t0 = t0;
	w->live_sent = false;
	bool ok =
	    w->ops.attend(w->ops.ctx, w->cur, w->cur_n, &w->cur_opts, &r, between_layers, w, &err);
	w->live = NULL;
	role_scores *roles = ok && w->cur_opts.roles ? every_roles(w, &r) : NULL;
	double ms = av_now_ms() - t0;
	w->cur_ok = ok;

	lock(w);
	w->computing = false;
	w->stats.attends++;
	bool publish = w->cur_seq == w->text_seq;
	if (!publish) {
		w->stats.dropped++;
		w->stats.gave_up += !ok;
		keep_spare(w, &r, &trash[0]);
		free(roles);
	} else {
		if (w->attn_ready)
			drop_published(w, &trash[0]);
		w->attn.seq = w->cur_seq;
		w->attn.ok = ok;
		w->attn.ms = ms;
		if (ok) {
			w->attn.r = r;
			w->attn.roles = roles;
		} else {
			w->attn.err = err;
			keep_spare(w, &r, &trash[1]);
		}
		w->attn_ready = true;
	}
	unlock(w);
	attn_result_finish(&trash[0]);
	attn_result_finish(&trash[1]);
	if (publish)
		wake(w);
	lock(w);
}

/* The predictions at one position (w->mu held on entry and on return). */
static void run_predict(worker *w)
{
	w->pred_pending = false;
	if (w->pred_seq != w->cur_seq || !w->cur_ok || w->pred_pos < 0 || w->pred_pos >= w->cur_n)
		return;
	int pos = w->pred_pos, topk = w->pred_topk;
	w->computing = true;
	unlock(w);

	worker_pred p;
	memset(&p, 0, sizeof p);
	p.seq = w->cur_seq;
	p.pos = pos;
	p.topk = topk;
	double t0 = av_now_ms();
	bool ok = w->ops.predict(w->ops.ctx, w->cur, w->cur_n, &w->cur_opts, pos, topk, p.ids,
				 p.probs, text_waiting, w);
	p.ms = av_now_ms() - t0;

	lock(w);
	w->computing = false;
	w->stats.predicts++;
	if (!ok || p.seq != w->text_seq) {
		w->stats.dropped++;
		w->stats.gave_up += !ok;
		return;
	}
	w->pred = p;
	w->pred_ready = true;
	unlock(w);
	wake(w);
	lock(w);
}

/* A new model from a file (w->mu held on entry and on return). Nothing
 * computed from here on uses the old one. */
static void run_reload(worker *w)
{
	w->reload_pending = false;
	worker_model res;
	memset(&res, 0, sizeof res);
	memcpy(res.path, w->reload_path, sizeof res.path);
	w->computing = true;
	unlock(w);
	double t0 = av_now_ms();
	if (w->ops.reload)
		res.ok = w->ops.reload(w->ops.ctx, res.path, &res.m, &res.err);
	else
		res.ok = av_fail(&res.err, _("this worker cannot load models"));
	res.ms = av_now_ms() - t0;
	lock(w);
	w->computing = false;
	if (res.ok) {
		/* Texts posted so far were tokenized with the old model's
		 * vocabulary (its ids may be past the new one's end): none of
		 * them runs on the new model. The interface posts again. */
		w->cur_ok = false;
		w->text_pending = w->pred_pending = false;
		for (int k = 0; k < JOB_NKINDS; k++)
			w->job_pending[k] = false;
	}
	if (w->model_ready && w->model.ok)
		model_destroy(w->model.m); /* replaced before anyone took it */
	w->model = res;
	w->model_ready = true;
	unlock(w);
	wake(w);
	lock(w);
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	lock(w);
	for (;;) {
		while (!w->stop && !w->reload_pending && !w->text_pending && !w->pred_pending &&
		       worker_pending_job(w) < 0)
			must(pthread_cond_wait(&w->cv, &w->mu), "pthread_cond_wait");
		if (w->stop)
			break;
		if (w->reload_pending)
			run_reload(w);
		else if (w->text_pending)
			run_text(w);
		else if (w->pred_pending)
			run_predict(w);
		else
			worker_run_job(w, worker_pending_job(w));
	}
	unlock(w);
	return NULL;
}

worker *worker_create(const worker_ops *ops, av_error *err)
{
	worker *w = calloc(1, sizeof *w);
	if (!w) {
		av_fail(err, _("out of memory starting the inference worker"));
		return NULL;
	}
	w->ops = *ops;
	w->partial_ms = PARTIAL_MS;
	w->pipe_rd = w->pipe_wr = -1;
	w->text = calloc(AV_MAX_CONTEXT, sizeof *w->text);
	w->cur = calloc(AV_MAX_CONTEXT, sizeof *w->cur);
	if (!w->text || !w->cur) {
		av_fail(err, _("out of memory starting the inference worker"));
		goto fail_mem;
	}
	int fds[2];
	if (pipe(fds) != 0) {
		av_fail_errno(err, errno, _("cannot create the inference worker's pipe"));
		goto fail_mem;
	}
	w->pipe_rd = fds[0];
	w->pipe_wr = fds[1];
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(fds[i], F_GETFL);
		if (fl < 0 || fcntl(fds[i], F_SETFL, fl | O_NONBLOCK) < 0 ||
		    fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
			av_fail_errno(err, errno, _("cannot set up the inference worker's pipe"));
			goto fail_mem;
		}
	}
	int rc = pthread_mutex_init(&w->mu, NULL);
	if (rc != 0) {
		av_fail_errno(err, rc, _("cannot create the inference worker's mutex"));
		goto fail_mem;
	}
	rc = pthread_cond_init(&w->cv, NULL);
	if (rc != 0) {
		av_fail_errno(err, rc,
			      _("cannot create the inference worker's condition variable"));
		goto fail_mutex;
	}
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc != 0) {
		av_fail_errno(err, rc, _("cannot start the inference worker thread"));
		goto fail_cond;
	}
	return w;

fail_cond:
	must(pthread_cond_destroy(&w->cv), "pthread_cond_destroy");
fail_mutex:
	must(pthread_mutex_destroy(&w->mu), "pthread_mutex_destroy");
fail_mem:
	if (w->pipe_rd >= 0)
		close(w->pipe_rd);
	if (w->pipe_wr >= 0)
		close(w->pipe_wr);
	free(w->text);
	free(w->cur);
	free(w);
	return NULL;
}

void worker_destroy(worker *w)
{
	if (!w)
		return;
	lock(w);
	w->stop = true;
	must(pthread_cond_broadcast(&w->cv), "pthread_cond_broadcast");
	unlock(w);
	must(pthread_join(w->thread, NULL), "pthread_join");
	must(pthread_cond_destroy(&w->cv), "pthread_cond_destroy");
	must(pthread_mutex_destroy(&w->mu), "pthread_mutex_destroy");
	if (w->attn_ready) {
		attn_result_finish(&w->attn.r);
		free(w->attn.roles);
	}
	if (w->have_spare)
		attn_result_finish(&w->spare);
	for (int k = 0; k < JOB_NKINDS; k++)
		if (w->job_ready[k])
			worker_job_result_finish(&w->job_res[k]);
	if (w->model_ready && w->model.ok)
		model_destroy(w->model.m);
	close(w->pipe_rd);
	close(w->pipe_wr);
	free(w->text);
	free(w->cur);
	if (w->free_owned)
		w->free_owned(w->owned);
	free(w);
}

int worker_fd(const worker *w)
{
	return w->pipe_rd;
}

void worker_drain(worker *w)
{
	char buf[64];
	while (read(w->pipe_rd, buf, sizeof buf) > 0)
		;
}

bool worker_post_text(worker *w, const token *tokens, int n, uint64_t seq,
		      const worker_text_opts *opts, av_error *err)
{
	if (n < 0 || n > AV_MAX_CONTEXT)
		return av_fail(err, _("text of %d tokens is longer than the limit of %d"), n,
			       AV_MAX_CONTEXT);
	lock(w);
	if (worker_new_model_waiting(w)) {
		unlock(w); /* tokenized with the old vocabulary (rule 7) */
		return true;
	}
	memcpy(w->text, tokens, (size_t)n * sizeof *tokens);
	w->text_n = n;
	w->text_seq = seq;
	if (opts)
		w->text_opts = *opts;
	else
		memset(&w->text_opts, 0, sizeof w->text_opts);
	w->text_pending = true;
	w->stats.latest = seq;
	must(pthread_cond_signal(&w->cv), "pthread_cond_signal");
	unlock(w);
	return true;
}

void worker_post_predict(worker *w, uint64_t seq, int pos, int topk)
{
	if (topk > WORKER_MAX_TOPK)
		topk = WORKER_MAX_TOPK;
	lock(w);
	if (seq == w->text_seq && !worker_new_model_waiting(w)) {
		w->pred_seq = seq;
		w->pred_pos = pos;
		w->pred_topk = topk;
		w->pred_pending = true;
		must(pthread_cond_signal(&w->cv), "pthread_cond_signal");
	}
	unlock(w);
}

void worker_post_reload(worker *w, const char *path)
{
	lock(w);
	snprintf(w->reload_path, sizeof w->reload_path, "%s", path);
	w->reload_pending = true;
	must(pthread_cond_signal(&w->cv), "pthread_cond_signal");
	unlock(w);
}

bool worker_take_model(worker *w, worker_model *out)
{
	lock(w);
	bool got = w->model_ready;
	if (got) {
		*out = w->model;
		w->model_ready = false;
		memset(&w->model, 0, sizeof w->model);
	}
	unlock(w);
	return got;
}

bool worker_take_attn(worker *w, worker_attn *out)
{
	bool got = false;
	attn_result trash;
	memset(&trash, 0, sizeof trash);
	lock(w);
	if (w->attn_ready) {
		w->attn_ready = false;
		if (w->attn.seq == w->text_seq) {
			*out = w->attn;
			got = true;
		} else {
			w->stats.dropped++;
			drop_published(w, &trash);
		}
		memset(&w->attn, 0, sizeof w->attn);
	}
	unlock(w);
	attn_result_finish(&trash);
	return got;
}

void worker_recycle(worker *w, attn_result *r)
{
	if (!r || (!r->att && !r->qk && !r->tokens)) {
		attn_result_finish(r);
		return;
	}
	attn_result trash;
	memset(&trash, 0, sizeof trash);
	lock(w);
	keep_spare(w, r, &trash);
	unlock(w);
	attn_result_finish(&trash);
}

bool worker_take_pred(worker *w, worker_pred *out)
{
	bool got = false;
	lock(w);
	if (w->pred_ready) {
		w->pred_ready = false;
		if (w->pred.seq == w->text_seq) {
			*out = w->pred;
			got = true;
		}
	}
	unlock(w);
	return got;
}

void worker_set_partial_ms(worker *w, double ms)
{
	lock(w);
	w->partial_ms = ms;
	unlock(w);
}

worker_stats worker_get_stats(worker *w)
{
	lock(w);
	worker_stats s = w->stats;
	s.busy = w->computing || w->text_pending || w->pred_pending || w->reload_pending ||
		 worker_pending_job(w) >= 0;
	unlock(w);
	return s;
}

void worker_own(worker *w, void *ctx, void (*free_ctx)(void *))
{
	/* Set before anything is posted; the thread never reads these. */
	w->owned = ctx;
	w->free_owned = free_ctx;
}
