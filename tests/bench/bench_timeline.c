/* What the training timeline costs (timeline.h; doc/timeline.md): the CPU
 * time of a training step and of a timeline record, at --train's defaults
 * (d=64, h=4, L=2, T=128, B=32, masked) on one thread, and their ratio at the
 * default interval of a 2000-step run (K = 20).
 *
 *   bench_timeline CORPUS [--causal] [--steps N] [--batch B]
 *
 * It also prints a record's cost in training characters (what a step of
 * B x T characters costs, times the record's share of it: the constant
 * TL_RECORD_CHARS of timeline.h is the largest of these measured), and the
 * default interval's share of the training time for runs of 80 to 2000
 * steps (timeline_auto_every_cost).
 *
 * Process CPU time, not wall time: on a shared machine, the time the work
 * was actually running. Run by `meson test --benchmark timeline_cost
 * --verbose` (on README.md); it asserts nothing. */
#include "attnview/blas.h"
#include "attnview/parallel.h"
#include "attnview/timeline.h"
#include "attnview/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

typedef struct clock_ctx {
	double last, *dt;
	int n, cap;
} clock_ctx;

static void on_step(const train_progress *p, void *ctx)
{
	(void)p;
	clock_ctx *c = ctx;
	double t = cpu_now();
	if (c->n < c->cap)
		c->dt[c->n++] = t - c->last;
	c->last = cpu_now();
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv); /* the kernel the CPU can run (blas.h) */
	if (argc < 2) {
		fprintf(stderr, "usage: bench_timeline CORPUS [--causal] [--steps N]\n");
		return 2;
	}
	train_options o;
	train_options_default(&o);
	o.steps = 200;
	o.eval_every = 0;
	o.checkpoint_every = 0;
	o.timeline_every = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--causal") == 0)
			o.objective = OBJ_CAUSAL;
		else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
			o.steps = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
			o.batch = (uint32_t)strtoul(argv[++i], NULL, 10);
	}
	parallel_set_threads(1);
	blas_set_threads(1);
	av_error err;
	corpus c;
	corpus_options co = {.min_count = 1};
	if (!corpus_load(&c, argv[1], &co, &err)) {
		fprintf(stderr, "bench_timeline: %s\n", err.msg);
		return 1;
	}
	trainer *t = trainer_create(&o, &c, NULL, NULL, "bench", "bench", NULL, NULL, NULL, &err);
	clock_ctx ck = {cpu_now(), calloc(o.steps, sizeof(double)), 0, (int)o.steps};
	if (!t || trainer_run(t, on_step, &ck, &err) != TRAIN_DONE) {
		fprintf(stderr, "bench_timeline: %s\n", err.msg);
		return 1;
	}
	/* The records, on the model just trained, on a probe as the trainer's
	 * (train_timeline.c): 4 windows of 64 characters of the validation text. */
	uint32_t n = TL_PROBE_LEN, probe[TL_WINDOWS * TL_PROBE_LEN];
	for (uint32_t w = 0; w < TL_WINDOWS; w++)
		for (uint32_t i = 0; i < n; i++)
			probe[w * n + i] =
			    c.vocab.cps[corpus_id(&c, c.ntrain + w * (c.nval - n) / 3 + i)];
	timeline *tl = timeline_create(t->model, probe, TL_WINDOWS, n, 20, 1, &err);
	enum { R = 30 };
	double rec[R];
	for (int r = 0; tl && r < R; r++) {
		double t0 = cpu_now();
		if (!timeline_record(tl, t->model, (uint64_t)r, 1.0f, true, &err))
			break;
		rec[r] = cpu_now() - t0;
	}
	if (!tl || tl->count != R) {
		fprintf(stderr, "bench_timeline: %s\n", err.msg);
		return 1;
	}
	timeline_destroy(tl);
	qsort(ck.dt, (size_t)ck.n, sizeof(double), cmp_double);
	qsort(rec, R, sizeof(double), cmp_double);
	double step = ck.dt[ck.n / 2], one = rec[R / 2];
	uint64_t K = timeline_auto_every(2000);
	printf("%s, d=%u h=%u L=%u T=%u B=%u, one thread: a training step %.2f ms (median of "
	       "%d), a timeline record %.2f ms (median of %d): %.2f%% of the training time at "
	       "K = %llu (a 2000-step run), %.2f%% at K = 1\n",
	       o.objective == OBJ_CAUSAL ? "causal" : "masked", o.dim, o.heads, o.layers,
	       t->opt.context, t->opt.batch, 1e3 * step, ck.n, 1e3 * one, R, 100 * one / (K * step),
	       (unsigned long long)K, 100 * one / step);
	double chars = (double)t->opt.batch * t->opt.context;
	printf("a record costs what training on %.0f characters does (TL_RECORD_CHARS %d); "
	       "the default interval of a run of\n",
	       chars * one / step, TL_RECORD_CHARS);
	static const uint64_t runs[] = {80, 300, 750, 2000, 10000};
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		uint64_t k = timeline_auto_every_cost(runs[i], t->opt.batch, t->opt.context);
		printf("  %5llu steps: K = %llu, %llu records, %.2f%% of the training time\n",
		       (unsigned long long)runs[i], (unsigned long long)k,
		       (unsigned long long)(runs[i] / k + 1 + (runs[i] % k != 0)),
		       100 * one * (double)(runs[i] / k + 1 + (runs[i] % k != 0)) /
			   (step * (double)runs[i]));
	}
	free(ck.dt);
	trainer_destroy(t);
	corpus_finish(&c);
	return 0;
}
