/* Why a weight is what it is: the q·k breakdown of one cell, the size of
 * what each key contributes to a query (Kobayashi et al. 2020, "Attention is
 * not only a weight"), and the loss of the model on a text (before and after
 * switching heads off: activations.ablate). These need the model's
 * internals (q, k, v, the output projection), so they run right after a
 * forward pass on the same activations. */
#ifndef ATTNVIEW_EXPLAIN_H
#define ATTNVIEW_EXPLAIN_H

#include "attnview/model.h"

/* The path from q and k to the weight of cell (query, key) of a head:
 *   prod[c] = q[c] k[c]            per dimension c of the head (hs of them)
 *   score   = sum_c prod[c]        (q·k as the model computed it)
 *   scaled  = score / sqrt(hs)
 *   softmax over the row: shifted = scaled - max_j scaled_j,
 *   e = exp(shifted), sum_exp = sum_j exp(scaled_j - max), weight = e / sum_exp
 * with j over the keys the query sees (a causal model masks keys after it). */
typedef struct qk_breakdown {
	int layer, head, query, key;
	int hs;
	float *q, *k, *prod; /* [hs] */
	int *order;	     /* [hs]: dimensions by |prod|, largest first */
	double dot;	     /* sum of prod, in double */
	float score;	     /* the model's q·k for the cell (the dump's score) */
	float scale;	     /* 1 / sqrt(hs) */
	float scaled;	     /* score * scale */
	float row_max;	     /* largest scaled score of the row's visible keys */
	double shifted, e, sum_exp;
	float weight; /* e / sum_exp */
	bool masked;  /* the key is after the query in a causal model */
} qk_breakdown;

bool qk_breakdown_init(qk_breakdown *b, int hs, av_error *err);
void qk_breakdown_finish(qk_breakdown *b);

/* q and k of head `head` of layer `layer` at rows query and key, from the
 * forward pass just run on ws (one sequence). q, k: hs floats each. */
void qk_from_forward(const model *m, const activations *ws, int layer, int head, int query,
		     int key, float *q, float *k);

/* Fill b for cell (query, key) from q and k (copied) and the row's raw
 * scores row_scores[0..n) (NAN where masked), as model_attend returns them. */
void qk_breakdown_compute(qk_breakdown *b, int layer, int head, int query, int key,
			  const float *q, const float *k, const float *row_scores, int n);

/* The size of what key j adds to head h's output at every query, before the
 * attention weight: vnorm[l][h][j] = || v_j^h W_O^h ||, v_j^h the head's
 * value at row j (bias included), W_O^h the columns of the output projection
 * that take the head's output. Key j's contribution to query i's output is
 * A[i][j] vnorm[j] (the weight is a scalar). From the forward pass just run
 * on ws over n tokens; out (L, H, n). */
bool value_norms(const model *m, const activations *ws, int n, float *out, av_error *err);

/* The model's loss on the text, nats per character: a masked model predicts
 * each position with that position alone masked, a causal one each next
 * character; positions whose character is unknown to the model (and, for a
 * causal model, the last one) take no part. Respects ws->ablate. *count: the
 * positions that took part (0: *loss is NAN). The softmax is summed in double. */
bool model_text_loss(const model *m, activations *ws, const token *tokens, int n, double *loss,
		     int *count, av_error *err);
/* The same, and in the same passes the loss at the positions at[i] marks
 * only (a lab task's: lab_positions.h; at NULL: *loss_at NAN, *count_at 0;
 * for a causal model position i is the prediction of character i + 1).
 * stop (if not NULL) is asked between positions and within the passes
 * whether to give up (then false, err saying so). */
bool model_text_loss_at(const model *m, activations *ws, const token *tokens, int n,
			const uint8_t *at, double *loss, int *count, double *loss_at, int *count_at,
			bool (*stop)(void *), void *stop_ctx, av_error *err);
/* The same with the heads ablate marks (not NULL; as activations.ablate)
 * mean-ablated: each of their rows takes, in place of its own output, the
 * average of the head's output over this text's rows (a causal row's over
 * the rows up to it, its own included, so no later character reaches it:
 * row 0 keeps its own, row i a 1 / (i + 1) share of it; a masked model's
 * passes each have their position masked, and the average is that pass's).
 * It takes away most of what a head says about each position and keeps what
 * it says on average over the text. Plain passes (model_forward): one for a
 * causal model, one per position for a masked one, between which stop (if
 * not NULL) is asked whether to give up (then false, err saying so).
 * ws->ablate, ablate_mean, pattern and tokens as they were after. */
bool model_text_loss_mean(const model *m, activations *ws, const token *tokens, int n,
			  const uint8_t *ablate, const uint8_t *at, double *loss, int *count,
			  double *loss_at, int *count_at, bool (*stop)(void *), void *stop_ctx,
			  av_error *err);

/* What the three losses on one text say (nats per character, with every
 * head, with the heads zeroed, with them mean-ablated): zeroing raised the
 * loss by 0.05 or more and their average output in their place takes back
 * nine tenths of the rise. On this text the model then needs what the heads
 * write on average, not where they look, and their pictures are no
 * evidence of what they do for it. */
bool ablation_mean_suffices(double before, double zeroed, double mean);

#endif
