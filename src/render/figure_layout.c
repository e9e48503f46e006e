/* Where everything of a figure goes (figure.h, figure_layout), in units,
 * for every writer. Text widths are estimated (figure.h, fig_text_width), so
 * that the SVG, which is drawn by a viewer with its own fonts, and the PNG
 * and PDF, drawn with pango, share one layout. */
#include "attnview/figure.h"

#include "figure_draw.h"

#include <math.h>
#include <string.h>

/* ---- layout ----------------------------------------------------------------------- */

#define MARGIN	   16.0
#define TITLE_FONT 16.0
#define SUB_FONT   12.0
#define AXIS_FONT  12.0
#define TICK_FONT  11.0
#define TILE_FONT  11.0
#define BAR_W	   14.0
#define BAR_MIN_H  140.0

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Cells are shown as one image per tile past this many cells in all: an
 * SVG of 4096 rectangles with their tooltips is about 700 KB already, and
 * PDF viewers draw seams between many small rectangles. */
#define FIG_MAX_RECT_CELLS 4096

/* Side of a cell: large for a short text (a 24-character poem fills a
 * slide), readable labels up to the built-in model's context of 128 tokens,
 * and about 1200 units at most beyond. */
static double widest_label(const figure *f, double font);
static double widest_col_label(const figure *f, double font);

static double label_font(double cell)
{
	return clampd(0.6 * cell, 6, 14);
}

static double cell_side(const figure *f, int n)
{
	if (f->rows * f->cols > 1)
		return clampd(floor(192.0 / n), 1, 24);
	double c = fmin(28, fmax(floor(720.0 / n), fmin(9, floor(1200.0 / n))));
	if (f->values)
		c = fmax(c, 24);
	/* Wider cells for a few long labels (words, "他/她"), rather than
	 * labels turned on their side. */
	double need = ceil(widest_col_label(f, label_font(c)) / 0.95);
	if (need > c && n * need <= 720)
		c = fmin(need, 64);
	return c < 1 ? 1 : c;
}

/* The widest label of the single heatmap, at font size `font`. */
static double widest_label(const figure *f, double font)
{
	double w = 0;
	const char *s;
	for (int i = 0; (s = fig_label_text(f, i)); i++)
		w = fmax(w, fig_text_width(s, font));
	return w;
}

/* The widest column label of the single heatmap. */
static double widest_col_label(const figure *f, double font)
{
	double w = 0;
	const char *s;
	for (int i = 0; (s = fig_col_label_text(f, i)); i++)
		w = fmax(w, fig_text_width(s, font));
	return w;
}

/* Titles at the top; returns the y where what follows starts. */
static double layout_titles(const figure *f, fig_geom *g)
{
	double y = g->margin;
	g->title_font = TITLE_FONT;
	g->sub_font = SUB_FONT;
	if (f->title) {
		g->title_y = y + TITLE_FONT;
		y += TITLE_FONT * 1.5;
	}
	if (f->subtitle) {
		g->sub_y = y + SUB_FONT;
		y += SUB_FONT * 1.6;
	}
	return y + 6;
}

/* One heatmap with its labels: axis names, position numbers, labels. */
static void layout_single(const figure *f, fig_geom *g, double y)
{
	int n = g->n > g->nk ? g->n : g->nk;
	double c = g->cell;
	bool labels = fig_label_text(f, 0) && c >= 6;
	g->axis_font = AXIS_FONT;
	g->index_font = clampd(0.42 * c, 6, 10);
	g->label_font = labels ? label_font(c) : 0;
	double numw = 0.6 * g->index_font * av_digits(n - 1);
	g->index_every = numw + 2 <= c ? 1 : numw + 4 <= 5 * c ? 5 : numw + 4 <= 10 * c ? 10 : 0;
	/* "Key" over the columns, then the numbers, then the labels. */
	g->key_axis_y = y + AXIS_FONT;
	y += AXIS_FONT * 1.5;
	if (g->index_every) {
		g->key_index_y = y + g->index_font;
		y += g->index_font + 4;
	}
	double lw = labels ? widest_label(f, g->label_font) : 0;
	double kw = labels ? widest_col_label(f, g->label_font) : 0;
	g->rotate_keys = kw > 0.95 * c;
	if (labels) {
		double h = g->rotate_keys ? kw + 4 : g->label_font * 1.3;
		g->key_label_y = g->rotate_keys ? y + h - 2 : y + g->label_font;
		y += h + 2;
	}
	g->y0 = ceil(y + 2); /* cells on whole units: crisp in a PNG */
	/* "Query" up the left side, the numbers, the labels, then the cells. */
	double x = g->margin;
	g->query_axis_x = x + AXIS_FONT;
	x += AXIS_FONT * 1.6;
	if (g->index_every) {
		x += numw;
		g->row_index_x = x;
		x += 5;
	}
	if (labels) {
		x += lw;
		g->row_label_x = x;
		x += 5;
	}
	g->x0 = ceil(x + 2);
	if (f->values) {
		char buf[16];
		fig_format_value(buf, -0.5f, f->tiles[0].kind == SCALE_DIFF);
		double chars = (double)strlen(buf);
		g->value_font = fmin(fmin(0.85 * c / (0.6 * chars), 0.42 * c), 12);
	}
	g->pitch_x = g->pitch_y = 0;
}

/* A grid of tiles, each with its title above. */
static void layout_grid(const figure *f, fig_geom *g, double y)
{
	double side = g->n * g->cell;
	double tw = 0;
	for (int i = 0; i < f->rows * f->cols; i++)
		tw = fmax(tw, fig_text_width(f->tiles[i].title, TILE_FONT));
	g->tile_font = TILE_FONT;
	g->tile_title_dy = -5;
	g->x0 = g->margin;
	g->y0 = ceil(y + TILE_FONT + 6);
	g->pitch_x = ceil(fmax(side, tw) + 14);
	g->pitch_y = side + TILE_FONT + 6 + 12;
}

/* The colour bar right of the cells, its ticks, and the legend below it. */
static double layout_bar(const figure *f, fig_geom *g, double cells_right, double cells_bottom)
{
	g->tick_font = TICK_FONT;
	g->bar_x = cells_right + 18;
	g->bar_y = g->y0;
	g->bar_w = BAR_W;
	g->bar_h = fmax(fmin(cells_bottom - g->y0, 800), BAR_MIN_H);
	g->unit_y = g->bar_y - 10;
	scale_tick ticks[8];
	const char *unit;
	int nt = fig_ticks(f, ticks, 8, &unit);
	double right = g->bar_x + fig_text_width(unit, TICK_FONT);
	for (int i = 0; i < nt; i++)
		right =
		    fmax(right, g->bar_x + BAR_W + 8 + fig_text_width(ticks[i].label, TICK_FONT));
	g->legend_masked = fig_any_masked(f);
	g->legend_unknown = fig_any_unknown(f);
	g->legend_y = g->bar_y + g->bar_h + 14;
	double bottom = g->bar_y + g->bar_h;
	if (g->legend_masked) {
		right = fmax(right, g->bar_x + 18 + fig_text_width("masked", TICK_FONT));
		bottom += 20;
	}
	if (g->legend_unknown) {
		right = fmax(right, g->bar_x + fig_text_width("¿x unknown character", TICK_FONT));
		bottom += 20;
	}
	g->height = fmax(g->height, bottom + g->margin);
	return right;
}

void figure_layout(const figure *f, fig_geom *g)
{
	memset(g, 0, sizeof *g);
	bool grid = f->rows * f->cols > 1;
	g->margin = MARGIN;
	g->n = f->tiles[0].n;
	g->nk = f->tiles[0].nk;
	g->cell = cell_side(f, g->n > g->nk ? g->n : g->nk);
	g->image =
	    (size_t)f->rows * (size_t)f->cols * (size_t)g->n * (size_t)g->nk > FIG_MAX_RECT_CELLS;
	double y = layout_titles(f, g);
	if (grid)
		layout_grid(f, g, y);
	else
		layout_single(f, g, y);
	double side = g->n * g->cell, across = g->nk * g->cell;
	double right = grid ? g->x0 + (f->cols - 1) * g->pitch_x + side : g->x0 + across;
	double bottom = grid ? g->y0 + (f->rows - 1) * g->pitch_y + side : g->y0 + side;
	g->height = bottom + g->margin;
	right = layout_bar(f, g, right, bottom);
	g->width = right + g->margin;
	if (f->title)
		g->width = fmax(g->width, 2 * g->margin + fig_text_width(f->title, TITLE_FONT));
	if (f->subtitle)
		g->width = fmax(g->width, 2 * g->margin + fig_text_width(f->subtitle, SUB_FONT));
	g->width = ceil(g->width);
	g->height = ceil(g->height);
}

void fig_cell_origin(const figure *f, const fig_geom *g, int i, int q, int k, double *x, double *y)
{
	int r = i / f->cols, c = i % f->cols;
	*x = g->x0 + c * g->pitch_x + k * g->cell;
	*y = g->y0 + r * g->pitch_y + q * g->cell;
}
