/* The matrix on the map (matrix.h). */
#include "matrix.h"
#include "attnview/i18n.h"

#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sel_kind view_sel(const view *v)
{
	int H = nheads(v);
	return v->head < H ? SEL_HEAD : (sel_kind)(SEL_FIRST_SUMMARY + (v->head - H));
}

sel_kind view_map_kind(const view *v)
{
	sel_kind k = view_sel(v);
	return k == SEL_HEAD && v->contrib && v->have && v->r.value_norms ? SEL_CONTRIB : k;
}

void sel_describe(const view *v, char *out, size_t size)
{
	switch (view_sel(v)) {
	case SEL_MEAN:
		snprintf(out, size, _("mean of heads 0-%d"), nheads(v) - 1);
		break;
	case SEL_MAX:
		snprintf(out, size, _("max of heads 0-%d"), nheads(v) - 1);
		break;
	case SEL_ROLLOUT:
		snprintf(out, size, _("rollout through layer %d"), v->layer);
		break;
	case SEL_ALL:
		snprintf(out, size, _("mean of all %d heads"), nheads(v) * nlayers(v));
		break;
	case SEL_HEAD:
	default:
		snprintf(out, size, _("head %d%s%s"), v->head,
			 v->topts.ablate[v->layer * nheads(v) + v->head] ? _(" (off)") : "",
			 v->contrib ? _(", contributions") : "");
		break;
	}
}

void pin_clear(pin *p)
{
	free(p->w);
	free(p->labels);
	free(p->text_buf);
	memset(p, 0, sizeof *p);
}

void view_matrix_invalidate(view *v)
{
	v->mat_valid = false;
}

/* Scratch of n x n floats (twice: one for the selection, one for what is
 * made of it). */
static bool scratch(view *v, int n)
{
	size_t need = (size_t)n * (size_t)n;
	if (need <= v->mat_cap)
		return true;
	float *a = realloc(v->mat, need * sizeof *a), *b = a ? realloc(v->mat2, need * sizeof *b) : NULL;
	if (a)
		v->mat = a;
	if (b)
		v->mat2 = b;
	if (!a || !b) {
		set_notice(v, _("out of memory for the %dx%d matrix on the map"), n, n);
		return false;
	}
	v->mat_cap = need;
	return true;
}

/* The selection's matrix: a head of the result, or one made in v->mat
 * (the rollout of every layer is kept for the result: v->sel). */
static bool selection(view *v, attn_matrix *a)
{
	sel_kind k = view_map_kind(v);
	if (k == SEL_HEAD) {
		*a = view_head(v);
		return true;
	}
	if (v->sel_seq != v->res_seq)
		sel_cache_forget(&v->sel);
	v->sel_seq = v->res_seq;
	av_error err;
	*a = (attn_matrix){v->mat, v->r.n, v->r.causal};
	if (!sel_matrix(v->mat, &v->r, k, v->layer, v->head < nheads(v) ? v->head : 0, &v->sel,
			&err)) {
		set_notice(v, "%s", err.msg);
		return false;
	}
	return true;
}

/* Word view: words of the result's tokens, their labels in v->wtext. */
static bool make_words(view *v)
{
	int n = v->r.n;
	v->nw = words_split(v->wspan, v->r.tokens, n);
	if (v->has_marks && n == v->ntok) {
		/* The marks split further: a word also starts after each '|'. */
		memcpy(v->wstart, v->wmarks, (size_t)n * sizeof *v->wstart);
		for (int i = 0; i < v->nw; i++)
			v->wstart[v->wspan[i].start] = true;
		v->nw = words_from_marks(v->wspan, v->wstart, n);
	}
	size_t used = 0;
	for (int i = 0; i < v->nw; i++) {
		heat_label *l = &v->labels[i];
		l->text = v->wtext + used;
		l->cp = 0;
		l->width = 0;
		l->unknown = false;
		/* Trailing spaces belong to the word but are not shown. */
		int end = v->wspan[i].end;
		while (end > v->wspan[i].start + 1 && v->r.tokens[end - 1].cp == ' ')
			end--;
		for (int t = v->wspan[i].start; t < end; t++) {
			const token *tk = &v->r.tokens[t];
			char g[32];
			size_t len = cp_glyph(tk->cp, g);
			if (used + len + 1 > v->wtext_cap)
				break;
			memcpy(v->wtext + used, g, len);
			used += len;
			l->width += tk->width;
			l->unknown |= tk->unknown;
		}
		v->wtext[used++] = '\0';
	}
	return true;
}

static int widest(const heat_label *l, int n)
{
	int w = 2;
	for (int i = 0; i < n; i++)
		w = l[i].width > w ? l[i].width : w;
	return w;
}

bool view_matrix(view *v, heat_src *out)
{
	if (!v->have)
		return false;
	if (v->mat_valid && v->mat_seq == v->res_seq && v->mat_layer == v->layer &&
	    v->mat_head == v->head && v->mat_words == v->words && v->mat_pin == v->pin.on &&
	    v->mat_contrib == v->contrib) {
		*out = v->mat_src;
		scale_init(&out->sc, out->diverging ? SCALE_DIFF : v->scale, &out->m, v->row_max);
		return true;
	}
	int n = v->r.n;
	attn_matrix a;
	if (!scratch(v, n) || !selection(v, &a))
		return false;
	heat_src s = {a, v->labels, 2, {0}, false};
	if (v->words) {
		make_words(v);
		words_aggregate(v->mat2, &a, v->wspan, v->nw);
		memcpy(v->mat, v->mat2, (size_t)v->nw * (size_t)v->nw * sizeof *v->mat);
		s.m = (attn_matrix){v->mat, v->nw, a.causal};
		s.label_w = widest(v->labels, v->nw);
	} else {
		heat_token_labels(v->labels, v->r.tokens, n);
	}
	if (v->pin.on) {
		int m = s.m.n < v->pin.n ? s.m.n : v->pin.n;
		attn_matrix p = {v->pin.w, v->pin.n, v->pin.causal};
		matrix_difference(v->mat2, &s.m, &p, m);
		s.m = (attn_matrix){v->mat2, m, s.m.causal || v->pin.causal};
		s.diverging = true;
	}
	v->mat_src = s;
	v->mat_valid = true;
	v->mat_gen++;
	v->mat_seq = v->res_seq;
	v->mat_layer = v->layer;
	v->mat_head = v->head;
	v->mat_words = v->words;
	v->mat_pin = v->pin.on;
	v->mat_contrib = v->contrib;
	*out = s;
	scale_init(&out->sc, s.diverging ? SCALE_DIFF : v->scale, &out->m, v->row_max);
	return true;
}

bool view_compare_cell(view *v, int q, int k, float *now, float *pinned)
{
	if (!v->pin.on || !v->mat_valid || q >= v->pin.n || k >= v->pin.n)
		return false;
	*pinned = v->pin.w[(size_t)q * (size_t)v->pin.n + (size_t)k];
	*now = *pinned + v->mat2[(size_t)q * (size_t)v->mat_src.m.n + (size_t)k];
	return true;
}

bool view_word_span(const view *v, int i, int *start, int *end)
{
	if (!v->words || i < 0 || i >= v->nw)
		return false;
	*start = v->wspan[i].start;
	*end = v->wspan[i].end;
	return true;
}

int view_n(view *v)
{
	heat_src s;
	return view_matrix(v, &s) ? s.m.n : 0;
}

int view_query_token(const view *v, int q)
{
	int start, end;
	return view_word_span(v, q, &start, &end) ? start : q;
}
