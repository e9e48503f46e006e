/* The inference worker's insides, shared by worker.c (the thread, texts,
 * predictions, reloads) and worker_job.c (the long jobs): the struct, its
 * lock and wake-up. The ordering rules at the top of worker.c hold for both
 * files. Private to src/view: the rest of the program sees worker.h. */
#ifndef ATTNVIEW_WORKER_INTERNAL_H
#define ATTNVIEW_WORKER_INTERNAL_H

#include "worker.h"

#include "attnview/i18n.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct worker {
	/* fixed */
	worker_ops ops;
	int pipe_rd, pipe_wr;
	pthread_t thread;
	void *owned; /* the model context of worker_create_for_model */
	void (*free_owned)(void *);

	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	token *text; /* [AV_MAX_CONTEXT] latest posted text */
	int text_n;
	uint64_t text_seq;
	worker_text_opts text_opts;
	bool text_pending; /* posted and not yet picked up */
	uint64_t pred_seq;
	int pred_pos, pred_topk;
	bool pred_pending;
	bool attn_ready, pred_ready;
	worker_attn attn;
	worker_pred pred;
	worker_job job[JOB_NKINDS]; /* requests, by kind */
	bool job_pending[JOB_NKINDS];
	worker_job_result job_res[JOB_NKINDS];
	bool job_ready[JOB_NKINDS];
	char reload_path[4096];
	bool reload_pending, model_ready;
	worker_model model;
	bool computing;
	worker_stats stats;
	attn_result spare; /* arrays of a result given back (worker_recycle) */
	bool have_spare;
	double partial_ms; /* rule 8's least time for the rest of a pass */

	/* thread */
	token *cur; /* [AV_MAX_CONTEXT] text being or last computed */
	int cur_n;
	uint64_t cur_seq;
	worker_text_opts cur_opts;
	bool cur_ok;
	attn_result *live; /* the text's result being computed, or NULL */
	double live_t0;	   /* when its pass began */
	bool live_sent;	   /* a partial copy of it was published (rule 8) */
};

/* A partial result is published when the rest of the pass would take longer
 * than this: about a frame (a faster pass draws every layer at once). */
#define PARTIAL_MS 12.0

static inline void must(int rc, const char *what)
{
	if (rc != 0) {
		fprintf(stderr, _("attnview: worker: %s failed: %s\n"), what, strerror(rc));
		abort();
	}
}

static inline void lock(worker *w)
{
	must(pthread_mutex_lock(&w->mu), "pthread_mutex_lock");
}

static inline void unlock(worker *w)
{
	must(pthread_mutex_unlock(&w->mu), "pthread_mutex_unlock");
}

static inline void wake(worker *w)
{
	/* Non-blocking: a full pipe already holds a wake-up. */
	char b = 1;
	ssize_t r;
	do
		r = write(w->pipe_wr, &b, 1);
	while (r < 0 && errno == EINTR);
}

/* For long computations: a newer text is waiting (called without w->mu). */
static inline bool text_waiting(void *p)
{
	worker *w = p;
	lock(w);
	bool waiting = w->text_pending || w->stop;
	unlock(w);
	return waiting;
}

/* A model loaded and not yet taken: whatever the interface posts now was
 * made with the old one (w->mu held). */
static inline bool worker_new_model_waiting(const worker *w)
{
	return w->model_ready && w->model.ok;
}

/* The first kind of job waiting, or -1 (w->mu held). */
int worker_pending_job(const worker *w);

/* Runs the job of kind k (w->mu held on entry and on return). */
void worker_run_job(worker *w, int k);

#endif
