/* The training loop: batches, objectives, evaluation against a unigram
 * baseline, checkpoints, and stopping on a signal without losing work.
 *
 * Batches. Each of the B rows of a batch is a window starting at a uniformly
 * random offset of the training split (xoshiro256** seeded by splitmix64 from
 * --seed ^ TRAIN_DATA_SALT; rng.h). The window is W = T+1 ids for the causal
 * objective (inputs ids[0..T), targets ids[1..T]) and W = T ids for the masked
 * one. The model is initialised by model_init_random(seed).
 *
 * Masked objective. In every row exactly M = max(1, round(0.15 T)) distinct
 * positions are chosen (a partial Fisher-Yates shuffle of 0..T-1, reset per
 * row); each chosen position gets its original id as target and its input is
 *   with probability 0.8 the mask token, 0.1 a uniformly random character id
 *   (TOK_NSPECIAL..V-1), 0.1 left unchanged
 * (one uniform draw u: u < 0.8 mask, u < 0.9 random, else unchanged). Other
 * positions have target -1. Logits are computed only at the M*B chosen rows.
 *
 * Validation. The last val_percent% of the corpus (rounded up; default 5), or
 * a --val-file, or none (val_percent 0, --no-val: nothing is evaluated and
 * there is no verdict). train_fit_corpus makes the options the user did not
 * give fit a small corpus before the split.
 *
 * Evaluation. Kw windows evenly spaced over the validation split (Kw = the
 * number of non-overlapping windows), the same windows every time. For the
 * masked objective each window is evaluated ceil(T/M) times over, in rows
 * k = 0..K-1 taking window k mod Kw (with its own mask: a short validation
 * text has every position hidden about once), K = Kw * ceil(T/M); for the
 * causal one K = Kw. K is at most TRAIN_EVAL_BATCHES*B during training and
 * TRAIN_FINAL_BATCHES*B at the end (and Kw at most K).
 * For the masked objective the positions come from an RNG re-seeded from the
 * seed for every evaluation, and every chosen position is replaced by the mask
 * token (accuracy = "guess the hidden character"). Loss is the mean
 * cross-entropy in nats per predicted character; accuracy the fraction whose
 * argmax is right. The unigram baseline is scored on exactly the same targets:
 * p(id) = (count_train(id) + 1) / (ntrain + V) (add-one, so characters unseen
 * in training have a finite loss), and always guessing the most frequent
 * training id. The final evaluation is stored in the model metadata; each
 * evaluation also records the mean training loss of the steps since the one
 * before (train_eval).
 *
 * The verdict (verdict.h) compares the loss with the baseline's at every
 * evaluation and at the end.
 *
 * Over-fitting. At an evaluation i, with b the earliest evaluation of the
 * lowest validation loss so far: when b beat the unigram baseline (the model
 * had learned something to lose), i - b >= TRAIN_OVERFIT_EVALS, the
 * validation loss is above the best by more than TRAIN_OVERFIT_RISE or
 * 1/sqrt(n) for the n characters an evaluation predicts, whichever is larger
 * (relative; a short validation text is noisy), and the training loss is
 * below what it was at b, the validation loss has risen while the training
 * loss fell: the run is reported over-fitting (train_progress.overfitting,
 * once per run).
 *
 * Patience. With patience N > 0 the run stops after N evaluations in a row
 * without a new best (a validation loss strictly below every earlier one;
 * the last step is evaluated too, every eval_every steps being the rule),
 * and, stopped or not, the model written is the parameters of the best
 * evaluation (kept as a copy each time a new best comes), evaluated again by
 * the final evaluation. Checkpoints carry the evaluations and the copy, so a
 * resumed run stops where the uninterrupted one would have.
 *
 * Determinism. The same corpus, options, seed, thread count and creation time
 * give the same bytes: every random choice comes from the seeded generators
 * above, and the only clock reading is the creation time in the metadata,
 * which $SOURCE_DATE_EPOCH replaces (train_creation_time). A resumed run keeps
 * the creation time of the run it continues, so it ends in the bytes of the
 * uninterrupted run.
 *
 * Checkpoints: checkpoint.h.
 *
 * Stopping. train_request_stop (async-signal-safe; the SIGINT/SIGTERM handlers
 * installed by train_install_signals call it) makes trainer_run finish the
 * current step, write a checkpoint and return TRAIN_STOPPED. attnview exits
 * 128 + the signal number (130 for SIGINT, 143 for SIGTERM) once the
 * checkpoint is safely written, and 1 if writing it failed. A second signal
 * ends the program at once (the handlers are one-shot); the last checkpoint
 * written stays intact because every write is atomic. */
#ifndef ATTNVIEW_TRAIN_H
#define ATTNVIEW_TRAIN_H

#include "attnview/corpus.h"
#include "attnview/model.h"
#include "attnview/optimizer.h"
#include "attnview/rng.h"
#include "attnview/train_options.h"
#include "attnview/train_step.h"

#define TRAIN_DATA_SALT	    0x6461746162617463ull /* batch RNG: seed ^ this */
#define TRAIN_EVAL_SALT	    0x6576616c6d61736bull /* evaluation masks */
#define TRAIN_EVAL_BATCHES  4
#define TRAIN_FINAL_BATCHES 64
#define TRAIN_RECENT	    256	 /* training losses kept for the sparkline */
#define TRAIN_OVERFIT_EVALS 2	 /* evaluations since the best before warning */
#define TRAIN_OVERFIT_RISE  0.01 /* relative rise of the validation loss */
/* A checkpoint read back (checkpoint.h). */
typedef struct train_checkpoint train_checkpoint;

typedef struct train_eval {
	uint64_t step;
	float loss, acc;	   /* model, on the validation split */
	float base_loss, base_acc; /* unigram baseline on the same targets */
	float train_loss;	   /* mean training loss of the steps since the last one */
} train_eval;

typedef struct train_result {
	float loss, acc;	   /* model */
	float base_loss, base_acc; /* unigram baseline on the same targets */
	uint64_t count;		   /* predicted characters */
} train_result;

/* One group's share of an evaluation (train.c, "evaluation over the
 * threads"): the summed loss of its predicted characters, how many, how many
 * right. */
typedef struct train_eval_sum {
	double loss;
	int count, correct;
} train_eval_sum;

typedef struct trainer {
	train_options opt;
	uint64_t total; /* steps of the whole run */
	const corpus *data;
	model *model;
	adamw adam;
	activations acts;
	grad_acts gacts;
	/* The evaluation's own work: activations for a group of eval_group
	 * sequences per thread, and the sums of a batch's groups. */
	activations *eval_acts;
	int eval_nacts, eval_group;
	train_eval_sum *eval_sums;
	float *grads;
	int32_t *tokens, *targets; /* (B,T) */
	int32_t *perm;		   /* (T) masking shuffle */
	int window, nmask;	   /* W and M above */
	int32_t most_frequent;	   /* training id of the baseline guess */
	rng data_rng;
	uint64_t step, tokens_seen;
	/* Steps and tokens the model had before this run (--init: the model's;
	 * the metadata counts on from them), 0 for a new model. */
	uint64_t base_steps, base_tokens;
	float recent[TRAIN_RECENT]; /* ring of training losses */
	uint64_t nrecent;	    /* losses pushed so far */
	train_eval *evals;
	size_t nevals, evals_cap;
	float *best_params; /* with patience: the parameters of the best evaluation */
	bool has_best;	    /* best_params holds them */
	bool overfit_warned;
	bool stopped_early; /* patience ran out */
	train_result final;
	uint64_t eval_count; /* predicted characters of the last evaluation */
	char *out_path, *ckpt_path;
	char *val_path;
	/* --keep-steps: keep the model of every keep_every-th record of the
	 * timeline beside out_path (timeline.h); 0: none. Not in the
	 * checkpoint: a resumed run keeps them if it is given again. */
	uint64_t keep_every;
	/* The finished run's state could not be written to ckpt_path (the
	 * model was): why. */
	bool state_lost;
	av_error state_err;
} trainer;

/* A fresh run (resume == NULL: random initialisation from the seed, meta name
 * and corpus description set from name/corpus_desc) or the continuation of a
 * checkpoint (its options replace *o, except steps, which may be more than it
 * has done: a finished run goes on; its model is taken over and resume->model
 * set to NULL; the corpus must be the one it was trained on). With init (and
 * no resume) the run starts from that model's weights instead of random ones
 * (its objective and sizes must be o's, its vocabulary the corpus's: corpus
 * options' fixed_vocab); init is taken over, even on failure. out_path
 * receives the final model, ckpt_path the checkpoints. */
trainer *trainer_create(const train_options *o, const corpus *c, train_checkpoint *resume,
			model *init, const char *name, const char *corpus_desc,
			const char *val_path, const char *out_path, const char *ckpt_path,
			av_error *err);
void trainer_destroy(trainer *t);

/* What the progress callback sees after every step. */
typedef struct train_progress {
	uint64_t step, total; /* steps done, of the whole run */
	uint64_t tokens;      /* training tokens seen */
	float loss;	      /* this step's training loss */
	float lr, grad_norm;
	bool evaluated;		    /* an evaluation ran after this step */
	float val_loss, val_acc;    /* the last evaluation; NAN before the first */
	float base_loss, base_acc;  /* the baseline on its targets */
	float train_loss;	    /* mean training loss since the evaluation before */
	uint64_t val_count;	    /* characters it predicted */
	train_eval best;	    /* the best evaluation so far (step 0: none) */
	int since_best;		    /* evaluations since the best */
	bool overfitting;	    /* this evaluation found over-fitting (once a run) */
	bool stopping;		    /* patience ran out: the run ends here */
	float recent[TRAIN_RECENT]; /* the last nrecent training losses, oldest first */
	int nrecent;
} train_progress;

typedef void (*train_progress_fn)(const train_progress *p, void *ctx);

typedef enum train_status { TRAIN_DONE = 0, TRAIN_STOPPED = 1, TRAIN_FAILED = 2 } train_status;

/* Run to the end (the last step, or patience running out): train, evaluate,
 * write the checkpoint of the finished run (the last step's; its total is the
 * steps done: --resume continues it with more steps; failing to write it is
 * not failing the run: state_lost), then the final model (atomically; with
 * patience the best one). Or, after train_request_stop, write a checkpoint and
 * return TRAIN_STOPPED. progress may be NULL. */
train_status trainer_run(trainer *t, train_progress_fn progress, void *ctx, av_error *err);

/* Evaluate over the validation split: TRAIN_EVAL_BATCHES*B windows at most, or
 * TRAIN_FINAL_BATCHES*B with `final`. Without validation text: count 0, NANs. */
void trainer_evaluate(trainer *t, bool final, train_result *r);

/* Stop requests: async-signal-safe; signo is reported back (0 = none). */
void train_request_stop(int signo);
int train_stop_requested(void);
void train_clear_stop(void);
/* One-shot SIGINT and SIGTERM handlers that call train_request_stop. */
bool train_install_signals(av_error *err);
void train_restore_signals(void);

#endif
