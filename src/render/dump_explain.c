/* The dump's sections beyond the weights (dump.h, dump_extras): head roles,
 * the q·k breakdown, value contributions, aggregates, rollout, words, a
 * comparison with another text, ablation, the text written; and the table
 * of sections (DUMP_SECTIONS, dump_explain.h) that writes every one asked
 * for. These are JSON only, except for what fits the TSV's one row per
 * weight (contributions, aggregates, rollout: see dump.c). */
#include "dump_explain.h"
#include "attnview/i18n.h"

#include "json_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool shown(const dump_options *o, int l, int h)
{
	return (o->layer < 0 || o->layer == l) && (o->head < 0 || o->head == h);
}

static bool layer_shown(const dump_options *o, int l)
{
	return o->layer < 0 || o->layer == l;
}

/* The fields that say what a labelled matrix does: the role, its score,
 * how sure, the runner-up, the label and the sentence (in English: the dump
 * is the same in every language). */
static void write_role_fields(FILE *out, const role_scores *rs)
{
	static const char *const verdicts[] = {"sure", "two", "unsure", "short"};
	fprintf(out, "\"role\": \"%s\", \"role_score\": ", role_name(rs->role));
	json_double(out, rs->score);
	fprintf(out, ", \"verdict\": \"%s\", \"second\": ", verdicts[rs->verdict]);
	if (rs->second < ROLE_NKINDS)
		fprintf(out, "\"%s\"", role_name(rs->second));
	else
		fputs("null", out);
	char text[512];
	role_label(rs, false, text, sizeof text);
	fputs(", \"label\": ", out);
	json_string(out, text, strlen(text));
	role_sentence(rs, false, text, sizeof text);
	fputs(", \"sentence\": ", out);
	json_string(out, text, strlen(text));
}

/* One head's entry: its scores, what the label names, the label and the
 * sentence. */
static void write_head(FILE *out, const attn_result *r, int l, int h)
{
	attn_matrix a = attn_result_head(r, l, h);
	role_scores rs;
	head_roles(&rs, &a, r->tokens);
	fprintf(out, "\n    {\"layer\": %d, \"head\": %d, \"scores\": {", l, h);
	for (int k = 0; k < ROLE_NKINDS; k++) {
		fprintf(out, "%s\"%s\": ", k ? ", " : "", role_score_key((role_kind)k));
		json_double(out, rs.s[k]);
	}
	/* the panel's statistics of the head: mean row entropy (nats), that of
	 * rows spread evenly, mean distance looked */
	head_stats hs;
	head_stats_compute(&hs, &a);
	fputs("},\n     \"entropy\": ", out);
	json_double(out, hs.entropy);
	fputs(", \"max_entropy\": ", out);
	json_double(out, hs.max_entropy);
	fputs(", \"distance\": ", out);
	json_double(out, hs.distance);
	fprintf(out, ",\n     \"offset\": %d, \"keywords\": [", rs.offset);
	for (int k = 0; k < rs.nkeys; k++) {
		fputs(k ? ", " : "", out);
		json_cp(out, rs.keys[k] == ROLE_UNKNOWN_CP ? 0xFFFD : rs.keys[k]);
	}
	fprintf(out,
		"], \"mirror\": %d, \"parallel_side\": \"%s\", \"column\": %d, \"rows\": %d,\n"
		"     \"evidence\": {",
		rs.mirror,
		rs.par_dir < 0 || rs.causal ? "before"
		: rs.par_dir > 0	    ? "after"
					    : "both",
		rs.column, rs.n);
	for (int k = 0; k < ROLE_NKINDS; k++)
		fprintf(out, "%s\"%s\": [%d, %d]", k ? ", " : "", role_score_key((role_kind)k),
			rs.hits[k], rs.rows[k]);
	fputs("},\n     ", out);
	write_role_fields(out, &rs);
	fputc('}', out);
}

static void write_heads(FILE *out, const attn_result *r, const dump_options *o)
{
	fputs(",\n  \"heads\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			if (!shown(o, l, h))
				continue;
			fputs(first ? "" : ",", out);
			write_head(out, r, l, h);
			first = false;
		}
	fputs("\n  ]", out);
}

static void write_ints(FILE *out, const int *x, int n)
{
	fputc('[', out);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%d", i ? ", " : "", x[i]);
	fputc(']', out);
}

static bool write_breakdown(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			    float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	fputs(",\n  \"breakdown\": [", out);
	for (int i = 0; i < x->nbreakdown; i++) {
		const qk_breakdown *b = &x->breakdown[i];
		fprintf(out,
			"%s\n    {\"layer\": %d, \"head\": %d, \"query\": %d, \"key\": %d, "
			"\"masked\": %s,\n     \"q\": ",
			i ? "," : "", b->layer, b->head, b->query, b->key,
			b->masked ? "true" : "false");
		json_floats(out, b->q, b->hs);
		fputs(",\n     \"k\": ", out);
		json_floats(out, b->k, b->hs);
		fputs(",\n     \"products\": ", out);
		json_floats(out, b->prod, b->hs);
		fputs(",\n     \"order\": ", out);
		write_ints(out, b->order, b->hs);
		fputs(",\n     \"dot\": ", out);
		json_double(out, b->dot);
		fputs(", \"score\": ", out);
		json_float(out, b->score);
		fputs(", \"scale\": ", out);
		json_float(out, b->scale);
		fputs(", \"scaled\": ", out);
		json_float(out, b->scaled);
		fputs(",\n     \"row_max\": ", out);
		json_float(out, b->row_max);
		fputs(", \"shifted\": ", out);
		json_double(out, b->shifted);
		fputs(", \"exp\": ", out);
		json_double(out, b->e);
		fputs(", \"sum_exp\": ", out);
		json_double(out, b->sum_exp);
		fputs(", \"weight\": ", out);
		json_float(out, b->weight);
		fputc('}', out);
	}
	fputs("\n  ]", out);
	return true;
}

/* One n x n matrix per head shown, made by fn into buf. */
typedef void (*head_matrix_fn)(float *buf, const attn_result *r, const dump_extras *x, int l,
			       int h);

static void contributions_of(float *buf, const attn_result *r, const dump_extras *x, int l, int h)
{
	attn_matrix a = attn_result_head(r, l, h);
	const float *vn =
	    x->value_norms + ((size_t)l * (size_t)r->heads + (size_t)h) * (size_t)r->n;
	dump_contributions(buf, &a, vn);
}

static bool write_contributions(FILE *out, const model *m, const attn_result *r, const dump_options *o,
				float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	fputs(",\n  \"contributions\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			if (!shown(o, l, h))
				continue;
			const float *vn = x->value_norms +
					  ((size_t)l * (size_t)r->heads + (size_t)h) * (size_t)r->n;
			fprintf(out,
				"%s\n    {\"layer\": %d, \"head\": %d,\n     \"value_norms\": ",
				first ? "" : ",", l, h);
			json_floats(out, vn, r->n);
			fputs(",\n     \"contributions\": ", out);
			contributions_of(buf, r, x, l, h);
			json_matrix(out, buf, r->n, "     ");
			/* The label of the map the view shows under F11: each row
			 * as shares of its sum, labelled as the weights are. */
			attn_matrix a = attn_result_head(r, l, h);
			contribution_shares(buf, &a, vn);
			role_scores rs;
			head_roles(&rs, &(attn_matrix){buf, r->n, a.causal, 0}, r->tokens);
			fputs(",\n     ", out);
			write_role_fields(out, &rs);
			fputc('}', out);
			first = false;
		}
	fputs("\n  ]", out);
	return true;
}

static bool write_aggregates(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			     float *buf, av_error *err)
{
	fputs(",\n  \"aggregates\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++) {
		if (!layer_shown(o, l))
			continue;
		for (sel_kind k = SEL_MEAN; k <= SEL_MAX; k++) {
			aggregate_heads(buf, r, l, k);
			fprintf(out,
				"%s\n    {\"layer\": %d, \"kind\": \"%s\",\n     \"weights\": ",
				first ? "" : ",", l, sel_name(k));
			json_matrix(out, buf, r->n, "     ");
			fputc('}', out);
			first = false;
		}
	}
	aggregate_heads(buf, r, 0, SEL_ALL);
	fprintf(out,
		"%s\n    {\"layer\": null, \"kind\": \"%s\",\n     \"weights\": ", first ? "" : ",",
		sel_name(SEL_ALL));
	json_matrix(out, buf, r->n, "     ");
	fputs("}\n  ]", out);
	return true;
}

static bool write_rollout(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			  float *buf, av_error *err)
{
	size_t nn = (size_t)r->n * (size_t)r->n;
	float *roll = malloc((size_t)r->layers * nn * sizeof *roll);
	if (!roll)
		return av_fail(err, _("out of memory for the rollout of %d tokens"), r->n);
	attention_rollout(roll, buf, r);
	fputs(",\n  \"rollout\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++) {
		if (!layer_shown(o, l))
			continue;
		fprintf(out, "%s\n    {\"layer\": %d,\n     \"weights\": ", first ? "" : ",", l);
		json_matrix(out, roll + (size_t)l * nn, r->n, "     ");
		fputc('}', out);
		first = false;
	}
	fputs("\n  ]", out);
	free(roll);
	return true;
}

static bool write_words(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	fputs(",\n  \"words\": {\n    \"spans\": [", out);
	for (int i = 0; i < x->nwords; i++) {
		fprintf(out, "%s\n      {\"word\": %d, \"start\": %d, \"end\": %d, \"text\": ",
			i ? "," : "", i, x->words[i].start, x->words[i].end);
		char text[1024];
		size_t len = 0;
		for (int t = x->words[i].start; t < x->words[i].end && len + 4 < sizeof text; t++)
			len += cp_to_utf8(r->tokens[t].cp, text + len);
		json_string(out, text, len);
		fputc('}', out);
	}
	fputs("\n    ],\n    \"attention\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			if (!shown(o, l, h))
				continue;
			attn_matrix a = attn_result_head(r, l, h);
			words_aggregate(buf, &a, x->words, x->nwords);
			fprintf(out,
				"%s\n      {\"layer\": %d, \"head\": %d,\n       \"weights\": ",
				first ? "" : ",", l, h);
			json_matrix(out, buf, x->nwords, "       ");
			fputc('}', out);
			first = false;
		}
	fputs("\n    ]\n  }", out);
	return true;
}

static bool write_compare(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			  float *buf, av_error *err)
{
	const attn_result *c = o->x->compare;
	int n = r->n < c->n ? r->n : c->n;
	fputs(",\n  \"compare\": {\"text\": ", out);
	const char *t = o->x->compare_text ? o->x->compare_text : "";
	json_string(out, t, strlen(t));
	fprintf(out, ", \"n_tokens\": %d, \"aligned\": %d,\n    \"differences\": [", c->n, n);
	bool first = true;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++) {
			if (!shown(o, l, h))
				continue;
			attn_matrix a = attn_result_head(r, l, h), b = attn_result_head(c, l, h);
			matrix_difference(buf, &a, &b, n);
			fprintf(out,
				"%s\n      {\"layer\": %d, \"head\": %d,\n       \"weights\": ",
				first ? "" : ",", l, h);
			json_matrix(out, buf, n, "       ");
			fputc('}', out);
			first = false;
		}
	fputs("\n    ]\n  }", out);
	return true;
}

static bool write_ablation(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			   float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	fputs(",\n  \"ablation\": {\"heads\": [", out);
	bool first = true;
	for (int l = 0; l < r->layers; l++)
		for (int h = 0; h < r->heads; h++)
			if (x->ablate[l * r->heads + h]) {
				fprintf(out, "%s{\"layer\": %d, \"head\": %d}", first ? "" : ", ",
					l, h);
				first = false;
			}
	fprintf(out, "],\n    \"loss_positions\": %d, \"loss_before\": ", x->loss_positions);
	json_double(out, x->loss_before);
	fputs(", \"loss_after\": ", out);
	json_double(out, x->loss_after);
	fputs(", \"loss_mean\": ", out);
	json_double(out, x->loss_mean);
	if (x->before && x->before->topk) {
		fputs(",\n    \"predictions_before\": ", out);
		dump_json_predictions(out, m, x->before, "    ");
	}
	fputs("\n  }", out);
	return true;
}

static bool write_generated(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			    float *buf, av_error *err)
{
	const dump_extras *x = o->x;
	/* the temperature as given (0.8, not 0.800000012) */
	fprintf(out,
		",\n  \"generated\": {\"from\": %d, \"count\": %d, \"temperature\": %.6g, "
		"\"top_k\": %d, \"seed\": %llu,\n    \"text\": \"",
		x->gen_from, r->n - x->gen_from, (double)x->temperature, x->top_k,
		(unsigned long long)x->seed);
	/* The characters themselves, as one string (json_cp writes one quoted). */
	for (int i = x->gen_from; i < r->n; i++) {
		char u[8];
		uint32_t cp = m->vocab.cps[r->tokens[i].id];
		size_t len = cp_to_utf8(cp, u);
		json_string_body(out, u, len);
	}
	fputs("\",\n    \"stopped\": ", out);
	if (x->gen_stop)
		json_string(out, x->gen_stop, strlen(x->gen_stop));
	else
		fputs("null", out);
	fputs(",\n    \"tokens\": [", out);
	for (int i = x->gen_from; i < r->n; i++) {
		fprintf(out, "%s\n      {\"index\": %d, \"char\": ", i > x->gen_from ? "," : "", i);
		json_cp(out, m->vocab.cps[r->tokens[i].id]);
		fprintf(out, ", \"id\": %d, \"p\": ", r->tokens[i].id);
		json_float(out, x->gen_p[i - x->gen_from]);
		fputc('}', out);
	}
	fputs("\n    ]\n  }", out);
	return true;
}

static const dump_section *const sections[] = {
#define DUMP_SECTION_ROW(name) &dump_section_##name,
    DUMP_SECTIONS(DUMP_SECTION_ROW)
#undef DUMP_SECTION_ROW
};

bool dump_json_extras(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		      av_error *err)
{
	write_heads(out, r, o);
	const dump_extras *x = o->x;
	if (!x)
		return true;
	int side = r->n;
	if (x->compare && x->compare->n > side)
		side = x->compare->n;
	float *buf = malloc((size_t)side * (size_t)side * sizeof *buf);
	if (!buf)
		return av_fail(err, _("out of memory for the dump of %d tokens"), r->n);
	bool ok = true;
	for (size_t i = 0; ok && i < sizeof sections / sizeof sections[0]; i++)
		if (sections[i]->present(x))
			ok = sections[i]->json(out, m, r, o, buf, err);
	free(buf);
	return ok;
}

dump_tsv_fn dump_tsv_table(const dump_extras *x)
{
	for (size_t i = 0; x && i < sizeof sections / sizeof sections[0]; i++)
		if (sections[i]->tsv && sections[i]->present(x))
			return sections[i]->tsv;
	return NULL;
}

void dump_contributions(float *out, const attn_matrix *a, const float *value_norms)
{
	for (int i = 0; i < a->n; i++)
		for (int j = 0; j < a->n; j++)
			out[(size_t)i * (size_t)a->n + (size_t)j] =
			    attn_masked(a, i, j) ? 0.0f : attn_at(a, i, j) * value_norms[j];
}

static bool has_breakdown(const dump_extras *x)
{
	return x->breakdown != NULL;
}
const dump_section dump_section_breakdown = {
    .key = "breakdown", .present = has_breakdown, .json = write_breakdown, .tsv = NULL};

static bool has_contributions(const dump_extras *x)
{
	return x->value_norms != NULL;
}
const dump_section dump_section_contributions = {
    .key = "contributions", .present = has_contributions, .json = write_contributions, .tsv = NULL};

static bool has_aggregates(const dump_extras *x)
{
	return x->aggregates;
}
const dump_section dump_section_aggregates = {
    .key = "aggregates", .present = has_aggregates, .json = write_aggregates, .tsv = NULL};

static bool has_rollout(const dump_extras *x)
{
	return x->rollout;
}
const dump_section dump_section_rollout = {
    .key = "rollout", .present = has_rollout, .json = write_rollout, .tsv = NULL};

static bool has_words(const dump_extras *x)
{
	return x->words != NULL;
}
const dump_section dump_section_words = {
    .key = "words", .present = has_words, .json = write_words, .tsv = NULL};

static bool has_compare(const dump_extras *x)
{
	return x->compare != NULL;
}
const dump_section dump_section_compare = {
    .key = "compare", .present = has_compare, .json = write_compare, .tsv = NULL};

static bool has_ablation(const dump_extras *x)
{
	return x->ablate != NULL;
}
const dump_section dump_section_ablation = {
    .key = "ablation", .present = has_ablation, .json = write_ablation, .tsv = NULL};

static bool has_generated(const dump_extras *x)
{
	return x->generated;
}
const dump_section dump_section_generated = {
    .key = "generated", .present = has_generated, .json = write_generated, .tsv = NULL};
