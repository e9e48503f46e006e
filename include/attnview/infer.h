/* The forward pass of the view and the dump: what model_attend shows, fast.
 *
 * model_forward (model.h) is the reference: a batch, each operation over all
 * rows in turn, the attention weights left in the work space. The view runs
 * one text at a time and keeps each layer's queries and keys, from which the
 * raw scores are computed when asked, and a masked model's weights of a head
 * when it is first read (result.c); a causal model's weights are kept, its
 * rows packed without the masked half (model.h, attn_store), since typing at
 * the end computes one row of them. This pass computes the same thing (man 5
 * attnview) in the way that costs least:
 *  - the weights and scores the caller asks for go straight into its arrays,
 *    row by row while they are in the cache, not into the work space first;
 *  - a layer runs in three phases on the thread pool (parallel_threads()),
 *    each thread calling BLAS single-threaded on its share: rows (ln1, the QKV
 *    product), heads x blocks of query rows (scores, softmax, weights x
 *    values), rows (projection, ln2, the feed-forward); a phase wakes only as
 *    many threads as its work keeps busy, and the pool's threads sleep
 *    between jobs, so a small model runs on one thread and idle threads take
 *    no CPU from the interface;
 *  - for a causal model, rows of an unchanged prefix are kept (infer_cache): row
 *    i of every layer depends on tokens 0..i only, so after an edit at position
 *    p only rows p.. are computed, against the keys and values of all rows;
 *    the weights, queries and keys of those rows are in a store the results share
 *    with the cache (attn_store), so typing at the end writes one row per
 *    head into the store the last result reads, and copies nothing; that
 *    one row's products read every weight once, and two threads read
 *    them, each half of every product, woken once (infer_row.c);
 *  - between layers it asks whether to give up (a newer text is waiting).
 *
 * Agreement: the view, --dump, --export, the breakdown, the loss with a
 * position masked and the predictions all run this pass with the same calls,
 * so on one machine they give the same bits for a text. model_forward (the
 * training's pass) and a pass that reuses a prefix (its new rows computed in
 * smaller products) call BLAS with other shapes, which OpenBLAS's kernels sum
 * in other orders: they agree with a full pass to the bound man 5 attnview
 * derives (NOTES, Accuracy), not bit for bit, and tests/unit/test_infer.c checks
 * all three against it on every kernel the CPU runs. */
#ifndef ATTNVIEW_INFER_H
#define ATTNVIEW_INFER_H

#include "attnview/model.h"

/* Query rows per attention task: the block's scores (64 x n floats, 128 KB
 * at 512 tokens) stay in the core's cache from the product that makes them,
 * through the softmax and the stores into the result, to the product with the
 * values. A result's raw scores are computed again by the same blocks
 * (result.c), so that they are the pass's numbers. */
#define INFER_ATT_BLOCK 64

/* Whether a pass over rows query rows makes the attention's products with
 * attn_products.h (its keys packed once a head and layer) rather than
 * OpenBLAS: a CPU with FMA and a head size of a multiple of 8, whatever the
 * rows, but for a single row (typing at the end of a causal text, whose
 * matrix-vector products read the keys once, where packing them would read
 * them twice). A result's scores computed again later (result.c) take the
 * same products, so they are the pass's bits for every row but such a
 * single row's. */
bool infer_own_products(int hs, int rows);

/* Asked between layers: true when the pass should give up. */
typedef bool (*infer_stale_fn)(void *ctx);

/* What a work space holds from the passes run on it through this module, for
 * the next pass to reuse. Keep one per work space (the worker's model
 * context); clear it when anything else writes the work space. */
typedef struct infer_cache {
	const model *m; /* the model of the rows; NULL: nothing kept */
	int n;		/* rows 0..n-1 hold the pass over ids[0..n) */
	int32_t ids[AV_MAX_CONTEXT];
	bool ablated; /* with ablate[] (ws->ablate) switched off */
	uint8_t ablate[AV_MAX_LAYERS * AV_MAX_HEADS];
	/* Of the last pass, for tests and benchmarks: rows taken from the cache
	 * and rows computed. */
	int reused, computed;
	bool teamed; /* its one row ran on two threads (infer_row.c) */
	/* A causal model's weights and scores of rows 0..n-1 (model.h), shared
	 * with the results of infer_attend; and a store a recycled result gave
	 * back, for the next pass that needs a new one. */
	attn_store *st, *spare;
} infer_cache;

/* Forget everything (and drop the stores). A new cache must be zeroed first
 * (calloc, static or = {0}); clear it before freeing it. */
void infer_cache_clear(infer_cache *c);

/* The pass over ids[0..n) on ws (B >= 1, T >= n; the ablation is ws->ablate),
 * as model_forward(m, ws, ids, 1, n) leaves ws, except that the final
 * LayerNorm is not computed and ws->layer[l].att/preatt hold no weights. att
 * and scores (each [L][H][n][n], dense, or NULL) receive the weights and raw
 * scores (NAN where masked); a causal model's also go to c's store. c (or NULL) is the cache of
 * ws: rows it holds for this model, ablation and prefix of ids are reused.
 * Returns false, with c holding only rows still valid, if stale(stale_ctx)
 * returned true between two layers (stale may be NULL); att and scores are
 * then incomplete. Allocates nothing except a block of scratch per thread;
 * without it, false too, with an error. */
bool infer_forward(const model *m, activations *ws, infer_cache *c, const int32_t *ids, int n,
		   float *att, float *scores, infer_stale_fn stale, void *stale_ctx, av_error *err);

/* model_attend without predictions, into r: r may hold the arrays of an
 * earlier result (r->cap), which are reused when they are large enough
 * (attn_result_recycle); otherwise it must be zeroed. A causal model's r
 * shares c's store (a store of its own when c is NULL): it keeps its numbers
 * while later passes run, since they write only rows no result reads. Whatever it returns, r
 * may hold arrays afterwards (free or recycle them). A gave-up pass returns
 * false with "a newer text came". While a masked model's pass runs, each
 * stale() call sees in r->partial the layers whose q and k are in r->qk (the
 * worker publishes a copy of them: attn_result_partial_copy); 0 at the end. */
bool infer_attend(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
		  attn_result *r, infer_stale_fn stale, void *stale_ctx, av_error *err);

/* logits (V) of row `row` of the pass over ids[0..n): of a causal model, the
 * character after row; computed through the cache, so for the text of the
 * last pass, only the final LayerNorm of that row and the output product. */
bool infer_row_logits(const model *m, activations *ws, infer_cache *c, const int32_t *ids, int n,
		      int row, float *logits, infer_stale_fn stale, void *stale_ctx, av_error *err);

/* The prediction logits (V) at pos (man 5 attnview, section 6: a masked
 * model's of the pass with pos alone masked, a causal model's of the pass),
 * through the cache: what infer_predict takes its predictions from. */
bool infer_pred_logits(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
		       int pos, float *logits, infer_stale_fn stale, void *stale_ctx,
		       av_error *err);

/* model_predict through the cache: the top-k predictions at pos (man 5
 * attnview, Predictions). False if it gave up or failed; ids and probs are
 * then not set. */
bool infer_predict(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
		   int pos, int topk, int32_t *ids, float *probs, infer_stale_fn stale,
		   void *stale_ctx, av_error *err);

#endif
