/* The inference worker's protocol, with a fake model behind it: latest text
 * wins, stale results are never handed out, posting never waits for a
 * computation, predictions follow the current text, errors come through, and
 * shutdown is clean; and with real models, a reload switches models without
 * ever running a text on a model whose vocabulary it was not made with.
 * Built a second time with -fsanitize=thread. */
#include "worker.h"
#include "harness.h"

#include "attnview/infer.h"
#include "attnview/modelfile.h"

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The fake: att[0] holds the sum of the token ids and the text's length, so a
 * result can be matched to the text it came from. A gate can hold a
 * computation until the test opens it. */
typedef struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool gated;  /* attend waits while this is set */
	int waiting; /* computations waiting at the gate */
	int delay_us;
	int calls;
	int steps;    /* attend and predict: in this many steps, asking stale() */
	int gave_up;  /* computations that stale() stopped */
	int reused;   /* attend calls handed a result's arrays that fit */
	int predicts; /* predict calls begun */
} fake;

static void fake_lock(fake *f)
{
	if (pthread_mutex_lock(&f->mu) != 0)
		abort();
}

static void fake_unlock(fake *f)
{
	if (pthread_mutex_unlock(&f->mu) != 0)
		abort();
}

/* A text starting with this id (a prediction at a position holding it) takes
 * the fake 5 s. */
#define FAKE_SLOW 777

/* Waits `delay` in f->steps steps, asking stale() before each; false if it
 * said to give up. */
static bool fake_steps(fake *f, int delay, worker_stale_fn stale, void *stale_ctx)
{
	fake_lock(f);
	int steps = f->steps;
	fake_unlock(f);
	for (int s = 0; s < steps; s++) {
		if (stale(stale_ctx)) {
			fake_lock(f);
			f->gave_up++;
			fake_unlock(f);
			return false;
		}
		usleep((useconds_t)delay / (useconds_t)steps);
	}
	if (!steps && delay)
		usleep((useconds_t)delay);
	return true;
}

/* Reuses r's arrays when they fit (as infer_attend does), so that a result
 * given back with worker_recycle is seen again here. */
static bool fake_attend(void *ctx, const token *t, int n, const worker_text_opts *o, attn_result *r,
			worker_stale_fn stale, void *stale_ctx, av_error *err)
{
	fake *f = ctx;
	fake_lock(f);
	f->calls++;
	f->waiting++;
	if (pthread_cond_broadcast(&f->cv) != 0)
		abort();
	while (f->gated)
		if (pthread_cond_wait(&f->cv, &f->mu) != 0)
			abort();
	f->waiting--;
	int delay = n > 0 && t[0].id == FAKE_SLOW ? 5000000 : f->delay_us;
	fake_unlock(f);
	if (!fake_steps(f, delay, stale, stale_ctx))
		return av_fail(err, "a newer text came");
	if (n > 0 && t[0].id == 999)
		return av_fail(err, "fake model: token 999 is poison");
	(void)o;
	size_t cells = (size_t)(n * n + 2);
	if (r->cap >= cells && r->cap_tokens >= n && r->att) {
		fake_lock(f);
		f->reused++;
		fake_unlock(f);
	} else {
		attn_result_finish(r);
		r->tokens = malloc(sizeof(token) * (size_t)(n ? n : 1));
		r->att = malloc(cells * sizeof(float));
		if (!r->tokens || !r->att)
			abort();
		r->cap = cells;
		r->cap_tokens = n ? n : 1;
	}
	memset(r->att, 0, cells * sizeof(float));
	r->n = n;
	r->layers = r->heads = 1;
	memcpy(r->tokens, t, sizeof(token) * (size_t)n);
	float sum = 0;
	for (int i = 0; i < n; i++)
		sum += (float)t[i].id;
	r->att[0] = sum;
	r->att[1] = (float)n;
	return true;
}

static bool fake_predict(void *ctx, const token *t, int n, const worker_text_opts *o, int pos,
			 int topk, int32_t *ids, float *probs, worker_stale_fn stale,
			 void *stale_ctx)
{
	fake *f = ctx;
	(void)o;
	fake_lock(f);
	f->predicts++;
	int delay = t[pos].id == FAKE_SLOW ? 5000000 : f->delay_us;
	fake_unlock(f);
	if (!fake_steps(f, delay, stale, stale_ctx))
		return false;
	for (int k = 0; k < topk; k++) {
		ids[k] = t[pos].id + k;
		probs[k] = 1.0f / (float)(k + 2);
	}
	(void)n;
	return true;
}

/* Jobs: a breakdown gives q = (query, layer), k = (key, head); a loss
 * gives the text's length, and with stale() true on the way, gives up. */
static bool fake_job(void *ctx, const token *t, int n, const worker_text_opts *o,
		     const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		     void *stale_ctx)
{
	fake *f = ctx;
	(void)t;
	if (j->kind == JOB_BREAKDOWN) {
		out->hs = 2;
		out->q = malloc(2 * sizeof(float));
		out->k = malloc(2 * sizeof(float));
		if (!out->q || !out->k)
			abort();
		out->q[0] = (float)j->query, out->q[1] = (float)j->layer;
		out->k[0] = (float)j->key, out->k[1] = (float)j->head;
		return true;
	}
	fake_lock(f);
	f->calls++;
	int delay = f->delay_us;
	fake_unlock(f);
	for (int step = 0; step < 20; step++) {
		if (stale(stale_ctx))
			return av_fail(&out->err, "a newer text came");
		if (delay)
			usleep((useconds_t)delay / 20);
	}
	out->loss_before = n;
	out->loss_after = o->any_ablated ? 2 * n : n;
	out->positions = n;
	return true;
}

static void fake_init(fake *f)
{
	memset(f, 0, sizeof *f);
	if (pthread_mutex_init(&f->mu, NULL) != 0 || pthread_cond_init(&f->cv, NULL) != 0)
		abort();
}

static void fake_finish(fake *f)
{
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
}

static void fake_gate(fake *f, bool closed)
{
	fake_lock(f);
	f->gated = closed;
	if (pthread_cond_broadcast(&f->cv) != 0)
		abort();
	fake_unlock(f);
}

/* Block until a computation waits at the (closed) gate. */
static void fake_wait_arrival(fake *f, int count)
{
	fake_lock(f);
	while (f->waiting < count)
		if (pthread_cond_wait(&f->cv, &f->mu) != 0)
			abort();
	fake_unlock(f);
}

static int fake_calls(fake *f)
{
	fake_lock(f);
	int c = f->calls;
	fake_unlock(f);
	return c;
}

static void make_text(token *t, int n, int base)
{
	memset(t, 0, sizeof(token) * (size_t)n);
	for (int i = 0; i < n; i++) {
		t[i].cp = 'a' + (uint32_t)i;
		t[i].id = base + i;
		t[i].width = 1;
	}
}

static float text_sum(const token *t, int n)
{
	float s = 0;
	for (int i = 0; i < n; i++)
		s += (float)t[i].id;
	return s;
}

/* Wait as the interface does (poll the pipe, drain it, try to take) until
 * take() hands something over, or timeout_ms pass. */
typedef bool (*take_fn)(worker *w, void *out);

static bool wait_take(worker *w, take_fn take, void *out, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 10) {
		struct pollfd p = {worker_fd(w), POLLIN, 0};
		poll(&p, 1, 10);
		worker_drain(w);
		if (take(w, out))
			return true;
	}
	return false;
}

static bool take_attn(worker *w, void *out)
{
	return worker_take_attn(w, out);
}

static bool take_pred(worker *w, void *out)
{
	return worker_take_pred(w, out);
}

static bool take_job(worker *w, void *out)
{
	return worker_take_job(w, out);
}

static bool take_model(worker *w, void *out)
{
	return worker_take_model(w, out);
}

static bool wait_attn(worker *w, worker_attn *out, int timeout_ms)
{
	return wait_take(w, take_attn, out, timeout_ms);
}

static bool wait_pred(worker *w, worker_pred *out, int timeout_ms)
{
	return wait_take(w, take_pred, out, timeout_ms);
}

static bool wait_job(worker *w, worker_job_result *out, int timeout_ms)
{
	return wait_take(w, take_job, out, timeout_ms);
}

static bool wait_model(worker *w, worker_model *out, int timeout_ms)
{
	return wait_take(w, take_model, out, timeout_ms);
}

/* Jobs (the q·k breakdown, the loss): answered for the latest text with its
 * options (ablation), dropped for an older one, and a long one gives up when
 * a newer text comes instead of holding it back. */
static void test_jobs(void)
{
	fake f;
	fake_init(&f);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[6];
	make_text(t, 6, 40);
	worker_text_opts o;
	memset(&o, 0, sizeof o);
	o.ablate[1] = 1;
	o.any_ablated = true;
	CHECK(worker_post_text(w, t, 6, 1, &o, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	attn_result_finish(&a.r);
	worker_job j = {.kind = JOB_BREAKDOWN, .seq = 1, .layer = 1, .query = 3, .key = 2};
	worker_post_job(w, &j);
	worker_job_result r;
	CHECK(wait_job(w, &r, 5000));
	CHECK(r.ok && r.job.kind == JOB_BREAKDOWN && r.hs == 2);
	CHECK(r.q && r.k && r.q[0] == 3 && r.q[1] == 1 && r.k[0] == 2 && r.k[1] == 0);
	worker_job_result_finish(&r);
	worker_job loss = {.kind = JOB_LOSS, .seq = 1};
	worker_post_job(w, &loss);
	CHECK(wait_job(w, &r, 5000));
	CHECK(r.ok && r.loss_before == 6 && r.loss_after == 12); /* the ablation came along */
	worker_job_result_finish(&r);
	/* A job for a text that is not the latest is dropped. */
	j.seq = 0;
	worker_post_job(w, &j);
	CHECK(!wait_job(w, &r, 50));
	/* A slow loss gives up for a newer text: the text's result comes at
	 * once, not after the loss, and no stale loss arrives. */
	fake_lock(&f);
	f.delay_us = 2000000;
	fake_unlock(&f);
	worker_post_job(w, &loss);
	usleep(50000);
	make_text(t, 6, 50);
	CHECK(worker_post_text(w, t, 6, 2, NULL, &err));
	fake_lock(&f);
	f.delay_us = 0;
	fake_unlock(&f);
	CHECK(wait_attn(w, &a, 1000)); /* well before the 2 s of the loss */
	CHECK(a.seq == 2);
	attn_result_finish(&a.r);
	CHECK(!wait_job(w, &r, 100));
	worker_destroy(w);
	fake_finish(&f);
}

static void test_basic(void)
{
	fake f;
	fake_init(&f);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[3];
	make_text(t, 3, 10);
	CHECK(worker_post_text(w, t, 3, 1, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	CHECK(a.ok && a.seq == 1 && a.r.n == 3);
	CHECK(a.r.att && a.r.att[0] == 33.0f);
	CHECK(a.ms >= 0);
	attn_result_finish(&a.r);
	/* Nothing more comes for the same text. */
	CHECK(!wait_attn(w, &a, 50));

	/* An empty text is a text too (the view shows an empty map). */
	CHECK(worker_post_text(w, t, 0, 2, NULL, &err));
	CHECK(wait_attn(w, &a, 5000));
	CHECK(a.ok && a.seq == 2 && a.r.n == 0);
	attn_result_finish(&a.r);

	/* Too long is refused with a message, not truncated silently. */
	static token big[AV_MAX_CONTEXT + 1];
	CHECK(!worker_post_text(w, big, AV_MAX_CONTEXT + 1, 3, NULL, &err));
	CHECK(strstr(err.msg, "longer") != NULL);
	worker_destroy(w);
	fake_finish(&f);
}

/* A post made while the model is busy returns at once, and the result of the
 * replaced text is dropped: the interface only ever gets the latest. */
static void test_stale_dropped(void)
{
	fake f;
	fake_init(&f);
	fake_gate(&f, true);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t1[4], t2[5];
	make_text(t1, 4, 100);
	make_text(t2, 5, 200);
	CHECK(worker_post_text(w, t1, 4, 1, NULL, &err));
	fake_wait_arrival(&f, 1); /* the model is now computing text 1, held */
	/* If posting waited for the computation this would never return (the
	 * alarm set in main fails the test). */
	CHECK(worker_post_text(w, t2, 5, 2, NULL, &err));
	worker_stats s = worker_get_stats(w);
	CHECK(s.busy && s.latest == 2);
	worker_attn a;
	CHECK(!worker_take_attn(w, &a)); /* nothing yet, and no waiting either */
	fake_gate(&f, false);
	CHECK(wait_attn(w, &a, 5000));
	CHECK(a.ok && a.seq == 2 && a.r.n == 5);
	CHECK(a.r.att && a.r.att[0] == text_sum(t2, 5));
	attn_result_finish(&a.r);
	s = worker_get_stats(w);
	CHECK(s.attends == 2);
	CHECK(s.dropped >= 1);
	worker_destroy(w);
	fake_finish(&f);
}

/* Many posts in a burst: far fewer computations than posts, and the last text
 * is the one computed. */
static void test_burst(void)
{
	fake f;
	fake_init(&f);
	f.delay_us = 20000;
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[64];
	for (int i = 1; i <= 50; i++) {
		make_text(t, i, i);
		CHECK(worker_post_text(w, t, i, (uint64_t)i, NULL, &err));
	}
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	CHECK(a.ok && a.seq == 50 && a.r.n == 50);
	make_text(t, 50, 50);
	CHECK(a.r.att && a.r.att[0] == text_sum(t, 50));
	attn_result_finish(&a.r);
	CHECKF(fake_calls(&f) < 50, "%d computations for 50 posts", fake_calls(&f));
	worker_destroy(w);
	fake_finish(&f);
}

static void test_predict(void)
{
	fake f;
	fake_init(&f);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[6];
	make_text(t, 6, 40);
	CHECK(worker_post_text(w, t, 6, 7, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	attn_result_finish(&a.r);
	worker_post_predict(w, 7, 2, 5);
	worker_pred p;
	CHECK(wait_pred(w, &p, 5000));
	CHECK(p.seq == 7 && p.pos == 2 && p.topk == 5);
	CHECK(p.ids[0] == 42 && p.ids[4] == 46);
	CHECK(p.probs[0] == 0.5f);
	/* Out of range, or for a text that is not the latest: dropped. */
	worker_post_predict(w, 7, 6, 5);
	CHECK(!wait_pred(w, &p, 50));
	worker_post_predict(w, 6, 1, 5);
	CHECK(!wait_pred(w, &p, 50));
	/* A new text makes a pending prediction for the old one moot. */
	make_text(t, 6, 60);
	worker_post_predict(w, 7, 1, 5);
	CHECK(worker_post_text(w, t, 6, 8, NULL, &err));
	CHECK(wait_attn(w, &a, 5000));
	CHECK(a.seq == 8);
	attn_result_finish(&a.r);
	CHECK(!worker_take_pred(w, &p));
	worker_post_predict(w, 8, 0, 20); /* topk is capped */
	CHECK(wait_pred(w, &p, 5000));
	CHECK(p.seq == 8 && p.ids[0] == 60 && p.topk == WORKER_MAX_TOPK);
	worker_destroy(w);
	fake_finish(&f);
}

static void test_error(void)
{
	fake f;
	fake_init(&f);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[2];
	make_text(t, 2, 999);
	CHECK(worker_post_text(w, t, 2, 1, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	CHECK(!a.ok && a.seq == 1);
	CHECK(strstr(a.err.msg, "poison") != NULL);
	/* No predictions on a text whose pass failed. */
	worker_post_predict(w, 1, 0, 3);
	worker_pred p;
	CHECK(!wait_pred(w, &p, 50));
	worker_destroy(w);
	fake_finish(&f);
}

/* Destroying with work under way, queued, or results untaken: joins, frees. */
static void test_shutdown(void)
{
	for (int round = 0; round < 20; round++) {
		fake f;
		fake_init(&f);
		f.delay_us = round % 2 ? 2000 : 0;
		worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
		av_error err;
		worker *w = worker_create(&ops, &err);
		CHECK(w != NULL);
		if (!w)
			return;
		token t[8];
		make_text(t, 8, round);
		CHECK(worker_post_text(w, t, 8, 1, NULL, &err));
		if (round % 3 == 0)
			usleep(3000); /* let a result be published and not taken */
		CHECK(worker_post_text(w, t, 8, 2, NULL, &err));
		worker_destroy(w);
		fake_finish(&f);
	}
	worker_destroy(NULL);
}

/* The interface's loop under load: post, poll, take, in a tight loop. Every
 * result taken is for the latest text posted. */
static void test_stress(void)
{
	fake f;
	fake_init(&f);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[32];
	int bad = 0, got = 0;
	uint64_t seq = 0, last_taken = 0;
	for (int i = 0; i < 3000; i++) {
		int n = 1 + i % 31;
		/* Ids from 1000 up: the loop must never post the fake model's
		 * poison token 999, whose result is an error, not a mismatch. */
		make_text(t, n, 1000 + i);
		CHECK(worker_post_text(w, t, n, ++seq, NULL, &err));
		if (i % 7 == 0)
			worker_post_predict(w, seq, n / 2, 3);
		worker_drain(w);
		worker_attn a;
		if (worker_take_attn(w, &a)) {
			got++;
			last_taken = a.seq;
			if (a.seq != seq || a.r.n != n || a.r.att[0] != text_sum(t, n))
				bad++;
			attn_result_finish(&a.r);
		}
		worker_pred p;
		if (worker_take_pred(w, &p) && (p.seq != seq || p.ids[0] != t[n / 2].id))
			bad++;
	}
	/* The latest text's result arrives, unless the loop took it already. */
	worker_attn a;
	if (last_taken != seq) {
		CHECK(wait_attn(w, &a, 5000));
		CHECK(a.seq == seq);
		attn_result_finish(&a.r);
	}
	CHECKF(bad == 0, "%d stale or mismatched results out of %d", bad, got);
	worker_destroy(w);
	fake_finish(&f);
}

/* Results given back (worker_recycle) lend their arrays to the next
 * computation: one is kept, any more are freed (ASan and valgrind would see
 * a leak or a double free), one too small is replaced, and the results the
 * worker itself drops are kept the same way. */
static void test_recycle(void)
{
	fake f;
	fake_init(&f);
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token t[12];
	worker_attn a1, a2, a3;
	make_text(t, 8, 10);
	CHECK(worker_post_text(w, t, 8, 1, NULL, &err));
	CHECK(wait_attn(w, &a1, 5000));
	float *arr = a1.r.att;
	worker_recycle(w, &a1.r);
	CHECK(a1.r.att == NULL && a1.r.cap == 0);
	make_text(t, 4, 20);
	CHECK(worker_post_text(w, t, 4, 2, NULL, &err));
	CHECK(wait_attn(w, &a2, 5000));
	CHECK(a2.r.att == arr && f.reused == 1);
	CHECK(a2.r.n == 4 && a2.r.att[0] == text_sum(t, 4));
	/* Held while the next is computed: no spare, new arrays. */
	CHECK(worker_post_text(w, t, 4, 3, NULL, &err));
	CHECK(wait_attn(w, &a3, 5000));
	CHECK(a3.r.att != arr && f.reused == 1);
	worker_recycle(w, &a2.r); /* kept */
	worker_recycle(w, &a3.r); /* freed: there is a spare */
	worker_recycle(w, NULL);
	worker_recycle(w, &a3.r); /* zeroed */
	/* Too small for 11 tokens: replaced. */
	make_text(t, 11, 30);
	CHECK(worker_post_text(w, t, 11, 4, NULL, &err));
	CHECK(wait_attn(w, &a1, 5000));
	CHECK(f.reused == 1 && a1.r.n == 11 && a1.r.att[0] == text_sum(t, 11));
	worker_recycle(w, &a1.r);
	/* A result dropped by the worker (its text replaced while computing)
	 * becomes the spare: the text after it reuses its arrays. */
	fake_gate(&f, true);
	CHECK(worker_post_text(w, t, 11, 5, NULL, &err));
	fake_wait_arrival(&f, 1); /* took the spare */
	CHECK(worker_post_text(w, t, 11, 6, NULL, &err));
	fake_gate(&f, false);
	CHECK(wait_attn(w, &a1, 5000));
	CHECK(a1.seq == 6 && f.reused == 3);
	attn_result_finish(&a1.r);
	worker_destroy(w); /* frees the spare */
	fake_finish(&f);
}

/* The newest text wins: a computation for a text that a newer one replaced
 * gives up at its next step instead of finishing (the slow text would take
 * 5 s), and so does a prediction; nothing of theirs is handed out. */
static void test_give_up(void)
{
	fake f;
	fake_init(&f);
	f.steps = 100;
	worker_ops ops = {fake_attend, fake_predict, fake_job, NULL, &f};
	av_error err;
	worker *w = worker_create(&ops, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	token slow[5], t[5];
	make_text(slow, 5, FAKE_SLOW);
	make_text(t, 5, 30);
	fake_gate(&f, true);
	CHECK(worker_post_text(w, slow, 5, 1, NULL, &err));
	fake_wait_arrival(&f, 1);
	fake_gate(&f, false);
	CHECK(worker_post_text(w, t, 5, 2, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 20000));
	CHECK(a.ok && a.seq == 2 && a.r.att[0] == text_sum(t, 5));
	worker_recycle(w, &a.r);
	CHECKF(f.gave_up == 1, "%d computations gave up", f.gave_up);
	worker_stats s = worker_get_stats(w);
	CHECK(s.attends == 2 && s.dropped == 1);

	/* A prediction at the slow position, then a new text. */
	t[3].id = FAKE_SLOW;
	CHECK(worker_post_text(w, t, 5, 3, NULL, &err));
	CHECK(wait_attn(w, &a, 20000));
	worker_recycle(w, &a.r);
	worker_post_predict(w, 3, 3, 4);
	for (bool begun = false; !begun; usleep(1000)) {
		fake_lock(&f);
		begun = f.predicts > 0;
		fake_unlock(&f);
	}
	CHECK(worker_post_text(w, t, 4, 4, NULL, &err));
	CHECK(wait_attn(w, &a, 20000));
	CHECK(a.seq == 4);
	worker_recycle(w, &a.r);
	worker_pred p;
	CHECK(!worker_take_pred(w, &p));
	CHECKF(f.gave_up == 2, "%d computations gave up", f.gave_up);
	worker_destroy(w);
	fake_finish(&f);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "test_worker: timed out: a call blocked on the worker\n";
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

/* Two small real models with different vocabularies and shapes. */
/* A random model of context 16 over the specials and the letters from 'a'
 * (V of at most 16 tokens). */
static model *small_model(objective obj, int V, int dim, int heads, int layers, uint64_t seed)
{
	model_config c = {obj, (uint32_t)V, (uint32_t)dim, (uint32_t)heads, (uint32_t)layers, 16, {0}};
	uint32_t cps[16];
	for (int i = 0; i < V; i++)
		cps[i] = i < 3 ? AV_SPECIAL_CP + (uint32_t)i : 'a' + (uint32_t)i - 3;
	av_error err;
	model *m = model_create(&c, cps, &err);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	model_init_random(m, seed);
	return m;
}

static model *reload_model(int V, int heads, int layers, uint64_t seed)
{
	model *m = small_model(OBJ_MASKED, V, 8, heads, layers, seed);
	m->meta.steps = seed * 100;
	return m;
}

/* The text "abcd..." of n tokens in m's vocabulary. */
static void model_text(const model *m, token *t, int n)
{
	uint32_t cps[16];
	for (int i = 0; i < n; i++)
		cps[i] = 'a' + (uint32_t)i;
	vocab_tokenize(&m->vocab, cps, (size_t)n, t);
}

/* The largest difference between two results' weights (of the same shape). */
static double weight_diff(const attn_result *a, const attn_result *b)
{
	double worst = 0;
	for (int l = 0; l < a->layers; l++)
		for (int h = 0; h < a->heads; h++)
			for (int i = 0; i < a->n; i++)
				for (int j = 0; j < a->n; j++) {
					double d = fabs((double)attn_weight(a, l, h, i, j) -
							attn_weight(b, l, h, i, j));
					worst = d > worst ? d : worst;
				}
	return worst;
}

/* What m itself says about the text, to compare the worker's answer with. */
static bool same_as_direct(const model *m, const token *t, int n, const attn_result *got)
{
	av_error err;
	activations ws;
	attn_result want;
	if (!activations_init(&ws, &m->cfg, 1, 16, 16, &err) ||
	    !model_attend(m, &ws, t, n, WORKER_MAX_TOPK, &want, &err))
		return false;
	bool same = got->n == n && got->layers == (int)m->cfg.layers &&
		    got->heads == (int)m->cfg.heads && weight_diff(got, &want) == 0;
	attn_result_finish(&want);
	activations_finish(&ws);
	return same;
}


/* Reloading: the worker loads the file on its thread and hands the model
 * over; texts posted with the old vocabulary never run on the new model
 * (the new one has 8 entries, the old one's text has ids up to 12, which
 * would read past its embedding: ASan and the comparison would see it); a
 * file that does not load leaves the old model working and says why. */
static void test_reload(void)
{
	char dir[] = "/tmp/attnview-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[512], bad[512];
	snprintf(path, sizeof path, "%s/m.attn", dir);
	snprintf(bad, sizeof bad, "%s/bad.attn", dir);
	av_error err;
	model *old = reload_model(14, 2, 1, 1);
	model *next = reload_model(8, 4, 2, 2);
	CHECKF(model_save(next, path, &err), "%s", err.msg);
	FILE *f = fopen(bad, "wb");
	CHECK(f != NULL);
	if (f) {
		fputs("ATTNVIEW but not really", f);
		fclose(f);
	}
	worker *w = worker_create_for_model(old, 0, &err);
	CHECKF(w != NULL, "%s", err.msg);
	if (!w)
		return;
	token t[16];
	model_text(old, t, 11);
	CHECK(t[10].id == 13);
	CHECK(worker_post_text(w, t, 11, 1, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	CHECK(same_as_direct(old, t, 11, &a.r));
	attn_result_finish(&a.r);

	/* A file that is not a model: an error naming it; the old model stays. */
	worker_model wm;
	worker_post_reload(w, bad);
	CHECK(wait_model(w, &wm, 5000));
	CHECK(!wm.ok && wm.m == NULL && strstr(wm.err.msg, "bad.attn") != NULL);
	CHECK(worker_post_text(w, t, 11, 2, NULL, &err));
	CHECK(wait_attn(w, &a, 5000));
	CHECK(a.seq == 2 && same_as_direct(old, t, 11, &a.r));
	attn_result_finish(&a.r);

	/* A reload, then at once a text with the old ids: dropped. */
	worker_post_reload(w, path);
	CHECK(worker_post_text(w, t, 11, 3, NULL, &err));
	/* Wait for the wake byte of the reload without taking the model, then
	 * post again as an interface that has not noticed yet would: dropped
	 * too, and a prediction and a job for it as well. */
	struct pollfd p = {worker_fd(w), POLLIN, 0};
	CHECK(poll(&p, 1, 5000) == 1);
	worker_drain(w);
	CHECK(worker_post_text(w, t, 11, 4, NULL, &err));
	worker_post_predict(w, 4, 2, 3);
	worker_job j = {.kind = JOB_LOSS, .seq = 4};
	worker_post_job(w, &j);
	CHECK(!wait_attn(w, &a, 200));
	worker_pred pr;
	worker_job_result jr;
	CHECK(!wait_pred(w, &pr, 50) && !wait_job(w, &jr, 50));
	CHECK(worker_take_model(w, &wm));
	CHECKF(wm.ok && wm.m != NULL, "%s", wm.err.msg);
	if (wm.ok) {
		CHECK(wm.m->cfg.heads == 4 && wm.m->cfg.vocab_size == 8 && wm.m->meta.steps == 200);
		CHECK(strcmp(wm.path, path) == 0);
		/* The interface switches, frees the old one, posts its text again
		 * in the new vocabulary. */
		model_destroy(old);
		old = wm.m;
		model_text(old, t, 11);
		CHECK(t[10].id == TOK_UNK);
		CHECK(worker_post_text(w, t, 11, 5, NULL, &err));
		CHECK(wait_attn(w, &a, 5000));
		CHECK(a.seq == 5 && same_as_direct(old, t, 11, &a.r));
		CHECK(same_as_direct(next, t, 11, &a.r));
		attn_result_finish(&a.r);
	}
	worker_destroy(w);
	model_destroy(old);
	model_destroy(next);
	remove(path);
	remove(bad);
	rmdir(dir);
}

/* The newest text wins with the real model: a pass whose text was replaced
 * while it waited (the model context's delay) gives up at its first layer
 * instead of running (stats.gave_up); the newest text's result is the one a
 * direct pass gives; a character typed at the end then runs through the
 * prefix cache and agrees with a direct pass to rounding (test_infer.c says
 * why not bit for bit). */
static void test_real_give_up(void)
{
	model_config c = {OBJ_CAUSAL, 16, 16, 2, 2, 16, {0}};
	uint32_t cps[16];
	for (int i = 0; i < 16; i++)
		cps[i] = i < 3 ? AV_SPECIAL_CP + (uint32_t)i : 'a' + (uint32_t)i - 3;
	av_error err;
	model *m = model_create(&c, cps, &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		return;
	model_init_random(m, 7);
	worker *w = worker_create_for_model(m, 300, &err);
	CHECKF(w != NULL, "%s", err.msg);
	if (!w) {
		model_destroy(m);
		return;
	}
	token t[16], u[16];
	model_text(m, t, 12);
	model_text(m, u, 12);
	u[0] = t[5];
	CHECK(worker_post_text(w, t, 11, 1, NULL, &err));
	/* Once the thread has taken it, it waits out its delay (300 ms). */
	while (worker_get_stats(w).taken < 1)
		usleep(1000);
	CHECK(worker_post_text(w, u, 11, 2, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 20000));
	CHECK(a.ok && a.seq == 2 && same_as_direct(m, u, 11, &a.r));
	worker_stats s = worker_get_stats(w);
	CHECKF(s.attends == 2 && s.dropped == 1 && s.gave_up == 1,
	       "%llu passes, %llu dropped, %llu gave up", (unsigned long long)s.attends,
	       (unsigned long long)s.dropped, (unsigned long long)s.gave_up);
	worker_recycle(w, &a.r);
	/* One character appended: through the cache. */
	CHECK(worker_post_text(w, u, 12, 3, NULL, &err));
	CHECK(wait_attn(w, &a, 20000));
	CHECK(a.ok && a.seq == 3 && a.r.n == 12);
	activations ws;
	attn_result want;
	CHECK(activations_init(&ws, &m->cfg, 1, 16, 16, &err));
	CHECK(model_attend(m, &ws, u, 12, 0, &want, &err));
	double worst = weight_diff(&a.r, &want);
	CHECKF(worst <= 1e-6, "one character appended: %.3e from a direct pass", worst);
	attn_result_finish(&want);
	activations_finish(&ws);
	attn_result_finish(&a.r);
	worker_destroy(w);
	model_destroy(m);
}

/* A small real model of the given objective (16 ids: the specials and the
 * letters a to m, d=16, 2 heads, 2 layers, context 16), random weights from
 * seed; the test program ends if it cannot be made. */
static model *letters_model(objective obj, uint64_t seed)
{
	return small_model(obj, 16, 16, 2, 2, seed);
}

/* A worker for letters_model(obj, seed), the model in *m; NULL (the failure
 * checked, the model freed) if the worker cannot be made. */
static worker *letters_worker(objective obj, uint64_t seed, model **m)
{
	av_error err;
	*m = letters_model(obj, seed);
	worker *w = worker_create_for_model(*m, 0, &err);
	CHECKF(w, "%s", err.msg);
	if (!w)
		model_destroy(*m);
	return w;
}

/* The why jobs with the real model: patching the job's other text
 * (JOB_PATCH) gives what activation_patch gives directly, and none for a
 * text of another length; the breakdown brings the cell's score split,
 * whose terms add up to the score. */
static void test_real_why_jobs(void)
{
	av_error err;
	model *m;
	worker *w = letters_worker(OBJ_CAUSAL, 11, &m);
	if (!w)
		return;
	token t[16];
	model_text(m, t, 11);
	CHECK(worker_post_text(w, t, 11, 1, NULL, &err));
	worker_attn a;
	CHECK(wait_attn(w, &a, 5000));
	attn_result_finish(&a.r);
	static worker_job j;
	j = (worker_job){.kind = JOB_PATCH, .seq = 1, .query = 10, .nother = 11};
	int32_t ids[11];
	for (int i = 0; i < 11; i++)
		ids[i] = j.other[i] = t[i].id;
	j.other[4] = t[7].id;
	worker_post_job(w, &j);
	worker_job_result r;
	CHECK(wait_job(w, &r, 10000));
	activations ws;
	patch_result want;
	CHECK(activations_init(&ws, &m->cfg, 1, 16, 16, &err));
	CHECK(activation_patch(m, &ws, ids, j.other, 11, 10, NULL, &want, &err));
	CHECKF(r.ok && r.job.kind == JOB_PATCH && r.patch.heads, "%s", r.err.msg);
	double worst = 0;
	for (int k = 0; r.patch.heads && k < 4; k++)
		worst = fmax(worst, fabs(r.patch.heads[k] - want.heads[k]));
	for (int k = 0; r.patch.cells && k < 11 * 4; k++)
		worst = fmax(worst, fabs(r.patch.cells[k] - want.cells[k]));
	CHECKF(worst <= 1e-6 && r.patch.target[0] == want.target[0], "patching: %.3e", worst);
	patch_result_finish(&want);
	worker_job_result_finish(&r);
	j.nother = 10;
	worker_post_job(w, &j);
	CHECK(wait_job(w, &r, 10000) && !r.ok);
	worker_job_result_finish(&r);
	worker_job b = {
	    .kind = JOB_BREAKDOWN, .seq = 1, .layer = 1, .head = 1, .query = 9, .key = 3};
	worker_post_job(w, &b);
	CHECK(wait_job(w, &r, 10000));
	CHECK(r.ok && r.split.nparts == split_nparts(m, 1));
	double sum = 0, dot = 0;
	for (int i = 0; i < r.split.nparts * r.split.nparts; i++)
		sum += r.split.terms[i];
	for (int e = 0; r.ok && e < r.hs; e++)
		dot += (double)r.q[e] * r.k[e];
	CHECKF(r.ok && fabs(sum - dot) <= 1e-5 * (1 + fabs(dot)), "split %.9g, q·k %.9g", sum, dot);
	worker_job_result_finish(&r);
	activations_finish(&ws);
	worker_destroy(w);
	model_destroy(m);
}

/* A masked model's result comes with no weights (the interface computes
 * the head it shows when it reads it), or with every head's when the text
 * asks for them (the overview): the same numbers either way. */
static void test_real_every_head(void)
{
	av_error err;
	model *m;
	worker *w = letters_worker(OBJ_MASKED, 12, &m);
	if (!w)
		return;
	token t[16];
	model_text(m, t, 12);
	worker_text_opts o = {.every_head = true};
	worker_attn a, b;
	CHECK(worker_post_text(w, t, 12, 1, NULL, &err) && wait_attn(w, &a, 5000));
	CHECK(worker_post_text(w, t, 12, 2, &o, &err) && wait_attn(w, &b, 5000));
	/* q and k with room for the context's 16 rows (infer.h), weights of 12. */
	const size_t qk = 2u * 16 * 2 * 16 * sizeof(float), heads = 4u * 12 * 12 * sizeof(float);
	CHECKF(a.ok && attn_result_bytes(&a.r) == qk, "without every_head: %zu bytes",
	       attn_result_bytes(&a.r));
	CHECKF(b.ok && attn_result_bytes(&b.r) == qk + heads, "with every_head: %zu bytes",
	       attn_result_bytes(&b.r));
	bool same = a.ok && b.ok;
	for (int l = 0; same && l < 2; l++)
		for (int h = 0; h < 2; h++)
			same = same && attn_head_weights(&a.r, l, h) &&
			       !memcmp(attn_head_weights(&a.r, l, h), attn_head_weights(&b.r, l, h),
				       heads / 4);
	CHECK(same);
	attn_result_finish(&a.r);
	attn_result_finish(&b.r);
	worker_destroy(w);
	model_destroy(m);
}

/* How many of r's heads have the roles `got` says, as head_roles gives them
 * (the same role and scores); *named (if not NULL): how many are not broad. */
static int roles_as_computed(const attn_result *r, const role_scores *got, int *named)
{
	int same = 0;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			role_scores rs;
			attn_matrix mat = attn_result_head(r, l, h);
			head_roles(&rs, &mat, r->tokens);
			const role_scores *g = &got[l * r->heads + h];
			same += g->role == rs.role && !memcmp(g->s, rs.s, sizeof rs.s);
			if (named)
				*named += g->role != ROLE_BROAD;
		}
	return same;
}

/* Every head's roles (worker_text_opts.roles) come with the result that
 * asked for them, the same as head_roles on it; a result that did not ask
 * has none, and a JOB_ROLES for its text brings them. */
static void test_real_roles(void)
{
	av_error err;
	model *m;
	worker *w = letters_worker(OBJ_MASKED, 12, &m);
	if (!w)
		return;
	token t[16];
	model_text(m, t, 12);
	worker_text_opts with = {.every_head = true, .roles = true}, without = {.every_head = true};
	worker_attn a, b;
	CHECK(worker_post_text(w, t, 12, 1, &with, &err) && wait_attn(w, &a, 5000));
	CHECK(worker_post_text(w, t, 12, 2, &without, &err) && wait_attn(w, &b, 5000));
	CHECK(a.ok && a.roles && b.ok && !b.roles);
	int named = 0, same = a.ok && a.roles ? roles_as_computed(&a.r, a.roles, &named) : 0;
	CHECKF(same == 4, "%d of 4 heads' roles as head_roles gives them", same);
	printf("worker roles: %d of 4 heads named\n", named);
	/* JOB_ROLES: the roles of the text without them (the overview opened
	 * on it), the same as head_roles on its result. */
	worker_job j = {.kind = JOB_ROLES, .seq = 2};
	worker_post_job(w, &j);
	worker_job_result jr;
	CHECK(wait_job(w, &jr, 5000));
	CHECKF(jr.ok && jr.job.kind == JOB_ROLES && jr.roles, "%s", jr.err.msg);
	same = jr.ok && jr.roles && b.ok ? roles_as_computed(&b.r, jr.roles, NULL) : 0;
	CHECKF(same == 4, "JOB_ROLES: %d of 4 heads' roles as head_roles gives them", same);
	worker_job_result_finish(&jr);
	/* It hands back the heads' weights of the text's pass made again: a
	 * result that came without them (c) takes them, and they are the bits
	 * the pass of the text gave (b's), none computed on this thread; a
	 * result whose queries and keys differ by a bit takes none. */
	worker_attn c;
	const uint64_t here = attn_weights_computed_here();
	CHECK(worker_post_text(w, t, 12, 3, NULL, &err) && wait_attn(w, &c, 5000));
	j.seq = 3;
	worker_post_job(w, &j);
	CHECK(wait_job(w, &jr, 5000));
	CHECKF(jr.ok && jr.heads.head_w && jr.heads.qk, "JOB_ROLES's weights: %s", jr.err.msg);
	bool kept = c.ok && jr.ok && jr.heads.qk;
	if (kept) {
		/* layer 1 (rows of 2 x 16), row 11's last key */
		float *x = &jr.heads.qk[(size_t)jr.heads.qk_rows * 32 + 11 * 32 + 31], keep = *x;
		*x = keep + 1.0f;
		CHECK(!attn_result_adopt_weights(&c.r, &jr.heads) && !attn_head_kept(&c.r, 0, 0));
		*x = keep;
		CHECK(attn_result_adopt_weights(&c.r, &jr.heads));
	}
	for (int l = 0; kept && l < 2; l++)
		for (int h = 0; h < 2; h++)
			kept = kept && attn_head_kept(&c.r, l, h) &&
			       !memcmp(attn_head_weights(&c.r, l, h), attn_head_weights(&b.r, l, h),
				       12 * 12 * sizeof(float));
	CHECK(kept && attn_weights_computed_here() == here);
	worker_job_result_finish(&jr);
	attn_result_finish(&c.r);
	free(a.roles);
	attn_result_finish(&a.r);
	attn_result_finish(&b.r);
	worker_destroy(w);
	model_destroy(m);
	/* A causal model's result keeps its weights packed: the job reads them. */
	w = letters_worker(OBJ_CAUSAL, 13, &m);
	if (!w)
		return;
	CHECK(worker_post_text(w, t, 12, 1, NULL, &err) && wait_attn(w, &a, 5000));
	j.seq = 1;
	worker_post_job(w, &j);
	CHECK(wait_job(w, &jr, 5000));
	CHECKF(jr.ok && jr.roles, "JOB_ROLES of a causal model: %s", jr.err.msg);
	worker_job_result_finish(&jr);
	attn_result_finish(&a.r);
	worker_destroy(w);
	model_destroy(m);
}

/* The real model behind a gate between its layers (partial results): the
 * pass stops after the layer given, once the worker has had its say there,
 * until the test opens the gate. */
typedef struct gated {
	const model *m;
	activations ws;
	infer_cache cache;
	fake f;		   /* its gate and counters */
	int stop_after;	   /* layers done when the pass waits */
	attn_result *live; /* the result infer_attend is filling */
	worker_stale_fn stale;
	void *stale_ctx;
} gated;

static bool gated_stale(void *p)
{
	gated *g = p;
	bool stale = g->stale(g->stale_ctx);
	if (!stale && g->live->partial == g->stop_after) {
		fake_lock(&g->f);
		g->f.waiting++;
		if (pthread_cond_broadcast(&g->f.cv) != 0)
			abort();
		while (g->f.gated)
			if (pthread_cond_wait(&g->f.cv, &g->f.mu) != 0)
				abort();
		g->f.waiting--;
		fake_unlock(&g->f);
	}
	return stale;
}

static bool gated_attend(void *ctx, const token *t, int n, const worker_text_opts *o,
			 attn_result *r, worker_stale_fn stale, void *stale_ctx, av_error *err)
{
	gated *g = ctx;
	(void)o;
	g->live = r, g->stale = stale, g->stale_ctx = stale_ctx;
	return infer_attend(g->m, &g->ws, &g->cache, t, n, r, gated_stale, g, err);
}

/* A masked model's long pass shows the layer on screen before the others:
 * the worker publishes a partial result holding the layers done once that
 * layer is among them, and the complete one after it; the partial one's
 * numbers are the complete one's, layers not yet computed read as
 * absent, and a newer text still wins over both. */
static void test_real_partial(void)
{
	static gated g;
	memset(&g, 0, sizeof g);
	av_error err;
	model *m = letters_model(OBJ_MASKED, 13);
	g.m = m;
	CHECK(activations_init(&g.ws, &m->cfg, 1, 16, 16, &err));
	CHECK(pthread_mutex_init(&g.f.mu, NULL) == 0 && pthread_cond_init(&g.f.cv, NULL) == 0);
	g.stop_after = 1;
	fake_gate(&g.f, true);
	worker_ops ops = {gated_attend, NULL, NULL, NULL, &g};
	worker *w = worker_create(&ops, &err);
	CHECKF(w, "%s", err.msg);
	if (!w)
		return;
	worker_set_partial_ms(w, 0);
	token t[16];
	model_text(m, t, 12);
	worker_text_opts o = {.partial_layer = 1, .roles = true};
	CHECK(worker_post_text(w, t, 12, 1, &o, &err));
	worker_attn part, full;
	CHECK(wait_attn(w, &part, 5000));
	CHECKF(part.ok && part.seq == 1 && part.r.partial == 1 && part.r.n == 12,
	       "first result: partial %d", part.r.partial);
	CHECK(attn_layer_ready(&part.r, 0) && !attn_layer_ready(&part.r, 1));
	CHECK(attn_head_weights(&part.r, 1, 0) == NULL);
	const float *w0 = attn_head_weights(&part.r, 0, 1);
	CHECK(w0 != NULL);
	CHECK(worker_get_stats(w).partials == 1 && worker_get_stats(w).busy);
	CHECKF(!part.roles, "a partial result with roles"); /* they come with the whole */
	fake_gate(&g.f, false);
	CHECK(wait_attn(w, &full, 5000));
	CHECKF(full.ok && full.seq == 1 && full.r.partial == 0, "then: partial %d", full.r.partial);
	CHECK(full.roles != NULL);
	free(full.roles);
	o.roles = false;
	const float *f0 = attn_head_weights(&full.r, 0, 1);
	CHECK(w0 && f0 && !memcmp(w0, f0, 12 * 12 * sizeof *f0));
	CHECK(attn_head_weights(&full.r, 1, 0) != NULL);
	worker_recycle(w, &part.r);
	worker_recycle(w, &full.r);

	/* Layer 1 on screen of a 2-layer model: nothing is partial. */
	o.partial_layer = 2;
	CHECK(worker_post_text(w, t, 11, 2, &o, &err) && wait_attn(w, &full, 5000));
	CHECK(full.ok && full.seq == 2 && full.r.partial == 0);
	attn_result_finish(&full.r);
	/* Nor when the rest of the pass is quicker than a frame (the default). */
	worker_set_partial_ms(w, 12.0);
	o.partial_layer = 1;
	CHECK(worker_post_text(w, t, 10, 3, &o, &err) && wait_attn(w, &full, 5000));
	CHECK(full.ok && full.seq == 3 && full.r.partial == 0);
	attn_result_finish(&full.r);
	CHECK(worker_get_stats(w).partials == 1);

	/* A newer text posted while a pass waits after its partial result:
	 * neither the partial result nor the pass's end is handed out. */
	worker_set_partial_ms(w, 0);
	fake_gate(&g.f, true);
	CHECK(worker_post_text(w, t, 9, 4, &o, &err));
	fake_wait_arrival(&g.f, 1);
	CHECK(worker_post_text(w, t, 8, 5, &o, &err));
	CHECK(!worker_take_attn(w, &full));
	fake_gate(&g.f, false);
	bool complete = false;
	for (int tries = 0; !complete && tries < 2; tries++) {
		if (!wait_attn(w, &full, 5000))
			break;
		CHECKF(full.seq == 5 && full.r.n == 8, "seq %llu of %d tokens",
		       (unsigned long long)full.seq, full.r.n);
		complete = full.ok && full.r.partial == 0;
		attn_result_finish(&full.r);
	}
	CHECK(complete);
	worker_destroy(w);
	infer_cache_clear(&g.cache);
	activations_finish(&g.ws);
	fake_finish(&g.f);
	model_destroy(m);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(120);
	test_basic();
	test_stale_dropped();
	test_burst();
	test_predict();
	test_jobs();
	test_error();
	test_shutdown();
	test_stress();
	test_recycle();
	test_real_every_head();
	test_real_roles();
	test_real_partial();
	test_give_up();
	test_real_give_up();
	test_real_why_jobs();
	test_reload();
	return test_summary("worker");
}
