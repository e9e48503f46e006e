/* The overview: every head of every layer at once, as a grid of small
 * heatmaps pooled from the full ones. Arrows select a head, Enter opens it.
 * Each tile is drawn from its own matrix; the selected head of the map is
 * not touched. */
#include "screen.h"

#include <stdlib.h>

static void overview_layout(view *v)
{
	ov_geom *g = &v->og;
	int L = nlayers(v), H = nheads(v), n = v->have ? v->r.n : 0;
	g->y0 = Y_BODY;
	g->gap = 2;
	g->bh = (LINES - 1 - g->y0) / L;
	g->bw = (COLS - 1) / H - g->gap;
	g->fits = g->bh >= VIEW_OV_MIN_BOX_H && g->bw >= VIEW_OV_MIN_BOX_W;
	/* A title line and sh x sw samples, two columns per sample when there
	 * is room (terminal cells are about twice as tall as wide). */
	int sh = g->bh - 2, pix = n > 0 ? n : 1;
	g->sh = sh < pix ? sh : pix;
	if (g->sh < 1)
		g->sh = 1;
	int sw2 = g->bw / 2;
	if (sw2 >= (pix < g->sh * 2 ? pix : g->sh * 2) || sw2 >= pix) {
		g->sw = sw2 < pix ? sw2 : pix;
		g->bw = g->sw * 2;
	} else {
		g->sw = g->bw < pix ? g->bw : pix;
		g->bw = g->sw;
	}
	if (g->sw < 1)
		g->sw = 1;
}

static void draw_tile(view *v, int l, int h, float *pool, uint8_t *masked)
{
	const ov_geom *g = &v->og;
	int bx = h * (g->bw + g->gap), by = g->y0 + l * g->bh;
	bool sel = l * nheads(v) + h == v->ov_sel;
	put_fmt(by, bx, g->bw + 1, sel ? accent(v, A_REVERSE | A_BOLD) : st(A_DIM, 0), "L%dH%d", l,
		h);
	attn_matrix a = attn_result_head(&v->r, l, h);
	pool_grid(pool, masked, &a, g->sh, g->sw, POOL_MEAN);
	int cw = g->bw / g->sw;
	for (int r = 0; r < g->sh; r++) {
		for (int c = 0; c < g->sw; c++) {
			size_t i = (size_t)r * (size_t)g->sw + (size_t)c;
			int x = bx + c * cw, y = by + 1 + r;
			if (masked[i]) {
				put_str(y, x, 1, st(A_DIM, 0), "·");
				continue;
			}
			if (v->mode == CM_256) {
				fill(y, x, cw,
				     st(A_NORMAL, (short)(1 + colormap_level(&v->cm, pool[i]))));
			} else {
				wchar_t wc[2] = {(wchar_t)colormap_shade(pool[i]), 0};
				for (int k = 0; k < cw; k++)
					put_wc(y, x + k, wc, plain());
			}
		}
	}
}

static void overview_draw(view *v)
{
	const ov_geom *g = &v->og;
	int L = nlayers(v), H = nheads(v);
	put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0),
		"Overview: %d layers x %d heads. Arrows select, Enter opens, o closes.", L, H);
	if (!g->fits) {
		put_fmt(g->y0, 0, COLS, st(A_BOLD, 0),
			"The overview of %d layers x %d heads needs a larger terminal.", L, H);
		return;
	}
	if (!v->have) {
		put_str(g->y0, 0, COLS, st(A_DIM, 0), "No text yet: type some first.");
		return;
	}
	size_t cells = (size_t)g->sh * (size_t)g->sw;
	float *pool = malloc(cells * sizeof *pool);
	uint8_t *masked = malloc(cells);
	if (pool && masked)
		for (int l = 0; l < L; l++)
			for (int h = 0; h < H; h++)
				draw_tile(v, l, h, pool, masked);
	else
		put_str(g->y0, 0, COLS, accent(v, A_BOLD), "out of memory drawing the overview");
	free(pool);
	free(masked);
}

static void overview_mouse(view *v, const MEVENT *ev)
{
	const ov_geom *g = &v->og;
	if (!g->fits || ev->y < g->y0)
		return;
	int l = (ev->y - g->y0) / g->bh, h = ev->x / (g->bw + g->gap);
	if (l >= nlayers(v) || h >= nheads(v) || ev->x % (g->bw + g->gap) > g->bw)
		return;
	int sel = l * nheads(v) + h;
	if (sel == v->ov_sel)
		do_action(v, ACT_OPEN, 0);
	else
		v->ov_sel = sel;
}

const screen_ops overview_screen = {
    .name = "OVERVIEW",
    .keys = KC_OVERVIEW,
    .text_visible = true,
    .layout = overview_layout,
    .draw = overview_draw,
    .key = NULL,
    .mouse = overview_mouse,
};
