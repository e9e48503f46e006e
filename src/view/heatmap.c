/* The heatmap of a matrix (heatmap.h). */
#include "heatmap.h"

#include "state.h"

#include <math.h>
#include <stdio.h>

void heat_layout(heat_geom *g, int n, int x, int y, int w, int h, int cell_w)
{
	g->x = x;
	g->w = w;
	g->tick_y = y;
	g->keys_y = y + 1;
	g->cells_y = y + 2;
	g->posw = digits(n > 0 ? n - 1 : 0);
	if (g->posw < 2)
		g->posw = 2;
	g->cx0 = x + 1 + g->posw + 1 + 2 + 1; /* marker, position, space, glyph, space */
	g->cell_w = cell_w;
	g->vis_rows = h - 2;
	g->vis_cols = (x + w - g->cx0) / cell_w;
	if (g->vis_rows < 1)
		g->vis_rows = 1;
	if (g->vis_cols < 1)
		g->vis_cols = 1;
}

static int scroll_to(int first, int cursor, int visible, int n)
{
	if (cursor < first)
		first = cursor;
	if (cursor >= first + visible)
		first = cursor - visible + 1;
	if (first > (n > visible ? n - visible : 0))
		first = n > visible ? n - visible : 0;
	return first < 0 ? 0 : first;
}

void heat_scroll(heat_view *hv, const heat_geom *g, int n)
{
	/* Labels stay put while the cells scroll. */
	hv->top = scroll_to(hv->top, hv->qrow, g->vis_rows, n);
	hv->left = scroll_to(hv->left, hv->kcol, g->vis_cols, n);
}

/* One cell at (y, x). */
static void draw_cell(const view *v, const heat_src *s, const heat_geom *g, int y, int x,
		      bool cursor, int q, int k)
{
	int cw = g->cell_w;
	if (attn_masked(&s->m, q, k)) {
		/* Masked is not zero: the key is invisible to this query. */
		style ms = v->color ? st(A_DIM, (short)(v->cm.levels + P_MASKED)) : st(A_DIM, 0);
		fill(y, x, cw, ms);
		put_str(y, x + cw - 1 - (cw > 2), 1, cursor ? accent(v, A_BOLD) : ms,
			cursor ? "×" : "·");
		return;
	}
	float w = attn_at(&s->m, q, k);
	style cs = plain();
	if (v->mode == CM_256)
		cs = st(A_NORMAL, (short)(1 + colormap_level(&v->cm, w)));
	if (v->values) {
		char buf[8];
		fmt_cell_value(buf, w);
		style t = cs;
		if (cursor)
			t.a |= A_REVERSE | A_BOLD;
		fill(y, x, 1, cs);
		put_str(y, x + 1, 4, t, buf);
		return;
	}
	if (cursor) {
		cs.a |= A_BOLD;
		put_str(y, x, 2, cs, "<>");
		return;
	}
	if (v->mode == CM_256) {
		fill(y, x, 2, cs);
	} else {
		wchar_t wc[2] = {(wchar_t)colormap_shade(w), 0};
		put_wc(y, x, wc, cs);
		put_wc(y, x + 1, wc, cs);
	}
}

/* Key positions (every fifth, and the cursor's) and key labels. */
static void draw_keys(const view *v, const heat_src *s, const heat_geom *g, const heat_view *hv,
		      int cols)
{
	int end = g->x + g->w;
	for (int j = 0; j < cols; j++) {
		int k = hv->left + j, x = g->cx0 + j * g->cell_w;
		bool cur = k == hv->kcol;
		if (g->cell_w > 2 || k % 5 == 0 || cur) {
			char num[16];
			int len = snprintf(num, sizeof num, "%d", k);
			/* The cursor's column number wins over its neighbours'. */
			if (cur || x + len <= end)
				put_str(g->tick_y, x + (g->cell_w > 2), end - x,
					cur ? accent(v, A_BOLD) : st(A_DIM, 0), num);
		}
		const token *t = &s->tok[k];
		int gx = x + (g->cell_w > 2 ? (g->cell_w - t->width + 1) / 2 : 0);
		style ts = token_style(v, t, cur ? A_REVERSE | A_BOLD : A_NORMAL);
		if (cur)
			fill(g->keys_y, x, g->cell_w, ts);
		put_glyph(g->keys_y, gx, t->cp, ts);
	}
}

/* A Query row's label: marker, position, token. */
static void draw_row_label(const view *v, const heat_src *s, const heat_geom *g, int y, int q,
			   bool cur)
{
	const token *t = &s->tok[q];
	if (cur)
		put_str(y, g->x, 1, accent(v, A_BOLD), "▶");
	style ls = cur ? st(A_REVERSE | A_BOLD, 0) : st(A_DIM, 0);
	put_fmt(y, g->x + 1, g->posw, ls, "%*d", g->posw, q);
	style ts = token_style(v, t, cur ? A_REVERSE | A_BOLD : A_NORMAL);
	if (cur)
		fill(y, g->x + 1 + g->posw + 1, 2, ts);
	put_glyph(y, g->x + 1 + g->posw + 1, t->cp, ts);
}

void heat_draw(const view *v, const heat_src *s, const heat_geom *g, const heat_view *hv)
{
	int n = s->m.n;
	int rows = n - hv->top < g->vis_rows ? n - hv->top : g->vis_rows;
	int cols = n - hv->left < g->vis_cols ? n - hv->left : g->vis_cols;
	draw_keys(v, s, g, hv, cols);
	for (int i = 0; i < rows; i++) {
		int q = hv->top + i, y = g->cells_y + i;
		draw_row_label(v, s, g, y, q, q == hv->qrow);
		for (int j = 0; j < cols; j++) {
			int k = hv->left + j;
			draw_cell(v, s, g, y, g->cx0 + j * g->cell_w,
				  q == hv->qrow && k == hv->kcol, q, k);
		}
	}
	/* Markers where rows or columns continue off screen. */
	if (hv->left > 0)
		put_str(g->keys_y, g->cx0 - 1, 1, st(A_DIM, 0), "<");
	if (hv->left + cols < n)
		put_str(g->keys_y, g->cx0 + cols * g->cell_w, 1, st(A_DIM, 0), ">");
	if (hv->top > 0)
		put_str(g->cells_y, g->x, 1, st(A_DIM, 0), "^");
	if (hv->top + rows < n)
		put_str(g->cells_y + rows - 1, g->x, 1, st(A_DIM, 0), "v");
}

bool heat_hit(const heat_geom *g, const heat_view *hv, int n, int y, int x, int *q, int *k)
{
	int qq = y >= g->cells_y ? hv->top + (y - g->cells_y) : -1;
	int kk = x >= g->cx0 && x < g->x + g->w ? hv->left + (x - g->cx0) / g->cell_w : -1;
	if (y == g->keys_y || y == g->tick_y)
		qq = hv->qrow;
	if (x >= g->x && x < g->cx0 && qq >= 0)
		kk = hv->kcol;
	if (qq < 0 || qq >= n || kk < 0 || kk >= n || kk >= hv->left + g->vis_cols)
		return false;
	*q = qq;
	*k = kk;
	return true;
}
