/* Figures from a result (figure.h, figure_from_result): the matrix the view
 * would show for a request (a head, an aggregate, the rollout, words, a
 * difference from another text), its labels and its titles. */
#include "attnview/figure.h"
#include "attnview/i18n.h"

#include "attnview/tokenizer.h"
#include "figure_draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX_COLS 48 /* the text quoted in a subtitle */

/* ---- figures from a result ------------------------------------------------------ */

int fig_words(word_span *out, char **labels, bool *unknown, const token *tok, int n,
	      const bool *marks)
{
	int nw = words_split(out, tok, n);
	if (marks) {
		/* The marks split further: a word also starts where one is. */
		bool *start = malloc((size_t)n * sizeof *start);
		if (!start)
			return -1;
		memcpy(start, marks, (size_t)n * sizeof *start);
		for (int i = 0; i < nw; i++)
			start[out[i].start] = true;
		nw = words_from_marks(out, start, n);
		free(start);
	}
	for (int i = 0; i < nw; i++) {
		/* Trailing spaces belong to the word but are not shown. */
		int end = out[i].end;
		while (end > out[i].start + 1 && tok[end - 1].cp == ' ')
			end--;
		labels[i] = malloc((size_t)(end - out[i].start) * 32 + 1);
		if (!labels[i]) {
			while (i--)
				free(labels[i]);
			return -1;
		}
		size_t used = 0;
		unknown[i] = false;
		for (int t = out[i].start; t < end; t++) {
			used += cp_glyph(tok[t].cp, labels[i] + used);
			unknown[i] |= tok[t].unknown;
		}
		labels[i][used] = '\0';
	}
	return nw;
}

/* One side of a figure: the matrix a result gives for a request, with its
 * labels (characters or words). */
typedef struct fig_side {
	int n;
	bool causal;
	float *m;      /* (n, n) */
	char **labels; /* [n] */
	bool *unknown; /* [n] */
} fig_side;

static void side_finish(fig_side *s)
{
	if (s->labels)
		for (int i = 0; i < s->n; i++)
			free(s->labels[i]);
	free(s->labels);
	free(s->unknown);
	free(s->m);
	memset(s, 0, sizeof *s);
}

/* What the tiles of one figure share: the request, and a rollout made once
 * for each of its results. */
typedef struct fig_ctx {
	const attn_result *r;
	const fig_request *q;
	sel_cache ca, cb; /* of r, of q->compare */
	av_error *err;
} fig_ctx;

/* One side of tile: kind at layer/head of result r, with its labels. False
 * with *err set when sel_matrix fails, without when out of memory. */
static bool side_make(fig_side *s, const attn_result *r, const fig_request *q, sel_kind kind,
		      int layer, int head, const bool *marks, sel_cache *cache, av_error *err)
{
	int n = r->n;
	memset(s, 0, sizeof *s);
	s->n = n;
	s->causal = r->causal;
	s->m = malloc((size_t)n * (size_t)n * sizeof *s->m);
	s->labels = calloc((size_t)n, sizeof *s->labels);
	s->unknown = calloc((size_t)n, sizeof *s->unknown);
	if (!s->m || !s->labels || !s->unknown)
		return av_fail(err, _("out of memory for the figure of %d tokens"), r->n);
	if (!sel_matrix(s->m, r, kind, layer, head, cache, err))
		return false;
	if (!q->words) {
		for (int i = 0; i < n; i++) {
			char g[32];
			cp_glyph(r->tokens[i].cp, g);
			s->unknown[i] = r->tokens[i].unknown;
			if (!(s->labels[i] = strdup(g)))
				return av_fail(err, _("out of memory for the figure of %d tokens"),
					       r->n);
		}
		return true;
	}
	word_span *spans = malloc((size_t)n * sizeof *spans);
	float *wm = malloc((size_t)n * (size_t)n * sizeof *wm);
	int nw = spans && wm ? fig_words(spans, s->labels, s->unknown, r->tokens, n, marks) : -1;
	if (nw >= 0) {
		attn_matrix a = {s->m, n, s->causal, 0};
		words_aggregate(wm, &a, spans, nw);
		memcpy(s->m, wm, (size_t)nw * (size_t)nw * sizeof *wm);
		s->n = nw; /* the labels past nw are NULL */
	}
	free(spans);
	free(wm);
	return nw >= 0 || av_fail(err, _("out of memory for the figure of %d tokens"), r->n);
}

/* Tile i: kind at layer/head of the request's result, or its difference
 * from the compared one, with labels if `labelled`. *role gets the head role
 * of a character-level matrix of attention or of value contributions (NULL
 * otherwise). */
static bool make_tile(figure *f, int i, fig_ctx *x, sel_kind kind, int layer, int head,
		      bool labelled, role_scores *role)
{
	const attn_result *r = x->r;
	const fig_request *q = x->q;
	av_error *err = x->err;
	fig_side a, b = {0};
	bool ok = side_make(&a, r, q, kind, layer, head, q->marks, &x->ca, err) &&
		  (!q->compare || side_make(&b, q->compare, q, kind, layer, head, q->compare_marks,
					    &x->cb, err));
	fig_label *labels = ok ? calloc((size_t)a.n, sizeof *labels) : NULL;
	char **both = ok ? calloc((size_t)a.n, sizeof *both) : NULL;
	if (ok && (!labels || !both))
		ok = av_fail(err, _("out of memory for the figure of %d tokens"), r->n);
	if (!ok)
		goto out;
	attn_matrix m = {a.m, a.n, a.causal, 0};
	if (q->compare) {
		/* Now minus then, aligned by position; a label that differs
		 * shows both ("他/她"). */
		int n = a.n < b.n ? a.n : b.n;
		attn_matrix mb = {b.m, b.n, b.causal, 0};
		matrix_difference(a.m, &m, &mb, n);
		m = (attn_matrix){a.m, n, a.causal || b.causal, 0};
		for (int k = 0; k < n && ok; k++)
			if (strcmp(a.labels[k], b.labels[k]) != 0) {
				size_t la = strlen(a.labels[k]), lb = strlen(b.labels[k]);
				if (!(both[k] = malloc(la + lb + 2))) {
					ok = av_fail(err,
						     _("out of memory for the figure's labels"));
					break;
				}
				snprintf(both[k], la + lb + 2, "%s/%s", a.labels[k], b.labels[k]);
			}
	}
	for (int k = 0; k < m.n; k++)
		labels[k] = (fig_label){both[k] ? both[k] : a.labels[k], 0,
					a.unknown[k] || (q->compare && b.unknown[k])};
	if (role) {
		/* (of contributions: their own label, as the view's F11 map) */
		if (!q->words && !q->compare)
			head_roles(role, &m, r->tokens);
		else
			role->role = ROLE_NKINDS;
	}
	ok = ok && figure_set_tile(f, i, &m, labelled ? labels : NULL,
				   q->compare ? SCALE_DIFF : q->scale,
				   q->compare ? RAMP_DIVERGING : q->ramp, NULL, err);
out:
	if (both)
		for (int k = 0; k < a.n; k++)
			free(both[k]);
	free(both);
	free(labels);
	side_finish(&a);
	side_finish(&b);
	return ok;
}

/* The text for a subtitle: line breaks as ⏎, other controls as spaces, cut. */
static void quote_text(char *out, size_t size, const char *text)
{
	char tmp[TEXT_MAX_COLS * 8 + 8];
	size_t used = 0;
	int cols = 0;
	for (const char *p = text; *p && used + 8 < sizeof tmp && cols <= TEXT_MAX_COLS;) {
		uint32_t cp = fig_next_cp(&p);
		if (cp == '\n')
			cp = 0x23CE;
		else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
			cp = ' ';
		cols += cp_display_width(cp, NULL);
		used += cp_to_utf8(cp, tmp + used);
	}
	tmp[used] = '\0';
	char *cut = fig_dup_cut(tmp, TEXT_MAX_COLS);
	snprintf(out, size, "\"%s\"", cut ? cut : "");
	free(cut);
}

static void make_titles(char *title, char *sub, size_t size, const attn_result *r,
			const fig_request *q, const role_scores *role)
{
	int H = r->heads;
	switch (q->show) {
	case SEL_MEAN:
	case SEL_MAX:
		snprintf(title, size, "Layer %d, %s of heads 0–%d", q->layer, sel_name(q->show),
			 H - 1);
		break;
	case SEL_ROLLOUT:
		snprintf(title, size, "Attention rollout through layer %d", q->layer);
		break;
	case SEL_ALL:
		snprintf(title, size, "Mean of all %d heads", H * r->layers);
		break;
	case SEL_OVERVIEW:
		snprintf(title, size, "All heads: layers 0–%d × heads 0–%d", r->layers - 1, H - 1);
		break;
	case SEL_CONTRIB:
		snprintf(title, size, "Layer %d, head %d, value contributions", q->layer, q->head);
		break;
	case SEL_HEAD:
	case SEL_NKINDS:
	default:
		snprintf(title, size, "Layer %d, head %d", q->layer, q->head);
		break;
	}
	size_t at = strlen(title);
	if (q->words)
		at += (size_t)snprintf(title + at, size - at, ", words");
	if (q->compare)
		at += (size_t)snprintf(title + at, size - at, ", difference");
	if (role && role->role < ROLE_NKINDS) {
		char label[192];
		role_title(role, false, label, sizeof label);
		snprintf(title + at, size - at, " (%s)", label);
	}

	char t1[TEXT_MAX_COLS * 4 + 16] = "", t2[sizeof t1] = "";
	if (q->text)
		quote_text(t1, sizeof t1, q->text);
	if (q->text2)
		quote_text(t2, sizeof t2, q->text2);
	const char *mname = q->model_name ? q->model_name : "model";
	if (q->compare)
		snprintf(sub, size, "%s, %s minus %s, by position", mname, t1, t2);
	else
		snprintf(sub, size, "%s, %s scale (%s), %s: %s", mname, scale_name(q->scale),
			 scale_unit(q->scale),
			 colormap_ramp_name(scale_diverging(q->scale) ? RAMP_DIVERGING : q->ramp), t1);
}

figure *figure_from_result(const attn_result *r, const fig_request *q, av_error *err)
{
	bool grid = q->show == SEL_OVERVIEW;
	figure *f = figure_create(grid ? r->layers : 1, grid ? r->heads : 1, err);
	if (!f)
		return NULL;
	fig_ctx x = {r, q, {0}, {0}, err};
	role_scores role = {.role = ROLE_NKINDS};
	bool ok = true;
	if (grid) {
		for (int l = 0; l < r->layers && ok; l++)
			for (int h = 0; h < r->heads && ok; h++) {
				role_scores rs;
				char tt[224], label[192];
				ok = make_tile(f, l * r->heads + h, &x, SEL_HEAD, l, h, false, &rs);
				int at = snprintf(tt, sizeof tt, "L%d H%d", l, h);
				if (ok && rs.role < ROLE_NKINDS) {
					role_title(&rs, false, label, sizeof label);
					snprintf(tt + at, sizeof tt - (size_t)at, " %s", label);
				}
				snprintf(f->tiles[l * r->heads + h].title, sizeof f->tiles[0].title,
					 "%s", tt);
			}
	} else {
		ok = make_tile(f, 0, &x, q->show, q->layer, q->head, true, &role);
	}
	sel_cache_finish(&x.ca);
	sel_cache_finish(&x.cb);
	char title[256], sub[512];
	make_titles(title, sub, sizeof title, r, q, grid ? NULL : &role);
	if (ok)
		ok = figure_set_titles(f, q->title ? q->title : title, sub, err);
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	f->values = q->values && !grid;
	return f;
}
