/* Checkpoints: the state of a training run, written when it stops or every
 * --checkpoint-every steps, and read back by --resume, which then ends in the
 * same bytes as an uninterrupted run.
 *
 * Checkpoint file: a model file (modelfile.h) of kind AV_KIND_CHECKPOINT whose
 * header and parameters are the model at the moment of the checkpoint, with
 * this training state as the kind-specific tail (little-endian, offsets from
 * the start of the tail; P = number of parameters):
 *   0    4   magic "ATCK"
 *   4    4   state version (2)
 *   8    4   objective (0 masked, 1 causal)
 *   12   4   dim
 *   16   4   heads
 *   20   4   layers
 *   24   4   context T
 *   28   4   batch B
 *   32   8   total steps (resolved from --epochs if that was given)
 *   40   8   epochs (0 when --steps was given)
 *   48   4   peak learning rate (f32)
 *   52   8   warmup steps (resolved: never TRAIN_WARMUP_AUTO)
 *   60   8   seed
 *   68   8   min count
 *   76   4   max vocabulary (0 = no limit)
 *   80   8   eval every (steps; 0 = only at the end)
 *   88   8   checkpoint every (steps; 0 = only when stopped)
 *   96   4   threads: the training step's thread count (parallel_threads()):
 *            the bits depend on it, so a resume must run on the same count
 *   100  8   patience (evaluations without a new best; 0: none)
 *   108  4   n, then n bytes: the --val-file path (n = 0: the end of the corpus)
 *   ..   8   training characters, 8 validation characters, 8 FNV-1a hash of all
 *            ids: resuming on a different corpus is refused (the validation
 *            characters also say where the corpus was split)
 *   ..   8   steps done (the next step to run)
 *   ..   8   training tokens seen
 *   ..   32  batch RNG state, four u64 (the data position: windows are drawn
 *            from it, so it is the whole reading position)
 *   ..   8   AdamW step count
 *   ..   4P  AdamW first moments m (f32, parameter order)
 *   ..   4P  AdamW second moments v
 *   ..   4   n, then n f32: the most recent training losses, oldest first
 *   ..   4   n, then n records of 28 bytes (u64 step, f32 loss, f32 accuracy,
 *            f32 baseline loss, f32 baseline accuracy, f32 mean training loss
 *            since the evaluation before): every validation evaluation so far
 *   ..   4   n = 0, or P with patience once an evaluation was made; then n f32:
 *            the parameters of the best evaluation
 * The tail must end exactly there. Activations and gradients are not saved:
 * each step recomputes them from the parameters and the batch. Every reader
 * of the file checks this layout (training_state_parse, modelfile.h, where its
 * magic, version and limits are defined); train_checkpoint_load reads it from
 * there. */
#ifndef ATTNVIEW_CHECKPOINT_H
#define ATTNVIEW_CHECKPOINT_H

#include "attnview/modelfile.h"
#include "attnview/train_options.h"

/* The run a checkpoint is restored into (train.h). */
typedef struct trainer trainer;

/* A checkpoint file read back (the layout above). */
typedef struct train_checkpoint {
	train_options opt;     /* steps = the resolved total, epochs = 0 */
	uint64_t epochs;       /* the --epochs the run was started with (0: --steps) */
	char *val_path;	       /* NULL: the end of the corpus */
	uint64_t ntrain, nval; /* the corpus's split */
	/* The steps and tokens of the model the run started from (--init):
	 * the model's metadata counts them, the state does not. */
	uint64_t base_steps, base_tokens;
	model *model;
	char *path;   /* the file, for messages */
	uint8_t *buf; /* the file; the state is buf[state_off..+state_len) */
	size_t n, state_off, state_len;
	training_state state; /* decoded; its arrays point into buf */
} train_checkpoint;

/* Read and check a checkpoint file: its model and training state (as every
 * reader checks them), and that this attnview can continue the run (its
 * options are ones --train accepts); the rest of the state is taken over by
 * train_checkpoint_restore. */
bool train_checkpoint_load(train_checkpoint *ck, const char *path, av_error *err);
void train_checkpoint_finish(train_checkpoint *ck);

/* The state after the options (corpus identity, position, AdamW moments,
 * losses, evaluations) into t, which trainer_create has set up with the
 * checkpoint's options and model. Fails only on another corpus (or without
 * memory). */
bool train_checkpoint_restore(trainer *t, const train_checkpoint *ck, av_error *err);

/* Serialise the checkpoint (model + state) into out. */
bool trainer_checkpoint(trainer *t, byte_buf *out, av_error *err);
/* ... and write it to t->ckpt_path, atomically. */
bool trainer_save_checkpoint(trainer *t, av_error *err);

#endif
