/* A result's numbers (result.h): its arrays, and reading them, the raw
 * scores computed from its queries and keys by the pass's own products. */
#include "attnview/result.h"
#include "attnview/attn_products.h"
#include "attnview/infer.h"
#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ATT_BLOCK INFER_ATT_BLOCK

static void fill(float *p, float v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = v;
}

void attn_store_release(attn_store *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		free(s->att);
		free(s->qk);
		free(s);
	}
}

/* The weights computed when read (head_w), all dropped. */
static void head_w_free(attn_result *r)
{
	const size_t LH = (size_t)r->layers * (size_t)r->heads;
	for (size_t k = 0; r->head_w && k < LH; k++)
		free(atomic_load(&r->head_w[k]));
	free(r->head_w);
	r->head_w = NULL;
}

void attn_result_finish(attn_result *r)
{
	if (!r)
		return;
	head_w_free(r);
	free(r->tokens);
	if (r->st) {
		attn_store_release(r->st);
	} else {
		free(r->att);
		free(r->qk);
	}
	free(r->pred_id);
	free(r->pred_p);
	free(r->value_norms);
	memset(r, 0, sizeof *r);
}

void attn_result_recycle(attn_result *r)
{
	attn_result keep = {.tokens = r->tokens,
			    .att = r->att,
			    .qk = r->qk,
			    .pack = r->pack,
			    .st = r->st,
			    .cap = r->cap,
			    .cap_qk = r->cap_qk,
			    .cap_tokens = r->cap_tokens};
	head_w_free(r);
	free(r->pred_id);
	free(r->pred_p);
	free(r->value_norms);
	*r = keep;
}

float attn_weight(const attn_result *r, int l, int h, int i, int j)
{
	if (r->causal && j > i)
		return 0.0f;
	if (!r->att) {
		const float *w = attn_head_weights(r, l, h);
		return w ? w[(size_t)i * (size_t)r->n + (size_t)j] : NAN;
	}
	size_t per = r->pack ? attn_packed_row(r->pack) : (size_t)r->n * (size_t)r->n;
	const float *b = r->att + ((size_t)l * (size_t)r->heads + (size_t)h) * per;
	return r->pack ? b[attn_packed_row(i) + (size_t)j] : b[(size_t)i * (size_t)r->n + (size_t)j];
}

/* The raw scores of the block of query rows from i0 (a multiple of
 * ATT_BLOCK) of head h, into S (rows x kn; returns kn), by the product
 * attend_block makes in a pass over those rows: the same products on the
 * same numbers, so the same bits as that pass (--dump's), also for rows a
 * later pass added (infer_own_products: the choice does not depend on how
 * many rows a pass computed, but for a single one). kt: the head's keys
 * packed (pack_head) when the pass packs them, or NULL. */
static int score_block(const attn_result *r, int l, int h, int i0, const float *kt, float *S)
{
	const int d = r->dim, hs = d / r->heads, n = r->n, C2 = 2 * d;
	const int i1 = i0 + ATT_BLOCK < n ? i0 + ATT_BLOCK : n, kn = r->causal ? i1 : n;
	const float *base = r->qk + (size_t)l * (size_t)r->qk_rows * (size_t)C2;
	const float *q = base + (size_t)i0 * C2 + (size_t)h * hs;
	const float *k = base + d + (size_t)h * hs;
	if (kt)
		attn_scores(S, kn, q, C2, kt, i1 - i0, kn, hs);
	else if (i1 - i0 == 1) /* a last block of one row: the pass's sgemv */
		cblas_sgemv(CblasRowMajor, CblasNoTrans, kn, hs, 1.0f, k, C2, q, 1, 0.0f, S, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, i1 - i0, kn, hs, 1.0f, q, C2,
			    k, C2, 0.0f, S, kn);
	return kn;
}

/* Floats of scratch the scores of a head need beside a block's: the packed
 * keys, where the pass packs them. */
static size_t packed_floats(const attn_result *r)
{
	const int hs = r->dim / r->heads;
	return infer_own_products(hs, r->n) ? attn_packed_keys_floats(r->n, hs) : 0;
}

/* Head h of layer l's keys packed into kt as the pass packs them; NULL
 * (OpenBLAS's products) when it does not. */
static const float *pack_head(const attn_result *r, int l, int h, float *kt)
{
	if (!packed_floats(r))
		return NULL;
	const int d = r->dim, hs = d / r->heads;
	const float *base = r->qk + (size_t)l * (size_t)r->qk_rows * (size_t)(2 * d);
	attn_pack_keys(kt, base + d + (size_t)h * hs, 2 * d, r->n, hs);
	return kt;
}

size_t attn_scores_scratch(const attn_result *r)
{
	return (size_t)ATT_BLOCK * (size_t)r->n + packed_floats(r);
}

/* Rows i0..i1-1 of head h's raw scores, dense (n columns, NAN where masked),
 * into out; S: scratch of attn_scores_scratch(r) floats. */
static void score_rows(const attn_result *r, int l, int h, int i0, int i1, float *S, float *out)
{
	const size_t n = (size_t)r->n;
	const float *kt = pack_head(r, l, h, S + (size_t)ATT_BLOCK * n);
	for (int b = i0 / ATT_BLOCK * ATT_BLOCK; b < i1; b += ATT_BLOCK) {
		int kn = score_block(r, l, h, b, kt, S);
		for (int i = b > i0 ? b : i0; i < b + ATT_BLOCK && i < i1; i++) {
			size_t valid = r->causal ? (size_t)i + 1 : n;
			float *o = out + (size_t)(i - i0) * n;
			memcpy(o, S + (size_t)(i - b) * (size_t)kn, valid * sizeof *o);
			fill(o + valid, NAN, (int)(n - valid));
		}
	}
}

/* Head h of layer l's weights into w (n, n) as the pass made them: each
 * block's scores by the pass's product, then the softmax in place. */
static bool weights_of(const attn_result *r, int l, int h, float *w)
{
	const int n = r->n;
	float *S = malloc(attn_scores_scratch(r) * sizeof *S);
	if (!S)
		return false;
	const float *kt = pack_head(r, l, h, S + (size_t)ATT_BLOCK * n);
	const float scale = 1.0f / sqrtf((float)(r->dim / r->heads));
	for (int i0 = 0; i0 < n; i0 += ATT_BLOCK) {
		int kn = score_block(r, l, h, i0, kt, S);
		for (int i = i0; i < i0 + ATT_BLOCK && i < n; i++) {
			float *s = S + (size_t)(i - i0) * (size_t)kn;
			int valid = r->causal ? i + 1 : n;
			softmax_row(s, s, kn, valid, scale);
			float *o = w + (size_t)i * (size_t)n;
			memcpy(o, s, (size_t)valid * sizeof *o);
			memset(o + valid, 0, (size_t)(n - valid) * sizeof *o);
		}
	}
	free(S);
	return true;
}

/* Heads whose weights this thread computed (attn_weights_computed_here). */
static _Thread_local uint64_t computed_here;

uint64_t attn_weights_computed_here(void)
{
	return computed_here;
}

bool attn_head_kept(const attn_result *r, int l, int h)
{
	if (!attn_layer_ready(r, l))
		return false;
	if (r->att)
		return true;
	return r->head_w && atomic_load(&r->head_w[(size_t)l * (size_t)r->heads + (size_t)h]);
}

const float *attn_head_weights(const attn_result *r, int l, int h)
{
	if (!attn_layer_ready(r, l))
		return NULL;
	if (r->att)
		return r->pack ? NULL : r->att + ((size_t)l * r->heads + h) * r->n * (size_t)r->n;
	if (!r->head_w || !r->qk)
		return NULL;
	float *_Atomic *slot = &r->head_w[(size_t)l * (size_t)r->heads + (size_t)h];
	float *w = atomic_load(slot), *none = NULL;
	if (w)
		return w;
	w = malloc((size_t)r->n * (size_t)r->n * sizeof *w);
	if (!w || !weights_of(r, l, h, w)) {
		free(w);
		return NULL;
	}
	computed_here++;
	if (atomic_compare_exchange_strong(slot, &none, w))
		return w;
	free(w); /* another thread was first: its bits are the same */
	return none;
}

static void heads_slice(void *ctx, int begin, int end)
{
	const attn_result *r = ctx;
	const int LH = r->layers * r->heads;
	for (int s = begin; s < end; s++)
		for (int k = s; k < LH; k += parallel_threads())
			attn_head_weights(r, k / r->heads, k % r->heads);
}

bool attn_result_all_weights(const attn_result *r)
{
	/* A result that holds its weights (a causal model's, packed in the
	 * store) has every head already; attn_head_weights gives a pointer
	 * only to the computed kind. */
	if (r->att)
		return true;
	const int nt = parallel_threads();
	parallel_for_n(nt, nt, heads_slice, (void *)r);
	for (int k = 0; k < r->layers * r->heads; k++)
		if (!attn_head_weights(r, k / r->heads, k % r->heads))
			return false;
	return true;
}

/* Rows 0..n-1 of layer l's queries and keys of a and b the same bits. */
static bool same_qk(const attn_result *a, const attn_result *b, int l)
{
	const size_t row = 2 * (size_t)a->dim, n = (size_t)a->n;
	return memcmp(a->qk + (size_t)l * (size_t)a->qk_rows * row,
		      b->qk + (size_t)l * (size_t)b->qk_rows * row, n * row * sizeof *a->qk) == 0;
}

bool attn_result_adopt_weights(attn_result *r, attn_result *from)
{
	if (r->att || from->att || !r->head_w || !from->head_w || !r->qk || !from->qk ||
	    r->partial || from->partial || r->n != from->n || r->layers != from->layers ||
	    r->heads != from->heads || r->dim != from->dim || r->causal != from->causal)
		return false;
	for (int i = 0; i < r->n; i++)
		if (r->tokens[i].id != from->tokens[i].id)
			return false;
	/* The weights are a function of q and k alone (weights_of): the same
	 * bits in, the same bits out, as if computed here. */
	for (int l = 0; l < r->layers; l++)
		if (!same_qk(r, from, l))
			return false;
	const size_t LH = (size_t)r->layers * (size_t)r->heads;
	for (size_t k = 0; k < LH; k++) {
		float *w = atomic_exchange(&from->head_w[k], NULL), *none = NULL;
		if (w && !atomic_compare_exchange_strong(&r->head_w[k], &none, w))
			free(w); /* r had this head already: the same bits */
	}
	return true;
}

size_t attn_result_bytes(const attn_result *r)
{
	const size_t LH = (size_t)r->layers * (size_t)r->heads, nn = (size_t)r->n * r->n;
	const size_t qk = r->st ? 2 * (size_t)r->layers * (size_t)r->dim * r->st->cap : r->cap_qk;
	size_t floats = qk + (r->st ? LH * attn_packed_row(r->st->cap) : r->cap);
	for (size_t k = 0; !r->att && r->head_w && k < LH; k++)
		floats += atomic_load(&r->head_w[k]) ? nn : 0;
	return floats * sizeof(float);
}

bool attn_score_row(const attn_result *r, int l, int h, int i, float *out)
{
	float *S =
	    r->qk && attn_layer_ready(r, l) ? malloc(attn_scores_scratch(r) * sizeof *S) : NULL;
	if (!S) {
		fill(out, NAN, r->n);
		return false;
	}
	score_rows(r, l, h, i, i + 1, S, out);
	free(S);
	return true;
}

bool attn_scores_head(const attn_result *r, int l, int h, float *out, float *scratch)
{
	if (!r->qk || !attn_layer_ready(r, l)) {
		fill(out, NAN, r->n * r->n);
		return false;
	}
	score_rows(r, l, h, 0, r->n, scratch, out);
	return true;
}

float attn_score(const attn_result *r, int l, int h, int i, int j)
{
	float row[AV_MAX_CONTEXT];
	if (r->causal && j > i)
		return NAN;
	attn_score_row(r, l, h, i, row);
	return row[j];
}

bool attn_result_dense(const attn_result *r, float *att, float *scores)
{
	const size_t n = (size_t)r->n, nn = n * n;
	float *S = scores && r->qk ? malloc(attn_scores_scratch(r) * sizeof *S) : NULL;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			size_t o = ((size_t)l * (size_t)r->heads + (size_t)h) * nn;
			for (int i = 0; att && i < r->n; i++)
				for (int j = 0; j < r->n; j++)
					att[o + (size_t)i * n + (size_t)j] = attn_weight(r, l, h, i, j);
			if (S && attn_layer_ready(r, l))
				score_rows(r, l, h, 0, r->n, S, scores + o);
			else if (scores)
				fill(scores + o, NAN, (int)nn);
		}
	free(S);
	return !scores || S;
}

/* A causal model's partial result: its tokens, and a reference to the store
 * the pass fills (rows 0..n-1 of the layers done are final; the pass writes
 * only the layers after them, which the copy does not show, and a later pass
 * that would rewrite these rows writes into a spare store: attn_store.hi). */
static bool partial_shared(const attn_result *r, int layers, attn_result *out)
{
	attn_result p = {.n = r->n,
			 .layers = r->layers,
			 .heads = r->heads,
			 .dim = r->dim,
			 .causal = true,
			 .att = r->att,
			 .qk = r->qk,
			 .qk_rows = r->qk_rows,
			 .pack = r->pack,
			 .cap_tokens = r->n,
			 .partial = layers};
	p.tokens = malloc((size_t)r->n * sizeof *p.tokens);
	if (!r->st || layers < 1 || layers > r->layers || !p.tokens) {
		free(p.tokens);
		return false;
	}
	memcpy(p.tokens, r->tokens, (size_t)r->n * sizeof *p.tokens);
	atomic_fetch_add(&r->st->refs, 1);
	p.st = r->st;
	*out = p;
	return true;
}

bool attn_result_partial_copy(const attn_result *r, int layers, attn_result *out)
{
	if (r->causal)
		return partial_shared(r, layers, out);
	const size_t n = (size_t)r->n, qk = (size_t)layers * n * 2 * (size_t)r->dim;
	attn_result p = {.n = r->n,
			 .layers = r->layers,
			 .heads = r->heads,
			 .dim = r->dim,
			 .qk_rows = r->n,
			 .cap_qk = qk,
			 .cap_tokens = r->n,
			 .partial = layers};
	p.tokens = malloc(n * sizeof *p.tokens);
	p.qk = malloc(qk * sizeof *p.qk);
	p.head_w = calloc((size_t)r->layers * (size_t)r->heads, sizeof *p.head_w);
	if (r->causal || !r->qk || layers < 1 || layers > r->layers || !p.tokens || !p.qk ||
	    !p.head_w) {
		attn_result_finish(&p);
		return false;
	}
	memcpy(p.tokens, r->tokens, n * sizeof *p.tokens);
	/* The rows of a layer's block are r->qk_rows apart. */
	const size_t row = 2 * (size_t)r->dim;
	for (int l = 0; l < layers; l++)
		memcpy(p.qk + (size_t)l * n * row, r->qk + (size_t)l * (size_t)r->qk_rows * row,
		       n * row * sizeof *p.qk);
	*out = p;
	return true;
}
