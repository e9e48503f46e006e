/* The dump's "circuits" section (dump.h, dump_extras; attnview(1), DUMP
 * FORMATS), JSON and TSV: every head shown (--layer, --head), from the
 * weights alone. */
#include "dump_explain.h"

#include "json_out.h"

#include "attnview/tokenizer.h"

static bool shown(const dump_options *o, int l, int h)
{
	return (o->layer < 0 || o->layer == l) && (o->head < 0 || o->head == h);
}

static void json_char(FILE *out, const model *m, const char *key, int32_t id)
{
	fprintf(out, "\"%s\": %d, \"%s_char\": ", key, id, key);
	json_cp(out, m->vocab.cps[id]);
}

/* [[per head] per earlier block] of one composition kind. */
static void json_comp(FILE *out, const circuits *c, const float *v, int l)
{
	fputc('[', out);
	for (int k = 0; k < l; k++) {
		fputs(k ? ", " : "", out);
		json_floats(out, v + (size_t)k * c->heads, c->heads);
	}
	fputc(']', out);
}

static void json_head(FILE *out, const model *m, const circuits *c, int l, int h)
{
	const circ_head *ch = &c->head[l * c->heads + h];
	fprintf(out, "\n    {\"layer\": %d, \"head\": %d, \"positional\": [", l, h);
	for (int i = 0; i < c->noffsets; i++) {
		fprintf(out, "%s{\"offset\": %d, \"score\": ", i ? ", " : "", c->offset0 + i);
		json_float(out, ch->positional[i]);
		fputc('}', out);
	}
	fprintf(out, "],\n     \"peak\": %d, \"qk\": [", circuits_peak(c, l, h));
	for (int i = 0; i < c->nqk; i++) {
		fputs(i ? ", " : "", out);
		json_floats(out, ch->qk[i], c->nqk);
	}
	fputs("], \"ov_copying\": ", out);
	json_float(out, ch->ov_copying);
	fputs(", \"top_maps\": [", out);
	for (int i = 0; i < ch->nmaps; i++) {
		fputs(i ? ", {" : "{", out);
		json_char(out, m, "from", ch->maps[i].from);
		fputs(", ", out);
		json_char(out, m, "to", ch->maps[i].to);
		fputs(", \"value\": ", out);
		json_float(out, ch->maps[i].value);
		fputc('}', out);
	}
	fputs("],\n     \"composition\": {\"baseline\": ", out);
	json_float(out, c->baseline);
	const float *kinds[3] = {ch->comp_q, ch->comp_k, ch->comp_v};
	for (int k = 0; k < 3; k++) {
		fprintf(out, ", \"%c\": ", "qkv"[k]);
		json_comp(out, c, kinds[k], l);
	}
	fputs("}}", out);
}

static bool json_circuits(FILE *out, const model *m, const attn_result *r, const dump_options *o,
			  float *buf, av_error *err)
{
	const circuits *c = o->x->circuits;
	bool first = true;
	fputs(",\n  \"circuits_qk_chars\": [", out);
	for (int i = 0; i < c->nqk; i++) {
		fputs(i ? ", " : "", out);
		json_cp(out, m->vocab.cps[c->qk_ids[i]]);
	}
	fputs("],\n  \"circuits\": [", out);
	for (int l = 0; l < c->layers; l++)
		for (int h = 0; h < c->heads; h++)
			if (shown(o, l, h)) {
				fputs(first ? "" : ",", out);
				json_head(out, m, c, l, h);
				first = false;
			}
	fputs("\n  ]", out);
	(void)r;
	return true;
}

/* The largest of a composition kind's scores, and its writer. */
static float comp_max(const circuits *c, const float *v, int l, int *writer)
{
	float best = 0;
	*writer = -1;
	for (int k = 0; k < l * c->heads; k++)
		if (*writer < 0 || v[k] > best) {
			best = v[k];
			*writer = k;
		}
	return best;
}

static void tsv_circuits(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const circuits *c = o->x->circuits;
	char g[32];
	fputs("layer\thead\tpeak\tov_copying\tmap_from\tmap_to\tmap_value\tbaseline", out);
	for (int k = 0; k < 3; k++)
		fprintf(out, "\t%c_max\t%c_writer", "qkv"[k], "qkv"[k]);
	for (int i = 0; i < c->noffsets; i++)
		fprintf(out, "\t%d", c->offset0 + i);
	fputc('\n', out);
	for (int l = 0; l < c->layers; l++)
		for (int h = 0; h < c->heads; h++) {
			if (!shown(o, l, h))
				continue;
			const circ_head *ch = &c->head[l * c->heads + h];
			fprintf(out, "%d\t%d\t%d\t%.9g", l, h, circuits_peak(c, l, h),
				(double)ch->ov_copying);
			for (int k = 0; k < 2; k++) {
				cp_glyph(m->vocab.cps[k ? ch->maps[0].to : ch->maps[0].from], g);
				fprintf(out, "\t%s", ch->nmaps ? g : "");
			}
			fprintf(out, "\t%.9g\t%.9g", ch->nmaps ? (double)ch->maps[0].value : 0.0,
				(double)c->baseline);
			const float *kinds[3] = {ch->comp_q, ch->comp_k, ch->comp_v};
			for (int k = 0; k < 3; k++) {
				int w;
				float v = comp_max(c, kinds[k], l, &w);
				if (w < 0)
					fputs("\t\t", out);
				else
					fprintf(out, "\t%.9g\tL%dH%d", (double)v, w / c->heads,
						w % c->heads);
			}
			for (int i = 0; i < c->noffsets; i++)
				fprintf(out, "\t%.9g", (double)ch->positional[i]);
			fputc('\n', out);
		}
	(void)r;
}

static bool has_circuits(const dump_extras *x)
{
	return x->circuits != NULL;
}
const dump_section dump_section_circuits = {
    .key = "circuits", .present = has_circuits, .json = json_circuits, .tsv = tsv_circuits};
