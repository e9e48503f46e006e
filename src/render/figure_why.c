/* The tables of why the model predicts what it does, as figures (figure.h): the logit lens, the direct logit
 * attribution and activation patching, each a table of blocks or heads
 * down the left and the text's positions across (figure_set_table). */
#include "attnview/figure.h"
#include "attnview/i18n.h"

#include "attnview/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Row labels "L0".. (heads false) or "L0H0".. (true), and the text's
 * tokens as column labels, then `extra` columns named "all" (after the
 * positions, so that a column's number is its position). */
typedef struct why_labels {
	fig_label *rows, *cols;
	char (*names)[32];
} why_labels;

static bool labels_make(why_labels *wl, const attn_result *r, bool heads, int extra)
{
	const int nr = heads ? r->layers * r->heads : r->layers;
	wl->rows = calloc((size_t)nr, sizeof *wl->rows);
	wl->cols = calloc((size_t)(r->n + extra), sizeof *wl->cols);
	wl->names = calloc((size_t)nr, sizeof *wl->names);
	if (!wl->rows || !wl->cols || !wl->names)
		return false;
	for (int i = 0; i < nr; i++) {
		if (heads)
			snprintf(wl->names[i], sizeof wl->names[i], "L%dH%d", i / r->heads,
				 i % r->heads);
		else
			snprintf(wl->names[i], sizeof wl->names[i], "L%d", i);
		wl->rows[i].text = wl->names[i];
	}
	for (int t = 0; t < r->n; t++) {
		wl->cols[t].cp = r->tokens[t].cp;
		wl->cols[t].unknown = r->tokens[t].unknown;
	}
	for (int k = 0; k < extra; k++)
		wl->cols[r->n + k].text = "all";
	return true;
}

static void labels_finish(why_labels *wl)
{
	free(wl->rows);
	free(wl->cols);
	free(wl->names);
}

/* The table w (rows, cols) as a one-tile figure with its titles. */
static figure *table_figure(const attn_result *r, const float *w, bool heads, int extra,
			    const char *col_axis, scale_kind kind, const char *unit,
			    const char *title, const fig_request *q, av_error *err)
{
	why_labels wl = {0};
	const int nr = heads ? r->layers * r->heads : r->layers;
	figure *f = NULL;
	if (!labels_make(&wl, r, heads, extra))
		av_fail(err, _("out of memory for a figure"));
	else
		f = figure_create(1, 1, err);
	bool ok = f && figure_set_table(f, w, nr, r->n + extra, wl.rows, wl.cols,
					heads ? "head" : "block", col_axis, kind,
					kind == SCALE_DIFF ? RAMP_DIVERGING : q->ramp, err);
	if (ok) {
		char sub[512];
		snprintf(f->tiles[0].unit, sizeof f->tiles[0].unit, "%s", unit);
		snprintf(sub, sizeof sub, "%s: %s", q->model_name ? q->model_name : "model",
			 q->text ? q->text : "");
		f->values = q->values;
		ok = figure_set_titles(f, q->title ? q->title : title, sub, err);
	}
	labels_finish(&wl);
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	return f;
}

figure *figure_lens(const attn_result *r, const float *p, const fig_request *q, av_error *err)
{
	return table_figure(r, p, false, 0, "position", SCALE_FIXED, "p",
			    "Logit lens: p of the model's prediction after each block", q, err);
}

figure *figure_dla(const attn_result *r, const float *heads, const fig_request *q, av_error *err)
{
	const int LH = r->layers * r->heads, n = r->n;
	float *w = malloc((size_t)LH * n * sizeof *w);
	if (!w) {
		av_fail(err, _("out of memory for a figure"));
		return NULL;
	}
	for (int k = 0; k < LH; k++)
		for (int t = 0; t < n; t++)
			w[(size_t)k * n + t] = heads[(size_t)t * LH + k];
	figure *f =
	    table_figure(r, w, true, 0, "position", SCALE_DIFF, "logit",
			 "Direct logit attribution: each head's part of the top-1's logit", q, err);
	free(w);
	return f;
}

figure *figure_faith(const attn_result *r, const float *spearman, const fig_request *q,
		     av_error *err)
{
	const int LH = r->layers * r->heads, n = r->n;
	float *w = malloc((size_t)LH * n * sizeof *w);
	if (!w) {
		av_fail(err, _("out of memory for a figure"));
		return NULL;
	}
	for (int k = 0; k < LH; k++)
		for (int t = 0; t < n; t++)
			w[(size_t)k * n + t] = spearman[(size_t)t * LH + k];
	figure *f = table_figure(r, w, true, 0, "query position", SCALE_DIFF, "Spearman",
				 "Faithfulness: each head's rank correlation of its attention "
				 "with what blanking each key does to the loss",
				 q, err);
	free(w);
	return f;
}

figure *figure_patch(const model *m, const attn_result *r, const patch_result *p,
		     const fig_request *q, av_error *err)
{
	const int LH = p->L * p->H, n = p->n, nk = n + 1;
	float *w = malloc((size_t)LH * nk * sizeof *w);
	if (!w) {
		av_fail(err, _("out of memory for a figure"));
		return NULL;
	}
	for (int k = 0; k < LH; k++) {
		for (int t = 0; t < n; t++)
			w[(size_t)k * nk + t] = p->cells[(size_t)t * LH + k];
		w[(size_t)k * nk + n] = p->heads[k];
	}
	char a[32], b[32], title[256];
	cp_glyph(m->vocab.cps[p->target[0]], a);
	cp_glyph(m->vocab.cps[p->target[1]], b);
	snprintf(title, sizeof title,
		 "Patching %s into the text: change of z(%s) - z(%s) = %.3f at position %d",
		 q->text2 ? q->text2 : "the other text", a, b, (double)p->diff, p->pos);
	figure *f =
	    table_figure(r, w, true, 1, "patched position", SCALE_DIFF, "change", title, q, err);
	free(w);
	return f;
}
