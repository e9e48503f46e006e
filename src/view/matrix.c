/* What the map draws (matrix.h). */
#include "matrix.h"
#include "attnview/i18n.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pin_set(pin *p, const heat_src *s)
{
	int n = s->m.n;
	size_t text = 0;
	for (int i = 0; i < n; i++)
		text += s->labels[i].text ? strlen(s->labels[i].text) + 1 : 0;
	pin_clear(p);
	p->w = malloc((size_t)n * (size_t)n * sizeof *p->w);
	p->labels = malloc((size_t)n * sizeof *p->labels);
	p->text_buf = malloc(text + 1);
	if (!p->w || !p->labels || !p->text_buf) {
		pin_clear(p);
		return false;
	}
	attn_matrix_copy(p->w, &s->m);
	memcpy(p->labels, s->labels, (size_t)n * sizeof *p->labels);
	for (size_t i = 0, at = 0; i < (size_t)n; i++)
		if (s->labels[i].text) {
			size_t len = strlen(s->labels[i].text) + 1;
			memcpy(p->text_buf + at, s->labels[i].text, len);
			p->labels[i].text = p->text_buf + at;
			at += len;
		}
	p->n = n;
	p->causal = s->m.causal;
	p->on = true;
	return true;
}

void pin_clear(pin *p)
{
	free(p->w);
	free(p->labels);
	free(p->text_buf);
	free(p->ids);
	memset(p, 0, sizeof *p);
}

bool matrix_init(matrix_cache *mx, av_error *err)
{
	/* For the largest context any model may have: a model reloaded while
	 * the view runs may have a longer one. */
	const size_t cap = AV_MAX_CONTEXT + 1;
	memset(mx, 0, sizeof *mx);
	mx->labels = calloc(cap, sizeof *mx->labels);
	mx->wstart = calloc(cap, sizeof *mx->wstart);
	mx->wspan = calloc(cap, sizeof *mx->wspan);
	mx->wtext_cap = cap * 40;
	mx->wtext = malloc(mx->wtext_cap);
	if (!mx->labels || !mx->wstart || !mx->wspan || !mx->wtext) {
		matrix_finish(mx);
		return av_fail(err, _("out of memory starting the view"));
	}
	return true;
}

void matrix_finish(matrix_cache *mx)
{
	free(mx->labels);
	free(mx->wstart);
	free(mx->wspan);
	free(mx->wtext);
	free(mx->mat);
	free(mx->mat2);
	sel_cache_finish(&mx->sel);
	memset(mx, 0, sizeof *mx);
}

void matrix_forget(matrix_cache *mx)
{
	mx->valid = false;
}

/* Scratch of n x n floats (twice: one for the selection, one for what is
 * made of it). */
static bool scratch(matrix_cache *mx, int n, av_error *err)
{
	size_t need = (size_t)n * (size_t)n;
	if (need <= mx->mat_cap)
		return true;
	float *a = realloc(mx->mat, need * sizeof *a);
	if (a)
		mx->mat = a;
	float *b = a ? realloc(mx->mat2, need * sizeof *b) : NULL;
	if (b)
		mx->mat2 = b;
	if (!a || !b)
		return av_fail(err, _("out of memory for the %dx%d matrix on the map"), n, n);
	mx->mat_cap = need;
	return true;
}

/* The request's kind: a head of the result, or one made in mx->mat. */
static bool selection(matrix_cache *mx, const matrix_request *rq, attn_matrix *a, av_error *err)
{
	const attn_result *r = rq->r;
	if (rq->kind == SEL_HEAD) {
		*a = attn_result_head(r, rq->layer, rq->head);
		return true;
	}
	if (mx->sel_seq != rq->seq)
		sel_cache_forget(&mx->sel);
	mx->sel_seq = rq->seq;
	*a = (attn_matrix){mx->mat, r->n, r->causal, 0};
	return sel_matrix(mx->mat, r, rq->kind, rq->layer, rq->head, &mx->sel, err);
}

/* Word view: words of the result's tokens, their labels in mx->wtext. */
static void make_words(matrix_cache *mx, const attn_result *r, const bool *marks)
{
	int n = r->n;
	mx->nw = words_split(mx->wspan, r->tokens, n);
	if (marks) {
		/* The marks split further: a word also starts after each '|'. */
		memcpy(mx->wstart, marks, (size_t)n * sizeof *mx->wstart);
		for (int i = 0; i < mx->nw; i++)
			mx->wstart[mx->wspan[i].start] = true;
		mx->nw = words_from_marks(mx->wspan, mx->wstart, n);
	}
	size_t used = 0;
	for (int i = 0; i < mx->nw; i++) {
		heat_label *l = &mx->labels[i];
		*l = (heat_label){mx->wtext + used, 0, 0, false};
		/* Trailing spaces belong to the word but are not shown. */
		int end = mx->wspan[i].end;
		while (end > mx->wspan[i].start + 1 && r->tokens[end - 1].cp == ' ')
			end--;
		for (int t = mx->wspan[i].start; t < end; t++) {
			const token *tk = &r->tokens[t];
			char g[32];
			size_t len = cp_glyph(tk->cp, g);
			if (used + len + 1 > mx->wtext_cap)
				break;
			memcpy(mx->wtext + used, g, len);
			used += len;
			l->width += tk->width;
			l->unknown |= tk->unknown;
		}
		mx->wtext[used++] = '\0';
	}
}

static int widest(const heat_label *l, int n)
{
	int w = 2;
	for (int i = 0; i < n; i++)
		w = l[i].width > w ? l[i].width : w;
	return w;
}

static bool same_request(const matrix_cache *mx, const matrix_request *rq)
{
	return mx->valid && mx->seq == rq->seq && mx->kind == rq->kind &&
	       mx->layer == rq->layer && mx->head == rq->head && mx->words == rq->words &&
	       mx->pinned == (rq->pin && rq->pin->on);
}

/* The matrix of rq, made anew into mx->src. */
static bool make(matrix_cache *mx, const matrix_request *rq, av_error *err)
{
	const attn_result *r = rq->r;
	attn_matrix a;
	if (!scratch(mx, r->n, err) || !selection(mx, rq, &a, err))
		return false;
	heat_src s = {a, mx->labels, 2, {0}, false};
	if (rq->words) {
		make_words(mx, r, rq->marks);
		words_aggregate(mx->mat2, &a, mx->wspan, mx->nw);
		memcpy(mx->mat, mx->mat2, (size_t)mx->nw * (size_t)mx->nw * sizeof *mx->mat);
		s.m = (attn_matrix){mx->mat, mx->nw, a.causal, 0};
		s.label_w = widest(mx->labels, mx->nw);
	} else {
		heat_token_labels(mx->labels, r->tokens, r->n);
	}
	const pin *p = rq->pin;
	if (p && p->on) {
		int m = s.m.n < p->n ? s.m.n : p->n;
		attn_matrix pm = {p->w, p->n, p->causal, 0};
		matrix_difference(mx->mat2, &s.m, &pm, m);
		s.m = (attn_matrix){mx->mat2, m, s.m.causal || p->causal, 0};
		s.diverging = true;
	}
	mx->src = s;
	mx->valid = true;
	mx->gen++;
	mx->seq = rq->seq;
	mx->kind = rq->kind;
	mx->layer = rq->layer;
	mx->head = rq->head;
	mx->words = rq->words;
	mx->pinned = p && p->on;
	return true;
}

bool matrix_make(matrix_cache *mx, const matrix_request *rq, heat_src *out, av_error *err)
{
	if (!same_request(mx, rq) && !make(mx, rq, err))
		return false;
	*out = mx->src;
	scale_init(&out->sc, out->diverging ? SCALE_DIFF : rq->scale, &out->m, rq->row_max);
	return true;
}

bool matrix_compare_cell(const matrix_cache *mx, const pin *p, int q, int k, float *now,
			 float *pinned)
{
	if (!p->on || !mx->valid || !mx->pinned || q >= p->n || k >= p->n)
		return false;
	*pinned = p->w[(size_t)q * (size_t)p->n + (size_t)k];
	*now = *pinned + mx->mat2[(size_t)q * (size_t)mx->src.m.n + (size_t)k];
	return true;
}

bool matrix_word_span(const matrix_cache *mx, int i, int *start, int *end)
{
	if (i < 0 || i >= mx->nw)
		return false;
	*start = mx->wspan[i].start;
	*end = mx->wspan[i].end;
	return true;
}
