/* The dump's sections beyond the weights (render-private; dump.h's
 * dump_extras says what they hold). */
#ifndef ATTNVIEW_RENDER_DUMP_EXPLAIN_H
#define ATTNVIEW_RENDER_DUMP_EXPLAIN_H

#include "attnview/dump.h"

/* After "attention" and "predictions": "heads" always, then the sections
 * asked for (DUMP_SECTIONS). False, with a message, when memory runs out. */
bool dump_json_extras(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		      av_error *err);
/* "predictions" of r as a JSON array (dump.c). */
void dump_json_predictions(FILE *out, const model *m, const attn_result *r, const char *indent);
/* Contributions of one head: out[i][j] = A[i][j] value_norms[j] (0 where
 * masked). */
void dump_contributions(float *out, const attn_matrix *a, const float *value_norms);

/* A section of the dump after "heads": whether the caller asked for it
 * (its data is in dump_extras), its JSON (",\n  \"key\": ..."; buf holds
 * side x side floats, side the longer of the text and --compare's; false,
 * with a message, when memory runs out) and, for a section that is a table
 * of its own in TSV, that table (NULL: JSON only, or columns and rows of
 * the weights' TSV, dump.c). */
typedef bool (*dump_json_fn)(FILE *out, const model *m, const attn_result *r,
			     const dump_options *o, float *buf, av_error *err);
typedef void (*dump_tsv_fn)(FILE *out, const model *m, const attn_result *r,
			    const dump_options *o);
typedef struct dump_section {
	const char *key;
	bool (*present)(const dump_extras *x);
	dump_json_fn json;
	dump_tsv_fn tsv;
} dump_section;

/* The sections, one row each, in the order the JSON writes them; a TSV
 * dump is the table of the first one present that has a table, else the
 * weights. Each is defined in its file as dump_section_<name>. */
#define DUMP_SECTIONS(X)                                                                           \
	X(breakdown)                                                                               \
	X(score_split)                                                                             \
	X(contributions)                                                                           \
	X(aggregates)                                                                              \
	X(rollout)                                                                                 \
	X(words)                                                                                   \
	X(compare)                                                                                 \
	X(ablation)                                                                                \
	X(generated)                                                                               \
	X(patching)                                                                                \
	X(lens)                                                                                    \
	X(dla)                                                                                     \
	X(circuits)                                                                                \
	X(logits)                                                                                  \
	X(faithfulness)
/* The TSV table of the first section present that has one, or NULL. */
dump_tsv_fn dump_tsv_table(const dump_extras *x);

#define DUMP_SECTION_DECLARE(name) extern const dump_section dump_section_##name;
DUMP_SECTIONS(DUMP_SECTION_DECLARE)
#undef DUMP_SECTION_DECLARE

#endif
