#include "attnview/dump.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void json_string(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

static void json_cp(FILE *out, uint32_t cp)
{
	char u[4];
	size_t k = cp_to_utf8(cp, u);
	json_string(out, u, k);
}

static void json_float(FILE *out, float x)
{
	/* JSON has no NaN or infinity: masked scores are NaN, and a model with
	 * huge (finite) weights overflows to infinity. */
	if (!isfinite(x))
		fputs("null", out);
	else
		fprintf(out, "%.9g", (double)x);
}

static void json_matrix(FILE *out, const float *x, int n, const char *indent)
{
	fputs("[", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s\n%s  [", i ? "," : "", indent);
		for (int j = 0; j < n; j++) {
			if (j)
				fputs(", ", out);
			json_float(out, x[(size_t)i * n + j]);
		}
		fputs("]", out);
	}
	fprintf(out, "\n%s]", indent);
}

static bool in_range(int want, int i)
{
	return want < 0 || want == i;
}

static void write_json(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const model_config *c = &m->cfg;
	const size_t nn = (size_t)r->n * r->n;
	fputs("{\n  \"model\": {\"name\": ", out);
	const char *name = m->meta.name ? m->meta.name : "";
	json_string(out, name, strlen(name));
	fprintf(out,
		", \"objective\": \"%s\", \"layers\": %u, \"heads\": %u, \"dim\": %u, "
		"\"context\": %u, \"vocab_size\": %u},\n",
		objective_name((objective)c->objective), c->layers, c->heads, c->dim, c->context,
		c->vocab_size);
	fprintf(out, "  \"n_tokens\": %d,\n  \"dropped_tokens\": %d,\n  \"tokens\": [", r->n,
		o->dropped);
	for (int i = 0; i < r->n; i++) {
		const token *t = &r->tokens[i];
		char g[32];
		size_t gl = cp_glyph(t->cp, g);
		fprintf(out, "%s\n    {\"index\": %d, \"codepoint\": %u, \"char\": ", i ? "," : "",
			i, t->cp);
		json_cp(out, t->cp);
		fputs(", \"glyph\": ", out);
		json_string(out, g, gl);
		fprintf(out, ", \"width\": %d, \"id\": %d, \"unknown\": %s}", t->width, t->id,
			t->unknown ? "true" : "false");
	}
	fputs("\n  ],\n  \"attention\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++) {
		for (int h = 0; h < r->heads; h++) {
			if (!in_range(o->layer, l) || !in_range(o->head, h))
				continue;
			size_t base = ((size_t)l * r->heads + h) * nn;
			fprintf(out, "%s\n    {\"layer\": %d, \"head\": %d,\n     \"weights\": ",
				first ? "" : ",", l, h);
			json_matrix(out, r->att + base, r->n, "     ");
			fputs(",\n     \"scores\": ", out);
			json_matrix(out, r->scores + base, r->n, "     ");
			fputs("}", out);
			first = false;
		}
	}
	fputs("\n  ]", out);
	if (r->topk) {
		fputs(",\n  \"predictions\": [", out);
		for (int i = 0; i < r->n; i++) {
			fprintf(out, "%s\n    [", i ? "," : "");
			for (int k = 0; k < r->topk; k++) {
				int32_t id = r->pred_id[(size_t)i * r->topk + k];
				if (id < 0)
					continue;
				fputs(k ? ", {\"char\": " : "{\"char\": ", out);
				json_cp(out, m->vocab.cps[id]);
				fprintf(out, ", \"id\": %d, \"p\": ", id);
				json_float(out, r->pred_p[(size_t)i * r->topk + k]);
				fputc('}', out);
			}
			fputs("]", out);
		}
		fputs("\n  ]", out);
	}
	fputs("\n}\n", out);
}

static bool write_tsv(FILE *out, const attn_result *r, const dump_options *o, av_error *err)
{
	const size_t nn = (size_t)r->n * r->n;
	char(*glyph)[32] = malloc((size_t)r->n * sizeof *glyph);
	if (!glyph)
		return av_fail(
		    err, "out of memory for the glyphs of %d tokens; nothing was written", r->n);
	fputs("layer\thead\tquery\tkey\tquery_char\tkey_char\tweight\tscore\n", out);
	for (int i = 0; i < r->n; i++)
		cp_glyph(r->tokens[i].cp, glyph[i]);
	for (int l = 0; l < r->layers; l++) {
		for (int h = 0; h < r->heads; h++) {
			if (!in_range(o->layer, l) || !in_range(o->head, h))
				continue;
			size_t base = ((size_t)l * r->heads + h) * nn;
			for (int i = 0; i < r->n; i++) {
				for (int j = 0; j < r->n; j++) {
					size_t k = base + (size_t)i * r->n + j;
					fprintf(out, "%d\t%d\t%d\t%d\t%s\t%s\t%.9g\t", l, h, i, j,
						glyph[i], glyph[j], (double)r->att[k]);
					if (isnan(r->scores[k]))
						fputs("nan\n", out);
					else
						fprintf(out, "%.9g\n", (double)r->scores[k]);
				}
			}
		}
	}
	free(glyph);
	return true;
}

bool dump_write(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		av_error *err)
{
	if (o->format == DUMP_TSV) {
		if (!write_tsv(out, r, o, err))
			return false;
	} else {
		write_json(out, m, r, o);
	}
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? av_fail_errno(err, errno, "writing the dump failed")
			     : av_fail(err, "writing the dump failed");
	return true;
}

static void info_float(FILE *out, const char *key, float x, const char *unit)
{
	if (isnan(x))
		fprintf(out, "%s: unknown\n", key);
	else
		fprintf(out, "%s: %.4f%s\n", key, (double)x, unit);
}

void dump_info(FILE *out, const model *m, const char *source)
{
	const model_config *c = &m->cfg;
	fprintf(out, "file: %s\n", source);
	fprintf(out, "name: %s\n", m->meta.name && *m->meta.name ? m->meta.name : "(none)");
	fprintf(out, "objective: %s\n", objective_name((objective)c->objective));
	fprintf(out, "layers: %u\nheads: %u\ndim: %u\nhead size: %u\ncontext: %u\n", c->layers,
		c->heads, c->dim, c->dim / c->heads, c->context);
	fprintf(out, "vocabulary: %u (%u characters + pad, unk, mask)\n", c->vocab_size,
		c->vocab_size - TOK_NSPECIAL);
	fprintf(out, "parameters: %zu\n", m->nparams);
	fprintf(out, "corpus: %s\n", m->meta.corpus && *m->meta.corpus ? m->meta.corpus : "(none)");
	fprintf(out, "steps: %llu\ntokens seen: %llu\nseed: %llu\n",
		(unsigned long long)m->meta.steps, (unsigned long long)m->meta.tokens,
		(unsigned long long)m->meta.seed);
	info_float(out, "validation loss", m->meta.val_loss, " nats/char");
	info_float(out, "validation accuracy", m->meta.val_acc, "");
	info_float(out, "unigram baseline loss", m->meta.base_loss, " nats/char");
	info_float(out, "unigram baseline accuracy", m->meta.base_acc, "");
	if (m->meta.created > 0) {
		time_t t = (time_t)m->meta.created;
		struct tm tm;
		char buf[64];
		if (gmtime_r(&t, &tm) && strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
			fprintf(out, "created: %s\n", buf);
	} else {
		fputs("created: unknown\n", out);
	}
}
