/* The score split by source as a figure (figure.h, figure_score_split): a
 * matrix of the terms, query-side parts down the left, key-side parts
 * across, on a diverging scale. */
#include "attnview/figure.h"
#include "attnview/i18n.h"

#include "attnview/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

figure *figure_score_split(const model *m, const score_split *s, const attn_result *r,
			   const fig_request *q, av_error *err)
{
	const int P = s->nparts;
	float *w = malloc((size_t)P * P * sizeof *w);
	fig_label *labels = calloc((size_t)P, sizeof *labels);
	char(*names)[32] = calloc((size_t)P, sizeof *names);
	figure *f = w && labels && names ? figure_create(1, 1, err) : NULL;
	if (!w || !labels || !names)
		av_fail(err, _("out of memory for a figure"));
	bool ok = f != NULL;
	for (int i = 0; ok && i < P * P; i++)
		w[i] = (float)s->terms[i];
	for (int i = 0; ok && i < P; i++) {
		split_part_name(m, s->layer, i, names[i], sizeof names[i]);
		labels[i].text = names[i];
	}
	const attn_matrix a = {w, P, false, 0};
	ok = ok && figure_set_tile(f, 0, &a, labels, SCALE_DIFF, RAMP_DIVERGING, NULL, err);
	if (ok) {
		char title[256], sub[512], gq[32], gk[32];
		cp_glyph(r->tokens[s->query].cp, gq);
		cp_glyph(r->tokens[s->key].cp, gk);
		snprintf(f->tiles[0].unit, sizeof f->tiles[0].unit, "term");
		snprintf(title, sizeof title,
			 "Score by source: layer %d, head %d, query %d %s, key %d %s, q·k %.3f",
			 s->layer, s->head, s->query, gq, s->key, gk, (double)s->score);
		snprintf(sub, sizeof sub, "%s, query-side part x key-side part, summing to q·k: %s",
			 q->model_name ? q->model_name : "model", q->text ? q->text : "");
		f->values = q->values;
		ok = figure_set_titles(f, q->title ? q->title : title, sub, err);
	}
	free(w);
	free(labels);
	free(names);
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	return f;
}
