/* The dump's "patching" section (dump.h, dump_extras; attnview(1), DUMP
 * FORMATS), JSON and TSV. */
#include "dump_explain.h"

#include "json_out.h"

#include "attnview/tokenizer.h"

static bool json_patch(FILE *out, const model *m, const attn_result *r, const dump_options *o,
		       float *buf, av_error *err)
{
	const patch_result *p = o->x->patching;
	const int H = p->H, LH = p->L * p->H;
	fprintf(out, ",\n  \"patching\": {\n    \"position\": %d, \"targets\": [%d, %d], ", p->pos,
		p->target[0], p->target[1]);
	fputs("\"chars\": [", out);
	json_cp(out, m->vocab.cps[p->target[0]]);
	fputs(", ", out);
	json_cp(out, m->vocab.cps[p->target[1]]);
	fprintf(out,
		"], \"targets_from\": \"%s\",\n    \"diff\": ", patch_targets_from_name(p->from));
	json_float(out, p->diff);
	fputs(", \"diff_other\": ", out);
	json_float(out, p->diff2);
	fputs(",\n    \"heads\": [", out);
	for (int l = 0; l < p->L; l++) {
		fputs(l ? ", " : "", out);
		json_floats(out, p->heads + (size_t)l * H, H);
	}
	fputs("],\n    \"positions\": [", out);
	for (int t = 0; t < p->n; t++) {
		fputs(t ? ",\n      [" : "\n      [", out);
		for (int l = 0; l < p->L; l++) {
			fputs(l ? ", " : "", out);
			json_floats(out, p->cells + (size_t)t * LH + (size_t)l * H, H);
		}
		fputc(']', out);
	}
	fputs("\n    ]\n  }", out);
	(void)r;
	return true;
}

static void tsv_row(FILE *out, int l, int h, const char *pos, const char *g, float v)
{
	fprintf(out, "%d\t%d\t%s\t%s\t%.9g\n", l, h, pos, g, (double)v);
}

static void tsv_patch(FILE *out, const model *m, const attn_result *r, const dump_options *o)
{
	const patch_result *p = o->x->patching;
	const int H = p->H, LH = p->L * p->H;
	char g[32], num[16];
	(void)m;
	fputs("layer\thead\tposition\tchar\tchange\n", out);
	for (int l = 0; l < p->L; l++)
		for (int h = 0; h < H; h++) {
			tsv_row(out, l, h, "all", "", p->heads[l * H + h]);
			for (int t = 0; t < p->n; t++) {
				cp_glyph(r->tokens[t].cp, g);
				snprintf(num, sizeof num, "%d", t);
				tsv_row(out, l, h, num, g, p->cells[(size_t)t * LH + l * H + h]);
			}
		}
}

static bool has_patching(const dump_extras *x)
{
	return x->patching != NULL;
}
const dump_section dump_section_patching = {
    .key = "patching", .present = has_patching, .json = json_patch, .tsv = tsv_patch};
