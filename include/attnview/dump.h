/* Non-interactive output: the tokens and every attention weight of a text, as
 * JSON or TSV (layouts in attnview(1)). Numbers are printed with %.9g, enough
 * digits to give back the exact float. */
#ifndef ATTNVIEW_DUMP_H
#define ATTNVIEW_DUMP_H

#include <stdio.h>

#include "attnview/analysis.h"
#include "attnview/circuits.h"
#include "attnview/explain.h"
#include "attnview/model.h"
#include "attnview/patch.h"
#include "attnview/score_split.h"

typedef enum dump_format { DUMP_JSON, DUMP_TSV } dump_format;
#define DUMP_NFORMATS 2

const char *dump_format_name(dump_format f); /* "json", "tsv" */

/* What the dump adds to the tokens, weights, scores and predictions when
 * asked (attnview(1), DUMP FORMATS); what needs the model the caller
 * computes. Every layer and head here is one the dump shows (--layer, --head). */
typedef struct dump_extras {
	/* --query I --key J: the q·k breakdown of that cell, one per head
	 * shown, in layer-major order ("breakdown"). */
	const qk_breakdown *breakdown;
	int nbreakdown;
	/* "score_split" (score_split.h): that cell's raw score by source, in
	 * the head of --layer and --head (0 each when not given). */
	const score_split *split;
	/* "contributions": (L, H, n) value norms, from value_norms(). */
	const float *value_norms;
	bool aggregates, rollout; /* "aggregates", "rollout" */
	/* "words": the text's words and the word attention of every head. */
	const word_span *words;
	int nwords;
	/* "compare": this text minus another, aligned by position. */
	const attn_result *compare;
	const char *compare_text;
	/* "ablation": heads switched off ((L, H), nonzero: off), the loss on the
	 * text with all heads, with those off and with those mean-ablated
	 * (model_text_loss_mean), and the predictions with all heads (the main
	 * result is the ablated model's). */
	const uint8_t *ablate;
	double loss_before, loss_after, loss_mean;
	int loss_positions;
	const attn_result *before;
	/* "generated": tokens gen_from..n-1 were written by the model
	 * (--generate), with the model's probability of each and the sampler. */
	bool generated;
	int gen_from;
	const float *gen_p; /* [n - gen_from] */
	float temperature;
	int top_k;
	uint64_t seed;
	const char *gen_stop; /* why it stopped early, or NULL */
	/* "patching" (patch.h, activation_patch): --patch TEXT2 patched into
	 * the text (every head, whatever --layer and --head say). */
	const patch_result *patching;
	/* "lens" (lens.h, logit_lens): (L, n, lens_k) top ids and probabilities
	 * after each block, and the commitment block of each position. */
	const int32_t *lens_id;
	const float *lens_p;
	const int *lens_commit;
	int lens_k;
	/* "dla" (lens.h, logit_attribution): per position the character, its
	 * logit, every head's part (n, L, H; all heads, whatever --layer and
	 * --head say, so that they add up) and the rest. */
	const int32_t *dla_id;
	const float *dla_logit, *dla_heads, *dla_rest;
	/* "circuits" (circuits.h): every head's, from the weights alone. */
	const circuits *circuits;
	/* "faithfulness" (faith.h, faith_rows of every row): loss (n), effect
	 * (n, n), spearman (n, L, H); all heads, whatever --layer and --head. */
	const float *faith_loss, *faith_effect, *faith_spearman;
	/* "logits" (--logits): (n, V) every position's prediction logits
	 * (infer_pred_logits); -INFINITY, null in JSON, where the model has
	 * none. */
	const float *logits;
} dump_extras;

typedef struct dump_options {
	dump_format format;
	int layer;   /* -1 = all */
	int head;    /* -1 = all */
	int dropped; /* tokens cut off beyond the context, reported in JSON */
	const dump_extras *x; /* or NULL */
} dump_options;

/* Writes r (from model_attend) for model m. In TSV, with the score split,
 * patching, the lens or the attribution in o->x, that table instead of the weights. Returns false, with a message,
 * when writing fails or memory for it runs out. */
bool dump_write(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		av_error *err);

/* attnview --dump --timeline: the training timeline of m (timeline.h) as
 * JSON or TSV, the heads o->layer and o->head allow; a model without one is
 * refused naming `what`. */
bool dump_timeline(FILE *out, const model *m, const char *what, const dump_options *o,
		   av_error *err);

/* Write s as a JSON string literal (quotes included). */
void json_string(FILE *out, const char *s, size_t n);

/* The model header as "key: value" lines (attnview --info). */
void dump_info(FILE *out, const model *m, const char *source);

#endif
