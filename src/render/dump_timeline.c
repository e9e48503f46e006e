/* attnview --dump --timeline: the training timeline of a model (timeline.h;
 * attnview(1), DUMP FORMATS), JSON or TSV. The scores are named as the
 * "heads" of --dump name them (role_score_key). */
#include "attnview/dump.h"
#include "attnview/i18n.h"
#include "attnview/timeline.h"

#include "json_out.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static bool shown(int want, int i)
{
	return want < 0 || want == i;
}

/* n codepoints as one JSON string. */
static void json_cps(FILE *out, const uint32_t *cps, uint32_t n)
{
	fputc('"', out);
	for (uint32_t i = 0; i < n; i++) {
		char u[4];
		size_t k = cp_to_utf8(cps[i], u);
		json_string_body(out, u, k);
	}
	fputc('"', out);
}

static void json_head(FILE *out, const timeline *tl, size_t r, int l, int h)
{
	const float *v = timeline_head(tl, r, l, h);
	fprintf(out, "{\"layer\": %d, \"head\": %d, \"scores\": {", l, h);
	for (int k = 0; k < (int)tl->nvalues; k++) {
		fprintf(out, "%s\"%s\": ", k ? ", " : "", role_score_key((role_kind)k));
		json_float(out, v[k]);
	}
	/* The labeller's word on the recorded scores, as the timeline screen
	 * shows it. */
	role_scores rs;
	timeline_head_roles(tl, r, l, h, &rs);
	char label[160];
	role_label(&rs, false, label, sizeof label);
	fprintf(out, "}, \"role\": \"%s\", \"label\": ", role_name(rs.role));
	json_string(out, label, strlen(label));
	fputc('}', out);
}

static void json_header(FILE *out, const model *m, const timeline *tl)
{
	fputs("{\n  \"model\": {\"name\": ", out);
	const char *name = m->meta.name ? m->meta.name : "";
	json_string(out, name, strlen(name));
	fprintf(out, ", \"objective\": \"%s\", \"layers\": %u, \"heads\": %u, \"steps\": %llu},\n",
		objective_name((objective)m->cfg.objective), m->cfg.layers, m->cfg.heads,
		(unsigned long long)m->meta.steps);
	/* Version 1's scores are shares of weight, version 2's of rows. */
	fprintf(out, "  \"version\": %u,\n", tl->version);
	fprintf(out, "  \"every\": %llu,\n  \"probe\": [", (unsigned long long)tl->every);
	for (uint32_t w = 0; w < tl->windows; w++) {
		fputs(w ? ", " : "", out);
		json_cps(out, tl->probe + (size_t)w * tl->n, tl->n);
	}
	fputs("],\n  \"repeated_probe\": ", out);
	json_cps(out, tl->repeated, tl->n);
	int head;
	long pc = timeline_phase_change(tl, &head);
	if (pc < 0)
		fputs(",\n  \"phase_change\": null", out);
	else
		fprintf(out,
			",\n  \"phase_change\": {\"step\": %llu, \"record\": %ld, \"layer\": %d, "
			"\"head\": %d}",
			(unsigned long long)tl->step[pc], pc, head / (int)tl->heads,
			head % (int)tl->heads);
}

static void write_json(FILE *out, const model *m, const timeline *tl, const dump_options *o)
{
	json_header(out, m, tl);
	fputs(",\n  \"timeline\": [", out);
	for (size_t r = 0; r < tl->count; r++) {
		fprintf(out, "%s\n    {\"step\": %llu, \"loss\": ", r ? "," : "",
			(unsigned long long)tl->step[r]);
		json_float(out, tl->loss[r]);
		fputs(", \"val_loss\": ", out);
		json_float(out, tl->probe_loss[r]);
		fputs(", \"icl\": ", out);
		json_float(out, tl->icl[r]);
		fputs(", \"heads\": [", out);
		bool first = true;
		for (int l = 0; l < (int)tl->layers; l++)
			for (int h = 0; h < (int)tl->heads; h++) {
				if (!shown(o->layer, l) || !shown(o->head, h))
					continue;
				fputs(first ? "\n      " : ",\n      ", out);
				json_head(out, tl, r, l, h);
				first = false;
			}
		fputs("]}", out);
	}
	fputs("\n  ]\n}\n", out);
}

static void tsv_float(FILE *out, float x)
{
	if (isfinite(x))
		fprintf(out, "%.9g", (double)x);
	else
		fputs("nan", out);
}

/* A row per record and head shown. */
static void write_tsv(FILE *out, const timeline *tl, const dump_options *o)
{
	fputs("step\tloss\tval_loss\ticl\tlayer\thead", out);
	for (int k = 0; k < (int)tl->nvalues; k++)
		fprintf(out, "\t%s", role_score_key((role_kind)k));
	fputs("\trole", out);
	fputc('\n', out);
	for (size_t r = 0; r < tl->count; r++)
		for (int l = 0; l < (int)tl->layers; l++)
			for (int h = 0; h < (int)tl->heads; h++) {
				if (!shown(o->layer, l) || !shown(o->head, h))
					continue;
				fprintf(out, "%llu\t", (unsigned long long)tl->step[r]);
				tsv_float(out, tl->loss[r]);
				fputc('\t', out);
				tsv_float(out, tl->probe_loss[r]);
				fputc('\t', out);
				tsv_float(out, tl->icl[r]);
				fprintf(out, "\t%d\t%d", l, h);
				const float *v = timeline_head(tl, r, l, h);
				for (int k = 0; k < (int)tl->nvalues; k++) {
					fputc('\t', out);
					tsv_float(out, v[k]);
				}
				role_scores rs;
				timeline_head_roles(tl, r, l, h, &rs);
				fprintf(out, "\t%s\n", role_name(rs.role));
			}
}

bool dump_timeline(FILE *out, const model *m, const char *what, const dump_options *o,
		   av_error *err)
{
	const timeline *tl = m->timeline;
	if (!tl)
		return av_fail(err,
			       _("%s has no training timeline: it was trained before "
				 "attnview recorded one, or with --timeline-every 0; train it "
				 "again to have one"),
			       AV_Q(what));
	if (o->format == DUMP_TSV)
		write_tsv(out, tl, o);
	else
		write_json(out, m, tl, o);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? av_fail_errno(err, errno, _("writing the dump failed"))
			     : av_fail(err, _("writing the dump failed"));
	return true;
}
