/* The lab: tiny models trained on generated text whose mechanism is known
 * (attnview --train --task NAME), after InterpBench (Gupta et al. 2024,
 * arXiv 2407.14494): the answer at some positions can be had only by one
 * kind of attention, so a head that carries it can be found by switching
 * heads off, and what the head labeller says about it can be checked.
 *
 * Every task is one row of the table in lab.c: a name, the mechanism in one
 * sentence (attnview(1), THE LAB, says the same), a generator of texts, the
 * objective, a tiny default model, and which role the heads that carry the
 * mechanism should have. A text is T characters of one vocabulary shared by
 * every task (LAB_ALPHABET); the generator marks the positions the mechanism
 * determines ("scored": for a causal task, the character after the position;
 * for a masked one, the character at the position, which it hides). The
 * loss is taken at the scored positions only, and task accuracy is the share
 * of them whose most likely character is right.
 *
 * Determinism: the texts of training step s come from one generator seeded
 * by splitmix64 from seed ^ LAB_DATA_SALT, the evaluation texts from seed ^
 * LAB_EVAL_SALT, the model from model_init_random(seed); the same seed,
 * options and thread count give the same model, bit for bit. */
#ifndef ATTNVIEW_LAB_H
#define ATTNVIEW_LAB_H

#include "attnview/analysis.h"
#include "attnview/lab_positions.h"
#include "attnview/model.h"
#include "attnview/rng.h"

#define LAB_DATA_SALT 0x6c61626461746121ull
#define LAB_EVAL_SALT 0x6c61626576616c21ull
#define LAB_SAMPLE_SALT 0x6c616273616d7021ull
#define LAB_MAX_CONTEXT 64
/* Evaluation texts: enough scored positions that 95% is measured to about
 * one point (the tasks score some 6 to 29 positions a text). */
#define LAB_EVAL_TEXTS 256
/* The task accuracy at which a model has learned its task: what the lab's
 * tests ask of seed 1, and where the labeller's benchmark starts counting. */
#define LAB_LEARNED 0.95

/* Every character a lab text may hold (the vocabulary, after the three
 * special ids), in vocabulary order. */
#define LAB_ALPHABET "abcdefghijklmnopqrstuvwxyz0123456789.,;!?|="

/* The Greek letters α to ω (U+03B1 to U+03C9), in the vocabulary of a task
 * that sets `greek`, after LAB_ALPHABET: two scripts in one text. */
#define LAB_GREEK_FIRST 0x3B1u
#define LAB_GREEK_COUNT 25

/* A position of a generated text: scored; hidden behind the mask; hidden
 * behind its script's placeholder (z, ω), which the model reads instead. */
enum { LAB_SCORED = 1, LAB_MASKED = 2, LAB_PLACEHOLDER = 4 };

typedef struct lab_task lab_task;
/* Fills text[0..T] (T + 1 characters: a causal task predicts text[i + 1]
 * at i) and flag[0..T) with LAB_SCORED, LAB_MASKED and LAB_PLACEHOLDER
 * bits. */
typedef void (*lab_gen_fn)(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag);

struct lab_task {
	const char *name;      /* as --task takes it */
	const char *mechanism; /* one sentence, N_() (translated where printed) */
	const char *example;   /* a short text of the task, for the view */
	objective obj;
	uint32_t dim, heads, layers, context, batch, steps;
	float lr;
	int answers; /* equally likely answers at a scored position: chance = 1/answers */
	int param;   /* the generator's parameter (k of copy-back) */
	/* The role of the heads that carry the mechanism, by layer
	 * (ROLE_NKINDS: none expected there). */
	role_kind roles[2];
	lab_gen_fn gen;
	bool greek; /* the vocabulary holds the Greek letters too */
};

int lab_ntasks(void);
const lab_task *lab_task_at(int i);
const lab_task *lab_find(const char *name); /* NULL if there is none */

/* What --train --task can change about a task's defaults (0: keep). */
typedef struct lab_options {
	uint64_t seed;
	uint32_t dim, heads, layers, steps;
	float lr;
	/* Steps between the records of the training timeline (timeline.h):
	 * 0 about TL_RECORDS a run, LAB_NO_TIMELINE none. */
	uint64_t timeline_every;
	/* --keep-steps: the model of every keep_every-th record kept beside
	 * the model file out (timeline.h); 0: none. */
	uint64_t keep_every;
	/* Threads of the training step; 0: LAB_THREADS. The step sums the
	 * batch's gradients in one slice a thread, so the count changes the
	 * rounding and, training being chaotic, the model: fixed, a seed gives
	 * the same model on every machine with the same OpenBLAS kernel,
	 * whatever its cores (one core runs the slices in turn). */
	uint32_t threads;
	const char *out;
} lab_options;
#define LAB_THREADS 2
#define LAB_NO_TIMELINE UINT64_MAX

/* The task's model, its options applied, initialised from the seed, with the
 * lab's vocabulary and metadata naming the task. */
model *lab_model_create(const lab_task *t, const lab_options *o, av_error *err);

/* What the progress callback sees (every step). */
typedef struct lab_progress {
	uint64_t step, total;
	float loss; /* this step's, at the scored positions */
} lab_progress;
typedef void (*lab_progress_fn)(const lab_progress *p, void *ctx);

/* Train m on the task's texts: AdamW (optimizer.h) with a warmup of a tenth
 * of the steps, recording m's timeline (its probe: the first TL_WINDOWS
 * samples of the task, lab_sample without the masks). progress may be
 * NULL. The steps are o->steps or the task's. */
bool lab_train(model *m, const lab_task *t, const lab_options *o, lab_progress_fn progress,
	       void *ctx, av_error *err);

/* Task accuracy and loss on LAB_EVAL_TEXTS texts from seed ^ LAB_EVAL_SALT,
 * with the heads that ablate marks switched off (NULL: none; ablate[l * H +
 * h] as activations.ablate). */
typedef struct lab_score {
	double acc, loss;
	int count; /* scored positions */
} lab_score;
bool lab_evaluate(const model *m, const lab_task *t, uint64_t seed, const uint8_t *ablate,
		  lab_score *out, av_error *err);

/* The same on sample `index` alone (the text lab_sample gives at the
 * task's context): does the model need a head on this text? acc and loss
 * NAN where it scores no position. */
bool lab_sample_accuracy(const model *m, const lab_task *t, uint64_t seed, int index,
			 const uint8_t *ablate, lab_score *out, av_error *err);

/* The attention the task's mechanism asks of a head of layer l (the
 * pattern its texts were made for, one key a row or a few in equal shares:
 * induction's, the keys just after the earlier copies of the row's
 * character; a masked task's rows that need nothing on themselves), for
 * head (l * heads + h) in out; false where the task's role for that layer
 * has none (the band task's local: its hidden letter is the larger of its
 * neighbours, which no fixed pattern weighs). */
bool lab_pattern(const lab_task *t, int l, int head, head_override *out);

/* Task accuracy with head's attention replaced by the task's pattern for
 * its layer (lab_pattern) in *acc; NAN where there is none. */
bool lab_pattern_accuracy(const model *m, const lab_task *t, uint64_t seed, int head, double *acc,
			  av_error *err);

/* Task accuracy with head's attention replaced by equal weights on every key
 * its rows may see in *acc: a control for lab_pattern_accuracy. Where this
 * keeps the gain too, the head's picture is not what the model needs of it
 * (it reads the head's output as a constant, which switching the head off
 * takes away). */
bool lab_uniform_accuracy(const model *m, const lab_task *t, uint64_t seed, int head, double *acc,
			  av_error *err);

/* A head the model cannot do without (switched off alone, acc_without, it
 * loses half the gain: lab_carries) that keeps nine tenths of it with every
 * key alike (acc_even, lab_uniform_accuracy): the model needs what it
 * writes, not where it looks. A second copy beside another carrier, which
 * switching off alone hardly hurts, is never one: every key alike in its
 * place keeps what the other copy does. */
bool lab_output_only(double acc_all, double acc_without, double acc_even, double chance);

/* Task accuracy with the weights head `from` gives in place of head's own
 * (both l * heads + h, of one layer) in *acc: does an idle head's attention
 * do the work of the carrier beside it? A copy the model does not read
 * keeps what the carrier keeps; judged by lab_pattern_fit as a pattern. */
bool lab_copy_accuracy(const model *m, const lab_task *t, uint64_t seed, int head, int from,
		       double *acc, av_error *err);

/* What that accuracy says of a head that carries the mechanism, against
 * the accuracy with every head's own attention and chance:
 *   LAB_FIT_HOLDS   the pattern keeps nine tenths of what the model gained
 *                   over chance: the head carries the mechanism the task
 *                   was made for;
 *   LAB_FIT_PARTLY  it keeps half or more, under nine tenths;
 *   LAB_FIT_OTHER   it keeps under half: the head carries the task
 *                   another way (the rest of the model needs what the
 *                   head does instead, such as looking 3 to the left);
 *   LAB_FIT_NONE    there is no pattern (acc_pattern NAN). */
typedef enum lab_fit { LAB_FIT_NONE, LAB_FIT_HOLDS, LAB_FIT_PARTLY, LAB_FIT_OTHER } lab_fit;
lab_fit lab_pattern_fit(double acc_all, double acc_pattern, double chance);

/* What a carrying head's picture is worth to the model, one decision for
 * every report of the lab (its summary, its test, the labeller's
 * benchmark):
 *   fit          the task's pattern in place of the head's own attention
 *                (lab_pattern_accuracy, acc_pattern; NAN and LAB_FIT_NONE
 *                where its layer's role has none), judged by
 *                lab_pattern_fit;
 *   output_only  where the pattern holds or there is none, the control:
 *                every key alike in its place (lab_uniform_accuracy,
 *                acc_even; NAN where not tried) keeps the gain though the
 *                head switched off alone (acc_without) loses half of it
 *                (lab_output_only). The model then needs what the head
 *                writes, not where it looks, and its picture is no
 *                evidence of the mechanism. */
typedef struct lab_picture {
	lab_fit fit;
	double acc_pattern, acc_even;
	bool output_only;
} lab_picture;
bool lab_judge_picture(const model *m, const lab_task *t, uint64_t seed, int head, double acc_all,
		       double acc_without, lab_picture *out, av_error *err);

/* A text of the task (its T characters, what the model reads, masks
 * included: TOK_MASK's codepoint AV_SPECIAL_CP + TOK_MASK at a hidden
 * position) for looking at the heads: cps gets T codepoints. */
void lab_sample(const lab_task *t, uint64_t seed, int index, int T, uint32_t *cps);

/* Ablation, head by head: acc[l * H + h] the task accuracy with head (l, h)
 * alone switched off. */
bool lab_ablate_each(const model *m, const lab_task *t, uint64_t seed, double *acc,
		     av_error *err);

/* A head carries the mechanism when switching it off takes away at least
 * half of what the model gained over chance. */
bool lab_carries(double acc_all, double acc_without, double chance);

/* What switching heads off says about each head, part[l * H + h]:
 *   LAB_CARRIES  switching it off alone takes away at least half of what
 *                the model gained over chance (lab_carries); or, in a layer
 *                of two heads or more whose switching off takes half, it
 *                alone keeps half with the layer's other heads off (a second
 *                copy of the mechanism, which switching off one head cannot
 *                find); or, where no head of its layer does either, it and
 *                one other head of the layer switched off together take half
 *                (the two share it);
 *   LAB_IDLE     none of those, and switching it off alone takes away under
 *                a tenth of the gain;
 *   LAB_PARTLY   between the two (part of the mechanism, or a helper).
 * acc_all the accuracy with every head, acc_without as lab_ablate_each. */
typedef enum lab_part { LAB_IDLE, LAB_PARTLY, LAB_CARRIES } lab_part;
bool lab_head_parts(const model *m, const lab_task *t, uint64_t seed, double acc_all,
		    const double *acc_without, lab_part *part, av_error *err);

#endif
