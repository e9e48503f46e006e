/* The map screen: the selected head's heatmap with its heading and colour
 * bar, and the details panel beside it (F5 hides it). The input line above
 * it has the focus in F_INPUT, the heatmap in F_MAP. */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

static void map_layout(view *v)
{
	map_geom *g = &v->mg;
	g->panel_w = v->panel ? VIEW_PANEL_W : 0;
	g->map_w = COLS - (g->panel_w ? g->panel_w + 1 : 0);
	if (g->panel_w && g->map_w < VIEW_MIN_MAP_W) {
		g->panel_w = 0;
		g->map_w = COLS;
	}
	g->panel_x = g->map_w + 1;
	heat_src s;
	bool have = view_matrix(v, &s);
	int n = have ? s.m.n : 0;
	clamp_cursor(v);
	heat_layout(&g->heat, n, have ? s.label_w : 2, 0, Y_BODY, g->map_w, LINES - 1 - Y_BODY,
		    v->cells, v->values, v->col.mode >= CM_256);
	heat_scroll(&v->hv, &g->heat, n);
	/* The panel sits right beside the colour bar and takes the rest. */
	int end = g->heat.bar_x + VIEW_BAR_W;
	if (g->panel_w && end < g->map_w) {
		g->map_w = end;
		g->panel_x = end + 1;
		g->panel_w = COLS - g->panel_x;
	}
}

static void draw_head_line(view *v)
{
	int x;
	if (view_sel(v) == SEL_HEAD) {
		x = put_head_title(v, Y_HEAD, 0, COLS, v->layer, v->head);
		if (v->have) {
			const role_scores *rs = view_head_roles(v);
			x = put_fmt(Y_HEAD, x, COLS - x, accent(v, A_BOLD), "  %s %.2f",
				    _(role_name(rs->role)), rs->score);
		}
	} else {
		char sel[48];
		sel_describe(v, sel, sizeof sel);
		x = view_sel(v) == SEL_ALL
			? put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0), _("All layers  %s"), sel)
			: put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0), _("Layer %d  %s"), v->layer, sel);
	}
	const char *obj = v->m->cfg.objective == OBJ_CAUSAL ? _("causal") : _("masked");
	x = put_fmt(Y_HEAD, x, COLS - x, st(A_DIM, 0), "  %s%s%s%s", obj,
		    v->values ? _("  values") : "", v->mg.heat.compact ? _("  compact") : "",
		    v->words ? _("  words") : "");
	if (v->pin.on)
		put_fmt(Y_HEAD, x, COLS - x, accent(v, A_BOLD), _("  minus pinned %s"),
			v->pin.what);
}

static void map_draw(view *v)
{
	const map_geom *g = &v->mg;
	draw_head_line(v);
	heat_src s;
	if (view_matrix(v, &s)) {
		heat_draw(v, &s, &g->heat, &v->hv);
	} else {
		const char *msg = v->pending ? _("computing...")
				  : v->le.n  ? ""
					     : _("The heatmap appears here as you type.");
		put_str(g->heat.cells_y, 2, g->map_w - 2, st(A_DIM, 0), msg);
	}
	panel_draw(v);
}

static void map_mouse(view *v, const MEVENT *ev)
{
	int q, k;
	heat_src s;
	if (!view_matrix(v, &s) || !heat_hit(&v->mg.heat, &v->hv, s.m.n, ev->y, ev->x, &q, &k))
		return;
	v->hv.qrow = q;
	v->hv.kcol = k;
	if (v->focus == F_INPUT)
		v->focus = F_MAP;
	request_pred(v);
}

const screen_ops map_screen = {
    .name = N_("MAP"),
    .keys = KC_MAP,
    .text_visible = true,
    .layout = map_layout,
    .draw = map_draw,
    .key = NULL,
    .mouse = map_mouse,
};
