/* The last block of the training step, run at the target rows only
 * (last_block.c has the plan and the compact layout of its activations).
 * Private to src/train: train_step.c calls it. */
#ifndef ATTNVIEW_TRAIN_LAST_BLOCK_H
#define ATTNVIEW_TRAIN_LAST_BLOCK_H

#include "attnview/train_step.h"

/* The last block on x (B,T,d), its input, at the R target rows listed in
 * g->rows (batch_start per sequence), then the final LayerNorm into
 * g->lnf_rows. */
void last_block_forward(const model *m, activations *a, grad_acts *g, const float *x, int B, int T,
			int R);

/* Its backward and the final LayerNorm's, from g->dlnf_rows (R,d): the
 * weight gradients accumulate into gp, and g->dresidual (B,T,d) gets dL/dx
 * of the block's input xlast at every row. */
void last_block_backward(const model *m, activations *a, grad_acts *g, model_params *gp,
			 const float *xlast, int B, int T, int R);

#endif
