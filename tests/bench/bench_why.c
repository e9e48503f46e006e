/* How long activation patching (patch.h) and the score split (score_split.h)
 * take on the built-in models at their full context: patching a text of
 * that length with one character changed in the middle, read at the last
 * row (the view's Alt-X on its worker, --dump --patch), and the score split
 * of the last block's cell (last row, first key) after the pass (the view's
 * F12, --dump --query --key). One run of patching (seconds), the median of
 * a few of the split; wall and CPU time (the machine may be shared); figures printed, never
 * asserted (meson test
 * --benchmark why). */
#include "attnview/blas.h"
#include "attnview/modelfile.h"
#include "attnview/patch.h"
#include "attnview/score_split.h"

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

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void bench(const char *name)
{
	av_error err;
	model *m = model_builtin_named(name, &err);
	if (!m) {
		printf("%s: %s\n", name, err.msg);
		return;
	}
	const int n = (int)m->cfg.context, L = (int)m->cfg.layers;
	int32_t *ids = malloc(2 * (size_t)n * sizeof *ids);
	for (int t = 0; t < n; t++)
		ids[t] = ids[n + t] = 3 + t % (int)(m->cfg.vocab_size - 3);
	ids[n + n / 2] = ids[n / 2] + 1;
	activations ws;
	if (!activations_init(&ws, &m->cfg, 1, n, n, &err)) {
		printf("%s\n", err.msg);
		exit(1);
	}
	patch_result r;
	double t0 = now_ms(), c0 = cpu_ms();
	bool ok = activation_patch(m, &ws, ids, ids + n, n, n - 1, NULL, &r, &err);
	double tp = now_ms() - t0, cp = cpu_ms() - c0;
	if (ok)
		patch_result_finish(&r);
	double t[RUNS];
	model_forward(m, &ws, ids, 1, n);
	for (int k = 0; k < RUNS; k++) {
		score_split s;
		t0 = now_ms();
		ok = score_split_compute(m, &ws, n, L - 1, 0, n - 1, 0, &s, &err);
		t[k] = ok ? now_ms() - t0 : -1;
		score_split_finish(&s);
	}
	qsort(t, RUNS, sizeof *t, cmp);
	printf("%s, %d tokens: patching %.0f ms (%.0f ms of CPU; %d heads x %d positions); "
	       "score split %.2f ms (%d parts a side)\n",
	       name, n, tp, cp, L * (int)m->cfg.heads, n, t[RUNS / 2], split_nparts(m, L - 1));
	activations_finish(&ws);
	free(ids);
	model_destroy(m);
}

int main(int argc, char **argv)
{
	(void)argc;
	blas_ensure_fast_kernel(argv); /* the kernel the CPU can run (blas.h) */
	bench("builtin");
	bench("builtin-causal");
	return 0;
}
