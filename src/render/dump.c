#include "attnview/dump.h"
#include "attnview/timeline.h"
#include "attnview/i18n.h"
#include "attnview/infer.h"
#include "attnview/verdict.h"

#include "dump_explain.h"
#include "json_out.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const format_names[] = {"json", "tsv"};
_Static_assert(sizeof format_names / sizeof format_names[0] == DUMP_NFORMATS,
	       "a name for every dump format");

const char *dump_format_name(dump_format f)
{
	return (unsigned)f < DUMP_NFORMATS ? format_names[f] : "?";
}

static bool in_range(int want, int i)
{
	return want < 0 || want == i;
}

/* Floats of head_dense's arrays for r: the weights, the scores, scratch. */
static size_t dense_floats(const attn_result *r)
{
	return 2 * (size_t)r->n * (size_t)r->n + attn_scores_scratch(r);
}

/* Head h of layer l as dense (n, n) weights and scores (NAN where masked)
 * at w and w + n n, from dense_floats(r) floats at w. */
static void head_dense(const attn_result *r, int l, int h, float *w)
{
	const size_t nn = (size_t)r->n * (size_t)r->n;
	attn_matrix a = attn_result_head(r, l, h);
	attn_matrix_copy(w, &a);
	attn_scores_head(r, l, h, w + nn, w + 2 * nn);
}

static bool write_json(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		       av_error *err)
{
	const model_config *c = &m->cfg;
	const size_t nn = (size_t)r->n * r->n;
	float *w = malloc(dense_floats(r) * sizeof *w);
	if (!w)
		return av_fail(err, _("out of memory for the attention of %d tokens"), r->n);
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
			head_dense(r, l, h, w);
			fprintf(out, "%s\n    {\"layer\": %d, \"head\": %d,\n     \"weights\": ",
				first ? "" : ",", l, h);
			json_matrix(out, w, r->n, "     ");
			fputs(",\n     \"scores\": ", out);
			json_matrix(out, w + nn, r->n, "     ");
			fputs("}", out);
			first = false;
		}
	}
	free(w);
	fputs("\n  ]", out);
	if (r->topk) {
		fputs(",\n  \"predictions\": ", out);
		dump_json_predictions(out, m, r, "  ");
	}
	if (!dump_json_extras(out, m, r, o, err))
		return false;
	fputs("\n}\n", out);
	return true;
}

void dump_json_predictions(FILE *out, const model *m, const attn_result *r, const char *indent)
{
	fputs("[", out);
	for (int i = 0; i < r->n; i++) {
		fprintf(out, "%s\n%s  [", i ? "," : "", indent);
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
	fprintf(out, "\n%s]", indent);
}

/* One TSV row per weight of an n x n matrix; head is a number or the name
 * of a kind (select.h: "mean", "max", "all", "rollout"); scores and
 * contributions may be NULL. */
typedef struct tsv_block {
	int layer;
	const char *head;
	const float *w, *scores, *contrib;
} tsv_block;

static void tsv_rows(FILE *out, const attn_result *r, char (*glyph)[32], const tsv_block *b,
		     bool contrib_col)
{
	for (int i = 0; i < r->n; i++)
		for (int j = 0; j < r->n; j++) {
			size_t k = (size_t)i * r->n + j;
			if (b->layer < 0)
				fputs("all", out);
			else
				fprintf(out, "%d", b->layer);
			fprintf(out, "\t%s\t%d\t%d\t%s\t%s\t%.9g\t", b->head, i, j, glyph[i], glyph[j],
				(double)b->w[k]);
			if (!b->scores || isnan(b->scores[k]))
				fputs("nan", out);
			else
				fprintf(out, "%.9g", (double)b->scores[k]);
			if (contrib_col) {
				if (b->contrib)
					fprintf(out, "\t%.9g", (double)b->contrib[k]);
				else
					fputs("\tnan", out);
			}
			fputc('\n', out);
		}
}

/* The aggregates and the rollout as rows of their own (dump_extras). */
static bool tsv_summaries(FILE *out, const attn_result *r, const dump_options *o,
			  char (*glyph)[32], float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	bool cc = x->value_norms != NULL;
	size_t nn = (size_t)r->n * r->n;
	for (int l = 0; l < r->layers && x->aggregates; l++) {
		if (!in_range(o->layer, l))
			continue;
		for (sel_kind k = SEL_MEAN; k <= SEL_MAX; k++) {
			aggregate_heads(buf, r, l, k);
			tsv_block b = {l, sel_name(k), buf, NULL, NULL};
			tsv_rows(out, r, glyph, &b, cc);
		}
	}
	if (x->aggregates) {
		aggregate_heads(buf, r, 0, SEL_ALL);
		tsv_block b = {-1, sel_name(SEL_ALL), buf, NULL, NULL};
		tsv_rows(out, r, glyph, &b, cc);
	}
	if (!x->rollout)
		return true;
	float *roll = malloc((size_t)r->layers * nn * sizeof *roll);
	if (!roll)
		return av_fail(err, _("out of memory for the rollout of %d tokens"), r->n);
	attention_rollout(roll, buf, r);
	for (int l = 0; l < r->layers; l++)
		if (in_range(o->layer, l)) {
			tsv_block b = {l, sel_name(SEL_ROLLOUT), roll + (size_t)l * nn, NULL, NULL};
			tsv_rows(out, r, glyph, &b, cc);
		}
	free(roll);
	return true;
}

static bool write_tsv(FILE *out, const attn_result *r, const dump_options *o, av_error *err)
{
	const size_t nn = (size_t)r->n * r->n;
	const dump_extras *x = o->x;
	bool cc = x && x->value_norms;
	char(*glyph)[32] = malloc((size_t)r->n * sizeof *glyph);
	float *buf = malloc((nn + dense_floats(r)) * sizeof *buf);
	if (!glyph || !buf) {
		free(glyph);
		free(buf);
		return av_fail(
		    err, _("out of memory for the glyphs of %d tokens; nothing was written"), r->n);
	}
	float *w = buf + nn;
	fputs("layer\thead\tquery\tkey\tquery_char\tkey_char\tweight\tscore", out);
	fputs(cc ? "\tcontribution\n" : "\n", out);
	for (int i = 0; i < r->n; i++)
		cp_glyph(r->tokens[i].cp, glyph[i]);
	for (int l = 0; l < r->layers; l++) {
		for (int h = 0; h < r->heads; h++) {
			if (!in_range(o->layer, l) || !in_range(o->head, h))
				continue;
			char name[16];
			snprintf(name, sizeof name, "%d", h);
			attn_matrix a = attn_result_head(r, l, h);
			if (cc)
				dump_contributions(buf, &a, x->value_norms +
								((size_t)l * r->heads + h) * r->n);
			head_dense(r, l, h, w);
			tsv_block b = {l, name, w, w + nn, cc ? buf : NULL};
			tsv_rows(out, r, glyph, &b, cc);
		}
	}
	bool ok = !x || tsv_summaries(out, r, o, glyph, buf, err);
	free(glyph);
	free(buf);
	return ok;
}

bool dump_write(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		av_error *err)
{
	dump_tsv_fn table = o->format == DUMP_TSV ? dump_tsv_table(o->x) : NULL;
	if (table) {
		table(out, m, r, o);
	} else if (o->format == DUMP_TSV) {
		if (!write_tsv(out, r, o, err))
			return false;
	} else if (!write_json(out, m, r, o, err)) {
		return false;
	}
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? av_fail_errno(err, errno, _("writing the dump failed"))
			     : av_fail(err, _("writing the dump failed"));
	return true;
}

static void info_float(FILE *out, const char *key, float x, const char *unit)
{
	if (isnan(x))
		fprintf(out, "%s: unknown\n", key);
	else
		fprintf(out, "%s: %.4f%s\n", key, (double)x, unit);
}

/* "key: value" with the value quoted as every message quotes names (a model
 * file's metadata may hold anything but NUL: attnview(5)), whole. */
static void info_string(FILE *out, const char *key, const char *s)
{
	if (!s || !*s) {
		fprintf(out, "%s: (none)\n", key);
		return;
	}
	size_t n = 4 * strlen(s) + 8; /* at most \xNN per byte, quotes */
	char *q = malloc(n);
	fprintf(out, "%s: %s\n", key, q ? av_quote(s, q, n) : AV_Q(s));
	free(q);
}

/* Where a model came from and how its architecture differs from attnview's
 * own (attnview(5), Architecture), from the one table of its fields; nothing
 * for attnview's own. */
static void info_arch(FILE *out, const model_arch *a)
{
	bool own = true;
	for (int i = 0; i < ARCH_NFIELDS; i++)
		own = own && arch_value(a, &model_arch_fields[i]) == 0;
	if (own)
		return;
	fprintf(out, "origin: %s\narchitecture:", model_arch_fields[ARCH_ORIGIN].values[a->origin]);
	for (int i = 0; i < ARCH_ORIGIN; i++) {
		const arch_field *f = &model_arch_fields[i];
		fprintf(out, "%s %s %s", i ? "," : "", f->name, f->values[arch_value(a, f)]);
	}
	fputc('\n', out);
}

/* A converted model's parameters that its checkpoint does not have, zeros
 * in attnview's layout: the rows of ids 0..2 (in the output too, untied),
 * the output bias, and every bias of a model without them. */
static size_t converted_zeros(const model_config *c)
{
	const size_t d = c->dim;
	size_t z = c->arch.specials == SPECIALS_NONE ? TOK_NSPECIAL * d : 0;
	if (c->arch.specials == SPECIALS_NONE && c->arch.output != OUT_TIED)
		z += TOK_NSPECIAL * d;
	z += c->vocab_size;
	if (c->arch.biases == BIASES_NONE)
		z += c->layers * 11 * d + d;
	return z;
}

static void info_params(FILE *out, const model *m)
{
	const model_config *c = &m->cfg;
	if (c->arch.origin == ORIGIN_ATTNVIEW) {
		fprintf(out, "parameters: %zu\n", m->nparams);
		return;
	}
	size_t z = converted_zeros(c);
	fprintf(out,
		"parameters: %zu (the checkpoint's %zu, and %zu zeros attnview's layout adds: the "
		"rows of ids 0..2, the output bias%s)\n",
		m->nparams, m->nparams - z, z, c->arch.biases == BIASES_NONE ? ", the biases" : "");
}

void dump_info(FILE *out, const model *m, const char *source)
{
	const model_config *c = &m->cfg;
	info_string(out, "file", source);
	info_string(out, "name", m->meta.name);
	fprintf(out, "objective: %s\n", objective_name((objective)c->objective));
	fprintf(out, "layers: %u\nheads: %u\ndim: %u\nhead size: %u\ncontext: %u\n", c->layers,
		c->heads, c->dim, c->dim / c->heads, c->context);
	if (c->arch.specials == SPECIALS_NONE)
		fprintf(out,
			"vocabulary: %u (%u characters; ids 0..2, pad, unk and mask, have no "
			"rows: an unknown character is embedded as 0)\n",
			c->vocab_size, c->vocab_size - TOK_NSPECIAL);
	else
		fprintf(out, "vocabulary: %u (%u characters + pad, unk, mask)\n", c->vocab_size,
			c->vocab_size - TOK_NSPECIAL);
	info_arch(out, &c->arch);
	info_params(out, m);
	info_string(out, "corpus", m->meta.corpus);
	/* A converted model's steps are its checkpoint's (0 where it did not
	 * say: minGPT's never do), its seed not one of attnview's. */
	const bool converted = c->arch.origin != ORIGIN_ATTNVIEW;
	if (converted && m->meta.steps == 0)
		fputs("steps: unknown\n", out);
	else
		fprintf(out, "steps: %llu\n", (unsigned long long)m->meta.steps);
	/* (a nanoGPT checkpoint without its config does not say its tokens) */
	if (converted && m->meta.tokens == 0)
		fputs("tokens seen: unknown\n", out);
	else
		fprintf(out, "tokens seen: %llu\n", (unsigned long long)m->meta.tokens);
	if (c->arch.origin != ORIGIN_ATTNVIEW)
		fputs("seed: unknown\n", out);
	else
		fprintf(out, "seed: %llu\n", (unsigned long long)m->meta.seed);
	info_float(out, "validation loss", m->meta.val_loss, " nats/char");
	info_float(out, "validation accuracy", m->meta.val_acc, "");
	info_float(out, "unigram baseline loss", m->meta.base_loss, " nats/char");
	info_float(out, "unigram baseline accuracy", m->meta.base_acc, "");
	if (verdict_of(m->meta.val_loss, m->meta.base_loss) != VERDICT_NONE) {
		char v[512];
		verdict_text_untranslated(m->meta.val_loss, m->meta.val_acc, m->meta.base_loss,
					  m->meta.base_acc, 0, v, sizeof v);
		fprintf(out, "verdict: %s\n", v);
	}
	const timeline *tl = m->timeline;
	if (tl && tl->count) /* a run from another model (--init) appends to its records */
		fprintf(out, "timeline: %zu records, steps %llu to %llu\n", tl->count,
			(unsigned long long)tl->step[0],
			(unsigned long long)tl->step[tl->count - 1]);
	else if (tl)
		fprintf(out, "timeline: no records\n");
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
