/* The dump's "score_split" section (dump.h, dump_extras; attnview(1), DUMP
 * FORMATS), JSON and TSV. */
#include "dump_explain.h"

#include "json_out.h"

static bool json_split(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		       float *buf, av_error *err)
{
	const score_split *s = o->x->split;
	const int P = s->nparts;
	char a[32], b[32];
	fprintf(out,
		",\n  \"score_split\": {\"layer\": %d, \"head\": %d, \"query\": %d, \"key\": %d, "
		"\"score\": %.9g,\n    \"terms\": [",
		s->layer, s->head, s->query, s->key, (double)s->score);
	for (int i = 0; i < P * P; i++) {
		split_part_name(m, s->layer, i / P, a, sizeof a);
		split_part_name(m, s->layer, i % P, b, sizeof b);
		fprintf(out,
			"%s\n      {\"query_part\": \"%s\", \"key_part\": \"%s\", \"value\": %.9g}",
			i ? "," : "", a, b, s->terms[i]);
	}
	fputs("\n    ]}", out);
	return true;
}

static void tsv_split(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const score_split *s = o->x->split;
	const int P = s->nparts;
	char a[32], b[32];
	fputs("query_part\tkey_part\tvalue\n", out);
	for (int i = 0; i < P * P; i++) {
		split_part_name(m, s->layer, i / P, a, sizeof a);
		split_part_name(m, s->layer, i % P, b, sizeof b);
		fprintf(out, "%s\t%s\t%.9g\n", a, b, s->terms[i]);
	}
}

static bool has_score_split(const dump_extras *x)
{
	return x->split != NULL;
}
const dump_section dump_section_score_split = {
    .key = "score_split", .present = has_score_split, .json = json_split, .tsv = tsv_split};
