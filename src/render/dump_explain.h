/* The dump's sections beyond the weights (render-private; dump.h's
 * dump_extras says what they hold). */
#ifndef ATTNVIEW_RENDER_DUMP_EXPLAIN_H
#define ATTNVIEW_RENDER_DUMP_EXPLAIN_H

#include "attnview/dump.h"

/* After "attention" and "predictions": "heads" always, then the extras asked
 * for. False, with a message, when memory runs out. */
bool dump_json_extras(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		      av_error *err);
/* "predictions" of r as a JSON array (dump.c). */
void dump_json_predictions(FILE *out, const model *m, const attn_result *r, const char *indent);
/* Contributions of one head: out[i][j] = A[i][j] value_norms[j] (0 where
 * masked). */
void dump_contributions(float *out, const attn_matrix *a, const float *value_norms);

/* "score_split" (dump_split.c), in JSON after "breakdown", and as the
 * TSV's one table. */
void dump_json_split(FILE *out, const model *m, const dump_options *o);
void dump_tsv_split(FILE *out, const model *m, const dump_options *o);
/* "patching" (dump_patch.c), in JSON after the other extras, and as the
 * TSV's one table. */
void dump_json_patch(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_tsv_patch(FILE *out, const model *m, const attn_result *r, const dump_options *o);
/* "lens" (with "lens_commitment") and "dla" (dump_lens.c), in JSON after
 * the other extras, and as the TSV's one table. */
void dump_json_lens(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_json_dla(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_json_logits(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_tsv_lens(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_tsv_dla(FILE *out, const model *m, const attn_result *r, const dump_options *o);

/* "circuits" (dump_circuits.c), in JSON after the other extras, and as the
 * TSV's one table. */
void dump_json_circuits(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_tsv_circuits(FILE *out, const model *m, const attn_result *r, const dump_options *o);
/* "faithfulness" and "faithfulness_rows" (dump_faith.c), in JSON after the
 * other extras, and as the TSV's one table. */
void dump_json_faith(FILE *out, const model *m, const attn_result *r, const dump_options *o);
void dump_tsv_faith(FILE *out, const model *m, const attn_result *r, const dump_options *o);

#endif
