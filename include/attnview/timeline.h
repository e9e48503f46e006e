/* The training timeline: how every head formed while a model
 * trained. Every K steps the trainer measures each head on a fixed probe
 * and appends a record; the records travel in the model file and its
 * checkpoints as an optional section (man 5 attnview, "Timeline"):
 *
 *   offset size
 *   0      4    magic "ATTL"
 *   4      4    section version (2; 1 is read too)
 *   8      8    section size in bytes, from the magic to its last byte
 *   16     4    S, values per head: version 2 TL_NVALUES, the role scores of
 *               head_roles in role_kind order (shares of rows); version 1
 *               TL_V1_NVALUES, the scores from before the labeller counted
 *               rows (shares of weight) up to broad's entropy
 *   20     4    W, probe windows
 *   24     4    n, characters of a probe window (2 <= n <= context T)
 *   28     8    K, steps between records of the last run (>= 1; a run
 *               from a model with a timeline, --init, appends to it)
 *   36     8    seed of the repeated probe
 *   44     4    R, records
 *   48     4Wn  the text probe: W windows of n codepoints
 *   ..     4n   the repeated probe: n codepoints
 *   ..          R records of 20 + 4LHS bytes: u64 step, f32 training loss
 *               (mean over the steps since the record before), f32 probe loss
 *               (NaN: the probe is not held-out text), f32 in-context
 *               learning score, then for each layer, each head, S f32 in [0, 1]
 *
 * It lies between the parameters and a checkpoint's training state; a file
 * without it is read as before. The steps of the records increase strictly.
 *
 * The values of a head (timeline_measure): its role scores (head_roles) on
 * each window of the text probe, averaged over the windows, except the
 * induction score, which is the head's on the repeated probe: n/2 random
 * characters of the text probe written twice (Olsson et al. 2022). The
 * in-context learning score is the mean loss over the last quarter of the
 * positions of the text probe minus the mean over the first quarter
 * (negative: the model predicts better late in the context, from what it has
 * read); a masked model predicts every fourth position (window w hides the
 * positions p with p % 4 == w % 4) and the probe loss is taken there. The
 * lab measures the loss where its task does only, and no such score
 * (timeline_set_scored). */
#ifndef ATTNVIEW_TIMELINE_H
#define ATTNVIEW_TIMELINE_H

#include "attnview/analysis.h"
#include "attnview/binio.h"
#include "attnview/model.h"
#include "attnview/rng.h"

#define TL_MAGIC	"ATTL"
#define TL_VERSION	2u
#define TL_NVALUES	ROLE_NKINDS /* values per head: every role's score */
#define TL_V1_NVALUES	14u	    /* version 1's: shares of weight, up to broad */
/* The file stores the scores in role_kind's order: a role added, removed or
 * moved is a new version of the section (and of python/attnview_torch's
 * timeline.py, whose NVALUES and SCORE_KEYS tests/python/timeline_format.py
 * ties to these). Version 1's fourteen are the first fourteen roles, up to
 * broad; version 2 adds word start. Every role is pinned to its place. */
_Static_assert(ROLE_PREVIOUS == 0 && ROLE_NEXT == 1 && ROLE_SELF == 2 && ROLE_FIRST == 3 &&
		   ROLE_DELIMITER == 4 && ROLE_DUPLICATE == 5 && ROLE_INDUCTION == 6 &&
		   ROLE_LOCAL == 7 && ROLE_OFFSET == 8 && ROLE_KEYWORD == 9 &&
		   ROLE_SCRIPT == 10 && ROLE_PARALLEL == 11 && ROLE_MIRROR == 12 &&
		   ROLE_BROAD == 13,
	       "version 1 of the timeline stores the first fourteen roles in this order");
_Static_assert(TL_V1_NVALUES == ROLE_BROAD + 1, "version 1's values end with broad");
_Static_assert(TL_VERSION == 2 && ROLE_WORDSTART == 14 && ROLE_NKINDS == 15,
	       "version 2 of the timeline stores the fifteen roles; a new role is version 3");
#define TL_MAX_WINDOWS	8
#define TL_WINDOWS	4	/* text probe windows the trainers take */
#define TL_PROBE_LEN	64	/* ... of at most this many characters (the cost) */
#define TL_MAX_RECORDS	100000u /* a run records at most this many */
#define TL_RECORDS	100	/* --timeline-every's default: about this many */
#define TL_HEADER_BYTES 48u
#define TL_PROBE_SALT	0x74696d656c696e65ull /* repeated probe: seed ^ this */

typedef struct timeline {
	uint32_t version;	/* of the section: TL_VERSION, or 1 read from a file */
	uint32_t nvalues;	/* values per head: TL_NVALUES, or version 1's */
	uint32_t layers, heads; /* of the model */
	uint32_t windows, n;	/* the text probe: windows x n codepoints */
	uint64_t every, seed;
	uint32_t *probe;    /* (windows, n) */
	uint32_t *repeated; /* (n) */
	size_t count, cap;  /* records */
	uint64_t *step;
	float *loss, *probe_loss, *icl;
	float *v; /* (count, layers, heads, nvalues) */
	/* Not in the file: (windows, n) flags of the positions whose loss is
	 * measured, or NULL: all (timeline_set_scored). */
	uint8_t *scored;
} timeline;

/* The values of head (l, h) at record r. */
static inline const float *timeline_head(const timeline *tl, size_t r, int l, int h)
{
	return tl->v + ((r * tl->layers + (size_t)l) * tl->heads + (size_t)h) * tl->nvalues;
}

/* What the labeller (role_decide) says of head (l, h) at record r, from its
 * recorded scores (a version 1 timeline's stand in for them: shares of
 * weight, broad's entropy, held to the bars measured for shares of
 * weight); word start, which version 1 lacks, 0. */
void timeline_head_roles(const timeline *tl, size_t r, int l, int h, role_scores *out);

/* A timeline without records for a model of cfg, every K steps, on the
 * text probe (windows x n codepoints, n <= cfg->context) and a repeated
 * probe of its distinct characters drawn from seed ^ TL_PROBE_SALT. */
timeline *timeline_create(const model *m, const uint32_t *probe, uint32_t windows, uint32_t n,
			  uint64_t every, uint64_t seed, av_error *err);
void timeline_destroy(timeline *tl);
timeline *timeline_copy(const timeline *tl, av_error *err);

/* Measure the loss at the flagged positions of the text probe only
 * (flags: windows x n, nonzero: measured; for a causal model position p
 * predicts p + 1), and record no in-context learning score: for the lab,
 * whose loss is taken at the positions its task decides, the loss elsewhere
 * is not trained and means nothing. */
bool timeline_set_scored(timeline *tl, const uint8_t *flags, av_error *err);

/* The default K for a run of `total` steps: about TL_RECORDS records. */
uint64_t timeline_auto_every(uint64_t total);
/* --train's default K for a run of `total` steps of `batch` sequences of
 * `context` characters: about TL_RECORDS records, but no more often than
 * keeps the records (those every K steps, at step 0 and at the end) under
 * TL_MAX_SHARE of the training time. A record costs about what training on
 * TL_RECORD_CHARS characters does at --train's default sizes (508 to 523
 * measured by tests/bench/bench_timeline.c for a masked model, 173 to 181 for a
 * causal one; doc/timeline.md, "What it costs"). A run too short for even
 * the first and last records under that share gets only those two
 * (timeline_auto_share says what they cost). */
#define TL_RECORD_CHARS 640
#define TL_MAX_SHARE	0.02
uint64_t timeline_auto_every_cost(uint64_t total, uint32_t batch, uint32_t context);
/* The estimated share of the training time that recording every K steps
 * takes in such a run. */
double timeline_auto_share(uint64_t total, uint32_t batch, uint32_t context, uint64_t every);
/* Is step s one to record (0, every K-th, and the last)? */
bool timeline_due(const timeline *tl, uint64_t step, uint64_t total);

/* Measure the model on the probes and append a record for `step` (a step
 * already recorded is measured again and replaces it; a version 1
 * timeline, which measured otherwise, is refused). loss: the training
 * loss to record; held_out: the probe is text the model does not train on
 * (its loss is recorded, else NaN). */
bool timeline_record(timeline *tl, const model *m, uint64_t step, float loss, bool held_out,
		     av_error *err);

/* The values of the record of `step`, to fill (timeline_measure.c): a new
 * record at the end, or the one of that step, replaced; records after it are
 * dropped. NULL without memory, or when TL_MAX_RECORDS are there (later
 * steps are not recorded). *index gets the record. */
float *timeline_slot(timeline *tl, uint64_t step, size_t *index);

/* Drop the records after `step` (a resumed run continues from there). */
void timeline_truncate(timeline *tl, uint64_t step);

/* The section, appended to out. */
void timeline_serialize(const timeline *tl, byte_buf *out);
/* Does a section start at buf[off]? (its magic) */
bool timeline_present(const uint8_t *buf, size_t off, size_t len);
/* Decode and check the section at buf[off..off+len) (len: the bytes left in
 * the file before what follows it) of a file whose header says cfg; *used
 * gets its size. A refusal names `what`, the byte of the file and what to do. */
timeline *timeline_parse(const uint8_t *buf, size_t off, size_t len, const model_config *cfg,
			 const char *what, size_t *used, av_error *err);

/* The models of recorded steps a run keeps (--keep-steps N: the model of
 * every N-th record, the last one's too): model files (not checkpoints:
 * no optimizer state) named OUT.steps/step-SSSSSS.attn beside the model
 * file OUT, S the record's step, the model's count (6 digits at least),
 * written atomically. A
 * kept model's metadata counts `steps` and `tokens` (the run's base
 * included), no validation loss (NaN), and its timeline the records up to
 * that step. */
#define TL_KEPT_DIR ".steps"
/* The path of step's kept model into buf; false if it does not fit. */
bool timeline_kept_path(const char *out, uint64_t step, char *buf, size_t size);
/* Is there a kept model of step beside out? */
bool timeline_kept_exists(const char *out, uint64_t step);
/* When path names a kept model (OUT.steps/step-SSSSSS.attn, as
 * timeline_kept_path makes it), the OUT beside which it was kept into buf;
 * false for any other name (nothing is read from the disk). */
bool timeline_kept_owner(const char *path, char *buf, size_t size);
/* Is record `rec` (of step, in a run of total steps) one to keep when
 * every N-th is kept (every 0: none)? */
bool timeline_keep_due(uint64_t every, size_t rec, uint64_t step, uint64_t total);
/* Keep m, with the metadata meta (its losses dropped), as the model of
 * `step` (the model's count) beside out, creating OUT.steps when it is
 * missing. The first record of a run (first) starts it: the models kept
 * there before (step-*.attn) are removed. */
bool timeline_keep(const model *m, const model_meta *meta, const char *out, uint64_t step,
		   bool first, av_error *err);

/* The phase change: with h* the head whose induction score rises most
 * (its largest value over the records minus its first), and that rise at
 * least TL_PHASE_RISE, the first record where the labeller names h* an
 * induction head (timeline_head_roles), so that the head's row says so
 * from there; -1 when no head rose so far or none is named so. *head (may
 * be NULL) gets h* as l * H + h. */
#define TL_PHASE_RISE 0.2
long timeline_phase_change(const timeline *tl, int *head);

#endif
