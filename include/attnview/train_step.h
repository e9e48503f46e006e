/* The training step: forward, loss and backward of a batch, its work spread
 * over the threads (train_step.c has the plan), and the evaluation loss.
 *
 * Loss: targets (B*T) hold the vocabulary id to predict at each position, or -1
 * (anything outside [0, V)) where no loss is taken. The loss is the mean
 * cross-entropy over the rows with a target. */
#ifndef ATTNVIEW_TRAIN_STEP_H
#define ATTNVIEW_TRAIN_STEP_H

#include "attnview/model.h"

/* Token rows per group in the training step (see train_step.c); 0 restores
 * the default, 512. For tests, which make groups of one sequence on small
 * models, and the benchmark. Changes the rounding of the weight gradients'
 * sums. */
void train_step_set_group_rows(int rows);

/* Gradients of the activations, same layout as `activations` for (B,T), and
 * the step's bookkeeping. */
typedef struct grad_acts {
	int B, T, max_rows;
	/* --sharpen: the weight of the attention entropy added to the loss
	 * (model_train_step_grads); 0 after grad_acts_init: none. */
	float sharpen;
	float *mem;
	size_t nfloats;
	/* The rest is private to train_step.c. */
	float *dresidual, *dln, *dqkv, *datty, *dpreatt, *datt, *dfch, *dfch_gelu, *dlogits;
	int32_t *rows;
	float *lnf_rows, *dlnf_rows; /* (B*T, d): the final LayerNorm at the target rows */
	/* (B*T, d) each: the last block at the target rows */
	float *ln1_rows, *qrows, *dqrows, *dres_rows;
	int32_t *batch_start; /* (B+1): first target row of each sequence */
	int32_t *seq_row0;    /* (B+1): the same, counted from row 0 of the batch */
	float *slice_grads;   /* per-thread gradient copies of a step, zero between steps */
	size_t slice_grads_n; /* floats allocated there */
	float sharpen_row;    /* a step's sharpen / (L H B T log T): each row's share */
} grad_acts;

/* Room for a batch of B sequences of T tokens, including the per-thread
 * copies of the weight gradients for the current thread count
 * (parallel_threads()), so that running out of memory is found here, before
 * training starts. */
bool grad_acts_init(grad_acts *g, const model_config *cfg, int B, int T, av_error *err);
void grad_acts_finish(grad_acts *g);

/* What a step or an evaluation saw. */
typedef struct step_stats {
	float loss;  /* mean over the rows with a target; NAN if there are none */
	int count;   /* rows with a target */
	int correct; /* of those, how many the model got right (argmax == target) */
} step_stats;

/* Forward, loss and backward in one call for a training batch.
 * Targets outside [0, V) take no loss. With g->sharpen = s > 0 the gradients
 * are those of the loss plus s times the mean, over the attention rows the
 * step computes (every row of every layer but the last, the target rows of
 * the last), of the row's entropy divided by log T; st->loss stays the
 * cross-entropy alone. A sequence without a target is skipped whole (no
 * backward), so its rows add no entropy though they count in B T; the
 * trainer's batches give every sequence a target. Afterwards a->logits holds the gradient
 * of the loss with respect to the logits of the target rows, not the logits,
 * and the last block's activations are those of the target rows only (its
 * attention, feed-forward and final LayerNorm are computed for those rows
 * alone: the other rows feed the loss only as keys and values). Call
 * model_forward for the full activations.
 * tokens, targets (B,T). grads: model_num_params floats, accumulated into.
 * `a` must have max_rows >= the number of targets. The bits of the result
 * depend on the thread count (parallel_threads()), not on the timing.
 * Fails (false, err set, grads unusable) only when the thread count grew
 * since grad_acts_init and memory for the further gradient copies cannot be
 * had: a step never quietly runs on fewer slices, which would round
 * differently. */
bool model_train_step_grads(const model *m, activations *a, grad_acts *g, const int32_t *tokens,
			    const int32_t *targets, int B, int T, float *grads, step_stats *st,
			    av_error *err);

/* Loss (and accuracy) only, no gradients: for validation. */
float model_eval_loss(const model *m, activations *a, const int32_t *tokens, const int32_t *targets,
		      int B, int T, int *ncount, int *ncorrect);

/* Inside the step: its last block, run at the target rows only
 * (last_block.c has the plan and the compact layout of its activations).
 *
 * last_block_forward: the last block on x (B,T,d), its input, at the R target
 * rows listed in g->rows (batch_start per sequence), then the final
 * LayerNorm into g->lnf_rows.
 * last_block_backward: its backward and the final LayerNorm's, from
 * g->dlnf_rows (R,d): the weight gradients accumulate into gp, and
 * g->dresidual (B,T,d) gets dL/dx of the block's input xlast at every row. */
void last_block_forward(const model *m, activations *a, grad_acts *g, const float *x, int B, int T,
			int R);
void last_block_backward(const model *m, activations *a, grad_acts *g, model_params *gp,
			 const float *xlast, int B, int T, int R);

#endif
