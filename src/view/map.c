/* The map screen: the selected head's heatmap with its heading and colour
 * legend, and the details panel beside it. The input line above it has the
 * focus in F_INPUT, the heatmap in F_MAP. */
#include "panel.h"
#include "screen.h"

static void map_layout(view *v)
{
	map_geom *g = &v->mg;
	g->panel_w = VIEW_PANEL_W;
	g->map_w = COLS - g->panel_w - 1;
	if (g->map_w < VIEW_MIN_MAP_W) {
		g->panel_w = 0;
		g->map_w = COLS;
	}
	g->panel_x = g->map_w + 1;
	int n = v->have ? v->r.n : 0;
	heat_layout(&g->heat, n, 0, Y_BODY, g->map_w, LINES - 1 - Y_BODY,
		    v->values ? VIEW_VALUE_CELL_W : VIEW_CELL_W);
	heat_scroll(&v->hv, &g->heat, n);
}

static void draw_legend(view *v, int y, int x_min, int x_right)
{
	/* "0 ▁▁▁ 1" with one cell per ramp level (or the shade steps), right
	 * aligned, if it fits. */
	int nsteps = v->mode == CM_256 ? v->cm.levels : 5;
	int w = 2 + nsteps + 2;
	int x = x_right - w;
	if (x < x_min)
		return;
	put_str(y, x, 2, plain(), "0 ");
	for (int i = 0; i < nsteps; i++) {
		if (v->mode == CM_256) {
			fill(y, x + 2 + i, 1, st(A_NORMAL, (short)(1 + i)));
		} else {
			wchar_t wc[2] = {(wchar_t)colormap_shade((float)i / 4.0f), 0};
			put_wc(y, x + 2 + i, wc, plain());
		}
	}
	put_str(y, x + 2 + nsteps, 2, plain(), " 1");
}

static void draw_head_line(view *v)
{
	/* Numbered from 0 as --dump numbers them; "of N" is a count, not the last
	 * number, so the numbers on screen are the ones a script finds. */
	int x = put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0), "Layer %d of %d  Head %d of %d", v->layer,
			nlayers(v), v->head, nheads(v));
	x = put_fmt(Y_HEAD, x, COLS - x, st(A_DIM, 0), "  %s%s",
		    v->m->cfg.objective == OBJ_CAUSAL ? "causal" : "masked",
		    v->values ? "  values" : "");
	draw_legend(v, Y_HEAD, x + 2, v->mg.map_w);
}

static void map_draw(view *v)
{
	const map_geom *g = &v->mg;
	draw_head_line(v);
	if (v->have) {
		heat_src s = {view_head(v), v->r.tokens};
		heat_draw(v, &s, &g->heat, &v->hv);
	} else {
		const char *msg = v->pending ? "computing..."
				  : v->le.n  ? ""
					     : "The heatmap appears here as you type.";
		put_str(g->heat.cells_y, 2, g->map_w - 2, st(A_DIM, 0), msg);
	}
	panel_draw(v);
}

static void map_mouse(view *v, const MEVENT *ev)
{
	int q, k;
	if (!v->have || !heat_hit(&v->mg.heat, &v->hv, v->r.n, ev->y, ev->x, &q, &k))
		return;
	v->hv.qrow = q;
	v->hv.kcol = k;
	if (v->focus == F_INPUT)
		v->focus = F_MAP;
	request_pred(v);
}

const screen_ops map_screen = {
    .name = "MAP",
    .keys = KC_MAP,
    .text_visible = true,
    .layout = map_layout,
    .draw = map_draw,
    .key = NULL,
    .mouse = map_mouse,
};
