/* The dump's "faithfulness" section (dump.h, dump_extras; attnview(1), DUMP
 * FORMATS), JSON and TSV: per head shown (--layer, --head) its Spearman
 * correlation at every row and their mean, and per row its loss and the
 * effect of blanking each key. */
#include "dump_explain.h"

#include "json_out.h"

#include "attnview/tokenizer.h"

#include <math.h>

static bool shown(const dump_options *o, int l, int h)
{
	return (o->layer < 0 || o->layer == l) && (o->head < 0 || o->head == h);
}

/* The mean of head k's defined correlations, NAN if none. */
static float mean_of(const float *sp, int n, int LH, int k)
{
	double s = 0;
	int c = 0;
	for (int q = 0; q < n; q++)
		if (!isnan(sp[(size_t)q * LH + k])) {
			s += sp[(size_t)q * LH + k];
			c++;
		}
	return c ? (float)(s / c) : NAN;
}

static bool json_faith(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		       float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	const int n = r->n, H = r->heads, LH = r->layers * H;
	bool first = true;
	fputs(",\n  \"faithfulness\": [", out);
	for (int k = 0; k < LH; k++) {
		if (!shown(o, k / H, k % H))
			continue;
		fprintf(out, "%s\n    {\"layer\": %d, \"head\": %d, \"rows\": [", first ? "" : ",",
			k / H, k % H);
		for (int q = 0; q < n; q++) {
			fprintf(out, "%s{\"query\": %d, \"spearman\": ", q ? ", " : "", q);
			json_float(out, x->faith_spearman[(size_t)q * LH + k]);
			fputc('}', out);
		}
		fputs("], \"mean\": ", out);
		json_float(out, mean_of(x->faith_spearman, n, LH, k));
		fputc('}', out);
		first = false;
	}
	fputs("\n  ],\n  \"faithfulness_rows\": [", out);
	for (int q = 0; q < n; q++) {
		fprintf(out, "%s\n    {\"query\": %d, \"loss\": ", q ? "," : "", q);
		json_float(out, x->faith_loss[q]);
		fputs(", \"effects\": ", out);
		json_floats(out, x->faith_effect + (size_t)q * n, n);
		fputc('}', out);
	}
	fputs("\n  ]", out);
	(void)m;
	return true;
}

static void tsv_float(FILE *out, float v)
{
	fprintf(out, "%.9g", (double)v);
}

static void tsv_faith(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const dump_extras *x = o->x;
	const int n = r->n, H = r->heads, LH = r->layers * H;
	char g[32];
	fputs("query\tchar\tloss", out);
	for (int k = 0; k < LH; k++)
		if (shown(o, k / H, k % H))
			fprintf(out, "\tL%dH%d", k / H, k % H);
	fputc('\n', out);
	for (int q = 0; q < n; q++) {
		cp_glyph(r->tokens[q].cp, g);
		fprintf(out, "%d\t%s\t", q, g);
		tsv_float(out, x->faith_loss[q]);
		for (int k = 0; k < LH; k++)
			if (shown(o, k / H, k % H)) {
				fputc('\t', out);
				tsv_float(out, x->faith_spearman[(size_t)q * LH + k]);
			}
		fputc('\n', out);
	}
	(void)m;
}

static bool has_faithfulness(const dump_extras *x)
{
	return x->faith_loss != NULL;
}
const dump_section dump_section_faithfulness = {
    .key = "faithfulness", .present = has_faithfulness, .json = json_faith, .tsv = tsv_faith};
