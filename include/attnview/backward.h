/* The backward pass: one op_backward per op of ops.h, plus the loss. The
 * training step that runs them is in train_step.h.
 *
 * Every function accumulates (+=) into its gradient outputs; callers zero
 * them. The *_write variants write their input gradient instead.
 *
 * Loss: targets (B*T) hold the vocabulary id to predict at each position, or -1
 * where no loss is taken. Logits are computed only at rows with a target (the
 * output projection over V is the largest product; a masked model needs it at
 * about 15% of the rows). The loss is the mean cross-entropy over those rows. */
#ifndef ATTNVIEW_BACKWARD_H
#define ATTNVIEW_BACKWARD_H

#include "attnview/model.h"

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
/* The same, but dinp is written, not added to (the first write into a fresh
 * buffer costs no memset: sgemm's beta is 0), and dout's rows are ldo apart
 * (OC when it is a matrix of its own, 3C for columns of Q|K|V). dw and dbias
 * still accumulate. */
void matmul_backward_write(float *dinp, float *dw, float *dbias, const float *dout, int ldo,
			   const float *inp, const float *w, int N, int C, int OC);

/* dout (B,T,C), qkv (B,T,3C), att (B,NH,T,T) -> dqkv (B,T,3C).
 * work: B*NH*T*T floats of scratch (the gradient of the scores). */
void attention_backward(float *dqkv, float *work, const float *dout, const float *qkv,
			const float *att, int B, int T, int C, int NH, bool causal);
void attention_backward_ref(float *dqkv, float *work, const float *dout, const float *qkv,
			    const float *att, int B, int T, int C, int NH, bool causal);
/* The same, writing dqkv instead of adding to it, and with the gradient of
 * sharpen * sum over the rows of the row's entropy -sum_j a_j log a_j added
 * to the loss's (0: none). */
void attention_backward_write(float *dqkv, float *work, const float *dout, const float *qkv,
			      const float *att, int B, int T, int C, int NH, bool causal,
			      float sharpen);
/* The softmax's backward on rows of attention weights a (rows, T): dp holds
 * dL/da on entry and scale * dL/ds on exit, s the scores before the scaling
 * (scale = 1/sqrt(hs)); causal: row i has i + 1 keys, zeros after. sharpen:
 * as attention_backward_write's, for these rows. */
void softmax_backward_rows(float *dp, const float *a, int rows, int T, bool causal, float scale,
			   float sharpen);

/* dout (N), inp (N) the GELU input -> dinp (N) += gelu'(inp) * dout (tanh form) */
void gelu_backward(float *dinp, const float *inp, const float *dout, int N);
/* The GELU's backward in place, from the derivative the forward saved
 * (gelu_forward_grad): d (n) *= dgelu (n). */
void gelu_backward_saved(float *d, const float *dgelu, long n);

/* Cross-entropy over the compacted rows of logits (nrows, V): row r belongs to
 * the r-th entry of targets (N) that lies in [0, V); the rest take no loss.
 * Returns the summed loss (double); *ncorrect (may be NULL) counts rows whose
 * argmax is the target. If dscale != 0, logits is overwritten with
 * dscale * (softmax - onehot), the gradient of dscale * summed loss. */
double crossentropy_rows(float *logits, const int32_t *targets, int N, int nrows, int V,
			 float dscale, int *ncorrect);
/* One row l (V) of it, target y: returns -log softmax(l)[y] and *arg, the
 * first argmax; if dscale != 0, l becomes dscale * (softmax - onehot(y)).
 * With bias (V), l += bias first, and dbias (V) (may be NULL) += the
 * gradient: the output bias handled inside the loss's passes over the row. */
double crossentropy_row(float *l, int V, int y, float dscale, const float *bias, float *dbias,
			int *arg);

#endif
