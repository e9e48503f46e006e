/* The view's speed on the built-in model and on a bigger one (issue 14, item
 * 4): for each, the model time of one keystroke (the view's forward pass,
 * infer_attend, as the worker runs it: a recycled result, the work space's
 * cache), its share of the sgemm peak measured in the same run, and
 * keystroke -> frame on the real program on a pseudo-terminal (bench_pty.h).
 *
 * The bigger model is the one of the issue: 6 layers, 8 heads, d=256,
 * context 512, random weights (the cost does not depend on their values),
 * the built-in model's vocabulary; masked (every keystroke recomputes every
 * row) and causal (typing at the end computes one row per layer). It is
 * written to a temporary file for the program to open.
 *
 *   bench_view [--reps N] [--keys N] [--no-screen]   (ATTNVIEW_BIN: the program)
 *
 * Figures printed, never asserted. `meson test -C build --benchmark view_speed
 * --verbose`. */
#include "bench_pty.h"

#include "attnview/blas.h"
#include "attnview/infer.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Median GFLOP/s of an n^3 sgemm (2 n^3 flops) on `threads` BLAS threads. */
static double sgemm_peak(int n, int threads, int reps)
{
	blas_set_threads(threads);
	float *a = malloc((size_t)n * n * 4), *b = malloc((size_t)n * n * 4);
	float *c = malloc((size_t)n * n * 4);
	if (!a || !b || !c)
		abort();
	for (size_t i = 0; i < (size_t)n * n; i++) {
		a[i] = (float)(i % 7) * 0.1f;
		b[i] = (float)(i % 5) * 0.1f;
	}
	double *t = malloc((size_t)(reps + 1) * sizeof *t);
	for (int r = 0; r < reps + 1; r++) {
		double t0 = bench_now_ms();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		t[r] = bench_now_ms() - t0;
	}
	double med = bench_pct(t + 1, reps, 0.5); /* the first run warms up */
	free(t);
	free(a);
	free(b);
	free(c);
	blas_set_threads(1);
	return 2.0 * n * n * (double)n / med * 1e-6;
}

/* FLOPs of the matrix products of a pass over rows p..n-1 of n (2 per
 * multiply-add): per layer, the four linear layers 24 d^2 per row; the
 * attention q.k and weights x values, 4 d per (query, key) pair computed: n
 * keys per row for a masked model, i + 1 for causal row i. */
static double pass_flops(const model_config *c, int p, int n)
{
	double d = c->dim, pairs = 0;
	for (int i = p; i < n; i++)
		pairs += c->objective == OBJ_CAUSAL ? i + 1 : n;
	return c->layers * (24.0 * d * d * (n - p) + 4.0 * d * pairs);
}

/* The text of n tokens of bench_pty's sample text, in m's vocabulary. */
static void text_tokens(const model *m, token *t, int n)
{
	static char text[65536];
	bench_text(text, sizeof text, n);
	const unsigned char *s = (const unsigned char *)text;
	int i = 0;
	while (*s && i < n) {
		uint32_t cp = *s++;
		if (cp >= 0xC0) {
			int more = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : 1;
			cp &= 0x3F >> more;
			for (int k = 0; k < more && *s; k++)
				cp = cp << 6 | (*s++ & 0x3F);
		}
		memset(&t[i], 0, sizeof t[i]);
		t[i].cp = cp;
		t[i].id = vocab_id(&m->vocab, cp);
		i++;
	}
	for (; i < n; i++) {
		memset(&t[i], 0, sizeof t[i]);
		t[i].cp = 'x';
		t[i].id = vocab_id(&m->vocab, 'x');
	}
}

/* p50 and p99 of the model time, FLOPs per key (mean of the two kinds), and
 * for the key that adds a token, the rows computed and taken from the cache. */
typedef struct timing {
	double p50, p99, flops;
	int reused, computed;
} timing;

/* Keystrokes as bench_latency types them: at the end of a text of n - 1
 * tokens, 'x' then backspace, so texts of n and n - 1 tokens alternate;
 * or (at_start) the same at the start. The model time of each, as the
 * worker spends it. */
static bool time_keys(const model *m, int n, bool at_start, int reps, timing *out)
{
	activations ws;
	av_error err;
	if (!activations_init(&ws, &m->cfg, 1, n, n, &err)) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return false;
	}
	static infer_cache cache;
	infer_cache_clear(&cache);
	static token t[AV_MAX_CONTEXT + 1], u[AV_MAX_CONTEXT + 1];
	text_tokens(m, t, n);
	/* u: t with its first token removed (typing at the start), or its last. */
	memcpy(u, at_start ? t + 1 : t, (size_t)(n - 1) * sizeof *t);
	attn_result r, spare;
	memset(&r, 0, sizeof r);
	memset(&spare, 0, sizeof spare);
	double *ms = malloc((size_t)reps * sizeof *ms), flops = 0;
	int reused = 0, computed = 0;
	bool ok = true;
	for (int k = -2; k < reps && ok; k++) {
		const token *x = k % 2 == 0 ? t : u;
		int len = k % 2 == 0 ? n : n - 1;
		/* The worker holds the result on screen and the spare: two sets. */
		attn_result tmp = r;
		r = spare;
		spare = tmp;
		attn_result_recycle(&r);
		double t0 = bench_now_ms();
		ok = infer_attend(m, &ws, &cache, x, len, &r, NULL, NULL, &err);
		double dt = bench_now_ms() - t0;
		if (k >= 0) {
			ms[k] = dt;
			flops += pass_flops(&m->cfg, cache.reused, len);
		}
		if (k >= 0 && len == n) {
			reused = cache.reused;
			computed = cache.computed;
		}
	}
	if (!ok)
		fprintf(stderr, "bench_view: %s\n", err.msg);
	out->p50 = bench_pct(ms, reps, 0.5);
	out->p99 = bench_pct(ms, reps, 0.99);
	out->flops = flops / reps;
	out->reused = reused;
	out->computed = computed;
	free(ms);
	attn_result_free(&r);
	attn_result_free(&spare);
	activations_finish(&ws);
	return ok;
}

typedef struct bench_model {
	const char *label;
	model *m;
	char path[256]; /* its file, for the program; "" for the built-in one */
} bench_model;

static model *big_model(const model *like, objective obj)
{
	model_config cfg = {(uint32_t)obj, like->cfg.vocab_size, 256, 8, 6, 512};
	av_error err;
	model *m = model_create(&cfg, like->vocab.cps, &err);
	if (!m) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return NULL;
	}
	model_init_random(m, 14);
	if (!model_set_meta_strings(m, obj == OBJ_CAUSAL ? "bench-causal" : "bench-masked",
				    "random weights", &err)) {
		model_destroy(m);
		return NULL;
	}
	return m;
}

/* keystroke -> frame on the real program: p50 and p99 of the view's own
 * clock (key read -> heatmap for its text out) and the model time it logged. */
static void screen_row(const char *bin, const bench_model *bm, int nkeys)
{
	int n = (int)bm->m->cfg.context;
	static char text[65536];
	bench_text(text, sizeof text, n - 1);
	const char *args[12];
	int k = 0;
	if (bm->path[0]) {
		args[k++] = "--model";
		args[k++] = bm->path;
	}
	args[k++] = "--text";
	args[k++] = text;
	args[k] = NULL;
	bench_run r;
	bench_keys_result res;
	if (!bench_start(&r, bin, args, 120, 40) || !bench_wait_ready(&r, 60000)) {
		printf("  %-22s screen: the program did not start\n", bm->label);
		bench_stop(&r);
		return;
	}
	bool ok = bench_type_keys(&r, nkeys, &res);
	bench_stop(&r);
	if (!ok && res.got == 0) {
		printf("  %-22s screen: no frames\n", bm->label);
		return;
	}
	printf("  %-22s keystroke -> frame p50 %7.1f ms  p99 %7.1f ms  (model %6.1f ms "
	       "p50, as the program logged it; %d keys)\n",
	       bm->label, res.screen_p50, res.screen_p99, res.model_p50, res.got);
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv);
	int reps = 21, nkeys = 60;
	bool screen = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--keys") && i + 1 < argc)
			nkeys = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-screen"))
			screen = false;
		else {
			fprintf(stderr, "usage: %s [--reps N] [--keys N] [--no-screen]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 2)
		reps = 2;
	/* As the view does (cli_view.c): the pool on every core, BLAS on one
	 * thread per caller. */
	int cores = blas_threads();
	parallel_set_threads(cores);
	blas_set_threads(1);

	av_error err;
	bench_model models[3] = {{"built-in", NULL, ""},
				 {"6L/8H/d256 masked", NULL, ""},
				 {"6L/8H/d256 causal", NULL, ""}};
	models[0].m = model_builtin(&err);
	if (!models[0].m) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return 1;
	}
	for (int i = 1; i < 3; i++) {
		models[i].m = big_model(models[0].m, i == 1 ? OBJ_MASKED : OBJ_CAUSAL);
		if (!models[i].m)
			return 1;
		snprintf(models[i].path, sizeof models[i].path, "/tmp/attnview-bench-%d-%d.attn",
			 (int)getpid(), i);
		if (!model_save(models[i].m, models[i].path, &err)) {
			fprintf(stderr, "bench_view: %s\n", err.msg);
			return 1;
		}
	}

	double peak1 = sgemm_peak(1024, 1, 7), peak = cores > 1 ? sgemm_peak(1024, cores, 7) : peak1;
	printf("attnview view speed (BLAS kernel %s, %d cores)\n", blas_corename(), cores);
	printf("sgemm 1024^3: %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on %d (the peak below)\n",
	       peak1, peak, cores);
	printf("model time of one keystroke at the model's context (infer_attend as the worker "
	       "runs it; median and p99 of %d):\n",
	       reps);
	for (int i = 0; i < 3; i++) {
		const model_config *c = &models[i].m->cfg;
		int n = (int)c->context;
		printf("  %-22s L=%u H=%u d=%u, %d tokens, %s\n", models[i].label, c->layers, c->heads,
		       c->dim, n, objective_name((objective)c->objective));
		for (int where = 0; where < 2; where++) {
			if (where == 1 && c->objective != OBJ_CAUSAL)
				break;
			timing tm;
			if (!time_keys(models[i].m, n, where == 1, reps, &tm))
				return 1;
			double gf = tm.flops / (tm.p50 * 1e-3) * 1e-9;
			printf("    typing at the %-5s %8.2f ms p50 %8.2f ms p99; a key adding a "
			       "token computes %d rows, reuses %d; %.3f GFLOP a key: %.1f GFLOP/s = "
			       "%.0f%% of the sgemm peak\n",
			       where ? "start" : "end", tm.p50, tm.p99, tm.computed, tm.reused,
			       tm.flops * 1e-9, gf, 100.0 * gf / peak);
			printf("view_model_ms %s %s %.3f peak_share %.3f\n", models[i].label,
			       where ? "start" : "end", tm.p50, gf / peak);
		}
	}
	const char *bin = getenv("ATTNVIEW_BIN");
	if (screen && bin) {
		printf("keystroke -> frame on a pty (120x40, the view's clock: key read -> the "
		       "heatmap of its text out), at the model's context:\n");
		for (int i = 0; i < 3; i++)
			screen_row(bin, &models[i], nkeys);
	} else if (screen) {
		printf("(no ATTNVIEW_BIN: keystroke -> frame not measured)\n");
	}
	for (int i = 0; i < 3; i++) {
		if (models[i].path[0])
			unlink(models[i].path);
		model_destroy(models[i].m);
	}
	return 0;
}
