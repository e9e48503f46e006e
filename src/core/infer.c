/* The forward pass of the view and the dump (infer.h), and what model.h
 * builds on it: model_attend, model_predict, the results.
 *
 * Where the time went before (a 6-layer, 8-head, d=256 model at 500 tokens,
 * one keystroke, measured with clock_gettime around each step): a third in
 * the attention (per head a T x T product, the softmax, a product with V, with
 * 8 MB of scores and weights per layer written to memory and read back), half
 * in the four linear products on one thread, and on top of the pass, a
 * fresh 96 MB result per keystroke: page faults and zeroing of new memory,
 * then a copy of every weight and score into it, each costing as much as a
 * third of the pass. Here the weights go into the result once, from a block
 * that is still in the cache, the work is spread over the pool's threads, and
 * the result's arrays are reused (attn_result_recycle; the worker keeps one).
 * The predictions made from the pass are in predict.c. */
#include "attnview/infer.h"
#include "attnview/i18n.h"
#include "infer_internal.h"

#include "attnview/attn_products.h"
#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ATT_BLOCK INFER_ATT_BLOCK

static attn_store *store_ref(attn_store *s)
{
	atomic_fetch_add(&s->refs, 1);
	return s;
}

void infer_cache_clear(infer_cache *c)
{
	c->m = NULL;
	c->n = 0;
	c->reused = c->computed = 0;
	c->teamed = false;
	attn_store_release(c->st);
	attn_store_release(c->spare);
	c->st = c->spare = NULL;
}

/* ---- one layer ---- */

/* As many slices as the work keeps busy, at most `most`. */
static int slices(double flops, int most)
{
	int nt = parallel_threads();
	double by_work = flops / FLOPS_PER_THREAD;
	if (by_work < nt)
		nt = (int)by_work;
	if (nt > most)
		nt = most;
	return nt < 1 ? 1 : nt;
}

/* Rows [*r, *r + *cnt) of slice s of the row phases. */
static void row_slice(const layer_pass *lp, int s, int *r, int *cnt)
{
	long M = lp->n - lp->p;
	int a = lp->p + (int)(M * s / lp->nt), b = lp->p + (int)(M * (s + 1) / lp->nt);
	*r = a;
	*cnt = b - a;
}

/* Phase 1, rows: ln1 and the QKV product. */
static void qkv_rows(void *ctx, int begin, int end)
{
	const layer_pass *lp = ctx;
	const layer_params *p = &lp->m->p.layer[lp->l];
	layer_acts *la = &lp->a->layer[lp->l];
	const size_t d = (size_t)lp->d;
	for (int s = begin; s < end; s++) {
		int r, cnt;
		row_slice(lp, s, &r, &cnt);
		layernorm_forward(la->ln1 + r * d, la->ln1_mean + r, la->ln1_rstd + r,
				  lp->x + r * d, p->ln1_w, p->ln1_b, cnt, lp->d);
		matmul_forward(la->qkv + r * 3 * d, la->ln1 + r * d, p->qkv_w, p->qkv_b, cnt, lp->d,
			       3 * lp->d);
		for (size_t i = (size_t)r; lp->qk && i < (size_t)(r + cnt); i++)
			memcpy(lp->qk + i * 2 * d, la->qkv + i * 3 * d, 2 * d * sizeof *lp->qk);
	}
}

/* Phase 3, rows: x + proj(y), then x + fc2(gelu(fc(ln2(x)))). The products'
 * outputs pass through the scratch rows (T, d) before the residuals, as in
 * model_forward. */
static void mlp_rows(void *ctx, int begin, int end)
{
	const layer_pass *lp = ctx;
	const layer_params *p = &lp->m->p.layer[lp->l];
	layer_acts *la = &lp->a->layer[lp->l];
	const int d = lp->d;
	const size_t D = (size_t)d;
	for (int s = begin; s < end; s++) {
		int r, cnt;
		row_slice(lp, s, &r, &cnt);
		float *scr = lp->a->scratch + r * D;
		matmul_forward(scr, la->atty + r * D, p->proj_w, p->proj_b, cnt, d, d);
		residual_forward(la->res2 + r * D, lp->x + r * D, scr, cnt * d);
		layernorm_forward(la->ln2 + r * D, la->ln2_mean + r, la->ln2_rstd + r,
				  la->res2 + r * D, p->ln2_w, p->ln2_b, cnt, d);
		matmul_forward(la->fch + r * 4 * D, la->ln2 + r * D, p->fc_w, p->fc_b, cnt, d,
			       4 * d);
		model_gelu(lp->m, la->fch_gelu + r * 4 * D, la->fch + r * 4 * D, cnt * 4 * d);
		matmul_forward(scr, la->fch_gelu + r * 4 * D, p->fc2_w, p->fc2_b, cnt, 4 * d, d);
		residual_forward(la->res3 + r * D, la->res2 + r * D, scr, cnt * d);
	}
}

static void fill(float *p, float v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = v;
}

/* Row i of head h: raw scores s[0..kn) to the result's row (NAN where
 * masked) and the cache's (only what the row sees), then the softmax's
 * exponentials in place (masked keys 0), and the weights, those times
 * 1 / sum, likewise (0 where masked): softmax_row's bits. maxv: the row's
 * largest score, or NAN. Returns 1 / sum, by which the head's output is
 * scaled (fewer numbers than the row's weights). */
static float row_out(const layer_pass *lp, int h, int i, float *s, int kn, int valid, float scale,
		     float maxv)
{
	const size_t n = (size_t)lp->n, v = (size_t)valid;
	if (lp->scores) {
		float *o = lp->scores + ((size_t)h * n + (size_t)i) * n;
		memcpy(o, s, v * sizeof *o);
		fill(o + v, NAN, (int)(n - v));
	}
	float inv = 1.0f / softmax_row_exp(s, s, kn, valid, scale, maxv);
	if (lp->att) {
		float *o = lp->att + ((size_t)h * n + (size_t)i) * n;
		scale_row(o, s, valid, inv);
		memset(o + v, 0, (n - v) * sizeof *o);
	}
	if (lp->catt)
		scale_row(lp->catt + (size_t)h * lp->cstride + attn_packed_row(i), s, valid, inv);
	return inv;
}

/* The head's output rows y (d apart) = (exponentials S x values v) / sum:
 * each row scaled by its inv as it is stored, or after OpenBLAS's
 * product. */
static void mix_rows(const layer_pass *lp, float *y, const float *S, const float *v, int rows,
		     int kn, const float *inv)
{
	const int d = lp->d, C3 = 3 * d, hs = lp->hs;
	if (lp->kt) {
		attn_mix_scaled(y, d, S, kn, v, C3, rows, kn, hs, inv);
		return;
	}
	if (rows == 1)
		cblas_sgemv(CblasRowMajor, CblasTrans, kn, hs, 1.0f, v, C3, S, 1, 0.0f, y, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, hs, kn, 1.0f, S, kn, v,
			    C3, 0.0f, y, d);
	for (int r = 0; r < rows; r++)
		scale_row(y + (size_t)r * d, y + (size_t)r * d, hs, inv[r]);
}

/* Query rows i0..i1-1 of head h (at most ATT_BLOCK): scores against the
 * keys they may see, the softmax, and the head's columns of y = weights x
 * values. */
void infer_attend_block(const layer_pass *lp, float *S, int h, int i0, int i1)
{
	const int d = lp->d, C3 = 3 * d, hs = lp->hs, rows = i1 - i0;
	const int kn = lp->causal ? i1 : lp->n;
	layer_acts *la = &lp->a->layer[lp->l];
	const float *q = la->qkv + (size_t)i0 * C3 + (size_t)h * hs;
	const float *k = la->qkv + d + (size_t)h * hs;
	/* Every key of a masked row is visible: the products find each row's
	 * largest score as they store it. */
	float rmax[ATT_BLOCK], inv[ATT_BLOCK];
	assert(rows >= 1 && rows <= ATT_BLOCK);
	const bool maxed = lp->kt && !lp->causal;
	/* Our products on the packed keys; or OpenBLAS's, a single row
	 * (typing at the end of a causal text) as matrix-vector products:
	 * sgemm would first copy the keys and the values into its packed
	 * layout, several times the cost of the products. */
	if (lp->kt)
		attn_scores_max(S, kn, q, C3, lp->kt + (size_t)h * lp->kt_head, rows, kn, hs,
				maxed ? rmax : NULL);
	else if (rows == 1)
		cblas_sgemv(CblasRowMajor, CblasNoTrans, kn, hs, 1.0f, k, C3, q, 1, 0.0f, S, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, kn, hs, 1.0f, q, C3, k,
			    C3, 0.0f, S, kn);
	const float scale = 1.0f / sqrtf((float)hs);
	for (int i = i0; i < i1; i++)
		inv[i - i0] =
		    row_out(lp, h, i, S + (size_t)(i - i0) * kn, kn, lp->causal ? i + 1 : lp->n,
			    scale, maxed ? rmax[i - i0] : NAN);
	float *y = la->atty + (size_t)i0 * d + (size_t)h * hs;
	if (lp->off && lp->off[h]) {
		/* Ablation: the head's output is zero; its weights are still shown. */
		for (int r = 0; r < rows; r++)
			memset(y + (size_t)r * d, 0, (size_t)hs * sizeof *y);
		return;
	}
	mix_rows(lp, y, S, la->qkv + 2 * d + (size_t)h * hs, rows, kn, inv);
}

/* Phase 2: tasks (head, block of query rows), dealt round-robin to the
 * slices: with a causal mask a later block costs more, and dealing spreads
 * them. */
static void attention_tasks(void *ctx, int begin, int end)
{
	const layer_pass *lp = ctx;
	const int ntasks = lp->H * lp->nblk;
	for (int s = begin; s < end; s++) {
		float *S = lp->work + (size_t)s * ATT_BLOCK * (size_t)lp->n;
		for (int t = s; t < ntasks; t += lp->nt) {
			int h = t / lp->nblk, b = t % lp->nblk;
			int i0 = lp->p + b * ATT_BLOCK;
			int i1 = i0 + ATT_BLOCK < lp->n ? i0 + ATT_BLOCK : lp->n;
			infer_attend_block(lp, S, h, i0, i1);
		}
	}
}

/* Phase 1b: the keys of heads begin..end-1, packed for attn_scores. */
static void pack_heads(void *ctx, int begin, int end)
{
	const layer_pass *lp = ctx;
	const float *k = lp->a->layer[lp->l].qkv + lp->d;
	for (int h = begin; h < end; h++)
		attn_pack_keys(lp->kt + (size_t)h * lp->kt_head, k + (size_t)h * lp->hs, 3 * lp->d,
			       lp->n, lp->hs);
}

bool infer_own_products(int hs, int rows)
{
	return rows >= 2 && attn_products_run(hs);
}

/* Rows p..n-1 of layer lp->l. */
static void run_layer(layer_pass *lp)
{
	const double d = lp->d, M = lp->n - lp->p, A = M;
	lp->nt = slices(6 * M * d * d, (int)M / 2);
	parallel_for_n(lp->nt, lp->nt, qkv_rows, lp);
	if (lp->kt)
		parallel_for_n(lp->nt, lp->H, pack_heads, lp);
	lp->nblk = (lp->n - lp->p + ATT_BLOCK - 1) / ATT_BLOCK;
	lp->nt = slices(4 * A * lp->n * d, lp->H * lp->nblk);
	parallel_for_n(lp->nt, lp->nt, attention_tasks, lp);
	lp->nt = slices(18 * M * d * d, (int)M / 2);
	parallel_for_n(lp->nt, lp->nt, mlp_rows, lp);
}

/* ---- the cache ---- */

static bool any_off(const uint8_t *ab, size_t k)
{
	for (size_t i = 0; ab && i < k; i++)
		if (ab[i])
			return true;
	return false;
}

/* Rows of c that this pass may take as they are. A causal model's row i
 * depends on ids[0..i] alone; a masked model's on every id, so its rows are
 * reusable only for the very same text, and its weights, queries and keys
 * are not kept. */
static int reusable(const infer_cache *c, const model *m, const activations *ws, const int32_t *ids,
		    int n, bool want_att)
{
	const size_t k = (size_t)m->cfg.layers * m->cfg.heads;
	if (!c || c->m != m)
		return 0;
	bool off = any_off(ws->ablate, k);
	if (off != c->ablated || (off && memcmp(c->ablate, ws->ablate, k) != 0))
		return 0;
	int p = 0, most = n < c->n ? n : c->n;
	while (p < most && c->ids[p] == ids[p])
		p++;
	if (m->cfg.objective == OBJ_CAUSAL)
		return c->st ? p : 0;
	return p == n && c->n == n && !want_att ? n : 0;
}

/* What the cache will hold once rows p..n-1 are computed (ids after p are
 * recorded at the end: until then, rows 0..p-1 are all it holds). */
static void cache_begin(infer_cache *c, const model *m, const activations *ws, int p, int n)
{
	const size_t k = (size_t)m->cfg.layers * m->cfg.heads;
	c->m = m;
	c->n = p;
	c->ablated = any_off(ws->ablate, k);
	if (c->ablated)
		memcpy(c->ablate, ws->ablate, k);
	c->reused = p;
	c->computed = n - p;
	c->teamed = false;
}

/* Tokens of room in a new result or store for n: a quarter more (up to the
 * context). Typing at the end makes every text one token longer than the
 * last, and arrays of exactly its size would never fit the next one; fresh
 * memory costs its page faults, as much as the pass itself at 500 tokens of
 * a 6-layer, 8-head model. */
static int room_for(const model_config *c, int n)
{
	int room = n + n / 4 + 8;
	if (room > (int)c->context)
		room = (int)c->context;
	return room < n ? n : room;
}

static attn_store *store_create(const model_config *c, int cap)
{
	attn_store *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	const size_t cells = (size_t)c->layers * c->heads * attn_packed_row(cap);
	s->att = av_alloc_large(cells * sizeof(float), false);
	s->qk = av_alloc_large((size_t)c->layers * (size_t)cap * 2 * c->dim * sizeof(float), false);
	if (!s->att || !s->qk) {
		free(s->att);
		free(s->qk);
		free(s);
		return NULL;
	}
	atomic_init(&s->refs, 1);
	s->layers = (int)c->layers;
	s->heads = (int)c->heads;
	s->dim = (int)c->dim;
	s->cap = cap;
	return s;
}

static bool store_fits(const attn_store *s, const model_config *c, int n)
{
	return s && s->layers == (int)c->layers && s->heads == (int)c->heads &&
	       s->dim == (int)c->dim && s->cap >= n;
}

/* Make c->st a store this pass may write rows p..n-1 of, holding the
 * cache's rows 0..p-1: the same store when no result reads those rows (the
 * rows are past every result handed out, or the cache holds the only
 * reference); else another (the spare a recycled result gave back, or a new
 * one) with rows 0..p-1 copied, each head's a single block. */
static bool store_prepare(infer_cache *c, const model_config *cfg, int p, int n, av_error *err)
{
	attn_store *s = c->st, *t = c->spare;
	if (store_fits(s, cfg, n) && (p >= s->hi || atomic_load(&s->refs) == 1))
		return true;
	c->spare = NULL;
	if (t && !(store_fits(t, cfg, n) && atomic_load(&t->refs) == 1)) {
		attn_store_release(t);
		t = NULL;
	}
	if (!t && !(t = store_create(cfg, room_for(cfg, n))))
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	t->hi = 0;
	const size_t LH = (size_t)cfg->layers * cfg->heads, keep = attn_packed_row(p);
	const size_t ss = s ? attn_packed_row(s->cap) : 0, ts = attn_packed_row(t->cap);
	const size_t row = 2 * (size_t)cfg->dim;
	for (size_t k = 0; s && p > 0 && k < LH; k++)
		memcpy(t->att + k * ts, s->att + k * ss, keep * sizeof(float));
	for (size_t l = 0; s && p > 0 && l < cfg->layers; l++)
		memcpy(t->qk + l * (size_t)t->cap * row, s->qk + l * (size_t)s->cap * row,
		       (size_t)p * row * sizeof(float));
	attn_store_release(s);
	c->st = t;
	return true;
}

/* The store's rows as a result reads them. */
static attn_result store_view(const attn_store *st, int n)
{
	attn_result v = {.n = n,
			 .layers = st->layers,
			 .heads = st->heads,
			 .dim = st->dim,
			 .causal = true,
			 .att = st->att,
			 .qk = st->qk,
			 .qk_rows = st->cap,
			 .pack = st->cap};
	return v;
}

/* The dense arrays' rows 0..p-1 of every (layer, head) from the cache's
 * store: what a causal row sees, then 0 (weights) or NAN (scores, computed
 * from the store's q and k) for the keys after it. */
static bool copy_cached(const attn_store *st, int p, int n, float *att, float *scores)
{
	const attn_result v = store_view(st, n);
	const size_t N = (size_t)n;
	bool ok = true;
	for (int l = 0; l < v.layers; l++)
		for (int h = 0; h < v.heads; h++) {
			size_t base = ((size_t)l * (size_t)v.heads + (size_t)h) * N;
			for (int i = 0; i < p; i++) {
				float *o = att ? att + (base + (size_t)i) * N : NULL;
				for (int j = 0; o && j < n; j++)
					o[j] = attn_weight(&v, l, h, i, j);
				if (scores)
					ok = attn_score_row(&v, l, h, i, scores + (base + i) * N) &&
					     ok;
			}
		}
	return ok;
}

/* ---- the pass ---- */

void infer_layer_setup(layer_pass *lp, infer_cache *c, float *att, float *scores, int l)
{
	const size_t H = (size_t)lp->H, nn = (size_t)lp->n * (size_t)lp->n;
	lp->l = l;
	lp->x = l ? lp->a->layer[l - 1].res3 : lp->a->encoded;
	lp->att = att ? att + (size_t)l * H * nn : NULL;
	lp->scores = scores ? scores + (size_t)l * H * nn : NULL;
	const size_t blk = c && lp->causal ? (size_t)l * H * lp->cstride : 0;
	lp->catt = c && lp->causal ? c->st->att + blk : NULL;
	lp->qk = lp->qk_base ? lp->qk_base + (size_t)l * lp->qk_rows * 2 * lp->d : NULL;
	lp->off = lp->a->ablate ? lp->a->ablate + (size_t)l * H : NULL;
}

/* Layers 0..L-1 on rows p..n-1; false if stale. *done (or NULL): the
 * layers finished, set before each asks stale() (attn_result.partial). */
static bool run_layers(layer_pass *lp, infer_cache *c, float *att, float *scores, int *done,
		       infer_stale_fn stale, void *stale_ctx)
{
	const model *m = lp->m;
	if (lp->n - lp->p == 1) {
		bool ran;
		if (infer_row_team(lp, c, att, scores, done, stale, stale_ctx, &ran))
			return ran;
	}
	for (int l = 0; l < (int)m->cfg.layers; l++) {
		if (done)
			*done = l;
		if (stale && stale(stale_ctx))
			return false;
		infer_layer_setup(lp, c, att, scores, l);
		run_layer(lp);
	}
	return true;
}

/* Rows p..n-1 of ids through every layer (run_layers), with forward's
 * arguments; false when memory ran out or a newer text came. */
static bool compute_rows(const model *m, activations *ws, infer_cache *c, const int32_t *ids, int p,
			 int n, float *att, float *scores, float *qk, int *done,
			 infer_stale_fn stale, void *stale_ctx, av_error *err)
{
	const model_config *cfg = &m->cfg;
	const bool causal = cfg->objective == OBJ_CAUSAL;
	const int d = (int)cfg->dim;
	layer_pass lp = {.m = m, .a = ws, .d = d, .H = (int)cfg->heads, .T = ws->T};
	lp.hs = d / lp.H;
	lp.causal = causal;
	lp.cstride = c && causal ? attn_packed_row(c->st->cap) : 0;
	lp.qk_base = c && causal ? c->st->qk : qk;
	lp.qk_rows = c && causal ? c->st->cap : n;
	lp.p = p;
	lp.n = n;
	lp.work = malloc((size_t)parallel_threads() * ATT_BLOCK * (size_t)n * sizeof(float));
	lp.kt_head = attn_packed_keys_floats(n, lp.hs);
	const bool own = infer_own_products(lp.hs, n - p);
	lp.kt = own ? malloc((size_t)lp.H * lp.kt_head * sizeof(float)) : NULL;
	if (!lp.work || (own && !lp.kt)) {
		free(lp.work);
		free(lp.kt);
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	}
	embed_forward(ws->encoded + (size_t)p * d, ids + p, m->p.wte, m->pe + (size_t)p * d,
		      m->emb_scale, 1, n - p, d);
	int saved = blas_single_thread_begin();
	bool ran = run_layers(&lp, c, att, scores, done, stale, stale_ctx);
	blas_single_thread_end(saved);
	free(lp.work);
	free(lp.kt);
	if (done)
		*done = 0;
	return ran || av_fail(err, _("a newer text came"));
}

/* A causal model's result reading the cache's store while the pass fills
 * it: its layers done so far (attn_result.partial) can be published, and
 * rows 0..n-1 are the result's from now on (the store's hi), so that a
 * later pass that would rewrite them writes into a spare store instead. */
static void share_store(attn_result *r, attn_store *st, int n)
{
	r->st = store_ref(st);
	r->att = st->att;
	r->qk = st->qk;
	r->qk_rows = r->pack = st->cap;
	if (st->hi < n)
		st->hi = n;
}

/* infer_forward; qk (or NULL): every layer's q and k rows, [L][n][2d] (a
 * causal model's with a cache go to its store instead); live (or NULL):
 * the result the pass fills, its layers finished so far in live->partial
 * while the pass runs (run_layers), 0 once it ends, and for a causal model
 * with a cache the store it shares (share_store). */
static bool forward(const model *m, activations *ws, infer_cache *c, const int32_t *ids, int n,
		    float *att, float *scores, float *qk, attn_result *live, infer_stale_fn stale,
		    void *stale_ctx, av_error *err)
{
	const model_config *cfg = &m->cfg;
	if (n < 1 || (uint32_t)n > cfg->context || n > ws->T)
		return av_fail(err, _("%d tokens do not fit the model's context of %u"), n,
			       cfg->context);
	int p = reusable(c, m, ws, ids, n, att || scores || qk);
	const bool causal = cfg->objective == OBJ_CAUSAL;
	if (c && causal && p < n && !store_prepare(c, cfg, p, n, err)) {
		infer_cache_clear(c);
		return false;
	}
	if (c)
		cache_begin(c, m, ws, p, n);
	if (live && c && causal)
		share_store(live, c->st, n);
	if (p < n && !compute_rows(m, ws, c, ids, p, n, att, scores, qk,
				   live ? &live->partial : NULL, stale, stale_ctx, err))
		return false;
	if (c) {
		memcpy(c->ids, ids, (size_t)n * sizeof *ids);
		c->n = n;
	}
	if (p > 0 && (att || scores) && !copy_cached(c->st, p, n, att, scores))
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	return true;
}

bool infer_forward(const model *m, activations *ws, infer_cache *c, const int32_t *ids, int n,
		   float *att, float *scores, infer_stale_fn stale, void *stale_ctx, av_error *err)
{
	return forward(m, ws, c, ids, n, att, scores, NULL, NULL, stale, stale_ctx, err);
}

/* ---- results ---- */

/* r without weights, q and k: a store given back to c as its spare (or
 * dropped when it is c's own), dense arrays freed. */
static void result_drop_arrays(attn_result *r, infer_cache *c)
{
	if (r->st && c && r->st != c->st && !c->spare)
		c->spare = r->st;
	else if (r->st)
		attn_store_release(r->st);
	else {
		free(r->att);
		free(r->qk);
	}
	r->att = r->qk = NULL;
	r->st = NULL;
	r->pack = 0;
	r->cap = r->cap_qk = 0;
}

static bool tokens_reserve(attn_result *r, const model_config *c, int n, av_error *err)
{
	if (r->tokens && r->cap_tokens >= n)
		return true;
	free(r->tokens);
	r->cap_tokens = room_for(c, n);
	r->tokens = malloc((size_t)r->cap_tokens * sizeof *r->tokens);
	if (!r->tokens) {
		r->cap_tokens = 0;
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	}
	return true;
}

/* A masked model's arrays for n tokens of m in r: q and k (reused if they
 * fit), and no weights yet (attn_head_weights computes a head's when read). */
static bool result_reserve(attn_result *r, const model_config *c, int n, av_error *err)
{
	const size_t LH = (size_t)c->layers * c->heads, row = 2 * (size_t)c->dim;
	const size_t qk = c->layers * (size_t)n * row;
	if (r->st || r->att)
		result_drop_arrays(r, NULL);
	r->layers = (int)c->layers;
	r->heads = (int)c->heads;
	r->head_w = calloc(LH, sizeof *r->head_w);
	if (!r->head_w || !tokens_reserve(r, c, n, err)) {
		attn_result_finish(r);
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	}
	if (r->cap_qk >= qk && r->qk)
		return true;
	free(r->qk);
	r->cap_qk = c->layers * (size_t)room_for(c, n) * row;
	r->qk = av_alloc_large(r->cap_qk * sizeof(float), false);
	if (!r->qk) {
		attn_result_finish(r);
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	}
	return true;
}

/* A causal model's pass into r: r shares the cache's store (c, or one of
 * its own when c is NULL) instead of a copy of its rows. */
static bool attend_shared(const model *m, activations *ws, infer_cache *c, const int32_t *ids,
			  int n, attn_result *r, infer_stale_fn stale, void *stale_ctx,
			  av_error *err)
{
	infer_cache *own = NULL;
	if (!c && !(c = own = calloc(1, sizeof *own)))
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	result_drop_arrays(r, c);
	/* The result shares the store from the start of the pass (forward), so
	 * that the layers it has done can be published (worker.c, rule 8). */
	bool ok = forward(m, ws, c, ids, n, NULL, NULL, NULL, r, stale, stale_ctx, err);
	if (own) {
		infer_cache_clear(own);
		free(own);
	}
	return ok;
}

bool infer_attend(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
		  attn_result *r, infer_stale_fn stale, void *stale_ctx, av_error *err)
{
	const model_config *cfg = &m->cfg;
	if (n < 1 || (uint32_t)n > cfg->context || n > ws->T)
		return av_fail(err, _("%d tokens do not fit the model's context of %u"), n,
			       cfg->context);
	const bool causal = cfg->objective == OBJ_CAUSAL;
	if (causal ? !tokens_reserve(r, cfg, n, err) : !result_reserve(r, cfg, n, err))
		return false;
	r->n = n;
	r->layers = (int)cfg->layers;
	r->heads = (int)cfg->heads;
	r->dim = (int)cfg->dim;
	r->topk = 0;
	r->partial = 0;
	r->causal = causal;
	r->qk_rows = n;
	memcpy(r->tokens, tokens, (size_t)n * sizeof *tokens);
	int32_t ids[AV_MAX_CONTEXT];
	for (int i = 0; i < n; i++)
		ids[i] = tokens[i].id;
	if (causal)
		return attend_shared(m, ws, c, ids, n, r, stale, stale_ctx, err);
	return forward(m, ws, c, ids, n, NULL, NULL, r->qk, r, stale, stale_ctx, err);
}
