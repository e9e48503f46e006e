/* Non-interactive output: the tokens and every attention weight of a text, as
 * JSON or TSV (layouts in attnview(1)). Numbers are printed with %.9g, enough
 * digits to give back the exact float. */
#ifndef ATTNVIEW_DUMP_H
#define ATTNVIEW_DUMP_H

#include <stdio.h>

#include "attnview/model.h"

typedef enum dump_format { DUMP_JSON, DUMP_TSV } dump_format;

typedef struct dump_options {
	dump_format format;
	int layer;   /* -1 = all */
	int head;    /* -1 = all */
	int dropped; /* tokens cut off beyond the context, reported in JSON */
} dump_options;

/* Writes r (from model_attend) for model m. Returns false, with a message,
 * when writing fails or memory for it runs out. */
bool dump_write(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		av_error *err);

/* Write s as a JSON string literal (quotes included). */
void json_string(FILE *out, const char *s, size_t n);

/* The model header as "key: value" lines (attnview --info). */
void dump_info(FILE *out, const model *m, const char *source);

#endif
