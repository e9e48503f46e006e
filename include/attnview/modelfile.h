/* The model file: one little-endian binary file, checksummed (man 5 attnview).
 *
 *   offset size
 *   0      8    magic "ATTNVIEW"
 *   8      4    format version (1; 2 with the architecture)
 *   12     4    kind: 0 model, 1 training checkpoint
 *   16     8    file size in bytes, checksum included
 *   24     4    objective: 0 masked, 1 causal
 *   28     4    vocabulary size V (special tokens included)
 *   32     4    dim d
 *   36     4    heads h
 *   40     4    layers L
 *   44     4    context T
 *   48     8    training steps
 *   56     8    training tokens seen
 *   64     8    created, unix seconds (signed)
 *   72     8    seed
 *   80     4    validation loss (f32, nats per predicted character; NaN unknown)
 *   84     4    validation accuracy (f32)
 *   88     4    unigram baseline loss (f32)
 *   92     4    unigram baseline accuracy (f32)
 *   96    28    version 2 only: the architecture, 7 u32 (positions, gelu, scale,
 *               output, specials, biases, origin: model_arch); the offsets
 *               below are then 28 further
 *   96     4    n1, then n1 bytes: model name (UTF-8, no NUL)
 *          4    n2, then n2 bytes: corpus description (UTF-8, no NUL)
 *          4V   vocabulary: u32 codepoints; entries 0..2 = 0x110000..0x110002
 *          4P   parameters, f32, in model_tensor_table order
 *          ...  optional: the training timeline (timeline.h), from its magic "ATTL"
 *          ...  kind 1 only: the training state (training_state below)
 *   end-4  4    CRC-32 (IEEE, as zlib's crc32) of every byte before it
 */
#ifndef ATTNVIEW_MODELFILE_H
#define ATTNVIEW_MODELFILE_H

#include "attnview/binio.h"
#include "attnview/common.h"
#include "attnview/model.h"

#define AV_MAGIC "ATTNVIEW"
#define AV_FORMAT_VERSION 1u
/* Version 2: version 1 with the architecture (model_arch, ARCH_NFIELDS u32
 * in model_arch_fields' order) after the fixed header; written only for a
 * model whose architecture is not attnview's own (every field 0). */
#define AV_FORMAT_VERSION_ARCH 2u
enum { AV_KIND_MODEL = 0, AV_KIND_CHECKPOINT = 1 };
#define AV_HEADER_FIXED 96u
#define AV_ARCH_BYTES	(4u * ARCH_NFIELDS)

/* Serialise a model (kind AV_KIND_MODEL), checksum included. `extra` (may be
 * NULL) is appended before the checksum and the kind set to `kind`. */
bool model_serialize(const model *m, uint32_t kind, const byte_buf *extra, byte_buf *out,
		     av_error *err);

/* Parse and validate a whole file image, the training state of a kind-1 file
 * included (training_state_parse). `what` names it in messages. On success
 * *extra_off/extra_len (may be NULL) locate the kind-specific tail. */
model *model_parse(const uint8_t *buf, size_t n, const char *what, uint32_t *kind,
		   size_t *extra_off, size_t *extra_len, av_error *err);

/* The training state of a kind-1 file (a checkpoint), between the parameters
 * and the checksum; man 5 attnview, "Training state", has the layout, which
 * checkpoint.h repeats for the trainer that writes it. Every reader checks it
 * as it checks the rest of the file: the magic and version; every field
 * there, in order, and nothing after the last (the --val-file path at most
 * AV_MAX_STRING bytes with no NUL, at most AV_STATE_MAX_RECENT recent
 * losses); the objective and the sizes those of the header; at least one
 * thread; the steps done at most the total and equal to the AdamW step count;
 * the best parameters there exactly when patience is set and an evaluation
 * was made.
 * Whether a run can continue from it (options this attnview's --train
 * accepts, the same corpus) is for --resume to decide. The arrays stay
 * little-endian bytes inside the file image. */
#define AV_STATE_MAGIC	    "ATCK"
#define AV_STATE_VERSION    3u /* 3 adds --sharpen; 2 is read as --sharpen 0 */
#define AV_STATE_MAX_RECENT 256
#define AV_STATE_EVAL_BYTES 28 /* one evaluation record */

typedef struct training_state {
	uint32_t objective, dim, heads, layers, context, batch;
	uint64_t total_steps; /* resolved from --epochs if that was given */
	uint64_t epochs;      /* 0 when --steps was given */
	float lr;
	uint64_t warmup, seed, min_count;
	uint32_t max_vocab;
	uint64_t eval_every, checkpoint_every;
	uint32_t threads;
	uint64_t patience; /* 0: none */
	float sharpen;	   /* --sharpen; 0 in a version-2 state */
	const uint8_t *val_path; /* val_path_len bytes, no NUL; 0 bytes: none */
	uint32_t val_path_len;
	uint64_t ntrain, nval, hash; /* the corpus: its sizes and FNV-1a hash */
	uint64_t steps_done, tokens, rng[4], adam_step;
	const uint8_t *m, *v; /* AdamW moments: P f32 each */
	uint32_t nrecent;
	const uint8_t *recent; /* nrecent f32 */
	uint32_t nevals;
	const uint8_t *evals; /* nevals records of AV_STATE_EVAL_BYTES: u64 step, f32 loss,
				 f32 accuracy, f32 baseline loss, f32 baseline accuracy,
				 f32 mean training loss since the evaluation before */
	uint32_t nbest;	      /* 0, or P with patience once an evaluation was made */
	const uint8_t *best;  /* nbest f32: the parameters of the best evaluation */
} training_state;

/* Decode and check the state at buf[off..off+len) of a file whose header says
 * cfg. A refusal names `what`, the byte of the file and the byte of the state
 * where the damage is, and what to do. */
bool training_state_parse(const uint8_t *buf, size_t off, size_t len, const model_config *cfg,
			  const char *what, training_state *st, av_error *err);

/* Load a model file (kind 0; a checkpoint is accepted too, for --info/--dump,
 * once its training state has passed the same checks). */
model *model_load(const char *path, av_error *err);

/* May a model be written to path? Not if it is a directory, or an existing
 * non-empty file that is not an attnview file (no magic): someone's data.
 * Training asks before it starts, every save asks again. */
bool may_replace_file(const char *path, av_error *err);

/* A model file or checkpoint built in b to path, whole or not at all
 * (binio_write_file). An existing file that is not an attnview file (no
 * magic) is never replaced unless `force`. */
bool write_file_atomic(const char *path, const byte_buf *b, bool force, av_error *err);

bool model_save(const model *m, const char *path, av_error *err);

/* The built-in model compiled into the program (NULL if this build has none). */
model *model_builtin(av_error *err);
/* The built-in models by name: "builtin" (masked, the default) and
 * "builtin-causal" (next character). */
bool model_builtin_name(const char *name);
#define MODEL_NBUILTINS 2
extern const char *const model_builtins[MODEL_NBUILTINS]; /* their names, in that order */
model *model_builtin_named(const char *name, av_error *err);

#endif
