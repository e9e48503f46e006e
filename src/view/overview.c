/* The overview: every head of every layer at once, as a grid of small
 * heatmaps, each labelled with its layer, head and role (analysis.h) with
 * the score that earned it. Tiles follow the chosen colour scale and keep each
 * block's maximum, so a diagonal stays a line; a short text is drawn large
 * rather than in a corner. With colours a tile's pixels are half blocks
 * (square: two per line, one per column); with shades they are two columns
 * wide and the tile has a frame, so a uniform head is not blank space.
 * Arrows select a head, Enter opens it. F6 draws a cell a token (1:1: no
 * diagonal merges with its neighbour), as many tiles a row as fit, the rows
 * scrolled to the selected head. */
#include "attnview/i18n.h"
#include "screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The grid of tiles, `across` a row (the heads of a layer, or in 1:1 as
 * many as fit), `rows` of them on screen from grid row `top`; each tile a
 * title line and sh x sw samples, bw columns wide, bh lines with the gap
 * below it. Tile t (layer * H + head) is at grid row t / across. */
typedef struct ov_geom {
	bool fits;
	int y0, bw, bh, sw, sh, gap;
	int across, rows, top;
} ov_geom;

typedef struct ov_state {
	ov_geom g;
	bool coded[ROLE_NKINDS]; /* roles drawn as a code this frame: the legend */
	int sel;  /* the selected tile: layer * H + head */
	bool one; /* 1:1: a cell a token (F6) */
	int top;  /* the first grid row on screen in 1:1 */
} ov_state;

static ov_state *ov_of(const view *v)
{
	return v->screen[SCREEN_OVERVIEW];
}

/* Opened (F3) on the current head. */
static void overview_opened(view *v)
{
	ov_state *o = ov_of(v);
	int h = v->head < nheads(v) ? v->head : nheads(v) - 1;
	o->sel = v->layer * nheads(v) + h;
	/* A result computed before the overview opened came without the
	 * roles, and a masked model's without the weights of the heads not
	 * looked at: request_jobs asks the worker for both (JOB_ROLES), since
	 * posting the text again would drop what was computed for it
	 * (predictions, jobs), and computing 48 heads of 512 tokens here would
	 * hold the screen for 50 ms; the tiles have no role and no pixels until
	 * they come. */
}

void overview_model_changed(view *v)
{
	ov_state *o = ov_of(v);
	if (o->sel >= nlayers(v) * nheads(v))
		o->sel = 0;
}

/* The 1:1 grid: tiles of n x n samples, as many a row as fit; where the
 * screen is too low or narrow for n, as many rows or columns as it has
 * (a tile then wider than tall, or taller than wide). */
static void ov_one_geometry(ov_geom *g, int lines, int cols, int N, int n, bool halves)
{
	int frame = halves ? 0 : 1, avail = lines - 1 - g->y0, side = n > 0 ? n : 1;
	int high = halves ? 2 * (avail - 2) : avail - 2 - 2;
	int wide = halves ? cols - 1 - VIEW_OV_BAR_W : (cols - 1 - VIEW_OV_BAR_W - 2) / 2;
	g->sh = side < high ? side : high;
	g->sw = side < wide ? side : wide;
	g->gap = 2;
	g->bw = halves ? g->sw : 2 * g->sw + 2;
	g->bh = 2 + 2 * frame + (halves ? (g->sh + 1) / 2 : g->sh);
	g->across = (cols - 1 - VIEW_OV_BAR_W + g->gap) / (g->bw + g->gap);
	g->across = g->across < 1 ? 1 : g->across > N ? N : g->across;
	g->rows = avail / g->bh;
	g->fits = g->sh >= VIEW_OV_MIN_BOX_H && g->sw >= VIEW_OV_MIN_BOX_W && g->rows >= 1;
}

/* The grid on a screen of lines x cols; the colour bar takes the last
 * VIEW_OV_BAR_W columns. */
static void ov_geometry(ov_geom *g, int lines, int cols, int L, int H, int n, bool halves)
{
	g->y0 = Y_BODY;
	g->across = H;
	g->rows = L;
	g->top = 0;
	/* Two columns between tiles, one where the bar would otherwise
	 * narrow the tiles' titles. */
	g->gap = (cols - 1 - VIEW_OV_BAR_W) / H < (cols - 1) / H ? 1 : 2;
	g->bh = (lines - 1 - g->y0) / L;
	g->bw = (cols - 1 - VIEW_OV_BAR_W) / H - g->gap;
	g->fits = g->bh >= VIEW_OV_MIN_BOX_H && g->bw >= VIEW_OV_MIN_BOX_W;
	/* The pixel grid: square pixels, as many as the tile holds. */
	int frame = halves ? 0 : 1;
	int h = g->bh - 2 - 2 * frame, w = g->bw - 2 * frame;
	int side = halves ? (w < 2 * h ? w : 2 * h) : (w / 2 < h ? w / 2 : h);
	if (n > 0 && side > n)
		side -= side % n; /* whole cells per token */
	g->sw = g->sh = side > 0 ? side : 1;
}

int overview_tile_side(int lines, int cols, int L, int H, int n, bool halves)
{
	ov_geom g;
	ov_geometry(&g, lines, cols, L, H, n, halves);
	return g.fits ? g.sw : 0;
}

static void overview_layout(view *v)
{
	ov_state *o = ov_of(v);
	int n = v->have ? v->r.n : 0, N = nlayers(v) * nheads(v);
	bool halves = v->col.mode >= CM_256;
	ov_geometry(&o->g, LINES, COLS, nlayers(v), nheads(v), n, halves);
	if (!o->one)
		return;
	ov_geom *g = &o->g;
	ov_one_geometry(g, LINES, COLS, N, n, halves);
	/* The rows scrolled to the selected head. */
	int row = o->sel / g->across, nrows = (N + g->across - 1) / g->across;
	if (row < o->top)
		o->top = row;
	if (row >= o->top + g->rows)
		o->top = row - g->rows + 1;
	if (o->top > nrows - g->rows)
		o->top = nrows - g->rows > 0 ? nrows - g->rows : 0;
	g->top = o->top;
	g->rows = g->rows < nrows - g->top ? g->rows : nrows - g->top;
}

static void draw_frame(int y, int x, int w, int h, style s)
{
	put_str(y, x, 1, s, "┌");
	put_str(y, x + w - 1, 1, s, "┐");
	put_str(y + h - 1, x, 1, s, "└");
	put_str(y + h - 1, x + w - 1, 1, s, "┘");
	for (int i = 1; i < w - 1; i++) {
		put_str(y, x + i, 1, s, "─");
		put_str(y + h - 1, x + i, 1, s, "─");
	}
	for (int i = 1; i < h - 1; i++) {
		put_str(y + i, x, 1, s, "│");
		put_str(y + i, x + w - 1, 1, s, "│");
	}
}

/* rows x cols samples from (y, x). */
static void draw_pixels(view *v, int y, int x, const float *px, const uint8_t *masked, int rows,
			int cols)
{
	bool halves = v->col.mode >= CM_256;
	int masked_c = ui_color_number(&v->col, UI_MASKED);
	if (halves) {
		for (int r = 0; r < rows; r += 2)
			for (int c = 0; c < cols; c++) {
				size_t up = (size_t)r * (size_t)cols + (size_t)c,
				       lo = up + (size_t)cols;
				int fg = masked[up] ? masked_c : ramp_color(&v->col, px[up]);
				int bg = r + 1 >= rows ? -1
					 : masked[lo]  ? masked_c
						       : ramp_color(&v->col, px[lo]);
				put_wc(y + r / 2, x + c, L"▀",
				       pair_style(&v->col, fg, bg, A_NORMAL));
			}
		return;
	}
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			size_t i = (size_t)r * (size_t)cols + (size_t)c;
			wchar_t wc[2] = {(wchar_t)(masked[i] ? L'·' : colormap_shade(px[i])), 0};
			put_wc(y + r, x + 2 * c, wc, plain());
			put_wc(y + r, x + 2 * c + 1, wc, plain());
		}
}

/* The roles of head (l, h), computed by the worker (view_roles_of), or
 * NULL while they are on their way (request_jobs). */
static const role_scores *tile_roles(const view *v, int l, int h)
{
	return view_roles_of(v, l, h);
}

/* A role's short code for a narrow title: one a role, from a translated
 * list (a letter, or a character of the role's name). */
static int role_code(role_kind r, char *out, size_t size)
{
	/* TRANSLATORS: a short code for each head role in the overview's narrow
	 * tile titles, separated by spaces, all different, in the order previous,
	 * next, self, first, delimiter, duplicate, induction, local, offset,
	 * keyword, same script, line-parallel, mirror, broad, word start. */
	const char *codes = _("p n s f d u i l o k c a m b w");
	int i = 0;
	for (const char *c = codes; *c; i++) {
		size_t len = strcspn(c, " ");
		if (i == (int)r) {
			snprintf(out, size, "%.*s", (int)len, c);
			return str_width(out);
		}
		c += len;
		c += strspn(c, " ");
	}
	snprintf(out, size, "?");
	return 1;
}

/* The role after "L1 H2": the name and score, or only the name (a cut score
 * reads as another number), or the roles' names without their characters
 * ("keyword", "word start / keyword"), or their codes (the legend says
 * them: "w/k"), or nothing. Two roles stay two. A head no role fits says
 * "unclear" (or "?") before it says any role. */
static void draw_tile_role(view *v, int y, int x, int end, role_scores rs, style s)
{
	char code[32], code2[32], name[160], title[192], names[160];
	role_label(&rs, true, name, sizeof name);
	role_title(&rs, true, title, sizeof title);
	bool two = rs.verdict == ROLE_TWO && rs.second < ROLE_NKINDS;
	/* the offset's name is its place ("2 left"), in the label already */
	const char *first = _(role_name(rs.role));
	if (two)
		snprintf(names, sizeof names, "%s / %s", first, _(role_name(rs.second)));
	else
		snprintf(names, sizeof names, "%s", first);
	int w = end - x, nw = str_width(name);
	const char *unsure = _("unclear");
	if (1 + str_width(title) <= w) {
		put_fmt(y, x, w, s, " %s", title);
	} else if (1 + nw <= w) {
		put_fmt(y, x, w, s, " %s", name);
	} else if (rs.verdict == ROLE_UNSURE || rs.verdict == ROLE_SHORT) {
		put_fmt(y, x, w, s, " %s", 1 + str_width(unsure) <= w ? unsure : "?");
	} else if (rs.role != ROLE_OFFSET && (!two || rs.second != ROLE_OFFSET) &&
		   1 + str_width(names) <= w) {
		put_fmt(y, x, w, s, " %s", names);
	} else if (!two && 1 + role_code(rs.role, code, sizeof code) <= w) {
		put_fmt(y, x, w, s, " %s", code);
		ov_of(v)->coded[rs.role] = true;
	} else if (two && 2 + role_code(rs.role, code, sizeof code) +
				  role_code(rs.second, code2, sizeof code2) <=
			      w) {
		put_fmt(y, x, w, s, " %s/%s", code, code2);
		ov_of(v)->coded[rs.role] = ov_of(v)->coded[rs.second] = true;
	}
}

/* Under the grid: what the codes stand for, and that pooled tiles merge
 * neighbouring diagonals. */
static void draw_legend(view *v, int y)
{
	ov_state *o = ov_of(v);
	int x = 0, n = v->r.n;
	char code[32];
	for (int r = 0; r < ROLE_NKINDS && x < COLS; r++)
		if (o->coded[r]) {
			role_code((role_kind)r, code, sizeof code);
			x = put_fmt(y, x, COLS - x, st(A_DIM, 0), "%s %s  ", code,
				    _(role_name((role_kind)r)));
		}
	/* Said whole or in its short form, never cut. */
	char note[160];
	const ov_geom *g = &o->g;
	int N = nlayers(v) * nheads(v), first = g->top * g->across;
	int last = (g->top + g->rows) * g->across;
	last = last < N ? last : N;
	if (o->one && (first > 0 || last < N)) {
		char shown[64];
		if (last - first > 1)
			snprintf(shown, sizeof shown, _("heads %d-%d of %d"), first + 1, last, N);
		else
			snprintf(shown, sizeof shown, _("head %d of %d"), last, N);
		if (g->sw >= n && g->sh >= n)
			snprintf(note, sizeof note, _("a cell a token: %s, the arrows scroll"),
				 shown);
		else
			snprintf(note, sizeof note,
				 _("%d tokens in %d x %d cells (as many as the screen has): %s, "
				   "the arrows scroll"),
				 n, g->sh, g->sw, shown);
		if (str_width(note) > COLS - x)
			snprintf(note, sizeof note, _("%s, the arrows scroll"), shown);
	} else if (g->sw < n) {
		snprintf(note, sizeof note, _("%d tokens in %d cells: diagonals merge (F6: 1:1)"),
			 n, g->sw);
		if (str_width(note) > COLS - x)
			snprintf(note, sizeof note, _("%d tokens in %d cells"), n, g->sw);
	} else {
		return;
	}
	if (str_width(note) <= COLS - x)
		put_fmt(y, x, COLS - x, st(A_DIM, 0), "%s", note);
}

static void draw_tile(view *v, int l, int h, float *px, uint8_t *masked)
{
	const ov_geom *g = &ov_of(v)->g;
	int t = l * nheads(v) + h, row = t / g->across - g->top;
	if (row < 0 || row >= g->rows)
		return;
	int bx = (t % g->across) * (g->bw + g->gap), by = g->y0 + row * g->bh;
	bool sel = l * nheads(v) + h == ov_of(v)->sel;
	const role_scores *rs = tile_roles(v, l, h);
	bool off = v->topts.ablate[l * nheads(v) + h];
	int x = put_fmt(by, bx, g->bw, sel ? accent(v, A_REVERSE | A_BOLD) : st(A_BOLD, 0),
			"L%d H%d%s", l, h, off ? _(" OFF") : "");
	if (rs)
		draw_tile_role(v, by, x, bx + g->bw, *rs, sel ? accent(v, A_BOLD) : st(A_DIM, 0));
	if (!v->heads_here && !attn_head_kept(&v->r, l, h)) {
		/* Its weights are on their way from the worker: said, not
		 * computed here. */
		const char *coming = _("computing...");
		int frame = v->col.mode >= CM_256 ? 0 : 1;
		put_str(by + 1 + frame, bx + frame, g->bw - 2 * frame, st(A_DIM, 0),
			str_width(coming) <= g->bw - 2 * frame ? coming : "...");
		return;
	}
	attn_matrix a = attn_result_head(&v->r, l, h);
	scale sc;
	scale_init(&sc, v->ov_scale, &a, v->row_max);
	scale_pool(px, masked, &a, &sc, g->sh, g->sw);
	if (v->col.mode >= CM_256) {
		draw_pixels(v, by + 1, bx, px, masked, g->sh, g->sw);
	} else {
		draw_frame(by + 1, bx, 2 * g->sw + 2, g->sh + 2,
			   sel ? accent(v, A_BOLD) : st(A_DIM, 0));
		draw_pixels(v, by + 2, bx + 1, px, masked, g->sh, g->sw);
	}
}

static void overview_draw(view *v)
{
	const ov_geom *g = &ov_of(v)->g;
	int L = nlayers(v), H = nheads(v);
	int x =
	    put_fmt(Y_HEAD, 0, COLS, st(A_BOLD, 0), _("Overview: %d layers x %d heads, scale %s"),
		    L, H, scale_title(v->ov_scale));
	if (v->ov_scale == SCALE_LIFT)
		x = put_str(Y_HEAD, x, COLS - x, st(A_DIM, 0), _(" (1: uniform)"));
	/* The tiles and their roles are the characters' whatever F8 says
	 * for the map: a student in the word view reads them as words'. */
	if (v->words)
		x = put_str(Y_HEAD, x, COLS - x, accent(v, A_BOLD), _("  characters, not words"));
	int sel = ov_of(v)->sel;
	bool waiting = v->r.partial;
	const role_scores *rs =
	    v->have && !waiting && g->fits && sel < L * H ? tile_roles(v, sel / H, sel % H) : NULL;
	if (rs) {
		/* What the selected head does, in words. */
		char says[512], line[600];
		role_sentence(rs, true, says, sizeof says);
		snprintf(line, sizeof line, _("  L%d H%d: %s"), sel / H, sel % H, says);
		/* Cut, it says so: "19 of 23 rows look" alone reads whole. */
		put_str_cut(Y_HEAD, x, COLS - x, st(A_DIM, 0), line);
	}
	if (!g->fits) {
		put_fmt(g->y0, 0, COLS, st(A_BOLD, 0),
			_("The overview of %d layers x %d heads needs a larger terminal."), L, H);
		return;
	}
	if (!v->have) {
		put_str(g->y0, 0, COLS, st(A_DIM, 0), _("No text yet: type some first."));
		return;
	}
	if (waiting) { /* every head is drawn once every layer is in */
		put_str(g->y0, 0, COLS, st(A_DIM, 0), _("computing..."));
		return;
	}
	size_t cells = (size_t)g->sh * (size_t)g->sw;
	float *px = malloc(cells * sizeof *px);
	uint8_t *masked = malloc(cells);
	memset(ov_of(v)->coded, 0, sizeof ov_of(v)->coded);
	colors_use_diverging(&v->col, scale_diverging(v->ov_scale));
	if (px && masked) {
		for (int l = 0; l < L; l++)
			for (int h = 0; h < H; h++)
				draw_tile(v, l, h, px, masked);
		/* The bar's ticks hold for every tile (under the head scale:
		 * fractions of each head's maximum; under lift, up to the
		 * text's size). */
		scale bar = {v->ov_scale, v->ov_scale == SCALE_LIFT ? (float)v->r.n : 1.0f, NULL,
			     false, scale_lift_decades(v->r.n)};
		heat_draw_bar(&v->col, &bar, COLS - VIEW_OV_BAR_W + 1, g->y0, g->y0 + 1,
			      g->rows * g->bh - 2, COLS);
		/* The last tiles' blank line, above the status line. */
		int y = g->y0 + g->rows * g->bh - 1;
		if (y < LINES - 1)
			draw_legend(v, y);
	} else
		put_str(g->y0, 0, COLS, accent(v, A_BOLD), _("out of memory drawing the overview"));
	colors_use_diverging(&v->col, false);
	free(px);
	free(masked);
}

static void overview_mouse(view *v, const MEVENT *ev)
{
	ov_state *o = ov_of(v);
	const ov_geom *g = &o->g;
	if (!g->fits || ev->y < g->y0)
		return;
	int row = (ev->y - g->y0) / g->bh, col = ev->x / (g->bw + g->gap);
	int sel = (g->top + row) * g->across + col;
	if (row >= g->rows || col >= g->across || sel >= nlayers(v) * nheads(v) ||
	    ev->x % (g->bw + g->gap) > g->bw)
		return;
	if (sel == o->sel)
		do_action(v, ACT_OPEN, 0);
	else
		o->sel = sel;
}

/* F6: a cell a token (tiles scrolled), or every head fit. */
static void toggle_cells(view *v)
{
	ov_state *o = ov_of(v);
	o->one = !o->one;
	set_notice(v, "%s",
		   o->one ? _("overview: a cell a token, the rows scrolled to the head chosen (F6: "
			      "fit the screen)")
			  : _("overview: every head on the screen (F6: a cell a token)"));
}

/* The arrows select a tile, Enter opens it; the overview has its own colour
 * scale (F4) and cells (F6). */
static bool overview_action(view *v, view_action act)
{
	ov_state *o = ov_of(v);
	int H = nheads(v), N = nlayers(v) * H, A = o->g.across > 0 ? o->g.across : H;
	switch (act) {
	case ACT_UP: /* a row of tiles up: a layer, or in 1:1 a row of the grid */
		o->sel = o->sel - A >= 0 ? o->sel - A : (o->sel + (N + A - 1) / A * A - A) % N;
		return true;
	case ACT_DOWN:
		o->sel = o->sel + A < N ? o->sel + A : o->sel % A;
		return true;

	case ACT_LEFT:
		o->sel = (o->sel - 1 + N) % N;
		return true;
	case ACT_RIGHT:
		o->sel = (o->sel + 1) % N;
		return true;
	case ACT_SCALE:
		v->ov_scale = (scale_kind)((v->ov_scale + 1) % SCALE_NKINDS);
		set_notice(v, _("overview's colour scale: %s"), scale_title(v->ov_scale));
		return true;
	case ACT_CELLS:
		toggle_cells(v);
		return true;
	case ACT_OPEN:
		v->layer = o->sel / H;
		v->head = o->sel % H;
		v->focus = FOCUS_ON(SCREEN_MAP);
		return true;
	default:
		return false;
	}
}

/* Ctrl-S: every head, as --export --show overview draws them. */
static bool overview_figure_name(view *v, char *stem, size_t size)
{
	if (!v->have) {
		set_notice(v, _("nothing to write yet: type some text first"));
		return false;
	}
	snprintf(stem, size, "attnview-overview");
	return true;
}

static bool overview_figure(view *v, const char *path, bool replace, av_error *err)
{
	fig_request q = {.show = SEL_OVERVIEW, .words = false, .scale = v->ov_scale};
	return figure_write_result(v, q, path, replace, err);
}

const screen_ops overview_screen = {
    .name = N_("OVERVIEW"),
    .hint = N_("arrows select, Enter opens, typing edits the text | F1 help"),
    .text_visible = true,
    .every_head = true,
    .toggle = ACT_OVERVIEW,
    .opened = overview_opened,
    .state_size = sizeof(ov_state),
    .init = NULL,
    .layout = overview_layout,
    .draw = overview_draw,
    .key = NULL,
    .action = overview_action,
    .mouse = overview_mouse,
    .figure_name = overview_figure_name,
    .figure = overview_figure,
};
