/* The view's speed on the built-in model and on a bigger one: for
 * each, the model time of one keystroke (the view's forward pass,
 * infer_attend, as the worker runs it: a recycled result, the work space's
 * cache), its share of the sgemm peak measured in the same run, and
 * keystroke -> frame on the real program on a pseudo-terminal (bench_pty.h).
 *
 * The bigger model is the one view speed is measured on (doc/speed.md): 6 layers, 8 heads, d=256,
 * context 512, random weights (the cost does not depend on their values),
 * the built-in model's vocabulary; masked (every keystroke recomputes every
 * row) and causal (typing at the end computes one row per layer). Then
 * nanoGPT's shakespeare_char as the converter writes it (6 layers, 6 heads,
 * d=384, context 256, its 65 characters; learned positions, the exact
 * GELU, no embedding scale, no special tokens, bias=False: attnview(5),
 * Architecture), random weights. Each is written to a temporary file for the
 * program to open.
 *
 *   bench_view [--reps N] [--keys N] [--no-screen]   (ATTNVIEW_BIN: the program)
 *
 * A causal model's key at the end, run just after a full pass, is also put
 * against the memory's read rate measured at start-up (what it reads: every
 * weight, the keys and values of the rows before).
 *
 * Figures printed, never asserted. `meson test -C build --benchmark view_speed
 * --verbose`. */
#include "bench_pty.h"

#include "attnview/analysis.h"
#include "attnview/attn_products.h"
#include "attnview/blas.h"
#include "attnview/infer.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void);

/* Median GFLOP/s of an n^3 sgemm (2 n^3 flops) on `threads` BLAS threads, by
 * the wall clock; *per_cpu (or NULL): the same per CPU-second of the process
 * (all its threads), which other programs on the machine change less. */
static double sgemm_peak(int n, int threads, int reps, double *per_cpu)
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
	double *tc = malloc((size_t)(reps + 1) * sizeof *tc);
	for (int r = 0; r < reps + 1; r++) {
		double t0 = bench_now_ms(), c0 = cpu_ms();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		t[r] = bench_now_ms() - t0;
		tc[r] = cpu_ms() - c0;
	}
	double med = bench_pct(t + 1, reps, 0.5); /* the first run warms up */
	if (per_cpu)
		*per_cpu = 2.0 * n * n * (double)n / bench_pct(tc + 1, reps, 0.5) * 1e-6;
	free(t);
	free(tc);
	free(a);
	free(b);
	free(c);
	blas_set_threads(1);
	return 2.0 * n * n * (double)n / med * 1e-6;
}

/* The sgemm peak as the pass would reach it: one 1024^3 product, its rows
 * split over the thread pool, each thread calling OpenBLAS single-threaded
 * (as the pass does; OpenBLAS's own threads would spin after it and take
 * the pass's CPU). Taken after each keystroke, so that a keystroke's share
 * is against the peak of that moment: on a shared machine the CPU this
 * process gets changes from second to second. GFLOP/s. */
typedef struct pool_gemm {
	const float *a, *b;
	float *c;
	int n, nt;
} pool_gemm;

static void pool_gemm_rows(void *ctx, int begin, int end)
{
	const pool_gemm *g = ctx;
	for (int s = begin; s < end; s++) {
		int r0 = g->n * s / g->nt, r1 = g->n * (s + 1) / g->nt;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r1 - r0, g->n, g->n, 1.0f,
			    g->a + (size_t)r0 * g->n, g->n, g->b, g->n, 0.0f,
			    g->c + (size_t)r0 * g->n, g->n);
	}
}

static double pool_peak(void)
{
	enum { N = 1024 };
	static float *a, *b, *c;
	if (!a) {
		a = malloc((size_t)N * N * sizeof *a);
		b = malloc((size_t)N * N * sizeof *b);
		c = malloc((size_t)N * N * sizeof *c);
		if (!a || !b || !c)
			abort();
		for (size_t i = 0; i < (size_t)N * N; i++) {
			a[i] = (float)(i % 7) * 0.1f;
			b[i] = (float)(i % 5) * 0.1f;
		}
	}
	pool_gemm g = {a, b, c, N, parallel_threads()};
	double t0 = bench_now_ms();
	parallel_for_n(g.nt, g.nt, pool_gemm_rows, &g);
	return 2.0 * N * N * (double)N / (bench_now_ms() - t0) * 1e-6;
}

/* The memory's read rate on the pool's threads: GB/s summing a 512 MB
 * buffer (far beyond the caches) in one slice a thread, median of 5. What
 * a keystroke that reads every weight from memory can draw at most. */
typedef struct read_job {
	const uint64_t *p;
	size_t n;
	int nt;
	uint64_t sums[PARALLEL_MAX_THREADS];
} read_job;

static void read_slices(void *ctx, int begin, int end)
{
	read_job *j = ctx;
	for (int s = begin; s < end; s++) {
		size_t a = j->n * (size_t)s / (size_t)j->nt,
		       b = j->n * (size_t)(s + 1) / (size_t)j->nt;
		uint64_t x0 = 0, x1 = 0, x2 = 0, x3 = 0;
		for (size_t i = a; i + 4 <= b; i += 4)
			x0 += j->p[i], x1 += j->p[i + 1], x2 += j->p[i + 2], x3 += j->p[i + 3];
		j->sums[s] = x0 + x1 + x2 + x3;
	}
}

static double read_rate(void)
{
	const size_t bytes = (size_t)512 << 20;
	read_job j = {.n = bytes / 8, .nt = parallel_threads()};
	uint64_t *p = malloc(bytes);
	if (!p)
		return 0;
	memset(p, 1, bytes);
	j.p = p;
	double t[5];
	for (int r = 0; r < 5; r++) {
		double t0 = bench_now_ms();
		parallel_for_n(j.nt, j.nt, read_slices, &j);
		t[r] = bench_now_ms() - t0;
	}
	free(p);
	return (double)bytes / (bench_pct(t, 5, 0.5) * 1e-3) * 1e-9;
}

static double g_read_gbs; /* read_rate(), measured at start-up */

/* Bytes a keystroke at the end of n tokens reads: every layer's weights
 * (the four products, 12 d^2 floats) and the keys and values of the rows
 * before (2 d floats a row). */
static double key_bytes(const model_config *c, int n)
{
	const double d = c->dim;
	return 4.0 * c->layers * (12 * d * d + 2.0 * n * d);
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

/* The products of a masked pass over n tokens alone: the same calls with
 * the same shapes (OpenBLAS's, and the attention's of attn_products.h with
 * their packing of the keys where the pass makes them so), dealt to the
 * pool as infer.c deals them (the four linear layers by slices of rows, the
 * attention by (head, block of INFER_ATT_BLOCK query rows) tasks
 * round-robin), each layer with weights of its own, and nothing else: no
 * LayerNorm, softmax, GELU, residual or copy. Its share of the peak is what
 * a pass whose products are these could reach at most. */
typedef struct products {
	int n, d, H, hs, nt, nblk, phase;
	const float *w; /* this layer's qkv (3d x d), proj (d x d), fc (4d x d), fc2 (d x 4d) */
	float *x, *qkv, *y, *h, *out, *S;
	float *kt; /* the keys packed, a head after another, or NULL: OpenBLAS's products */
	size_t kt_head;
} products;

static void products_pack(void *ctx, int begin, int end)
{
	const products *p = ctx;
	for (int h = begin; h < end; h++)
		attn_pack_keys(p->kt + (size_t)h * p->kt_head, p->qkv + p->d + (size_t)h * p->hs,
			       3 * p->d, p->n, p->hs);
}

static void products_slices(void *ctx, int begin, int end)
{
	const products *p = ctx;
	const int n = p->n, d = p->d, C3 = 3 * d;
	const float *wq = p->w, *wp = wq + (size_t)C3 * d, *wf = wp + (size_t)d * d;
	const float *wf2 = wf + (size_t)4 * d * d;
	for (int s = begin; s < end; s++) {
		if (p->phase == 1) { /* (head, query block) tasks */
			float *S = p->S + (size_t)s * INFER_ATT_BLOCK * n;
			for (int t = s; t < p->H * p->nblk; t += p->nt) {
				int h = t / p->nblk, i0 = t % p->nblk * INFER_ATT_BLOCK;
				int rows = i0 + INFER_ATT_BLOCK < n ? INFER_ATT_BLOCK : n - i0;
				const float *q = p->qkv + (size_t)i0 * C3 + (size_t)h * p->hs;
				const float *k = p->qkv + d + (size_t)h * p->hs, *v = k + d;
				float *y = p->y + (size_t)i0 * d + (size_t)h * p->hs;
				if (p->kt) {
					attn_scores(S, n, q, C3, p->kt + (size_t)h * p->kt_head,
						    rows, n, p->hs);
					attn_mix(y, d, S, n, v, C3, rows, n, p->hs);
					continue;
				}
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, p->hs,
					    1.0f, q, C3, k, C3, 0.0f, S, n);
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, p->hs,
					    n, 1.0f, S, n, v, C3, 0.0f, y, d);
			}
			continue;
		}
		int r = n * s / p->nt, cnt = n * (s + 1) / p->nt - r;
		const size_t R = (size_t)r;
#define ROWS_TIMES(out, ldo, in, ldi, w, oc, c)                                                    \
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, cnt, oc, c, 1.0f, in + R * ldi, ldi,  \
		    w, c, 0.0f, out + R * ldo, ldo)
		if (p->phase == 0) {
			ROWS_TIMES(p->qkv, C3, p->x, d, wq, C3, d);
		} else {
			ROWS_TIMES(p->out, d, p->y, d, wp, d, d);
			ROWS_TIMES(p->h, 4 * d, p->x, d, wf, 4 * d, d);
			ROWS_TIMES(p->out, d, p->h, 4 * d, wf2, d, 4 * d);
		}
#undef ROWS_TIMES
	}
}

/* Median ms of the products of `layers` layers, and the median share of
 * the pool's peak measured just after each repetition; *attn_ms: the
 * attention's products' median ms. False when out of memory. */
static bool products_alone(const model_config *c, int n, int reps, double *ms, double *share,
			   double *attn_ms)
{
	const int d = (int)c->dim, L = (int)c->layers, nt = parallel_threads();
	const size_t per_layer = (size_t)12 * d * d, N = (size_t)n;
	products p = {.n = n, .d = d, .H = (int)c->heads, .hs = d / (int)c->heads, .nt = nt};
	p.nblk = (n + INFER_ATT_BLOCK - 1) / INFER_ATT_BLOCK;
	p.kt_head = attn_packed_keys_floats(n, p.hs);
	const bool own = infer_own_products(p.hs, n);
	p.kt = own ? malloc((size_t)p.H * p.kt_head * sizeof *p.kt) : NULL;
	float *w = malloc(per_layer * (size_t)L * sizeof *w);
	float *buf = malloc(
	    (N * (1 + 3 + 1 + 4 + 1) * (size_t)d + (size_t)nt * INFER_ATT_BLOCK * N) * sizeof *buf);
	double *t = malloc((size_t)reps * 3 * sizeof *t), *sh = t + reps, *ta = t + 2 * reps;
	bool ok = w && buf && t && (p.kt || !own);
	if (ok) {
		for (size_t i = 0; i < per_layer * (size_t)L; i++)
			w[i] = (float)(i % 13) * 0.01f - 0.06f;
		p.x = buf;
		p.qkv = p.x + N * d;
		p.y = p.qkv + 3 * N * d;
		p.h = p.y + N * d;
		p.out = p.h + 4 * N * d;
		p.S = p.out + N * d;
		for (size_t i = 0; i < N * d; i++)
			p.x[i] = p.y[i] = (float)(i % 11) * 0.01f - 0.05f;
		memset(p.qkv, 0, 3 * N * d * sizeof *p.qkv);
	}
	for (int r = -1; ok && r < reps; r++) { /* the first warms up */
		double t0 = bench_now_ms(), tatt = 0;
		for (int l = 0; l < L; l++) {
			p.w = w + per_layer * (size_t)l;
			for (p.phase = 0; p.phase < 3; p.phase++) {
				double a0 = bench_now_ms();
				if (p.phase == 1 && p.kt)
					parallel_for_n(nt, p.H, products_pack, &p);
				parallel_for_n(nt, nt, products_slices, &p);
				if (p.phase == 1)
					tatt += bench_now_ms() - a0;
			}
		}
		double dt = bench_now_ms() - t0;
		if (r >= 0) {
			t[r] = dt;
			ta[r] = tatt;
			sh[r] = pass_flops(c, 0, n) / (dt * 1e-3) * 1e-9 / pool_peak();
		}
	}
	if (ok) {
		*ms = bench_pct(t, reps, 0.5);
		*share = bench_pct(sh, reps, 0.5);
		*attn_ms = bench_pct(ta, reps, 0.5);
	}
	free(p.kt);
	free(w);
	free(buf);
	free(t);
	return ok;
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

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Of the keystrokes timed: p50 and p99 of the model time, p50 of the CPU
 * time it took (all threads), FLOPs of a key (mean), and of the last key,
 * the rows computed and taken from the cache; the bytes of the numbers the
 * last result holds once the view has read the head on screen (weights,
 * queries and keys: the scores are computed from them when asked), and what
 * n x n weights and scores per head would. */
typedef struct timing {
	double p50, p99, cpu50, flops;
	double share;  /* median over the keys of GFLOP/s / pool_peak() just after */
	double ratio;  /* typing at the end: median of the keys' time / a full pass's */
	double full50; /* and the p50 of those full passes */
	int reused, computed;
	double bytes, dense_bytes;
} timing;

/* A text typed one character a key, as the worker runs it: a recycled result
 * of two keystrokes ago (the view holds the last one), the work space's
 * cache; at the end (each text the last one and a character more) or at the
 * start (a character before the last text: every row changes). */
typedef struct typer {
	const model *m;
	activations ws;
	infer_cache *cache;
	token *t;
	attn_result r, spare;
	int n, keys;
	bool at_start;
} typer;

static bool typer_init(typer *ty, const model *m, int n, bool at_start, int keys, infer_cache *c,
		       token *t)
{
	av_error err;
	memset(ty, 0, sizeof *ty);
	if (!activations_init(&ty->ws, &m->cfg, 1, n, n, &err)) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return false;
	}
	if (keys >= n) {
		fprintf(stderr, "bench_view: %d keystrokes do not fit in %d tokens\n", keys, n);
		activations_finish(&ty->ws);
		return false;
	}
	ty->m = m;
	ty->cache = c;
	infer_cache_clear(c);
	ty->t = t;
	text_tokens(m, t, n);
	ty->n = n;
	ty->keys = keys;
	ty->at_start = at_start;
	return true;
}

/* Keystroke k (-1: the text before the first one); its wall and CPU ms: the
 * pass, and the weights of the head the view shows (layer 0, head 0), which
 * a masked model's result computes when they are first read. */
static bool typer_key(typer *ty, int k, double *dt, double *dc)
{
	int len = ty->n - ty->keys + 1 + k;
	const token *x = ty->at_start ? ty->t + (ty->n - len) : ty->t;
	attn_result tmp = ty->r;
	ty->r = ty->spare;
	ty->spare = tmp;
	attn_result_recycle(&ty->r);
	av_error err;
	double t0 = bench_now_ms(), c0 = cpu_ms();
	bool ok = infer_attend(ty->m, &ty->ws, ty->cache, x, len, &ty->r, NULL, NULL, &err) &&
		  (ty->r.pack || attn_head_weights(&ty->r, 0, 0) ||
		   av_fail(&err, "out of memory for the weights on screen"));
	*dt = bench_now_ms() - t0;
	*dc = cpu_ms() - c0;
	if (!ok)
		fprintf(stderr, "bench_view: %s\n", err.msg);
	return ok;
}

static void typer_finish(typer *ty, timing *out)
{
	const attn_result *r = &ty->r;
	const double LH = (double)r->layers * r->heads;
	out->bytes = (double)attn_result_bytes(r);
	out->dense_bytes = 2.0 * LH * (double)r->n * r->n * sizeof(float);
	attn_result_finish(&ty->r);
	attn_result_finish(&ty->spare);
	infer_cache_clear(ty->cache);
	activations_finish(&ty->ws);
}

/* `reps` keystrokes typing a text up to n tokens (typer), each followed by
 * a product that measures the sgemm peak, unless !paired. Typing at the end
 * of a causal model's text with `paired`, each key is followed by a full pass
 * of the same model on a text typed at the start, and the ratio of the two
 * times is taken key by key: both see the machine's load of the same
 * moment, and each key starts from the caches a full pass leaves (its
 * weights, keys and values read from memory). Without, the keys follow one
 * another as when someone types, nothing between them. */
static bool time_keys(const model *m, int n, bool at_start, bool paired, int reps, timing *out)
{
	static infer_cache cache, full_cache;
	static token t[AV_MAX_CONTEXT], ft[AV_MAX_CONTEXT];
	const int warm = 2, keys = reps + warm;
	const bool pair = paired && !at_start && m->cfg.objective == OBJ_CAUSAL;
	typer ty, full;
	if (!typer_init(&ty, m, n, at_start, keys, &cache, t))
		return false;
	if (pair && !typer_init(&full, m, n, true, keys, &full_cache, ft)) {
		typer_finish(&ty, out);
		return false;
	}
	double *ms = malloc((size_t)reps * 5 * sizeof *ms), *cpu = ms + reps,
	       *share = ms + 2 * reps;
	double *ratio = ms + 3 * reps, *full_ms = ms + 4 * reps;
	double flops = 0;
	bool ok = ms != NULL;
	for (int k = -1; k < keys && ok; k++) {
		double dt, dc, ft_ms, fc;
		ok = typer_key(&ty, k, &dt, &dc);
		if (ok && k >= warm) {
			double f = pass_flops(&m->cfg, cache.reused, ty.r.n);
			ms[k - warm] = dt;
			cpu[k - warm] = dc;
			/* (The peak's product between two keys would empty the caches
			 * the keys typed one after another find full.) */
			share[k - warm] = paired ? f / (dt * 1e-3) * 1e-9 / pool_peak() : 0;
			flops += f;
			out->reused = cache.reused;
			out->computed = cache.computed;
		}
		if (ok && pair) {
			ok = typer_key(&full, k, &ft_ms, &fc);
			if (k >= warm)
				ratio[k - warm] = dt / ft_ms, full_ms[k - warm] = ft_ms;
		}
	}
	if (ok) {
		out->p50 = bench_pct(ms, reps, 0.5);
		out->p99 = bench_pct(ms, reps, 0.99);
		out->cpu50 = bench_pct(cpu, reps, 0.5);
		out->share = bench_pct(share, reps, 0.5);
		out->ratio = pair ? bench_pct(ratio, reps, 0.5) : 0;
		out->full50 = pair ? bench_pct(full_ms, reps, 0.5) : 0;
		out->flops = flops / reps;
	}
	free(ms);
	typer_finish(&ty, out);
	if (pair) {
		timing unused;
		typer_finish(&full, &unused);
	}
	return ok;
}

typedef struct bench_model {
	const char *label;
	model *m;
	char path[256]; /* its file, for the program; "" for the built-in one */
} bench_model;

static model *big_model(const model *like, objective obj)
{
	model_config cfg = {(uint32_t)obj, like->cfg.vocab_size, 256, 8, 6, 512, {0}};
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

/* nanoGPT's config/train_shakespeare_char.py, converted: its vocabulary
 * (data/shakespeare_char's 65 characters after attnview's three markers),
 * random weights with the zeros its architecture promises. */
static model *shakespeare_model(void)
{
	static const char chars[] = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz";
	enum { NC = sizeof chars - 1 };
	uint32_t cps[TOK_NSPECIAL + NC];
	for (uint32_t i = 0; i < TOK_NSPECIAL + NC; i++)
		cps[i] = i < TOK_NSPECIAL ? AV_SPECIAL_CP + i
					  : (uint32_t)(unsigned char)chars[i - TOK_NSPECIAL];
	model_arch a = {POS_LEARNED,   GELU_ERF,    SCALE_ONE,	   OUT_TIED,
			SPECIALS_NONE, BIASES_NONE, ORIGIN_NANOGPT};
	model_config cfg = {OBJ_CAUSAL, TOK_NSPECIAL + NC, 384, 6, 6, 256, a};
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	if (!m) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return NULL;
	}
	model_init_random(m, 15);
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	while (tensor_iter_next(&it, &t))
		if (t.init == INIT_ZERO) /* every bias: none */
			memset(m->params + t.offset, 0, t.size * sizeof(float));
	memset(m->p.wte, 0, TOK_NSPECIAL * cfg.dim * sizeof(float)); /* no special rows */
	if (!model_set_meta_strings(m, "bench-shakespeare_char", "random weights", &err)) {
		model_destroy(m);
		return NULL;
	}
	return m;
}

/* keystroke -> frame on the real program: nkeys characters typed at the end
 * of a text that reaches the context with the last one (start: a text one
 * character short of the context, the cursor moved to its start with
 * Ctrl-A, a character typed there and taken back in turn, so that a causal
 * model computes every row again); p50 and p99 of the view's own clock
 * (key read -> the heatmap of its text out) and the model time the program
 * logged. */
static void screen_row(const char *bin, const bench_model *bm, int nkeys, bool overview, bool start)
{
	int n = (int)bm->m->cfg.context;
	if (nkeys > n - 2)
		nkeys = n - 2;
	static char text[65536];
	bench_text(text, sizeof text, start ? n - 1 : n - nkeys);
	const char *args[12];
	int k = 0;
	if (bm->path[0]) {
		args[k++] = "--model";
		args[k++] = bm->path;
	}
	args[k++] = "--text";
	args[k++] = text;
	if (overview) {
		args[k++] = "--show";
		args[k++] = "overview";
	}
	args[k] = NULL;
	bench_run r;
	bench_keys_result res;
	char label[64];
	snprintf(label, sizeof label, "%s%s", bm->label,
		 overview ? " overview"
		 : start  ? " start"
			  : "");
	if (!bench_start(&r, bin, args, 120, 40) || !bench_wait_ready(&r, 60000)) {
		printf("  %-19s the program did not start\n", label);
		bench_stop(&r);
		return;
	}
	if (start && write(r.pty, "\x01", 1) == 1) /* Ctrl-A: the start of the line */
		while (bench_log_line(&r, 300))
			;
	bool ok = bench_type_keys(&r, nkeys, !start, &res);
	bench_stop(&r);
	if (!ok && res.got == 0) {
		printf("  %-19s no frames\n", label);
		return;
	}
	printf("  %-19s keystroke -> frame p50 %7.2f ms, p99 %7.2f ms; model %7.2f ms p50 "
	       "(%d keys, %d to %d tokens)\n",
	       label, res.screen_p50, res.screen_p99, res.model_p50, res.got,
	       start ? n : n - nkeys + 1, n);
	if (res.partial)
		printf("  %-19s %d of %d first frames drew layer 0 before the pass ended; "
		       "every layer in p50 %7.2f ms (first frame / that: %.0f%%)\n",
		       "", res.partial, res.got, res.full_p50,
		       100.0 * res.screen_p50 / res.full_p50);
	printf("view_frame_ms %s%s p50 %.3f p99 %.3f model %.3f full %.3f partial %d\n",
	       overview ? "overview" : bm->label, start ? "-start" : "", res.screen_p50,
	       res.screen_p99, res.model_p50, res.full_p50, res.partial);
}

/* The screen's output read and dropped for ms milliseconds. */
static void settle(bench_run *r, double ms)
{
	double end = bench_now_ms() + ms;
	while (bench_now_ms() < end)
		bench_pump(r, 1);
}

/* One key written to the view, until the frame of its text's complete
 * result is logged. */
static bool type_one(bench_run *r, const char *key)
{
	settle(r, 2);
	if (write(r->pty, key, strlen(key)) != (ssize_t)strlen(key))
		return false;
	const char *l;
	int partial = 0;
	while ((l = bench_log_line(r, 30000)))
		if (sscanf(l, "key %*u %*d %*f %*f %*f %*f %d", &partial) == 1)
			break;
	while (l && partial > 0 && (l = bench_log_line(r, 30000)))
		if (strncmp(l, "full ", 5) == 0)
			break;
	return l != NULL;
}

/* The first switch to the overview (F3) on the real program at 120x40,
 * with a result computed on the map at the model's context (a masked
 * model's keeps only the head on the map): the view's clock from the key
 * read to the overview's first frame, all of it the interface thread's
 * time, with the heads' weights that thread computed for it; and to the
 * frame with every head and role in. reps times, on a new result each
 * (a character typed on the map and taken back), the predictions and jobs
 * of the result given a moment first. */
static void switch_row(const char *bin, const bench_model *bm, int reps)
{
	int n = (int)bm->m->cfg.context;
	static char text[65536];
	bench_text(text, sizeof text, n - 1);
	const char *args[8];
	int k = 0;
	if (bm->path[0]) {
		args[k++] = "--model";
		args[k++] = bm->path;
	}
	args[k++] = "--text";
	args[k++] = text;
	args[k] = NULL;
	bench_run r;
	double frame[100], full[100];
	unsigned long long heads = 0;
	int got = 0;
	bool ok = bench_start(&r, bin, args, 120, 40) && bench_wait_ready(&r, 60000);
	for (int i = 0; ok && i < reps && i < 100; i++) {
		double key = 0, t1 = 0, t2 = 0;
		unsigned long long h = 0;
		const char *l;
		ok = type_one(&r, i % 2 ? "\x7f" : "x");
		settle(&r, 1500);
		if (!ok || write(r.pty, "\033OR", 3) != 3) /* F3 */
			break;
		while ((l = bench_log_line(&r, 30000)))
			if (sscanf(l, "switch OVERVIEW %lf %lf %llu", &key, &t1, &h) != 3 &&
			    sscanf(l, "switched OVERVIEW %lf", &t2) == 1)
				break;
		ok = l && write(r.pty, "\033OR", 3) == 3;
		if (!ok)
			break;
		frame[got] = t1 - key;
		full[got] = t2 - key;
		heads += h;
		got++;
		settle(&r, 200);
	}
	bench_stop(&r);
	if (!got) {
		printf("  %-19s no switch to the overview logged\n", bm->label);
		return;
	}
	double f50 = bench_pct(frame, got, 0.5), f99 = bench_pct(frame, got, 0.99);
	double full50 = bench_pct(full, got, 0.5);
	printf("  %-19s the first frame of the overview p50 %7.2f ms, max %7.2f ms (the "
	       "interface's thread, %.1f heads computed on it a switch); every head in "
	       "p50 %7.2f ms (%d switches at %d tokens)\n",
	       bm->label, f50, f99, (double)heads / got, full50, got, n);
	printf("view_switch_ms overview %s p50 %.3f max %.3f heads_here %.1f full %.3f\n",
	       bm->label, f50, f99, (double)heads / got, full50);
}

/* The rows of one model: its keystrokes at the end (and at the start for a
 * causal model), against the peaks measured at start-up (peak on every core,
 * cpu1 per CPU-second on one). */
static bool report_model(const bench_model *bm, int reps, int cores, double peak, double cpu1)
{
	const model_config *c = &bm->m->cfg;
	int n = (int)c->context;
	printf("  %-19s L=%u H=%u d=%u, context %d, %s\n", bm->label, c->layers, c->heads, c->dim,
	       n, objective_name((objective)c->objective));
	for (int where = 0; where < 2; where++) {
		if (where == 1 && c->objective != OBJ_CAUSAL)
			break;
		timing tm = {0}, alone = {0};
		if (!time_keys(bm->m, n, where == 1, true, reps, &tm))
			return false;
		/* Typing at the end of a causal text, also the keys alone. */
		const bool typing = where == 0 && c->objective == OBJ_CAUSAL;
		if (typing && !time_keys(bm->m, n, false, false, reps, &alone))
			return false;
		double gf = tm.flops / (tm.p50 * 1e-3) * 1e-9;
		double gc = tm.flops / (tm.cpu50 * 1e-3) * 1e-9;
		printf("    at the %-5s p50 %7.2f ms, p99 %7.2f ms, CPU %7.2f ms; rows "
		       "computed %3d, reused %3d; %.3f GFLOP; share %3.0f%% (first %3.0f%%, "
		       "CPU %3.0f%%)\n",
		       where ? "start" : "end", tm.p50, tm.p99, tm.cpu50, tm.computed, tm.reused,
		       tm.flops * 1e-9, 100.0 * tm.share, 100.0 * gf / peak, 100.0 * gc / cpu1);
		printf("    result's weights (as the view reads them), q and k: %.1f MB (n x n "
		       "weights and scores per head: %.1f MB, %.2fx)\n",
		       tm.bytes / 1048576.0, tm.dense_bytes / 1048576.0, tm.dense_bytes / tm.bytes);
		if (tm.ratio > 0) {
			double gbs = key_bytes(c, n) / (tm.p50 * 1e-3) * 1e-9;
			printf("    a keystroke at the end over a full pass (at the start) "
			       "run after it: median %.1f%% over %d keys; it reads %.1f MB "
			       "(every weight, the rows' keys and values) at %.1f GB/s, %.0f%% "
			       "of the memory's read rate\n",
			       100.0 * tm.ratio, reps, key_bytes(c, n) / 1e6, gbs,
			       100.0 * gbs / g_read_gbs);
		}
		if (typing)
			printf("    the keys typed one after another, no full pass between: "
			       "p50 %7.2f ms, p99 %7.2f ms (%.1f%% of the paired full "
			       "passes' p50 %.2f ms)\n",
			       alone.p50, alone.p99, 100.0 * alone.p50 / tm.full50, tm.full50);
		if (c->objective == OBJ_MASKED) {
			double pm, psh, pa;
			if (!products_alone(c, n, reps, &pm, &psh, &pa))
				return false;
			printf("    its products alone (the same calls, no softmax, "
			       "LayerNorm or GELU): p50 %7.2f ms, share %3.0f%%, the "
			       "attention's %.2f ms of them; the pass is %.0f%% of that "
			       "ceiling\n",
			       pm, 100.0 * psh, pa, 100.0 * tm.share / psh);
			printf("view_products_alone %s p50 %.3f share %.3f attention %.3f\n",
			       bm->label, pm, psh, pa);
		}
		printf("view_model_ms %s %s p50 %.3f p99 %.3f cpu %.3f share %.3f "
		       "first_share %.3f cpu_share %.3f result_mb %.2f dense_mb %.2f "
		       "end_over_full %.4f\n",
		       bm->label, where ? "start" : "end", tm.p50, tm.p99, tm.cpu50, tm.share,
		       gf / peak, gc / cpu1, tm.bytes / 1048576.0, tm.dense_bytes / 1048576.0,
		       tm.ratio);
	}
	return true;
}

/* The model files written for the program, removed however main returns. */
/* The labeller (head_roles) on every head of a result at n tokens, on the
 * thread that draws (the overview labels every tile): median ms of 5, and
 * its share of a 60 Hz frame. */
static bool report_labeller(const bench_model *bm, int n)
{
	const model *m = bm->m;
	if (n > (int)m->cfg.context)
		return true;
	static token t[AV_MAX_CONTEXT];
	text_tokens(m, t, n);
	activations ws;
	attn_result r;
	av_error err;
	memset(&r, 0, sizeof r);
	if (!activations_init(&ws, &m->cfg, 1, n, n, &err) ||
	    !model_attend(m, &ws, t, n, 0, &r, &err)) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return false;
	}
	double ms[5];
	for (int k = 0; k < 5; k++) {
		double t0 = bench_now_ms();
		for (int l = 0; l < r.layers; l++)
			for (int h = 0; h < r.heads; h++) {
				attn_matrix a = attn_result_head(&r, l, h);
				role_scores rs;
				head_roles(&rs, &a, r.tokens);
			}
		ms[k] = bench_now_ms() - t0;
	}
	for (int i = 1; i < 5; i++) /* sorted, for the median */
		for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
			double x = ms[j];
			ms[j] = ms[j - 1];
			ms[j - 1] = x;
		}
	int heads = r.layers * r.heads;
	printf("  %-18s %4d tokens: %3d heads labelled in %7.2f ms (%.2f ms a head), "
	       "%.0f%% of a 60 Hz frame\n",
	       bm->label, n, heads, ms[2], ms[2] / heads, 100 * ms[2] / (1000.0 / 60));
	attn_result_finish(&r);
	activations_finish(&ws);
	return true;
}

#define NMODELS 4
static char files[NMODELS - 1][256];

static void remove_files(void)
{
	for (int i = 0; i < NMODELS - 1; i++)
		if (files[i][0])
			unlink(files[i]);
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv);
	int reps = 21, nkeys = 60;
	bool screen = true, only_switch = false; /* --switch: the overview's switch alone */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--keys") && i + 1 < argc)
			nkeys = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-screen"))
			screen = false;
		else if (!strcmp(argv[i], "--switch"))
			only_switch = true;
		else {
			fprintf(stderr,
				"usage: %s [--reps N] [--keys N] [--no-screen] [--switch]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 2)
		reps = 2;
	if (reps > 100)
		reps = 100;
	/* As the view does (cli_view.c): the pool on every core, BLAS on one
	 * thread per caller. */
	int cores = blas_threads();
	parallel_set_threads(cores);
	blas_set_threads(1);

	av_error err;
	bench_model models[NMODELS] = {{"built-in", NULL, ""},
				       {"6L/8H/d256 masked", NULL, ""},
				       {"6L/8H/d256 causal", NULL, ""},
				       {"shakespeare_char", NULL, ""}};
	models[0].m = model_builtin(&err);
	if (!models[0].m) {
		fprintf(stderr, "bench_view: %s\n", err.msg);
		return 1;
	}
	for (int i = 1; i < NMODELS; i++) {
		models[i].m = i == 3 ? shakespeare_model()
				     : big_model(models[0].m, i == 1 ? OBJ_MASKED : OBJ_CAUSAL);
		if (!models[i].m)
			return 1;
		snprintf(models[i].path, sizeof models[i].path, "/tmp/attnview-bench-%d-%d.attn",
			 (int)getpid(), i);
		snprintf(files[i - 1], sizeof files[i - 1], "%s", models[i].path);
		if (files[0][0] && i == 1)
			atexit(remove_files);
		if (!model_save(models[i].m, models[i].path, &err)) {
			fprintf(stderr, "bench_view: %s\n", err.msg);
			return 1;
		}
	}

	double cpu1;
	double peak1 = sgemm_peak(1024, 1, 7, &cpu1);
	double peak = cores > 1 ? sgemm_peak(1024, cores, 7, NULL) : peak1;
	double load[3] = {0, 0, 0};
	FILE *la = fopen("/proc/loadavg", "r");
	if (la) {
		if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
			load[0] = 0;
		fclose(la);
	}
	g_read_gbs = read_rate();
	printf("attnview view speed: BLAS kernel %s, %d cores, load average %.2f\n",
	       blas_corename(), cores, load[0]);
	printf("memory read rate: %.1f GB/s on %d threads (512 MB summed)\n", g_read_gbs,
	       parallel_threads());
	printf("sgemm 1024^3: %.1f GFLOP/s on %d threads (the peak below), %.1f on 1 thread "
	       "(%.1f per CPU-second)\n",
	       peak, cores, peak1, cpu1);
	printf("model time of a keystroke, %d characters typed up to the model's context "
	       "(infer_attend as the worker runs it). share: useful GFLOP/s against the sgemm "
	       "peak of the thread pool measured just after each key (median of the keys' "
	       "ratios); first: against the %d-thread peak above; CPU: GFLOP per CPU-second "
	       "against the 1-thread peak per CPU-second\n",
	       reps, cores);
	for (int i = 0; i < NMODELS && !only_switch; i++)
		if (!report_model(&models[i], reps, cores, peak, cpu1))
			return 1;
	const char *bin = getenv("ATTNVIEW_BIN");
	if (only_switch && bin) {
		printf("the first switch to the overview, on a pty (120x40; the view's clock: "
		       "F3 read -> the overview out):\n");
		for (int i = 0; i < 2; i++)
			switch_row(bin, &models[i], reps < 100 ? reps : 100);
	}
	if (only_switch) {
		for (int i = 0; i < NMODELS; i++)
			model_destroy(models[i].m);
		return 0;
	}
	printf("the head labeller, every head of the text (the overview's tiles):\n");
	for (int i = 0; i < 2; i++)
		for (int n = 128; n <= 512; n *= 4)
			if (!report_labeller(&models[i], n))
				return 1;
	if (screen && bin) {
		printf("keystroke -> frame on a pty (120x40; the view's clock: key read -> the "
		       "heatmap of its text out), %d characters typed at the end:\n",
		       nkeys);
		for (int i = 0; i < NMODELS; i++)
			screen_row(bin, &models[i], nkeys, false, false);
		/* The overview of the bigger masked model: every head drawn and
		 * labelled with its role on every keystroke. */
		screen_row(bin, &models[1], nkeys, true, false);
		/* Causal models edited at the start: every row again, the layer
		 * on screen first. */
		screen_row(bin, &models[2], nkeys, false, true);
		screen_row(bin, &models[3], nkeys, false, true);
		printf("the first switch to the overview, on a pty (120x40; the view's clock: "
		       "F3 read -> the overview out):\n");
		for (int i = 0; i < 2; i++)
			switch_row(bin, &models[i], reps < 11 ? reps : 11);
	} else if (screen) {
		printf("(no ATTNVIEW_BIN: keystroke -> frame not measured)\n");
	}
	for (int i = 0; i < NMODELS; i++)
		model_destroy(models[i].m);
	return 0;
}
