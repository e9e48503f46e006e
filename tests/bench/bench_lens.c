/* How long the tools of why and whether (doc/why.md, doc/circuits.md) take on the built-in models at their full
 * context, each in ms and as a share of a 60 Hz frame (16.7 ms): the logit
 * lens and the direct logit attribution (lens.h) for one row, as the view's
 * Alt-L asks on its worker for the Query row, and every row, as --dump
 * --lens --dla does; the circuits of every head (circuits.h), once per model
 * on the view's worker (Alt-I), and one head's positional pattern
 * (--export --circuits); the faithfulness meter (faith.h) for one row, as
 * the view's Alt-U asks on its worker, and for every row, as --dump
 * --faithfulness does. Median of a few runs each (fewer for the slow ones);
 * figures printed, never asserted (meson test --benchmark lens). */
#include "attnview/blas.h"
#include "attnview/circuits.h"
#include "attnview/faith.h"
#include "attnview/lens.h"
#include "attnview/modelfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 7
#define FRAME_MS (1000.0 / 60)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median ms of RUNS passes of the lens (what = 0) or the attribution (1). */
static double time_it(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs,
		      int what)
{
	const size_t LH = (size_t)m->cfg.layers * m->cfg.heads, R = (size_t)rs.nrows;
	int32_t *id = malloc(m->cfg.layers * R * 3 * sizeof *id);
	float *p = malloc(m->cfg.layers * R * 3 * sizeof *p),
	      *heads = malloc(R * LH * sizeof *heads);
	float *logit = malloc(R * sizeof *logit), *rest = malloc(R * sizeof *rest);
	int *commit = malloc(R * sizeof *commit);
	double t[RUNS];
	av_error err;
	for (int k = 0; k < RUNS; k++) {
		double t0 = now_ms();
		bool ok = what == 0 ? logit_lens(m, ws, ids, n, rs, 3, id, p, commit, &err)
				    : logit_attribution(m, ws, ids, n, rs, NULL, id, logit, heads,
							rest, &err);
		t[k] = ok ? now_ms() - t0 : -1;
	}
	qsort(t, RUNS, sizeof *t, cmp);
	free(id);
	free(p);
	free(heads);
	free(logit);
	free(rest);
	free(commit);
	return t[RUNS / 2];
}

/* Median ms of runs runs of the circuits (what = 0), one head's positional
 * pattern (1), the faithfulness of the last row (2) or of every row (3). */
static double time_more(const model *m, const int32_t *ids, int n, int what, int runs)
{
	const size_t LH = (size_t)m->cfg.layers * m->cfg.heads, N = (size_t)n;
	const int rows = what == 3 ? n : 1;
	float *buf = malloc(((size_t)rows * (1 + N + LH + LH * N) + N * N) * sizeof *buf);
	double t[RUNS];
	av_error err;
	for (int k = 0; k < runs; k++) {
		double t0 = now_ms();
		bool ok;
		if (what == 0) {
			circuits c;
			ok = circuits_init(&c, m, &err);
			circuits_finish(&c);
		} else if (what == 1) {
			ok = circuits_positional_pattern(m, 0, 0, buf, &err);
		} else {
			float *loss = buf, *eff = loss + rows, *sp = eff + (size_t)rows * N;
			ok = faith_rows(m, ids, n, n - rows - (what == 2), rows, loss, eff, sp,
					sp + (size_t)rows * LH, NULL, NULL, &err);
		}
		t[k] = ok ? now_ms() - t0 : -1;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp);
	free(buf);
	return t[runs / 2];
}

static void line(const char *what, double ms)
{
	printf("  %-44s %9.1f ms  %7.2f frames\n", what, ms, ms / FRAME_MS);
}

int main(int argc, char **argv)
{
	(void)argc;
	blas_ensure_fast_kernel(argv); /* the kernel the CPU can run (blas.h) */
	const char *names[] = {"builtin", "builtin-causal"};
	for (int i = 0; i < 2; i++) {
		av_error err;
		model *m = model_builtin_named(names[i], &err);
		if (!m) {
			printf("%s: %s\n", names[i], err.msg);
			continue;
		}
		const int n = (int)m->cfg.context;
		int32_t *ids = malloc((size_t)n * sizeof *ids);
		for (int t = 0; t < n; t++)
			ids[t] = 3 + t % (int)(m->cfg.vocab_size - 3);
		activations ws;
		if (!activations_init(&ws, &m->cfg, 1, n, n, &err)) {
			printf("%s\n", err.msg);
			return 1;
		}
		const lens_rows one = {n - 2, 1}, all = {0, n};
		printf("%s, %d tokens (a 60 Hz frame is %.1f ms):\n", names[i], n, FRAME_MS);
		line("lens, one row (Alt-L, worker)", time_it(m, &ws, ids, n, one, 0));
		line("lens, every row (--dump --lens)", time_it(m, &ws, ids, n, all, 0));
		line("attribution, one row (Alt-L, worker)", time_it(m, &ws, ids, n, one, 1));
		line("attribution, every row (--dump --dla)", time_it(m, &ws, ids, n, all, 1));
		line("circuits, every head (Alt-I once per model)", time_more(m, ids, n, 0, RUNS));
		line("positional pattern, one head (--export)", time_more(m, ids, n, 1, RUNS));
		line("faithfulness, one row (Alt-U, worker)", time_more(m, ids, n, 2, 3));
		line("faithfulness, every row (--dump)", time_more(m, ids, n, 3, 1));
		activations_finish(&ws);
		free(ids);
		model_destroy(m);
	}
	return 0;
}
