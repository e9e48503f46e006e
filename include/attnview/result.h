/* What a pass leaves for one text (result.c): the attention of every head,
 * each layer's queries and keys, the predictions, read through the accessors
 * below; the view and the dump show these numbers. model_attend (model.h)
 * and infer_attend (infer.h) fill a result. */
#ifndef ATTNVIEW_RESULT_H
#define ATTNVIEW_RESULT_H

#include "attnview/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The weights of a causal model's passes, and each layer's queries and keys,
 * shared between the results handed out and the inference cache that keeps
 * them (infer.h): typing at the end of a text writes one row into the store
 * the last result reads, instead of copying every row into a new result.
 * Each head's rows are packed, row i (i + 1 numbers: the keys it sees) at
 * i (i + 1) / 2 of the head's block of cap (cap + 1) / 2: a causal model's
 * masked half is not kept. Counted references: the worker writes only rows
 * no result reads (rows >= hi, or any row when it holds the only
 * reference). */
typedef struct attn_store {
	_Atomic int refs;
	int layers, heads, dim, cap; /* cap: tokens, the rows of each head's block */
	int hi;			     /* rows 0..hi-1 may be read by results handed out */
	float *att;		     /* [layers][heads][cap (cap + 1) / 2] */
	float *qk;		     /* [layers][cap][2 dim]: row i's q, then its k */
} attn_store;

/* Drop a reference to s (NULL: nothing); the last one frees it. */
void attn_store_release(attn_store *s);

/* Read a result's weights and scores through attn_result_head (analysis.h),
 * attn_weight, attn_score, attn_score_row and attn_result_dense, never
 * through att, qk and head_w: their layout depends on the model (pack). The
 * raw scores are not kept: the accessors compute them from q and k, with the
 * products of the pass (infer.c), so they are the pass's numbers. A masked
 * model's pass keeps no weights either: a head's are computed from q and k
 * the first time they are read, by the same products and softmax as the
 * pass (the pass's bits), and kept in head_w until the result is recycled,
 * so a result holds the weights of the heads that were looked at. */
typedef struct attn_result {
	int n, layers, heads, dim, topk;
	bool causal;
	token *tokens;	  /* [n] */
	/* The weights: pack == 0, [layers][heads][n][n]; else packed; NULL:
	 * computed when read, into head_w ([layers][heads], (n, n) or NULL). */
	float *att;
	float *_Atomic *head_w;
	float *qk;	  /* [layers][qk_rows][2 dim]: each row's q, then its k, or NULL */
	int qk_rows;	  /* rows of a layer's block in qk: n, or the store's cap */
	int pack;	  /* 0, or the rows of a packed head's block (attn_store) */
	attn_store *st;	  /* the owner of att and qk when packed, else NULL */
	int32_t *pred_id; /* [n][topk], or NULL if predictions were not asked */
	float *pred_p;	  /* [n][topk] probabilities */
	float *value_norms; /* [layers][heads][n] (explain.h, value_norms), or NULL */
	/* Room at att and at qk (floats, each) and at tokens: infer_attend
	 * reuses the arrays of a recycled result (infer.h) when they fit. */
	size_t cap, cap_qk;
	int cap_tokens;
	/* 0: every layer is in the result. Else it holds layers 0..partial-1
	 * only: a result published while its pass goes on (the
	 * view's worker, worker.h), read through attn_layer_ready; while
	 * infer_attend runs, the layers it has finished. */
	int partial;
} attn_result;

/* Whether layer l of r is in it (not a layer still being computed). */
static inline bool attn_layer_ready(const attn_result *r, int l)
{
	return r->partial == 0 || l < r->partial;
}
/* A copy of the first `layers` layers of a result r into *out, marked
 * partial: a masked model's tokens, queries and keys (the weights are
 * computed when read); a causal model's tokens and a reference to the store
 * its pass fills (infer.c). False when memory ran out. */
bool attn_result_partial_copy(const attn_result *r, int layers, attn_result *out);

/* Offset of row i in a packed head's block. */
static inline size_t attn_packed_row(int i)
{
	return (size_t)i * (size_t)(i + 1) / 2;
}

/* Weight A[i][j] of head h of layer l (0 where masked). */
float attn_weight(const attn_result *r, int l, int h, int i, int j);
/* Raw score q_i.k_j of head h of layer l (NAN where masked; also NAN when r
 * has no q and k, or memory ran out). */
float attn_score(const attn_result *r, int l, int h, int i, int j);
/* Row i of the raw scores of head h of layer l into out[0..n) (NAN where
 * masked); false, out all NAN, when r has no q and k or memory ran out. */
bool attn_score_row(const attn_result *r, int l, int h, int i, float *out);
/* Every raw score of head h of layer l, dense (n, n) into out (NAN where
 * masked); scratch: attn_scores_scratch(r) floats. False, out all NAN, when
 * r has no q and k. Allocates nothing. */
bool attn_scores_head(const attn_result *r, int l, int h, float *out, float *scratch);
/* Floats of scratch attn_scores_head needs: a block of INFER_ATT_BLOCK
 * query rows' scores (infer.h), and a head's keys packed where the pass
 * packs them (attn_products.h). */
size_t attn_scores_scratch(const attn_result *r);
/* Every weight and score of r, dense: [layers][heads][n][n] each (either may
 * be NULL); false when the scores could not be computed (as above). */
bool attn_result_dense(const attn_result *r, float *att, float *scores);

/* Head h of layer l's weights, dense (n, n), of a result whose weights are
 * not packed; when r keeps no weights (a masked model's, att == NULL),
 * computed from q and k the first time and kept (callers on several threads
 * are safe). NULL when memory ran out, or the weights are packed. */
const float *attn_head_weights(const attn_result *r, int l, int h);
/* Whether reading head h of layer l's weights computes nothing: r keeps
 * them (a causal model's, or a masked model's head already computed). */
bool attn_head_kept(const attn_result *r, int l, int h);
/* The weights of masked result `from` moved into r, where r has none, when
 * from is r's pass to the bit (the same tokens, sizes, and queries and keys
 * of every layer: the weights are computed from those alone); else false,
 * nothing moved. Whatever moved, from keeps none of it. */
bool attn_result_adopt_weights(attn_result *r, attn_result *from);
/* Heads whose weights the calling thread has computed (attn_head_weights,
 * not another thread's or the pool's share of attn_result_all_weights)
 * since it started: the view's test that its thread computes none for the
 * overview and the summaries (script.h). */
uint64_t attn_weights_computed_here(void);
/* Every head's weights of r computed now (attn_head_weights), on the thread
 * pool; true at once for a result that holds them (a causal model's); false
 * when memory ran out. */
bool attn_result_all_weights(const attn_result *r);
/* Bytes r's numbers take now: weights (kept or computed so far), q and k. */
size_t attn_result_bytes(const attn_result *r);

/* Frees what r holds (r itself is the caller's); NULL is fine. */
void attn_result_finish(attn_result *r);

/* The arrays of r kept for the next infer_attend (infer.h), everything else
 * freed, the rest zeroed. */
void attn_result_recycle(attn_result *r);

#endif
