/* The view's forward pass (infer.h) against model_forward and the PyTorch
 * golden files, and its prefix cache against a full recompute:
 *  - a random model (peaky: its weights scaled up, so that the attention is
 *    far from uniform) at 1 and 2 pool threads, texts longer than an
 *    attention block, masked and causal: weights, scores and the last
 *    hidden state against model_forward's;
 *  - the golden causal model typed one character at a time through the
 *    cache, each text's weights against PyTorch's for the whole input;
 *  - the cache: appending a character computes one row and agrees with a
 *    pass without the cache; an edit in the middle recomputes from there;
 *    ablation and another model are never served from it; a masked model
 *    reuses only the very same text;
 *  - giving up between layers, and a pass after it still right;
 *  - a recycled result's arrays reused when they fit (with room for typing
 *    at the end), replaced otherwise.
 * Every number within its derived bound of binary64 (below). */
#include "bound.h"
#include "harness.h"

#include "attnview/analysis.h"
#include "attnview/infer.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every pass is checked against the binary64 pass of bound.h, each number
 * within the error bound derived for it (man 5 attnview, NOTES, Accuracy):
 * infer_forward and model_forward call BLAS with different shapes, and
 * OpenBLAS's kernels (Haswell, Zen, SkylakeX, a generic one) sum in different
 * orders, so the two agree to those bounds on every kernel and bit for bit on
 * none in particular. The golden files are PyTorch's binary32 numbers: a
 * second implementation within the same bound, so two bounds apart at most.
 * The random models are scaled up (6 times the initialisation's parameters
 * for the comparison with model_forward, twice for the cache) so that the
 * attention is far from uniform and the scores far from small. */
#define CACHE_SCALE 2.0f

/* The largest ratio of a difference to its bound over the whole pass:
 * weights, raw scores (NAN where masked, in got as in b) and the last block's
 * output, each printed and checked to be within its bound (ratio <= 1). */
static double check_pass(const char *what, const fwd_bound *b, const float *att,
			 const float *scores, const float *hidden)
{
	const size_t cells = (size_t)b->L * b->H * b->n * b->n, nd = (size_t)b->n * b->d;
	double wa, ws, wh;
	double ra = att ? bound_ratio(att, b->att, b->att_err, cells, &wa) : 0;
	double rs = scores ? bound_ratio(scores, b->score, b->score_err, cells, &ws) : 0;
	double rh = hidden ? bound_ratio(hidden, b->hidden, b->hidden_err, nd, &wh) : 0;
	printf("%s: difference / bound: weights %.3f, scores %.3f, hidden state %.3f\n", what, ra,
	       rs, rh);
	CHECKF(ra <= 1, "%s: a weight is %.2f times its bound from binary64 (%.2e)", what, ra,
	       att ? wa : 0);
	CHECKF(rs <= 1, "%s: a score is %.2f times its bound from binary64 (%.2e)", what, rs,
	       scores ? ws : 0);
	CHECKF(rh <= 1, "%s: the hidden state is %.2f times its bound from binary64 (%.2e)", what,
	       rh, hidden ? wh : 0);
	double r = ra > rs ? ra : rs;
	return r > rh ? r : rh;
}

static model *random_model(objective obj, uint32_t L, uint32_t H, uint32_t d, uint32_t T,
			   float scale, uint64_t seed)
{
	model_config cfg = {(uint32_t)obj, 300, d, H, L, T, {0}};
	uint32_t cps[300];
	for (uint32_t i = 0; i < 300; i++)
		cps[i] = i < TOK_NSPECIAL ? AV_SPECIAL_CP + i : 0x4E00u + i;
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		return NULL;
	model_init_random(m, seed);
	for (size_t i = 0; i < m->nparams; i++)
		m->params[i] *= scale;
	return m;
}

static void random_ids(int32_t *ids, int n, uint64_t seed, int V)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (int i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ids[i] = TOK_NSPECIAL + (int32_t)(x % (uint64_t)(V - TOK_NSPECIAL));
	}
}

static void to_tokens(const int32_t *ids, int n, token *t)
{
	memset(t, 0, (size_t)n * sizeof *t);
	for (int i = 0; i < n; i++) {
		t[i].id = ids[i];
		t[i].cp = 0x4E00u + (uint32_t)ids[i];
		t[i].width = 2;
	}
}

/* infer_forward's and model_forward's weights, scores and last hidden state
 * for one text, each within its bound of binary64. */
static void against_model_forward(const model *m, activations *ws, const int32_t *ids, int n,
				  const char *what)
{
	const model_config *c = &m->cfg;
	const size_t L = c->layers, H = c->heads, d = c->dim, nn = (size_t)n * n;
	float *att = malloc(L * H * nn * sizeof *att), *sc = malloc(L * H * nn * sizeof *sc);
	float *res = malloc((size_t)n * d * sizeof *res);
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, n, ws->ablate));
	av_error err;
	bool ok = infer_forward(m, ws, NULL, ids, n, att, sc, NULL, NULL, &err);
	CHECKF(ok, "%s: %s", what, err.msg);
	char w[128];
	snprintf(w, sizeof w, "%s, infer_forward", what);
	check_pass(w, &b, att, sc, ws->layer[L - 1].res3);
	model_forward(m, ws, ids, 1, n);
	for (size_t l = 0; l < L; l++) {
		memcpy(att + l * H * nn, ws->layer[l].att, H * nn * sizeof *att);
		memcpy(sc + l * H * nn, ws->layer[l].preatt, H * nn * sizeof *sc);
	}
	/* model_forward leaves raw scores where the mask is; the view NAN. */
	for (size_t k = 0; k < L * H * nn; k++)
		if (c->objective == OBJ_CAUSAL && k % n > (k / n) % n)
			sc[k] = NAN;
	memcpy(res, ws->layer[L - 1].res3, (size_t)n * d * sizeof *res);
	snprintf(w, sizeof w, "%s, model_forward", what);
	check_pass(w, &b, att, sc, res);
	fwd_bound_finish(&b);
	free(att);
	free(sc);
	free(res);
}

/* The bounds are worth checking against: a model with one weight of layer 0
 * changed by 1% gives numbers outside the original model's bounds. */
static void check_bound_catches(void)
{
	model *m = random_model(OBJ_MASKED, 2, 4, 64, 64, 1.0f, 13);
	if (!m)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, 64, 64, &err));
	int32_t ids[64];
	random_ids(ids, 64, 6, 300);
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, 64, NULL));
	const size_t cells = (size_t)2 * 4 * 64 * 64;
	float *att = malloc(cells * sizeof *att), *sc = malloc(cells * sizeof *sc);
	m->p.layer[0].qkv_w[5] *= 1.01f;
	CHECK(infer_forward(m, &ws, NULL, ids, 64, att, sc, NULL, NULL, &err));
	double ra = bound_ratio(att, b.att, b.att_err, cells, NULL);
	double rs = bound_ratio(sc, b.score, b.score_err, cells, NULL);
	printf("one weight changed by 1%%: weights %.1f, scores %.1f times their bounds\n", ra, rs);
	CHECKF(ra > 1 && rs > 1, "a 1%% change of one weight stays within the bounds (%.2f, %.2f)",
	       ra, rs);
	free(att);
	free(sc);
	fwd_bound_finish(&b);
	activations_finish(&ws);
	model_destroy(m);
}

static void check_against_forward(void)
{
	for (int obj = 0; obj < 2; obj++) {
		model *m = random_model((objective)obj, 3, 4, 64, 200, 6.0f, 11 + (uint64_t)obj);
		if (!m)
			return;
		activations ws;
		av_error err;
		CHECK(activations_init(&ws, &m->cfg, 1, 200, 200, &err));
		int32_t ids[200];
		random_ids(ids, 200, 5, 300);
		for (int threads = 1; threads <= 2; threads++) {
			parallel_set_threads(threads);
			int sizes[] = {1, 2, 63, 65, 200};
			for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
				char what[96];
				snprintf(what, sizeof what, "%s, %d threads, %d tokens",
					 obj ? "causal" : "masked", threads, sizes[k]);
				against_model_forward(m, &ws, ids, sizes[k], what);
			}
		}
		activations_finish(&ws);
		model_destroy(m);
	}
	parallel_set_threads(2);
}

/* A pass through the cache and one without, for the same text: each within
 * its bound of binary64 (the cached rows come from smaller products, summed
 * in other orders); want_computed >= 0: the rows the cached pass must
 * compute. */
static void same_as_fresh(const model *m, activations *ws, infer_cache *c, const int32_t *ids,
			  int n, const char *what, int want_computed)
{
	const model_config *cfg = &m->cfg;
	const size_t L = cfg->layers, H = cfg->heads, nn = (size_t)n * n;
	float *a1 = malloc(L * H * nn * 4), *s1 = malloc(L * H * nn * 4);
	av_error err;
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, n, ws->ablate));
	CHECKF(infer_forward(m, ws, c, ids, n, a1, s1, NULL, NULL, &err), "%s: %s", what, err.msg);
	int reused = c->reused, computed = c->computed;
	printf("%s: %d rows reused, %d computed\n", what, reused, computed);
	char w[128];
	snprintf(w, sizeof w, "%s, through the cache", what);
	check_pass(w, &b, a1, s1, ws->layer[L - 1].res3);
	activations fresh;
	CHECK(activations_init(&fresh, cfg, 1, ws->T, ws->T, &err));
	fresh.ablate = ws->ablate;
	CHECK(infer_forward(m, &fresh, NULL, ids, n, a1, s1, NULL, NULL, &err));
	snprintf(w, sizeof w, "%s, a full pass", what);
	check_pass(w, &b, a1, s1, fresh.layer[L - 1].res3);
	if (want_computed >= 0)
		CHECKF(computed == want_computed && reused == n - want_computed,
		       "%s: %d rows computed, %d reused; want %d computed", what, computed, reused,
		       want_computed);
	activations_finish(&fresh);
	fwd_bound_finish(&b);
	free(a1);
	free(s1);
}

static void check_cache(void)
{
	model *m = random_model(OBJ_CAUSAL, 3, 4, 64, 160, CACHE_SCALE, 21);
	model *m2 = random_model(OBJ_CAUSAL, 3, 4, 64, 160, CACHE_SCALE, 22);
	model *mm = random_model(OBJ_MASKED, 2, 4, 64, 160, CACHE_SCALE, 23);
	if (!m || !m2 || !mm)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, 160, 160, &err));
	static infer_cache c;
	infer_cache_clear(&c);
	int32_t ids[160];
	random_ids(ids, 160, 9, 300);
	same_as_fresh(m, &ws, &c, ids, 100, "first pass", 100);
	same_as_fresh(m, &ws, &c, ids, 101, "one character appended", 1);
	same_as_fresh(m, &ws, &c, ids, 102, "another", 1);
	same_as_fresh(m, &ws, &c, ids, 101, "the last one deleted", 0);
	same_as_fresh(m, &ws, &c, ids, 150, "49 pasted at the end", 49);
	ids[70] ^= 1;
	same_as_fresh(m, &ws, &c, ids, 150, "a character changed at 70", 80);
	/* Typing a whole text one character at a time. */
	for (int n = 1; n <= 160; n++) {
		const size_t cells = (size_t)m->cfg.layers * m->cfg.heads * (size_t)n * n;
		float *a = malloc(cells * 4);
		CHECK(infer_forward(m, &ws, &c, ids, n, a, NULL, NULL, NULL, &err));
		CHECK(n < 2 || c.computed == 1);
		free(a);
	}
	same_as_fresh(m, &ws, &c, ids, 160, "after typing 160 characters one by one", 0);

	/* Ablation: the cache's rows were computed with every head on. */
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	off[1 * 4 + 2] = 1;
	ws.ablate = off;
	same_as_fresh(m, &ws, &c, ids, 160, "head 2 of layer 1 off", 160);
	same_as_fresh(m, &ws, &c, ids, 159, "the same ablation, one deleted", 0);
	off[1 * 4 + 2] = 0;
	off[0] = 1;
	same_as_fresh(m, &ws, &c, ids, 159, "another head off", 159);
	ws.ablate = NULL;
	same_as_fresh(m, &ws, &c, ids, 159, "every head on again", 159);
	/* Another model (same sizes) never reads m's rows. */
	same_as_fresh(m2, &ws, &c, ids, 159, "another model", 159);
	/* A masked model: every row depends on every token. */
	same_as_fresh(mm, &ws, &c, ids, 120, "masked, first pass", 120);
	same_as_fresh(mm, &ws, &c, ids, 121, "masked, one appended", 121);
	/* Without weights asked, the very same masked text is not computed again
	 * (a prediction after the text's pass). */
	CHECK(infer_forward(mm, &ws, &c, ids, 121, NULL, NULL, NULL, NULL, &err));
	CHECKF(c.computed == 0 && c.reused == 121, "masked, same text: %d computed", c.computed);
	/* infer_cache_clear forgets everything. */
	infer_cache_clear(&c);
	same_as_fresh(m, &ws, &c, ids, 30, "after infer_cache_clear", 30);

	activations_finish(&ws);
	model_destroy(m);
	model_destroy(m2);
	model_destroy(mm);
}

/* Scores computed again from a result's q and k are the bits of the pass
 * that made each row, also for rows a later pass added through the cache
 * (2, 3, 40 and 24 rows at a time): the products do not depend on how many
 * rows a pass computed (OpenBLAS's sgemm for 2 rows and for 64 gives other
 * bits on some kernels). A row typed alone at the end (matrix-vector
 * products) is the exception, and not checked; so are builds where
 * OpenBLAS makes every product (infer_own_products). Then a head size that keeps
 * OpenBLAS and a last block of one row, which the pass makes as a
 * matrix-vector product: computed again the same way. */
static void check_added_rows_scores(void)
{
	const int N = 130, hs16 = 64 / 4;
	model *m = random_model(OBJ_CAUSAL, 2, 4, 64, N, CACHE_SCALE, 31);
	if (!m)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, N, N, &err));
	static infer_cache c;
	infer_cache_clear(&c);
	int32_t ids[130];
	token t[130];
	random_ids(ids, N, 12, 300);
	to_tokens(ids, N, t);
	const int steps[][2] = {{60, 62}, {62, 65}, {65, 105}, {105, 129}};
	/* Where OpenBLAS makes the products (no FMA, a build with one version
	 * of the vector code), a row's bits depend on the blocks its pass cut. */
	const size_t nsteps = infer_own_products(hs16, 2) ? sizeof steps / sizeof *steps : 0;
	for (size_t k = 0; k < nsteps; k++) {
		const int p = steps[k][0], n = steps[k][1];
		const size_t cells = 2u * 4 * (size_t)n * n;
		float *sc = malloc(cells * sizeof *sc);
		/* The text up to p, then the rows p..n-1 through the cache. */
		CHECK(infer_forward(m, &ws, &c, ids, p, NULL, NULL, NULL, NULL, &err));
		CHECK(sc && infer_forward(m, &ws, &c, ids, n, NULL, sc, NULL, NULL, &err));
		CHECKF(c.computed == n - p, "%d to %d tokens: %d rows computed", p, n, c.computed);
		attn_result r = {0};
		CHECK(infer_attend(m, &ws, &c, t, n, &r, NULL, NULL, &err));
		CHECK(c.computed == 0);
		int differ = 0;
		float row[130];
		for (int l = 0; l < 2; l++)
			for (int h = 0; h < 4; h++)
				for (int i = p; i < n; i++) {
					const float *want = sc + (((size_t)l * 4 + h) * n + i) * n;
					differ += !attn_score_row(&r, l, h, i, row) ||
						  memcmp(row, want, (size_t)n * sizeof *row) != 0;
				}
		CHECKF(differ == 0,
		       "%d to %d tokens: %d rows' scores computed again differ from the pass's "
		       "(head size %d)",
		       p, n, differ, hs16);
		attn_result_finish(&r);
		free(sc);
	}
	activations_finish(&ws);
	model_destroy(m);
	/* A head size OpenBLAS keeps (12), 65 tokens: the last block is one
	 * row, whose scores the pass makes as a matrix-vector product. */
	m = random_model(OBJ_MASKED, 1, 4, 48, 65, CACHE_SCALE, 32);
	if (!m)
		return;
	CHECK(activations_init(&ws, &m->cfg, 1, 65, 65, &err));
	float *sc = malloc(4u * 65 * 65 * sizeof *sc);
	attn_result r = {0};
	CHECK(sc && infer_forward(m, &ws, NULL, ids, 65, NULL, sc, NULL, NULL, &err));
	CHECK(infer_attend(m, &ws, NULL, t, 65, &r, NULL, NULL, &err));
	int differ = 0;
	float row[65];
	for (int h = 0; h < 4; h++)
		for (int i = 0; i < 65; i++)
			differ += !attn_score_row(&r, 0, h, i, row) ||
				  memcmp(row, sc + ((size_t)h * 65 + i) * 65, sizeof row) != 0;
	CHECKF(differ == 0, "head size 12, 65 tokens: %d rows' scores computed again differ",
	       differ);
	attn_result_finish(&r);
	free(sc);
	activations_finish(&ws);
	model_destroy(m);
}

/* stale() says true at its k-th call (k counts from 1). */
typedef struct stale_after {
	int calls, k;
} stale_after;

static bool stale_at(void *p)
{
	stale_after *s = p;
	return ++s->calls >= s->k;
}

static void check_give_up(void)
{
	model *m = random_model(OBJ_CAUSAL, 4, 4, 64, 128, 6.0f, 31);
	if (!m)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, 128, 128, &err));
	static infer_cache c;
	infer_cache_clear(&c);
	int32_t ids[128];
	random_ids(ids, 128, 3, 300);
	same_as_fresh(m, &ws, &c, ids, 64, "before giving up", 64);
	/* Gives up before layer 2 of a pass over 128: stale asked once a layer. */
	stale_after s = {0, 3};
	bool ok = infer_forward(m, &ws, &c, ids, 128, NULL, NULL, stale_at, &s, &err);
	CHECK(!ok && s.calls == 3);
	CHECK(strstr(err.msg, "newer text") != NULL);
	/* The cache still holds the 64 rows of the pass before, and no more. */
	CHECKF(c.n == 64, "after giving up the cache holds %d rows", c.n);
	same_as_fresh(m, &ws, &c, ids, 128, "after giving up", 64);
	/* stale never saying true: asked once per layer. */
	s = (stale_after){0, 1000};
	ids[5] ^= 1;
	CHECK(infer_forward(m, &ws, &c, ids, 128, NULL, NULL, stale_at, &s, &err));
	CHECK(s.calls == (int)m->cfg.layers);
	activations_finish(&ws);
	model_destroy(m);
}

/* A recycled result's arrays: reused when they fit, replaced otherwise;
 * predictions, value norms and the weights computed when read freed by
 * attn_result_recycle. */
static void check_recycle(void)
{
	model *m = random_model(OBJ_MASKED, 2, 2, 32, 64, 1.0f, 41);
	if (!m)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, 64, 64, &err));
	int32_t ids[64];
	token t[64];
	random_ids(ids, 64, 4, 300);
	to_tokens(ids, 64, t);
	attn_result r;
	memset(&r, 0, sizeof r);
	CHECK(infer_attend(m, &ws, NULL, t, 40, &r, NULL, NULL, &err));
	float *qk = r.qk;
	/* Room for a quarter more tokens and 8: 58 rows of q and k per layer. */
	CHECKF(r.n == 40 && r.att == NULL && r.cap_qk == 2u * 58 * 64 && r.cap_tokens == 58,
	       "room for %d", r.cap_tokens);
	r.value_norms = malloc(16);
	CHECK(attn_head_weights(&r, 1, 1) != NULL);
	attn_result_recycle(&r);
	CHECK(r.qk == qk && r.value_norms == NULL && r.head_w == NULL && r.n == 0);
	CHECK(infer_attend(m, &ws, NULL, t, 30, &r, NULL, NULL, &err));
	CHECK(r.qk == qk && r.n == 30);
	attn_result fresh;
	CHECK(model_attend(m, &ws, t, 30, 0, &fresh, &err));
	const size_t cells = 2u * 2 * 30 * 30;
	float *a = malloc(4 * cells * sizeof *a);
	CHECK(a && attn_result_dense(&fresh, a, a + cells) &&
	      attn_result_dense(&r, a + 2 * cells, a + 3 * cells));
	CHECK(a && memcmp(a, a + 2 * cells, 2 * cells * sizeof *a) == 0);
	free(a);
	attn_result_finish(&fresh);
	/* Typing at the end: the same arrays up to 58 tokens. */
	for (int n = 41; n <= 58; n++) {
		attn_result_recycle(&r);
		CHECK(infer_attend(m, &ws, NULL, t, n, &r, NULL, NULL, &err));
		CHECKF(r.qk == qk, "%d tokens: new arrays", n);
	}
	attn_result_recycle(&r);
	CHECK(infer_attend(m, &ws, NULL, t, 59, &r, NULL, NULL, &err));
	/* Never more room than the context. */
	CHECK(r.n == 59 && r.cap_qk == 2u * 64 * 64 && r.cap_tokens == 64);
	attn_result_finish(&r);
	activations_finish(&ws);
	model_destroy(m);
}

/* r's weights and scores, dense, into a new array (2 x L H n n floats). */
static float *dense_copy(const attn_result *r)
{
	const size_t cells = (size_t)r->layers * r->heads * (size_t)r->n * r->n;
	float *d = malloc(2 * cells * sizeof *d);
	if (d)
		attn_result_dense(r, d, d + cells);
	return d;
}

static bool same_floats(const float *a, const float *b, size_t k)
{
	return memcmp(a, b, k * sizeof *a) == 0;
}

/* A causal model's results share the cache's rows: typing at the end
 * writes the new row into the store the last result reads, which keeps its
 * numbers (the view draws it meanwhile); an edit before the end, while a
 * result still reads the rows it changes, goes into another store; once no
 * result reads them, into the same one. */
static void check_shared(void)
{
	model *m = random_model(OBJ_CAUSAL, 2, 2, 32, 64, 1.0f, 43);
	if (!m)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, 64, 64, &err));
	static infer_cache c;
	infer_cache_clear(&c);
	int32_t ids[64];
	token t[64];
	random_ids(ids, 64, 5, 300);
	to_tokens(ids, 64, t);
	attn_result a = {0}, b = {0};
	CHECK(infer_attend(m, &ws, &c, t, 40, &a, NULL, NULL, &err));
	float *before = dense_copy(&a);
	const size_t cells40 = 2u * 2 * 40 * 40;
	CHECK(infer_attend(m, &ws, &c, t, 41, &b, NULL, NULL, &err));
	CHECKF(b.st && b.st == a.st && c.computed == 1, "typing at the end: %s, %d rows computed",
	       b.st == a.st ? "the same store" : "another store", c.computed);
	float *after = dense_copy(&a);
	CHECK(before && after && same_floats(before, after, 2 * cells40));
	free(after);
	/* The first 40 rows of b are a's. */
	float *bd = dense_copy(&b);
	bool same = true;
	for (size_t lh = 0; lh < 4; lh++)
		for (size_t i = 0; i < 40; i++)
			same = same && same_floats(bd + (lh * 41 + i) * 41,
						   before + (lh * 40 + i) * 40, 40);
	CHECK(same);
	free(bd);
	/* An edit at 10 while a reads rows 10..39: another store, a untouched. */
	t[10].id = ids[10] == 5 ? 6 : 5;
	attn_result_recycle(&b);
	CHECK(infer_attend(m, &ws, &c, t, 41, &b, NULL, NULL, &err));
	CHECK(b.st != a.st && c.reused == 10);
	after = dense_copy(&a);
	CHECK(after && same_floats(before, after, 2 * cells40));
	free(after);
	free(before);
	/* Nobody else reads b's store: an edit at 20 goes into it. */
	attn_result_finish(&a);
	attn_store *st = b.st;
	t[20].id = ids[20] == 5 ? 6 : 5;
	attn_result_recycle(&b);
	CHECK(infer_attend(m, &ws, &c, t, 41, &b, NULL, NULL, &err));
	CHECK(b.st == st && c.reused == 20);
	/* And what it holds is a fresh pass's, within the bound (check_cache). */
	attn_result fresh;
	CHECK(model_attend(m, &ws, t, 41, 0, &fresh, &err));
	float *fd = dense_copy(&fresh), *gd = dense_copy(&b);
	double worst = 0;
	for (size_t k = 0; fd && gd && k < 2u * 2 * 41 * 41; k++)
		if (!isnan(fd[k]) || !isnan(gd[k]))
			worst = fmax(worst, fabs((double)fd[k] - gd[k]));
	CHECKF(worst < 1e-4, "cached and fresh results differ by %g", worst);
	free(fd);
	free(gd);
	attn_result_finish(&fresh);
	attn_result_finish(&b);
	infer_cache_clear(&c);
	activations_finish(&ws);
	model_destroy(m);
}

/* A result keeps no scores: they are computed from its q and k when asked,
 * with the pass's own products, so they are the pass's bits (those --dump
 * prints); a masked model's weights likewise, a head's when it is first
 * read. At 200 tokens a causal result, and a masked one whose head on screen
 * was read, hold less than half of what n x n weights and scores per head
 * take. */
static void check_scores_on_demand(objective obj)
{
	const int n = 200;
	model *m = random_model(obj, 2, 4, 64, n, 1.0f, 47);
	if (!m)
		return;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, n, n, &err));
	int32_t ids[200];
	token t[200];
	random_ids(ids, n, 6, 300);
	to_tokens(ids, n, t);
	const size_t cells = 2u * 4 * n * n;
	float *att = malloc(cells * sizeof *att), *sc = malloc(cells * sizeof *sc);
	CHECK(infer_forward(m, &ws, NULL, ids, n, att, sc, NULL, NULL, &err));
	attn_result r;
	CHECK(model_attend(m, &ws, t, n, 0, &r, &err));
	const size_t qk_bytes = 2u * n * 2 * 64 * sizeof(float);
	if (obj == OBJ_MASKED) {
		CHECKF(attn_result_bytes(&r) == qk_bytes,
		       "a masked result holds %zu bytes before a weight is read, its q and k %zu",
		       attn_result_bytes(&r), qk_bytes);
		attn_result_head(&r, 1, 2);
		size_t held = attn_result_bytes(&r);
		CHECKF(held == qk_bytes + 4u * n * n && held <= cells * sizeof(float),
		       "a masked result with one head read holds %zu bytes", held);
	}
	float *d = dense_copy(&r);
	CHECKF(d && same_floats(d, att, cells) && memcmp(d + cells, sc, cells * 4) == 0,
	       "%s: the result's weights and scores are not the pass's bits",
	       obj == OBJ_CAUSAL ? "causal" : "masked");
	float row[200];
	CHECK(attn_score_row(&r, 1, 3, 150, row) && memcmp(row, sc + cells - 50 * n, 4u * n) == 0);
	if (obj == OBJ_CAUSAL) {
		double held = (double)2 * 4 * attn_packed_row(r.st->cap) + 2.0 * 2 * 64 * r.st->cap;
		CHECKF(held <= cells,
		       "a causal result of %d tokens holds %.0f floats, n x n "
		       "weights and scores %zu",
		       n, held, 2 * cells);
	}
	free(d);
	free(att);
	free(sc);
	attn_result_finish(&r);
	activations_finish(&ws);
	model_destroy(m);
}

/* attnview's weights and scores of one golden input against PyTorch's: both
 * are binary32 implementations within the bound of binary64, so they differ
 * by at most twice the bound. */
static void check_golden_pair(const model *m, const int32_t *ids, int n, const attn_result *r,
			      const float *gatt, const float *gsc, int input)
{
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, n, NULL));
	const size_t cells = (size_t)b.L * b.H * n * n;
	double *ra = malloc(cells * sizeof *ra), *rs = malloc(cells * sizeof *rs);
	for (size_t k = 0; k < cells; k++) {
		ra[k] = gatt[k];
		rs[k] = gsc[k];
		b.att_err[k] *= 2;
		b.score_err[k] *= 2;
	}
	double wa, ws;
	float *da = malloc(2 * cells * sizeof *da);
	attn_result_dense(r, da, da + cells);
	double qa = bound_ratio(da, ra, b.att_err, cells, &wa);
	double qs = bound_ratio(da + cells, rs, b.score_err, cells, &ws);
	free(da);
	printf("golden input %d typed through the cache: difference from PyTorch / twice the "
	       "bound: weights %.3f (%.1e), scores %.3f (%.1e)\n",
	       input, qa, wa, qs, ws);
	CHECKF(qa <= 1 && qs <= 1,
	       "golden input %d: weights %.2f, scores %.2f times twice the bound", input, qa, qs);
	free(ra);
	free(rs);
	fwd_bound_finish(&b);
}

/* The golden causal model typed one character at a time through the cache:
 * the weights of each whole input against PyTorch's. */
static void check_golden_typed(void)
{
	av_error err;
	model *m = model_load(test_path("golden/fwd_causal.attn"), &err);
	CHECKF(m != NULL, "%s", err.msg);
	golden g;
	bool gok = golden_load(&g, test_path("golden/fwd_causal.golden"));
	CHECK(gok);
	if (!m || !gok)
		return;
	activations ws;
	CHECK(activations_init(&ws, &m->cfg, 1, (int)m->cfg.context, (int)m->cfg.context, &err));
	static infer_cache c;
	infer_cache_clear(&c);
	size_t len;
	char *text = (char *)test_read_file(test_path("golden/inputs.txt"), &len);
	int nin = 0;
	for (size_t k = 0; text && k < len; k++)
		nin += text[k] == '\n';
	free(text);
	int inputs = 0;
	for (int i = 0; i < nin; i++) {
		char name[64];
		snprintf(name, sizeof name, "in%d.ids", i);
		const golden_tensor *gi = golden_get(&g, name);
		snprintf(name, sizeof name, "in%d.att", i);
		const golden_tensor *ga = golden_get(&g, name);
		snprintf(name, sizeof name, "in%d.scores", i);
		const golden_tensor *gs = golden_get(&g, name);
		if (!gi || !ga || !gs)
			break;
		int32_t *ids = golden_ids(gi);
		int n = (int)gi->size;
		token t[AV_MAX_CONTEXT];
		to_tokens(ids, n, t);
		attn_result r;
		memset(&r, 0, sizeof r);
		for (int k = 1; k <= n; k++) {
			attn_result_recycle(&r);
			CHECK(infer_attend(m, &ws, &c, t, k, &r, NULL, NULL, &err));
		}
		CHECK(n < 2 || c.computed == 1);
		check_golden_pair(m, ids, n, &r, ga->v, gs->v, i);
		attn_result_finish(&r);
		free(ids);
		inputs++;
	}
	CHECKF(inputs >= 5, "%d golden inputs", inputs);
	activations_finish(&ws);
	golden_free(&g);
	model_destroy(m);
}

/* A causal model's partial result (the view's worker publishes one while a
 * long pass goes on): a copy made between layers 1 and 2 holds layer 0 and
 * 1 as the complete result has them, and keeps them while a later pass
 * through the same cache rewrites those rows (into a spare store). */
typedef struct part_ctx {
	attn_result *live, part;
	bool made;
} part_ctx;

static bool take_part(void *p)
{
	part_ctx *x = p;
	if (!x->made && x->live->partial == 2)
		x->made = attn_result_partial_copy(x->live, 2, &x->part);
	return false;
}

static void check_partial_causal(void)
{
	model *m = random_model(OBJ_CAUSAL, 3, 2, 16, 24, 2.0f, 5);
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, 24, 24, &err));
	infer_cache c = {0};
	int32_t ids[24], other[24];
	token t[24], o[24];
	random_ids(ids, 24, 3, 300);
	memcpy(other, ids, sizeof ids);
	other[0] = ids[0] == 5 ? 6 : 5;
	to_tokens(ids, 24, t);
	to_tokens(other, 24, o);
	attn_result r = {0}, r2 = {0};
	part_ctx x = {.live = &r};
	CHECK(infer_attend(m, &ws, &c, t, 24, &r, take_part, &x, &err));
	CHECK(x.made && x.part.partial == 2 && x.part.causal);
	CHECK(attn_layer_ready(&x.part, 1) && !attn_layer_ready(&x.part, 2));
	float keep[2][24][24];
	bool same = x.made;
	for (int l = 0; x.made && l < 2; l++)
		for (int i = 0; i < 24; i++)
			for (int j = 0; j < 24; j++) {
				keep[l][i][j] = attn_weight(&x.part, l, 1, i, j);
				same = same && keep[l][i][j] == attn_weight(&r, l, 1, i, j);
			}
	CHECKF(same, "the partial result's layers 0 and 1 are not the complete one's");
	/* The first character changed: every row again, through the same cache. */
	CHECK(infer_attend(m, &ws, &c, o, 24, &r2, NULL, NULL, &err));
	bool kept = x.made, moved = false;
	for (int l = 0; x.made && l < 2; l++)
		for (int i = 0; i < 24; i++)
			for (int j = 0; j <= i; j++) {
				kept = kept && keep[l][i][j] == attn_weight(&x.part, l, 1, i, j);
				moved = moved || keep[l][i][j] != attn_weight(&r2, l, 1, i, j);
			}
	CHECKF(kept && moved, "a later pass changed the partial result's weights (kept %d)", kept);
	attn_result_finish(&x.part);
	attn_result_finish(&r);
	attn_result_finish(&r2);
	infer_cache_clear(&c);
	activations_finish(&ws);
	model_destroy(m);
}

/* Typing at the end of a model big enough for the two-thread row
 * (infer_row.c): the same bits as one thread computing it, within the bound
 * of binary64, with a head switched off, and giving up between layers. */
static void check_row_team(void)
{
	model *m = random_model(OBJ_CAUSAL, 6, 8, 256, 16, CACHE_SCALE, 31);
	if (!m)
		return;
	const size_t L = 6, H = 8, d = 256;
	activations ws1, ws2;
	av_error err;
	CHECK(activations_init(&ws1, &m->cfg, 1, 16, 16, &err));
	CHECK(activations_init(&ws2, &m->cfg, 1, 16, 16, &err));
	static infer_cache c1, c2;
	int32_t ids[16];
	random_ids(ids, 16, 5, 300);
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	for (int k = 0; k < 3; k++) {
		int n = 10 + k;
		off[3 * H + 5] = k == 2; /* the last with a head off */
		ws1.ablate = ws2.ablate = k == 2 ? off : NULL;
		const size_t cells = L * H * (size_t)n * n;
		float *a1 = malloc(cells * 4), *s1 = malloc(cells * 4);
		float *a2 = malloc(cells * 4), *s2 = malloc(cells * 4);
		/* The rows before on two threads both times (a pass of many rows
		 * cuts its products by the thread count), the last on one and on
		 * two. */
		CHECK(infer_forward(m, &ws1, &c1, ids, n - 1, NULL, NULL, NULL, NULL, &err));
		CHECK(infer_forward(m, &ws2, &c2, ids, n - 1, NULL, NULL, NULL, NULL, &err));
		parallel_set_threads(1);
		CHECK(infer_forward(m, &ws1, &c1, ids, n, a1, s1, NULL, NULL, &err));
		parallel_set_threads(2);
		CHECK(infer_forward(m, &ws2, &c2, ids, n, a2, s2, NULL, NULL, &err));
		CHECKF(c1.computed == 1 && c2.computed == 1 && !c1.teamed && c2.teamed,
		       "one row computed: %d, %d, on two threads %d, %d", c1.computed, c2.computed,
		       c1.teamed, c2.teamed);
		CHECKF(!memcmp(a1, a2, cells * 4) && !memcmp(s1, s2, cells * 4),
		       "the row on two threads: other weights or scores than on one (%d)", k);
		CHECKF(!memcmp(ws1.layer[L - 1].res3, ws2.layer[L - 1].res3, (size_t)n * d * 4) &&
			   !memcmp(ws1.layer[2].ln2, ws2.layer[2].ln2, (size_t)n * d * 4) &&
			   !memcmp(ws1.layer[4].qkv, ws2.layer[4].qkv, (size_t)n * 3 * d * 4),
		       "the row on two threads: another hidden state than on one (%d)", k);
		free(a1), free(s1), free(a2), free(s2);
	}
	ws1.ablate = ws2.ablate = NULL;
	CHECK(infer_forward(m, &ws2, &c2, ids, 11, NULL, NULL, NULL, NULL, &err));
	same_as_fresh(m, &ws2, &c2, ids, 12, "six layers of d=256, one appended on two threads", 1);
	/* Giving up between layers, then the same row again. */
	stale_after st = {0, 3};
	CHECK(!infer_forward(m, &ws2, &c2, ids, 13, NULL, NULL, stale_at, &st, &err));
	CHECKF(st.calls == 3, "asked %d times before giving up", st.calls);
	same_as_fresh(m, &ws2, &c2, ids, 13, "the row again after giving up", -1);
	infer_cache_clear(&c1);
	infer_cache_clear(&c2);
	activations_finish(&ws1);
	activations_finish(&ws2);
	model_destroy(m);
}

int main(void)
{
	parallel_set_threads(2);
	check_row_team();
	check_bound_catches();
	check_against_forward();
	check_cache();
	check_give_up();
	check_recycle();
	check_shared();
	check_scores_on_demand(OBJ_MASKED);
	check_scores_on_demand(OBJ_CAUSAL);
	check_added_rows_scores();
	check_golden_typed();
	check_partial_causal();
	return test_summary("infer");
}
