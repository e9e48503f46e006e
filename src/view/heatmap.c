/* The heatmap of a matrix (heatmap.h). */
#include "heatmap.h"
#include "attnview/i18n.h"

#include "colors.h"
#include "keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The names of --cells; a person reads them translated (heat_cells_title). */
static const char *const cells_names[CELLS_NMODES] = {NC_("cells", "fit"), NC_("cells", "scroll"),
						      NC_("cells", "compact")};

const char *heat_cells_name(heat_cells c)
{
	return c < CELLS_NMODES ? cells_names[c] : "?";
}

const char *heat_cells_title(heat_cells c)
{
	return av_pgettext("cells", heat_cells_name(c));
}

/* The accent colour (the cursor's marks), as the view's chrome has it. */
static style heat_accent(colors *col, attr_t a)
{
	return ui_style(col, UI_ACCENT, a);
}

static int ceil_div(int a, int b)
{
	return (a + b - 1) / b;
}

/* Compact: a column per key block and a half line (or a line) per query
 * block, blocks as small as the area allows. */
static void layout_compact(heat_geom *g, int n, int avail_w, int avail_h)
{
	g->compact = true;
	g->kstep = ceil_div(n > 0 ? n : 1, avail_w > 0 ? avail_w : 1);
	g->ncols = ceil_div(n, g->kstep);
	int per_line = g->halves ? 2 : 1;
	g->qstep = ceil_div(n > 0 ? n : 1, per_line * (avail_h > 0 ? avail_h : 1));
	g->nlines = ceil_div(ceil_div(n, g->qstep), per_line);
	g->cell_w = g->cell_h = 1;
	g->vis_rows = g->vis_cols = n;
}

void heat_token_labels(heat_label *out, const token *tok, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = (heat_label){NULL, tok[i].cp, tok[i].width, tok[i].unknown};
}

/* A label in at most maxw columns: a token's glyph, or a text cut with "…". */
static void put_label(colors *col, int y, int x, int maxw, const heat_label *l, attr_t a)
{
	style s = l->unknown ? ui_style(col, UI_UNKNOWN, a | A_UNDERLINE) : st(a, 0);
	if (!l->text) {
		put_glyph(y, x, l->cp, s);
		return;
	}
	put_str_cut(y, x, maxw, s, l->text);
}

void heat_layout(heat_geom *g, int n, int label_w, int x, int y, int w, int h, heat_cells cells,
		 bool values, bool halves)
{
	memset(g, 0, sizeof *g);
	g->label_w = label_w < 2 ? 2 : label_w > VIEW_CELL_MAX_W ? VIEW_CELL_MAX_W : label_w;
	g->n = n;
	g->x = x;
	g->w = w;
	g->halves = halves;
	g->values = values;
	g->tick_y = y;
	g->keys_y = y + 1;
	g->cells_y = y + 2;
	g->posw = av_digits(n > 0 ? n - 1 : 0);
	if (g->posw < 2)
		g->posw = 2;
	/* marker, position, space, label, space */
	g->cx0 = x + 1 + g->posw + 1 + g->label_w + 1;
	int avail_w = x + w - g->cx0 - VIEW_BAR_W;
	int avail_h = h - 3; /* headings and footer */
	if (avail_h < 1)
		avail_h = 1;
	int wmin = values ? VIEW_VALUE_CELL_W : VIEW_CELL_W;
	/* Words like room over their columns (longer ones are cut with "…"),
	 * and take less before the map goes compact. */
	int wpref = g->label_w < VIEW_WORD_CELL_W ? g->label_w : VIEW_WORD_CELL_W;
	if (wpref < wmin)
		wpref = wmin;
	while (cells == CELLS_FIT && wpref > wmin && n * wpref > avail_w)
		wpref--;
	/* Fit never goes compact: labelled cells that scroll are read more
	 * easily than an unlabelled whole (F6 still gives compact). */
	if (!values && cells == CELLS_COMPACT) {
		layout_compact(g, n, avail_w, avail_h);
	} else {
		g->cell_w = wpref;
		if (cells == CELLS_FIT && n > 0)
			while (g->cell_w < VIEW_CELL_MAX_W && n * (g->cell_w + 1) <= avail_w)
				g->cell_w++;
		/* About square: a terminal cell is about twice as tall as wide. */
		g->cell_h = 1;
		if (cells == CELLS_FIT)
			while (g->cell_h < VIEW_CELL_MAX_H && 2 * (g->cell_h + 1) <= g->cell_w &&
			       n * (g->cell_h + 1) <= avail_h)
				g->cell_h++;
		g->vis_cols = avail_w / g->cell_w;
		g->vis_rows = avail_h / g->cell_h;
		if (g->vis_rows < 1)
			g->vis_rows = 1;
		if (g->vis_cols < 1)
			g->vis_cols = 1;
	}
	int cols_w = g->compact ? g->ncols : (n < g->vis_cols ? n : g->vis_cols) * g->cell_w;
	int rows_h = g->compact ? g->nlines : (n < g->vis_rows ? n : g->vis_rows) * g->cell_h;
	g->foot_y = g->cells_y + rows_h;
	g->bar_x = g->cx0 + cols_w;
	/* The bar is as tall as the cells, and readable when they are few. */
	g->bar_h = rows_h < 7 ? (avail_h < 7 ? avail_h : 7) : rows_h;
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
	if (g->compact) {
		hv->top = hv->left = 0;
		return;
	}
	/* Labels stay put while the cells scroll. */
	hv->top = scroll_to(hv->top, hv->qrow, g->vis_rows, n);
	hv->left = scroll_to(hv->left, hv->kcol, g->vis_cols, n);
}

/* ---- cells ------------------------------------------------------------- */

/* One cell at (y, x), cell_w x cell_h; its text goes on the middle line. */
static void draw_cell(colors *col, const heat_src *s, const heat_geom *g, int y, int x, bool cursor,
		      int q, int k)
{
	int cw = g->cell_w, ch = g->cell_h, ty = y + (ch - 1) / 2;
	if (attn_masked(&s->m, q, k)) {
		/* Masked is not zero: the key is invisible to this query. */
		style ms = ui_style(col, UI_MASKED, A_DIM);
		for (int i = 0; i < ch; i++)
			fill(y + i, x, cw, ms);
		put_str(ty, x + cw - 1 - (cw > 2), 1, cursor ? heat_accent(col, A_BOLD) : ms,
			cursor ? "×" : "·");
		return;
	}
	float w = attn_at(&s->m, q, k);
	float t = scale_pos(&s->sc, q, w);
	bool colour = col->mode >= CM_256;
	style cs = colour ? ramp_style(col, t, A_NORMAL) : plain();
	for (int i = 0; i < ch; i++) {
		if (colour) {
			fill(y + i, x, cw, cs);
		} else {
			wchar_t wc[2] = {(wchar_t)colormap_shade(t), 0};
			for (int j = 0; j < cw; j++)
				put_wc(y + i, x + j, wc, cs);
		}
	}
	if (g->values) {
		char buf[8];
		fmt_cell_value(buf, w);
		style ts = cs;
		if (cursor)
			ts.a |= A_REVERSE | A_BOLD;
		if (!colour)
			fill(ty, x, cw, ts);
		put_str(ty, x + 1 + (cw - 5) / 2, 4, ts, buf);
	} else if (cursor) {
		cs.a |= A_BOLD;
		put_str(ty, x + (cw - 2) / 2, 2, cs, "<>");
	}
}

/* Key positions (every fifth, every one when the cells are wide enough, and
 * the cursor's) and key labels. */
static void draw_keys(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv,
		      int cols)
{
	int end = g->bar_x;
	for (int j = 0; j < cols; j++) {
		int k = hv->left + j, x = g->cx0 + j * g->cell_w;
		bool cur = k == hv->kcol;
		char num[16];
		int len = snprintf(num, sizeof num, "%d", k);
		bool room = g->cell_w > len;
		if (room || k % 5 == 0 || cur) {
			/* The cursor's column number wins over its neighbours'. */
			int nx = x + (room ? (g->cell_w - len) / 2 : 0);
			if (cur || nx + len <= end)
				put_str(g->tick_y, nx, end - nx + (cur ? len : 0),
					cur ? heat_accent(col, A_BOLD) : st(A_DIM, 0), num);
		}
		/* A word leaves a column free before the next one. */
		const heat_label *t = &s->labels[k];
		int lw = t->text && g->cell_w > 2 ? g->cell_w - 1 : g->cell_w;
		int tw = t->width < lw ? t->width : lw;
		if (cur)
			fill(g->keys_y, x, g->cell_w, st(A_REVERSE | A_BOLD, 0));
		put_label(col, g->keys_y, x + (g->cell_w - tw) / 2, lw, t,
			  cur ? A_REVERSE | A_BOLD : A_NORMAL);
	}
}

/* A Query row's label: marker, position, token. */
static void draw_row_label(colors *col, const heat_src *s, const heat_geom *g, int y, int q, bool cur)
{
	if (cur)
		put_str(y, g->x, 1, heat_accent(col, A_BOLD), "▶");
	style ls = cur ? st(A_REVERSE | A_BOLD, 0) : st(A_DIM, 0);
	put_fmt(y, g->x + 1, g->posw, ls, "%*d", g->posw, q);
	int lx = g->x + 1 + g->posw + 1;
	if (cur)
		fill(y, lx, g->label_w, st(A_REVERSE | A_BOLD, 0));
	put_label(col, y, lx, g->label_w, &s->labels[q], cur ? A_REVERSE | A_BOLD : A_NORMAL);
}

static void draw_cells(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv,
		       int rows, int cols)
{
	draw_keys(col, s, g, hv, cols);
	for (int i = 0; i < rows; i++) {
		int q = hv->top + i, y = g->cells_y + i * g->cell_h;
		draw_row_label(col, s, g, y + (g->cell_h - 1) / 2, q, q == hv->qrow);
		for (int j = 0; j < cols; j++) {
			int k = hv->left + j;
			draw_cell(col, s, g, y, g->cx0 + j * g->cell_w,
				  q == hv->qrow && k == hv->kcol, q, k);
		}
	}
}

/* ---- compact ----------------------------------------------------------- */

/* The largest scaled value in the block of query block qb and key column c;
 * -1 if every cell of it is masked. */
static float block_value(const heat_src *s, const heat_geom *g, int qb, int c)
{
	int n = s->m.n, q0 = qb * g->qstep, k0 = c * g->kstep;
	int q1 = q0 + g->qstep < n ? q0 + g->qstep : n, k1 = k0 + g->kstep < n ? k0 + g->kstep : n;
	float best = -1;
	for (int q = q0; q < q1; q++)
		for (int k = k0; k < k1; k++) {
			if (attn_masked(&s->m, q, k))
				continue;
			float t = scale_pos(&s->sc, q, attn_at(&s->m, q, k));
			/* A difference keeps its strongest sign: the value farthest
			 * from the middle. */
			if (s->diverging ? best < 0 || fabsf(t - 0.5f) > fabsf(best - 0.5f) : t > best)
				best = t;
		}
	return best;
}

/* A block's colour: the ramp, the masked grey, or the default background
 * past the last row. */
static int block_color(colors *col, float t, bool exists)
{
	if (!exists)
		return -1;
	return t < 0 ? ui_color_number(col, UI_MASKED) : ramp_color(col, t);
}

static void compact_keys(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv)
{
	/* The cursor's number first; the ticks (every tenth key) keep clear of it. */
	int cur_c = hv->kcol / g->kstep;
	char num[16];
	int cur_len = snprintf(num, sizeof num, "%d", hv->kcol);
	int cur_x = g->cx0 + cur_c;
	if (cur_x + cur_len > g->bar_x)
		cur_x = g->bar_x - cur_len;
	put_str(g->tick_y, cur_x, cur_len, heat_accent(col, A_BOLD), num);
	int next_free = g->cx0;
	for (int c = 0; c < g->ncols; c++) {
		int k0 = c * g->kstep, x = g->cx0 + c;
		if (!(c == 0 || k0 / 10 != (k0 - g->kstep) / 10) || x < next_free)
			continue;
		int len = snprintf(num, sizeof num, "%d", k0);
		if (x + len > g->bar_x || (x + len >= cur_x && x <= cur_x + cur_len))
			continue;
		put_str(g->tick_y, x, len, st(A_DIM, 0), num);
		next_free = x + len + 1;
	}
	const heat_label *t = &s->labels[hv->kcol];
	int tw = t->width < VIEW_CELL_MAX_W ? t->width : VIEW_CELL_MAX_W;
	int x = g->cx0 + cur_c;
	if (x + tw > g->bar_x)
		x = g->bar_x - tw;
	put_label(col, g->keys_y, x, tw, t, A_REVERSE | A_BOLD);
}

static void compact_label(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv,
			  int line)
{
	int per = g->halves ? 2 : 1, q0 = line * per * g->qstep, q1 = q0 + per * g->qstep;
	int y = g->cells_y + line;
	if (hv->qrow >= q0 && hv->qrow < q1) {
		draw_row_label(col, s, g, y, hv->qrow, true);
		return;
	}
	if (line % 5 == 0)
		put_fmt(y, g->x + 1, g->posw, st(A_DIM, 0), "%*d", g->posw, q0);
}

static void draw_compact(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv)
{
	int n = s->m.n, nqb = ceil_div(n, g->qstep);
	int cur_qb = hv->qrow / g->qstep, cur_c = hv->kcol / g->kstep;
	compact_keys(col, s, g, hv);
	for (int line = 0; line < g->nlines; line++) {
		compact_label(col, s, g, hv, line);
		int y = g->cells_y + line;
		for (int c = 0; c < g->ncols; c++) {
			int x = g->cx0 + c;
			if (!g->halves) {
				float t = block_value(s, g, line, c);
				bool cur = line == cur_qb && c == cur_c;
				wchar_t wc[2] = {(wchar_t)(t < 0 ? L'·' : colormap_shade(t)), 0};
				put_wc(y, x, wc, cur ? heat_accent(col, A_REVERSE | A_BOLD) : plain());
				continue;
			}
			int up = 2 * line, lo = up + 1;
			int fg = block_color(col, block_value(s, g, up, c), true);
			int bg = block_color(col, lo < nqb ? block_value(s, g, lo, c) : 0, lo < nqb);
			const wchar_t *glyph = L"▀";
			if (c == cur_c && cur_qb == up) {
				fg = ui_color_number(col, UI_ACCENT);
			} else if (c == cur_c && cur_qb == lo) {
				/* The lower half in the accent: the lower half block. */
				glyph = L"▄";
				bg = fg;
				fg = ui_color_number(col, UI_ACCENT);
			}
			put_wc(y, x, glyph, pair_style(col, fg, bg, A_NORMAL));
		}
	}
}

/* ---- the colour bar, markers, footer ------------------------------------ */

void heat_draw_bar(colors *col, const scale *sc, int x, int y_name, int y0, int h, int x_end)
{
	/* The bar, a tick, a label of 3 columns, a free one before a border. */
	if (x + 6 + (x_end < COLS) > x_end || h < 2)
		return;
	put_str(y_name, x, x_end - x - 1, st(A_BOLD, 0), scale_title(sc->kind));
	/* What the ticks count, where a line is free for it. */
	const char *unit = sc->kind == SCALE_ROW    ? _("÷max")
			   : sc->kind == SCALE_LIFT ? _("×unif")
						    : NULL;
	if (unit && y_name + 1 < y0)
		put_str(y_name + 1, x, x_end - x - 1, st(A_DIM, 0), unit);
	bool colour = col->mode >= CM_256;
	for (int i = 0; i < h; i++) {
		int y = y0 + i;
		if (colour) {
			float tu = 1.0f - (2.0f * i + 0.5f) / (2.0f * h);
			float tl = 1.0f - (2.0f * i + 1.5f) / (2.0f * h);
			style bs = pair_style(col, ramp_color(col, tu), ramp_color(col, tl), A_NORMAL);
			put_wc(y, x, L"▀", bs);
			put_wc(y, x + 1, L"▀", bs);
		} else {
			float t = 1.0f - (i + 0.5f) / h;
			wchar_t wc[2] = {(wchar_t)colormap_shade(t), 0};
			put_wc(y, x, wc, plain());
			put_wc(y, x + 1, wc, plain());
		}
	}
	/* Labels rounded to the room they have, a column short of x_end (the
	 * panel's border) unless that is the screen's edge, never cut. */
	int room = x_end - (x + 3) - (x_end < COLS);
	scale_tick ticks[8];
	int nt = scale_ticks(sc, ticks, 8), last_y = -1;
	for (int i = nt - 1; i >= 0; i--) { /* from the top (1) down */
		int y = y0 + (int)lroundf((1.0f - ticks[i].t) * (h - 1));
		bool ends = i == 0 || i == nt - 1;
		if (y == last_y || (!ends && (y == last_y + 1 || y >= y0 + h - 2)))
			continue;
		char label[16];
		if (!scale_tick_label(label, ticks[i].v, room))
			continue;
		put_str(y, x + 2, 1, st(A_DIM, 0), "╴");
		put_str(y, x + 3, room, plain(), label);
		last_y = y;
	}
}

static void draw_bar(colors *col, const heat_src *s, const heat_geom *g)
{
	heat_draw_bar(col, &s->sc, g->bar_x + 2, g->tick_y, g->cells_y, g->bar_h, g->x + g->w);
}

static void draw_edges(const heat_geom *g, const heat_view *hv, int n, int rows, int cols)
{
	style dim = st(A_DIM, 0);
	bool above = hv->top > 0, below = hv->top + rows < n;
	bool left = hv->left > 0, right = hv->left + cols < n;
	if (left)
		put_str(g->keys_y, g->cx0 - 1, 1, dim, "◀");
	if (right)
		put_str(g->keys_y, g->bar_x, 1, dim, "▶");
	if (above)
		put_str(g->tick_y, g->x, 1, dim, "▲");
	if (below)
		put_str(g->foot_y, g->x, 1, dim, "▼");
	if (!(above || below || left || right))
		return;
	char buf[96];
	int len = 0;
	if (above || below)
		len += snprintf(buf + len, sizeof buf - (size_t)len, _("rows %d-%d of %d"), hv->top,
				hv->top + rows - 1, n);
	if (left || right)
		len += snprintf(buf + len, sizeof buf - (size_t)len, _("%skeys %d-%d of %d"),
				len ? ", " : "", hv->left, hv->left + cols - 1, n);
	put_str(g->foot_y, g->x + 2, g->bar_x - g->x - 2, dim, buf);
}

void heat_draw(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv)
{
	int n = s->m.n;
	colors_use_diverging(col, scale_diverging(s->sc.kind));
	if (g->compact) {
		draw_compact(col, s, g, hv);
	} else {
		int rows = n - hv->top < g->vis_rows ? n - hv->top : g->vis_rows;
		int cols = n - hv->left < g->vis_cols ? n - hv->left : g->vis_cols;
		draw_cells(col, s, g, hv, rows, cols);
		draw_edges(g, hv, n, rows, cols);
	}
	draw_bar(col, s, g);
	colors_use_diverging(col, false);
}

bool heat_hit(const heat_geom *g, const heat_view *hv, int n, int y, int x, int *q, int *k)
{
	int qq = -1, kk = -1;
	if (g->compact) {
		int per = g->halves ? 2 : 1;
		if (y >= g->cells_y && y < g->cells_y + g->nlines)
			qq = (y - g->cells_y) * per * g->qstep;
		if (x >= g->cx0 && x < g->cx0 + g->ncols)
			kk = (x - g->cx0) * g->kstep;
	} else {
		if (y >= g->cells_y && y < g->foot_y)
			qq = hv->top + (y - g->cells_y) / g->cell_h;
		if (x >= g->cx0 && x < g->bar_x)
			kk = hv->left + (x - g->cx0) / g->cell_w;
	}
	if (y == g->keys_y || y == g->tick_y)
		qq = hv->qrow;
	if (x >= g->x && x < g->cx0 && qq >= 0)
		kk = hv->kcol;
	if (qq < 0 || qq >= n || kk < 0 || kk >= n)
		return false;
	*q = qq;
	*k = kk;
	return true;
}
