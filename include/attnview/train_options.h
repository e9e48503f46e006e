/* The options of a training run (train_options.c): their defaults and
 * checks, the steps and warmup they resolve to, the data and the output
 * file against them, and fitting them to a small corpus. The loop that
 * takes them is train.h's; a checkpoint keeps them (checkpoint.h). */
#ifndef ATTNVIEW_TRAIN_OPTIONS_H
#define ATTNVIEW_TRAIN_OPTIONS_H

#include "attnview/common.h"
#include "attnview/corpus.h"
#include "attnview/model.h"

#include <stdbool.h>
#include <stdint.h>

#define TRAIN_VAL_PERCENT   5	 /* default share of the corpus held out */
/* warmup: min(100, total steps / 10), resolved by trainer_create. The default,
 * so that a short run (--steps 50) is not refused for a warmup of 100. */
#define TRAIN_WARMUP_AUTO UINT64_MAX
#define TRAIN_TIMELINE_AUTO UINT64_MAX

typedef struct train_options {
	uint32_t objective; /* enum objective */
	uint32_t dim, heads, layers, context, batch;
	uint64_t steps;	 /* 0: from epochs */
	uint64_t epochs; /* 0: use steps */
	float lr;
	uint64_t warmup;
	uint64_t seed;
	uint64_t min_count;
	uint32_t max_vocab;
	uint64_t eval_every;	   /* 0: only at the end */
	uint32_t val_percent;	   /* % of the corpus held out (0: no validation) */
	uint64_t patience;	   /* evaluations without a new best before stopping; 0: never */
	uint64_t checkpoint_every; /* 0: only when stopped */
	/* The training step's thread count; 0: whatever parallel_threads()
	 * says. trainer_create records the count it runs on and refuses one
	 * that differs (a checkpoint's included): the bits depend on it. */
	uint32_t threads;
	/* Steps between the records of the training timeline (timeline.h);
	 * 0: none; TRAIN_TIMELINE_AUTO: about TL_RECORDS a run. A resumed run
	 * takes the K of its checkpoint's timeline. */
	uint64_t timeline_every;
	/* --sharpen: the weight of the attention rows' mean entropy (divided by
	 * log of the context) added to the training loss; 0: none. */
	float sharpen;
} train_options;

/* The defaults of attnview --train (attnview(1) lists them). */
void train_options_default(train_options *o);
/* Refuses impossible values and combinations; the message names the option
 * and what to change. */
bool train_options_check(const train_options *o, av_error *err);
/* Steps the run will take on this corpus (resolves --epochs). */
uint64_t train_total_steps(const train_options *o, const corpus *c);
/* The warmup TRAIN_WARMUP_AUTO stands for: min(100, total / 10). */
uint64_t train_auto_warmup(uint64_t total);
/* Refuses a corpus too small for the options (a training split shorter than
 * one batch of windows, a validation split shorter than one window) and
 * --patience without validation text. */
bool train_check_data(const train_options *o, const corpus *c, const char *path, av_error *err);

/* Which of the options that train_fit_corpus may change were given. */
typedef struct train_given {
	bool context, batch, val_percent, lr;
} train_given;

#define TRAIN_FIT_NOTES 5
/* What train_fit_corpus chose: the validation characters to hold out, and a
 * sentence per change for the user (what, why, and the option to choose
 * otherwise). */
typedef struct train_fit {
	uint64_t nval; /* characters to hold out (without a validation file) */
	bool shrunk;   /* nval is not the val_percent share */
	int nnotes;
	char notes[TRAIN_FIT_NOTES][480];
} train_fit;

/* Small corpora in one command. For a corpus of n characters (the training
 * split only when there is a validation file of val_file_chars characters),
 * the options not given shrink until they fit, in this order:
 *   context: to n/8 characters (a multiple of 8 from 16 up), at most the
 *     default, so that a batch of windows and a validation window fit;
 *   validation: the val_percent share, raised to one window if that is at
 *     most a quarter of the text, else none (the text is too short to hold
 *     out a window; a validation file still can be given); with a share
 *     given, the context shrinks to fit it;
 *   batch: to the windows the training split holds (at least 1);
 *   learning rate: times the square root of the step's characters (B*T)
 *     over the default step's, when they are fewer (the square-root rule
 *     for Adam: a smaller batch has noisier gradients; at the default rate
 *     a 300-character text trains heads that all attend to one position).
 * Options given explicitly are kept (train_check_data refuses them if they
 * do not fit). */
void train_fit_corpus(train_options *o, const train_given *given, uint64_t n,
		      uint64_t val_file_chars, train_fit *fit);
/* Refuses an output path that exists and is not an attnview file, or whose
 * directory cannot be written, before hours of training are spent. */
bool train_check_output(const char *path, av_error *err);
/* The creation time a new run records in its model: $SOURCE_DATE_EPOCH when
 * it is set and not empty (seconds since 1970-01-01 UTC in decimal digits, as
 * `date +%s` prints them: the reproducible-builds.org convention), else the
 * clock. Anything else in the variable is an error naming it. */
bool train_creation_time(int64_t *created, av_error *err);

/* The characters of a window: the context, and for a causal model the
 * next character of its last position. */
static inline int train_window(const train_options *o)
{
	return (int)o->context + (o->objective == OBJ_CAUSAL);
}

#endif
