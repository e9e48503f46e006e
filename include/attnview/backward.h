/* The backward pass: one op_backward per op of ops.h, plus the loss.
 * Every function accumulates (+=) into its gradient outputs; callers zero them.
 *
 * Loss: targets (B*T) hold the vocabulary id to predict at each position, or -1
 * where no loss is taken. Logits are computed only at rows with a target (the
 * output projection over V is the largest product; a masked model needs it at
 * about 15% of the rows). The loss is the mean cross-entropy over those rows. */
#ifndef ATTNVIEW_BACKWARD_H
#define ATTNVIEW_BACKWARD_H

#include "attnview/model.h"

/* Token rows per group in the training step (see model_train_step_grads);
 * 0 restores the default, 512. For tests, which make groups of one sequence
 * on small models. Changes the rounding of the weight gradients' sums. */
void backward_set_group_rows(int rows);

/* The ops. Shapes as in ops.h; every gradient output is accumulated into (+=).
 * A NULL gradient output is skipped. */

/* dout (B,T,C) -> dwte (V,C): dwte[tokens[b][t]] += sqrt(C) * dout[b][t].
 * The positions are fixed, so they take no gradient. */
void embed_backward(float *dwte, const float *dout, const int32_t *tokens, int B, int T, int C);

/* dout (N,C), inp (N,C), mean/rstd (N) from the forward -> dinp (N,C), dw, db (C) */
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
			const float *w, const float *mean, const float *rstd, int N, int C);

/* dout (N,OC), inp (N,C), w (OC,C) -> dinp (N,C) += dout w, dw (OC,C) += dout^T inp,
 * dbias (OC) += column sums of dout. */
void matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
		     const float *w, int N, int C, int OC);
void matmul_backward_ref(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
			 const float *w, int N, int C, int OC);

/* dout (B,T,C), qkv (B,T,3C), att (B,NH,T,T) -> dqkv (B,T,3C).
 * work: B*NH*T*T floats of scratch (the gradient of the scores). */
void attention_backward(float *dqkv, float *work, const float *dout, const float *qkv,
			const float *att, int B, int T, int C, int NH, bool causal);
void attention_backward_ref(float *dqkv, float *work, const float *dout, const float *qkv,
			    const float *att, int B, int T, int C, int NH, bool causal);

/* dout (N), inp (N) the GELU input -> dinp (N) += gelu'(inp) * dout (tanh form) */
void gelu_backward(float *dinp, const float *inp, const float *dout, int N);

/* Cross-entropy over the compacted rows of logits (nrows, V): row r belongs to
 * the r-th entry of targets (N) that lies in [0, V); the rest take no loss.
 * Returns the summed loss (double); *ncorrect (may be NULL) counts rows whose
 * argmax is the target. If dscale != 0, logits is overwritten with
 * dscale * (softmax - onehot), the gradient of dscale * summed loss. */
double crossentropy_rows(float *logits, const int32_t *targets, int N, int nrows, int V,
			 float dscale, int *ncorrect);

/* Gradients of the activations, same layout as `activations` for (B,T). */
typedef struct grad_acts {
	int B, T, max_rows;
	float *mem;
	size_t nfloats;
	/* The rest is private to backward.c. */
	float *dresidual, *dln, *dqkv, *datty, *dpreatt, *datt, *dfch, *dfch_gelu, *dlogits;
	int32_t *rows;
	float *lnf_rows, *dlnf_rows; /* (B*T, d): the final LayerNorm at the target rows */
	/* (B*T, d) each: the last block at the target rows */
	float *ln1_rows, *qrows, *dqrows, *dres_rows;
	int32_t *batch_start; /* (B+1): first target row of each sequence */
	int32_t *seq_row0;    /* (B+1): the same, counted from row 0 of the batch */
	float *slice_grads;   /* per-thread gradient copies of a step */
	size_t slice_grads_n; /* floats allocated there */
} grad_acts;

bool grad_acts_init(grad_acts *g, const model_config *cfg, int B, int T, av_error *err);
void grad_acts_finish(grad_acts *g);

/* Forward, loss and backward in one call for a training batch.
 * Targets outside [0, V) take no loss. Afterwards a->logits holds the gradient
 * of the loss with respect to the logits of the target rows, not the logits,
 * and the last block's activations are those of the target rows only (its
 * attention, feed-forward and final LayerNorm are computed for those rows
 * alone: the other rows feed the loss only as keys and values). Call
 * model_forward for the full activations.
 * tokens, targets (B,T). grads: model_num_params floats, accumulated into.
 * Returns the mean loss over the positions with a target (NAN if none), and
 * the number of such positions and how many of them the model got right
 * (argmax == target) through *ncount / *ncorrect (may be NULL).
 * `a` must have max_rows >= the number of targets. */
float model_train_step_grads(const model *m, activations *a, grad_acts *g, const int32_t *tokens,
			     const int32_t *targets, int B, int T, float *grads, int *ncount,
			     int *ncorrect);

/* Loss (and accuracy) only, no gradients: for validation. */
float model_eval_loss(const model *m, activations *a, const int32_t *tokens, const int32_t *targets,
		      int B, int T, int *ncount, int *ncorrect);

#endif
