/* The dump's "lens", "dla" and "logits" sections (dump.h, dump_extras;
 * attnview(1), DUMP FORMATS), JSON and TSV. */
#include "dump_explain.h"

#include "json_out.h"

#include "attnview/tokenizer.h"

static bool json_lens(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		      float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	const int n = r->n, K = x->lens_k;
	bool first = true;
	fputs(",\n  \"lens\": [", out);
	for (int l = 0; l < r->layers; l++)
		for (int t = 0; t < n && (o->layer < 0 || o->layer == l); t++) {
			fprintf(out, "%s\n    {\"layer\": %d, \"position\": %d, \"top\": [",
				first ? "" : ",", l, t);
			for (int k = 0; k < K; k++) {
				size_t i = ((size_t)l * n + t) * K + k;
				fprintf(out, "%s{\"id\": %d, \"char\": ", k ? ", " : "",
					x->lens_id[i]);
				json_cp(out, m->vocab.cps[x->lens_id[i]]);
				fputs(", \"p\": ", out);
				json_float(out, x->lens_p[i]);
				fputc('}', out);
			}
			fputs("]}", out);
			first = false;
		}
	fputs("\n  ],\n  \"lens_commitment\": [", out);
	for (int t = 0; t < n; t++)
		fprintf(out, "%s%d", t ? ", " : "", x->lens_commit[t]);
	fputc(']', out);
	return true;
}

static bool json_dla(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		     float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	const int H = r->heads, LH = r->layers * H;
	fputs(",\n  \"dla\": [", out);
	for (int t = 0; t < r->n; t++) {
		fprintf(out, "%s\n    {\"position\": %d, \"id\": %d, \"char\": ", t ? "," : "", t,
			x->dla_id[t]);
		json_cp(out, m->vocab.cps[x->dla_id[t]]);
		fputs(", \"logit\": ", out);
		json_float(out, x->dla_logit[t]);
		fputs(", \"heads\": [", out);
		for (int l = 0; l < r->layers; l++) {
			fputs(l ? ", " : "", out);
			json_floats(out, x->dla_heads + (size_t)t * LH + (size_t)l * H, H);
		}
		fputs("], \"rest\": ", out);
		json_float(out, x->dla_rest[t]);
		fputc('}', out);
	}
	fputs("\n  ]", out);
	return true;
}

static void tsv_float(FILE *out, float v)
{
	fprintf(out, "%.9g", (double)v);
}

static void tsv_lens(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const dump_extras *x = o->x;
	const int n = r->n, K = x->lens_k;
	char g[32];
	fputs("layer\tposition\tchar\trank\tid\tpredicted\tp\tcommitment\n", out);
	for (int l = 0; l < r->layers; l++)
		for (int t = 0; t < n && (o->layer < 0 || o->layer == l); t++)
			for (int k = 0; k < K; k++) {
				size_t i = ((size_t)l * n + t) * K + k;
				cp_glyph(r->tokens[t].cp, g);
				fprintf(out, "%d\t%d\t%s\t%d\t%d\t", l, t, g, k + 1, x->lens_id[i]);
				cp_glyph(m->vocab.cps[x->lens_id[i]], g);
				fprintf(out, "%s\t", g);
				tsv_float(out, x->lens_p[i]);
				fprintf(out, "\t%d\n", x->lens_commit[t]);
			}
}

static void tsv_dla(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const dump_extras *x = o->x;
	const int LH = r->layers * r->heads;
	char g[32];
	fputs("position\tchar\tid\tpredicted\tlogit", out);
	for (int k = 0; k < LH; k++)
		fprintf(out, "\tL%dH%d", k / r->heads, k % r->heads);
	fputs("\trest\n", out);
	for (int t = 0; t < r->n; t++) {
		cp_glyph(r->tokens[t].cp, g);
		fprintf(out, "%d\t%s\t%d\t", t, g, x->dla_id[t]);
		cp_glyph(m->vocab.cps[x->dla_id[t]], g);
		fprintf(out, "%s\t", g);
		tsv_float(out, x->dla_logit[t]);
		for (int k = 0; k < LH; k++) {
			fputc('\t', out);
			tsv_float(out, x->dla_heads[(size_t)t * LH + k]);
		}
		fputc('\t', out);
		tsv_float(out, x->dla_rest[t]);
		fputc('\n', out);
	}
}

static bool json_logits(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			float *buf, av_error *err)
{
	const size_t V = m->cfg.vocab_size;
	fputs(",\n  \"logits\": [", out);
	for (int t = 0; t < r->n; t++) {
		fputs(t ? ",\n    " : "\n    ", out);
		json_floats(out, o->x->logits + (size_t)t * V, (int)V);
	}
	fputs("\n  ]", out);
	return true;
}

static bool has_lens(const dump_extras *x)
{
	return x->lens_id != NULL;
}
const dump_section dump_section_lens = {
    .key = "lens", .present = has_lens, .json = json_lens, .tsv = tsv_lens};

static bool has_dla(const dump_extras *x)
{
	return x->dla_id != NULL;
}
const dump_section dump_section_dla = {
    .key = "dla", .present = has_dla, .json = json_dla, .tsv = tsv_dla};

static bool has_logits(const dump_extras *x)
{
	return x->logits != NULL;
}
const dump_section dump_section_logits = {
    .key = "logits", .present = has_logits, .json = json_logits, .tsv = NULL};
