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

/* Gradients of the activations, same layout as `activations` for (B,T). */
typedef struct grad_acts {
	int B, T, max_rows;
	float *mem;
	size_t nfloats;
	/* The rest is private to backward.c. */
	float *dresidual, *dln, *dqkv, *datty, *dpreatt, *datt, *dfch, *dfch_gelu, *dlogits;
	int32_t *rows;
} grad_acts;

bool grad_acts_init(grad_acts *g, const model_config *cfg, int B, int T, av_error *err);
void grad_acts_finish(grad_acts *g);

/* Forward, loss and backward in one call for a training batch.
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
