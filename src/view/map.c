/* The map screen: the selected head's heatmap with its heading and colour
 * bar, and the details panel beside it (F5 hides it). The input line above
 * it has the keys while typing (focus.typing), else the heatmap. Its state: the
 * geometry, the matrix it draws (matrix.h, asked for with what the view
 * selects) and the pinned matrix of a comparison (F9). */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct map_state {
	map_geom g;
	matrix_cache mx;
	pin pin;
} map_state;

static map_state *map_of(const view *v)
{
	return v->screen[SCREEN_MAP];
}

static bool map_init(view *v, void *state)
{
	av_error err;
	(void)v;
	return matrix_init(&((map_state *)state)->mx, &err);
}

static void map_finish(void *state)
{
	map_state *m = state;
	matrix_finish(&m->mx);
	pin_clear(&m->pin);
}

/* ---- what the map shows ------------------------------------------------------ */

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

void sel_where(const view *v, bool capital, char *out, size_t size)
{
	char sel[48];
	sel_describe(v, sel, sizeof sel);
	if (view_sel(v) == SEL_ALL) /* of no one layer */
		snprintf(out, size, capital ? _("All layers %s") : _("all layers %s"), sel);
	else
		snprintf(out, size, capital ? _("Layer %d %s") : _("layer %d %s"), v->layer, sel);
}

bool view_sel_layers(const view *v, int *l0, int *l1)
{
	switch (view_sel(v)) {
	case SEL_MEAN:
	case SEL_MAX:
		*l0 = v->layer, *l1 = v->layer + 1;
		return true;
	case SEL_ROLLOUT:
		*l0 = 0, *l1 = v->layer + 1;
		return true;
	case SEL_ALL:
		*l0 = 0, *l1 = nlayers(v);
		return true;
	default:
		return false;
	}
}

bool view_matrix(view *v, heat_src *out)
{
	/* A partial result: the layer on screen, and a rollout to it, may be
	 * there; the mean of every layer is not. A summary waits for its
	 * heads' weights from the worker (request_jobs). */
	int l0, l1;
	if (!view_layer_ready(v, v->layer) || (v->r.partial && view_map_kind(v) == SEL_ALL) ||
	    (view_sel_layers(v, &l0, &l1) && !view_heads_ready(v, l0, l1)))
		return false;
	map_state *m = map_of(v);
	matrix_request rq = {
	    .r = &v->r,
	    .seq = v->res_gen,
	    .kind = view_map_kind(v),
	    .layer = v->layer,
	    .head = v->head < nheads(v) ? v->head : 0,
	    .words = v->words,
	    .marks = v->has_marks && v->r.n == v->ntok ? v->wmarks : NULL,
	    .pin = &m->pin,
	    .scale = v->scale,
	    .row_max = v->row_max,
	};
	av_error err;
	if (matrix_make(&m->mx, &rq, out, &err))
		return true;
	set_notice(v, "%s", err.msg);
	return false;
}

uint64_t view_matrix_gen(const view *v)
{
	return map_of(v)->mx.gen;
}

bool view_compare_cell(view *v, int q, int k, float *now, float *pinned)
{
	map_state *m = map_of(v);
	return matrix_compare_cell(&m->mx, &m->pin, q, k, now, pinned);
}

bool view_word_span(const view *v, int i, int *start, int *end)
{
	return v->words && matrix_word_span(&map_of(v)->mx, i, start, end);
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

void view_matrix_invalidate(view *v)
{
	matrix_forget(&map_of(v)->mx);
}

const pin *view_pin(const view *v)
{
	return &map_of(v)->pin;
}

const map_geom *view_map_geom(const view *v)
{
	return &map_of(v)->g;
}

/* Compare: pin what the map shows (a copy: the text and the selection may
 * change afterwards), or let go of it. */
void toggle_pin(view *v)
{
	heat_src s;
	pin *p = &map_of(v)->pin;
	view_matrix_invalidate(v);
	if (p->on) {
		pin_clear(p);
		set_notice(v, _("comparison off"));
		return;
	}
	if (!view_matrix(v, &s)) {
		set_notice(v, _("nothing to pin yet: type some text first"));
		return;
	}
	if (!pin_set(p, &s)) {
		set_notice(v, _("out of memory pinning the map"));
		return;
	}
	int n = s.m.n;
	if (!v->words && v->have && (p->ids = malloc((size_t)v->r.n * sizeof *p->ids)) != NULL) {
		for (int i = 0; i < v->r.n; i++)
			p->ids[i] = v->r.tokens[i].id;
		p->nids = v->r.n;
	}
	char where[96];
	sel_where(v, false, where, sizeof where);
	snprintf(p->what, sizeof p->what,
		 v->words ? ngettext("%s, %d word", "%s, %d words", n)
			  : ngettext("%s, %d token", "%s, %d tokens", n),
		 where, n);
	view_matrix_invalidate(v);
	set_notice(v, _("pinned %s: edit the text or change head to compare (F9 again: off)"),
		   p->what);
}

/* ---- the screen ---------------------------------------------------------------- */

static void map_layout(view *v)
{
	map_geom *g = &map_of(v)->g;
	g->panel_w = v->panel ? VIEW_PANEL_W : 0;
	g->map_w = COLS - (g->panel_w ? g->panel_w + 1 : 0);
	if (g->panel_w && !VIEW_PANEL_FITS(COLS)) {
		g->panel_w = 0;
		g->map_w = COLS;
	}
	g->panel_x = g->map_w + 1;
	heat_src s;
	bool have = view_matrix(v, &s);
	int n = have ? s.m.n : 0;
	clamp_cursor(v);
	int label_w = have ? s.label_w : 2, body_h = LINES - 1 - Y_BODY;
	bool halves = v->col.mode >= CM_256;
	heat_layout(&g->heat, n, label_w, 0, Y_BODY, g->map_w, body_h, v->cells, v->values, halves);
	/* Fitting, the map's labels win: the panel steps aside when without it
	 * every Key column would be on screen and with it they would not (but
	 * where a key asked for it: actions.c, show_panel). */
	if (g->panel_w && !v->panel_forced && v->cells == CELLS_FIT && g->heat.vis_cols < n) {
		heat_geom alone;
		heat_layout(&alone, n, label_w, 0, Y_BODY, COLS, body_h, v->cells, v->values, halves);
		if (alone.vis_cols >= n) {
			g->heat = alone;
			g->panel_w = 0;
			g->map_w = COLS;
		}
	}
	heat_scroll(&v->hv, &g->heat, n);
	/* The panel sits right beside the colour bar and takes the rest; with
	 * no map yet the map's place keeps its width for the hint. */
	int end = g->heat.bar_x + VIEW_BAR_W;
	if (have && g->panel_w && end < g->map_w) {
		g->map_w = end;
		g->panel_x = end + 1;
		g->panel_w = COLS - g->panel_x;
	}
}

static void draw_head_line(view *v)
{
	int x;
	bool said_words = false;
	if (view_sel(v) == SEL_HEAD) {
		x = put_head_title(v, Y_HEAD, 0, COLS, v->layer, v->head);
		heat_src s;
		bool shown = view_matrix(v, &s);
		if (shown && s.diverging) {
			/* A difference from the pinned map: no one matrix's label
			 * (the panel gives none either). */
		} else if (shown && v->words) {
			/* Of the words, as the panel says it (the characters' role
			 * would describe another matrix). */
			char pattern[192];
			panel_words_pattern(v, &s, pattern, sizeof pattern);
			x = view_map_kind(v) == SEL_CONTRIB
				? put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD),
					  _("  contributions, words: %s"), pattern)
				: put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD), _("  words: %s"),
					  pattern);
			said_words = true;
		} else if (shown && view_map_kind(v) == SEL_CONTRIB) {
			/* Of the contributions, the map shown: their label may
			 * differ from the weights' (a key with a small value
			 * norm drops out), as the panel's does. */
			panel_map_stats(v, &s);
			char label[192];
			role_title(&v->roles, true, label, sizeof label);
			x = put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD),
				    _("  contributions: %s"), label);
		} else if (view_layer_ready(v, v->layer)) {
			const role_scores *rs = view_head_roles(v);
			char label[192];
			role_title(rs, true, label, sizeof label);
			x = put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD), "  %s", label);
		}
	} else {
		char sel[48];
		sel_describe(v, sel, sizeof sel);
		x = view_sel(v) == SEL_ALL
			? put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0), _("All layers  %s"), sel)
			: put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0), _("Layer %d  %s"), v->layer, sel);
		/* The summary's label, as the panel gives it (the same
		 * labeller on the matrix shown). */
		heat_src s;
		if (view_matrix(v, &s) && !s.diverging && v->words) {
			char pattern[192];
			panel_words_pattern(v, &s, pattern, sizeof pattern);
			x = put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD), _("  words: %s"),
				    pattern);
			said_words = true;
		} else if (view_matrix(v, &s) && !s.diverging) {
			panel_map_stats(v, &s);
			char label[192];
			role_title(&v->roles, true, label, sizeof label);
			x = put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD), "  %s", label);
		}
	}
	char obj[64];
	snprintf(obj, sizeof obj, "  %s",
		 v->m->cfg.objective == OBJ_CAUSAL ? _("causal") : _("masked"));
	const char *modes[] = {obj, v->values ? _("  values") : NULL,
			       map_of(v)->g.heat.compact ? _("  compact") : NULL,
			       v->words && !said_words ? _("  words") : NULL};
	/* Each whole or not at all, in order: a label that fills the line
	 * leaves no "mas" or "comp". */
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		if (!modes[i])
			continue;
		if (str_width(modes[i]) > COLS - x)
			break;
		x = put_str(Y_HEAD, x, COLS - x, st(A_DIM, 0), modes[i]);
	}
	const pin *p = &map_of(v)->pin;
	if (p->on)
		put_fmt_cut(Y_HEAD, x, COLS - x, accent(v, A_BOLD), _("  minus pinned %s"),
			    p->what);
}

/* Where the panel stepped aside so that every Key column fits
 * (map_layout), a reader would not know there is one: its place says so. */
static void draw_panel_hint(const view *v, const map_geom *g)
{
	pen p = {g->heat.bar_x + VIEW_BAR_W + 1, 0, g->heat.tick_y, LINES - 2};
	p.w = COLS - p.x;
	if (!v->panel || g->panel_w > 0 || !VIEW_PANEL_FITS(COLS) || p.w < 9)
		return;
	pen_wrapped(&p, st(A_DIM, 0),
		    p.w >= 12 ? _("F5 shows the details panel here (the map then scrolls).")
			      : _("F5: the panel"));
}

static void map_draw(view *v)
{
	const map_geom *g = &map_of(v)->g;
	draw_head_line(v);
	heat_src s;
	if (view_matrix(v, &s)) {
		heat_draw(&v->col, &s, &g->heat, &v->hv);
		draw_panel_hint(v, g);
	} else {
		/* (with a result: a summary's heads on their way) */
		const char *msg = v->pending || v->have ? _("computing...")
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
	if (!view_matrix(v, &s) ||
	    !heat_hit(&map_of(v)->g.heat, &v->hv, s.m.n, ev->y, ev->x, &q, &k))
		return;
	v->hv.qrow = q;
	v->hv.kcol = k;
	v->focus = FOCUS_ON(SCREEN_MAP);
	request_pred(v);
}

/* Ctrl-S: the file name's stem for what the map shows: attnview-L0H1,
 * -L1-mean, -all-heads ... with -words, -contributions, -compare as they
 * apply. */
static bool map_figure_name(view *v, char *stem, size_t size)
{
	if (!v->have) {
		set_notice(v, _("nothing to write yet: type some text first"));
		return false;
	}
	int len;
	switch (view_sel(v)) {
	case SEL_HEAD:
		len = snprintf(stem, size, "attnview-L%dH%d", v->layer, v->head);
		break;
	case SEL_ALL:
		len = snprintf(stem, size, "attnview-all-heads");
		break;
	default:
		len = snprintf(stem, size, "attnview-L%d-%s", v->layer, sel_name(view_sel(v)));
		break;
	}
	bool contrib = view_map_kind(v) == SEL_CONTRIB;
	const char *extra[] = {v->words ? "-words" : "", contrib ? "-contributions" : "",
			       view_pin(v)->on ? "-compare" : ""};
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
		if (len >= 0 && (size_t)len < size)
			len += snprintf(stem + len, size - (size_t)len, "%s", extra[i]);
	return true;
}

/* What --export draws for the same text and options; a comparison with
 * the pinned map, which only the view has, from the map's matrix. */
static bool map_figure(view *v, const char *path, bool replace, av_error *err)
{
	if (view_pin(v)->on)
		return figure_write_map(v, path, replace, err);
	fig_request q = {.show = view_map_kind(v), .words = v->words, .scale = v->scale};
	return figure_write_result(v, q, path, replace, err);
}

const screen_ops map_screen = {
    .name = N_("MAP"),
    .hint = N_("arrows move, typing edits the text | F1 help"),
    .text_visible = true,
    .state_size = sizeof(map_state),
    .init = map_init,
    .finish = map_finish,
    .layout = map_layout,
    .draw = map_draw,
    .key = NULL,
    .mouse = map_mouse,
    .figure_name = map_figure_name,
    .figure = map_figure,
};
