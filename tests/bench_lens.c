/* How long the logit lens and the direct logit attribution (lens.h) take on
 * the built-in models at their full context: one row, as the view's Alt-L
 * asks on its worker for the Query row, and every row, as --dump --lens
 * --dla does. Median of a few runs each; figures printed, never asserted
 * (meson test --benchmark lens). */
#include "attnview/lens.h"
#include "attnview/modelfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 7

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

int main(void)
{
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
		const lens_rows one = {n - 1, 1}, all = {0, n};
		printf("%s, %d tokens: lens %.1f ms one row, %.1f ms all; attribution %.1f ms "
		       "one row, %.1f ms all\n",
		       names[i], n, time_it(m, &ws, ids, n, one, 0),
		       time_it(m, &ws, ids, n, all, 0), time_it(m, &ws, ids, n, one, 1),
		       time_it(m, &ws, ids, n, all, 1));
		activations_finish(&ws);
		free(ids);
		model_destroy(m);
	}
	return 0;
}
