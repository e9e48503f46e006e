/* Figures as PNG and PDF through cairo, with text shaped by pango in the
 * system's fonts (Noto Sans CJK for Chinese), drawing figure_layout's
 * geometry as figure_svg.c does. Built only when meson finds cairo and
 * pangocairo. */
#include "attnview/figure.h"
#include "attnview/i18n.h"

#include "figure_draw.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PNG_MAX_SIDE 32767 /* cairo's image surfaces */

typedef struct pen {
	cairo_t *cr;
	PangoLayout *layout;
	PangoFontDescription *font;
} pen;

static void colour(cairo_t *cr, cm_rgb c)
{
	cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

enum { T_BOLD = 1, T_ITALIC = 2, T_UNDERLINE = 4, T_ROTATED = 8 };

/* Text at (x, y) as figure_svg's text(): baseline y, anchored at its start,
 * middle or end; rotated reads upwards. */
static void text(pen *p, double x, double y, double size, char anchor, uint32_t rgb, int style,
		 const char *t)
{
	pango_font_description_set_absolute_size(p->font, size * PANGO_SCALE);
	pango_font_description_set_weight(p->font,
					  style & T_BOLD ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
	pango_font_description_set_style(p->font, style & T_ITALIC ? PANGO_STYLE_ITALIC
								   : PANGO_STYLE_NORMAL);
	pango_layout_set_font_description(p->layout, p->font);
	PangoAttrList *attrs = pango_attr_list_new();
	if (style & T_UNDERLINE)
		pango_attr_list_insert(attrs, pango_attr_underline_new(PANGO_UNDERLINE_SINGLE));
	pango_layout_set_attributes(p->layout, attrs);
	pango_attr_list_unref(attrs);
	pango_layout_set_text(p->layout, t, -1);
	PangoRectangle logical;
	pango_layout_get_extents(p->layout, NULL, &logical);
	double w = (double)logical.width / PANGO_SCALE;
	double base = (double)pango_layout_get_baseline(p->layout) / PANGO_SCALE;
	double dx = anchor == 'm' ? -w / 2 : anchor == 'e' ? -w : 0;
	cairo_save(p->cr);
	cairo_translate(p->cr, x, y);
	if (style & T_ROTATED)
		cairo_rotate(p->cr, -M_PI / 2);
	cairo_move_to(p->cr, dx, -base);
	colour(p->cr, fig_hex(rgb));
	pango_cairo_show_layout(p->cr, p->layout);
	cairo_restore(p->cr);
}

/* Light grey with lines at 45 degrees, as the SVG's pattern. */
static cairo_pattern_t *hatch(void)
{
	double s = FIG_MASK_PERIOD;
	cairo_rectangle_t r = {0, 0, s, s};
	cairo_surface_t *rec = cairo_recording_surface_create(CAIRO_CONTENT_COLOR, &r);
	cairo_t *cr = cairo_create(rec);
	colour(cr, fig_hex(FIG_MASK_BG));
	cairo_paint(cr);
	colour(cr, fig_hex(FIG_MASK_LINE));
	cairo_rectangle(cr, 0, 0, s / 4, s);
	cairo_fill(cr);
	cairo_destroy(cr);
	cairo_pattern_t *pat = cairo_pattern_create_for_surface(rec);
	cairo_surface_destroy(rec);
	cairo_pattern_set_extend(pat, CAIRO_EXTEND_REPEAT);
	cairo_matrix_t m;
	cairo_matrix_init_rotate(&m, -M_PI / 4); /* user -> pattern space */
	cairo_pattern_set_matrix(pat, &m);
	return pat;
}

/* ---- cells ---------------------------------------------------------------------- */

static void cells_rects(cairo_t *cr, const figure *f, const fig_geom *g, int i)
{
	const fig_heatmap *h = &f->tiles[i];
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	for (int q = 0; q < h->n; q++)
		for (int k = 0; k < h->nk; k++) {
			cm_rgb c;
			if (!fig_cell_rgb(h, q, k, &c))
				continue;
			double x, y;
			fig_cell_origin(f, g, i, q, k, &x, &y);
			colour(cr, c);
			cairo_rectangle(cr, x, y, g->cell, g->cell);
			cairo_fill(cr);
		}
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
}

/* One pixel per cell, scaled up without smoothing (a PDF's image says
 * /Interpolate false). */
static bool cells_image(cairo_t *cr, const figure *f, const fig_geom *g, int i)
{
	const fig_heatmap *h = &f->tiles[i];
	uint8_t *px = fig_tile_pixels(h, 1);
	cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, h->nk, h->n);
	if (!px || cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
		free(px);
		cairo_surface_destroy(img);
		return false;
	}
	cairo_surface_flush(img);
	uint8_t *data = cairo_image_surface_get_data(img);
	int stride = cairo_image_surface_get_stride(img);
	for (int y = 0; y < h->n; y++)
		for (int x = 0; x < h->nk; x++) {
			const uint8_t *s = px + ((size_t)y * h->nk + x) * 3;
			uint32_t v =
			    0xff000000u | (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2];
			memcpy(data + (size_t)y * stride + (size_t)x * 4, &v, 4);
		}
	cairo_surface_mark_dirty(img);
	free(px);
	double x, y;
	fig_cell_origin(f, g, i, 0, 0, &x, &y);
	cairo_save(cr);
	cairo_translate(cr, x, y);
	cairo_scale(cr, g->cell, g->cell);
	cairo_set_source_surface(cr, img, 0, 0);
	cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
	cairo_rectangle(cr, 0, 0, h->nk, h->n);
	cairo_fill(cr);
	cairo_restore(cr);
	cairo_surface_destroy(img);
	return true;
}

static void cells_masked(cairo_t *cr, cairo_pattern_t *hp, const figure *f, const fig_geom *g,
			 int i)
{
	const fig_heatmap *h = &f->tiles[i];
	bool any = false;
	for (int q = 0; q < h->n; q++) {
		int k0;
		if (!fig_masked_run(h, q, &k0))
			continue;
		double x, y;
		fig_cell_origin(f, g, i, q, k0, &x, &y);
		cairo_rectangle(cr, x, y, (h->nk - k0) * g->cell, g->cell);
		any = true;
	}
	if (any) {
		cairo_set_source(cr, hp);
		cairo_fill(cr);
	}
}

static void cells_values(pen *p, const figure *f, const fig_geom *g)
{
	const fig_heatmap *h = &f->tiles[0];
	for (int q = 0; q < h->n; q++)
		for (int k = 0; k < h->nk; k++) {
			cm_rgb c;
			if (!fig_cell_rgb(h, q, k, &c))
				continue;
			char v[16];
			fig_format_value(v, h->w[(size_t)q * (size_t)h->nk + (size_t)k],
					 h->kind == SCALE_DIFF);
			double x, y;
			fig_cell_origin(f, g, 0, q, k, &x, &y);
			text(p, x + g->cell / 2, y + g->cell / 2 + 0.35 * g->value_font,
			     g->value_font, 'm', colormap_dark_text(c) ? 0x000000 : 0xffffff, 0, v);
		}
}

/* ---- labels, titles, the colour bar ---------------------------------------------- */

static void labels(pen *p, const figure *f, const fig_geom *g)
{
	const fig_heatmap *h = &f->tiles[0];
	double c = g->cell, across = h->nk * c, side = h->n * c;
	text(p, g->x0 + across / 2, g->key_axis_y, g->axis_font, 'm', FIG_GREY, T_ITALIC,
	     fig_col_axis(h));
	text(p, g->query_axis_x, g->y0 + side / 2, g->axis_font, 'm', FIG_GREY,
	     T_ITALIC | T_ROTATED, fig_row_axis(h));
	char num[16];
	for (int i = 0; i < h->n || i < h->nk; i++) {
		double mid = i * c + c / 2;
		snprintf(num, sizeof num, "%d", i);
		if (fig_index_shown(g, i) && fig_col_numbered(h, i))
			text(p, g->x0 + mid, g->key_index_y, g->index_font, 'm', FIG_GREY, 0, num);
		if (fig_index_shown(g, i) && i < h->n)
			text(p, g->row_index_x, g->y0 + mid + 0.35 * g->index_font, g->index_font,
			     'e', FIG_GREY, 0, num);
		if (!g->label_font || !h->labels)
			continue;
		bool unk = i < h->nk && fig_col_unknown(h, i);
		uint32_t col = unk ? FIG_UNKNOWN : FIG_INK;
		int st = unk ? T_UNDERLINE : 0;
		if (i < h->nk && g->rotate_keys)
			text(p, g->x0 + mid + 0.35 * g->label_font, g->key_label_y, g->label_font,
			     's', col, st | T_ROTATED, fig_col_label_text(f, i));
		else if (i < h->nk)
			text(p, g->x0 + mid, g->key_label_y, g->label_font, 'm', col, st,
			     fig_col_label_text(f, i));
		if (i >= h->n)
			continue;
		col = h->unknown[i] ? FIG_UNKNOWN : FIG_INK;
		st = h->unknown[i] ? T_UNDERLINE : 0;
		text(p, g->row_label_x, g->y0 + mid + 0.35 * g->label_font, g->label_font, 'e', col,
		     st, h->labels[i]);
	}
}

static void bar(pen *p, cairo_pattern_t *hp, const figure *f, const fig_geom *g)
{
	cairo_t *cr = p->cr;
	cairo_pattern_t *grad = cairo_pattern_create_linear(0, g->bar_y + g->bar_h, 0, g->bar_y);
	for (int i = 0; i < FIG_BAR_STOPS; i++) {
		double t = (double)i / (FIG_BAR_STOPS - 1);
		cm_rgb c = colormap_rgb(f->tiles[0].ramp, t);
		cairo_pattern_add_color_stop_rgb(grad, t, c.r / 255.0, c.g / 255.0, c.b / 255.0);
	}
	cairo_rectangle(cr, g->bar_x, g->bar_y, g->bar_w, g->bar_h);
	cairo_set_source(cr, grad);
	cairo_fill_preserve(cr);
	cairo_pattern_destroy(grad);
	colour(cr, fig_hex(FIG_GREY));
	cairo_set_line_width(cr, 0.5);
	cairo_stroke(cr);
	scale_tick ticks[8];
	const char *unit;
	int nt = fig_ticks(f, ticks, 8, &unit);
	text(p, g->bar_x, g->unit_y, g->tick_font, 's', FIG_GREY, 0, unit);
	cairo_set_line_width(cr, 1);
	for (int i = 0; i < nt; i++) {
		double y = g->bar_y + g->bar_h * (1 - ticks[i].t);
		colour(cr, fig_hex(FIG_GREY));
		cairo_move_to(cr, g->bar_x + g->bar_w, y);
		cairo_rel_line_to(cr, 4, 0);
		cairo_stroke(cr);
		text(p, g->bar_x + g->bar_w + 7, y + 0.35 * g->tick_font, g->tick_font, 's',
		     FIG_GREY, 0, ticks[i].label);
	}
	double y = g->legend_y;
	if (g->legend_masked) {
		cairo_rectangle(cr, g->bar_x, y, 12, 12);
		cairo_set_source(cr, hp);
		cairo_fill_preserve(cr);
		colour(cr, fig_hex(FIG_GREY));
		cairo_set_line_width(cr, 0.5);
		cairo_stroke(cr);
		text(p, g->bar_x + 18, y + 10, g->tick_font, 's', FIG_GREY, 0, "masked");
		y += 20;
	}
	if (g->legend_unknown)
		text(p, g->bar_x, y + 10, g->tick_font, 's', FIG_UNKNOWN, T_UNDERLINE,
		     "unknown character");
}

static bool draw(pen *p, const figure *f, const fig_geom *g)
{
	cairo_t *cr = p->cr;
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	if (f->title)
		text(p, g->margin, g->title_y, g->title_font, 's', FIG_INK, T_BOLD, f->title);
	if (f->subtitle)
		text(p, g->margin, g->sub_y, g->sub_font, 's', FIG_GREY, 0, f->subtitle);
	cairo_pattern_t *hp = hatch();
	bool ok = true;
	for (int i = 0; i < f->rows * f->cols && ok; i++) {
		if (g->image)
			ok = cells_image(cr, f, g, i);
		else
			cells_rects(cr, f, g, i);
		cells_masked(cr, hp, f, g, i);
		const fig_heatmap *h = &f->tiles[i];
		if (h->title[0] && f->rows * f->cols > 1) {
			double x, y;
			fig_cell_origin(f, g, i, 0, 0, &x, &y);
			text(p, x, y + g->tile_title_dy, g->tile_font, 's', FIG_INK, 0, h->title);
		}
	}
	if (ok && f->rows * f->cols == 1) {
		if (f->values)
			cells_values(p, f, g);
		labels(p, f, g);
	}
	bar(p, hp, f, g);
	cairo_pattern_destroy(hp);
	return ok;
}

const char *fig_formats(void)
{
	static char buf[96];
	snprintf(buf, sizeof buf, "SVG, PNG, PDF (cairo %s, pango %s)", cairo_version_string(),
		 pango_version_string());
	return buf;
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int n)
{
	return atomic_write(closure, data, n) ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static bool pen_init(pen *p, cairo_surface_t *s)
{
	p->cr = cairo_create(s);
	p->layout = pango_cairo_create_layout(p->cr);
	/* Metrics unhinted: text takes the same room at every scale, in the
	 * PNG as in the PDF. */
	cairo_font_options_t *fo = cairo_font_options_create();
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	pango_cairo_context_set_font_options(pango_layout_get_context(p->layout), fo);
	cairo_font_options_destroy(fo);
	pango_layout_context_changed(p->layout);
	p->font = pango_font_description_new();
	pango_font_description_set_family(p->font, FIG_FONTS);
	return cairo_status(p->cr) == CAIRO_STATUS_SUCCESS;
}

static void pen_finish(pen *p)
{
	pango_font_description_free(p->font);
	g_object_unref(p->layout);
	cairo_destroy(p->cr);
}

bool fig_write_cairo(const figure *f, const fig_geom *g, fig_format fmt, atomic_file *af,
		     av_error *err)
{
	cairo_surface_t *s;
	int px = FIG_PNG_SCALE;
	if (fmt == FIG_PDF) {
		s = cairo_pdf_surface_create_for_stream(to_file, af, g->width, g->height);
	} else {
		if (g->width * px > PNG_MAX_SIDE || g->height * px > PNG_MAX_SIDE)
			return av_fail(err,
				       _("the figure is %.0fx%.0f pixels, more than a PNG can have "
					 "here (%d); write an .svg or .pdf instead"),
				       g->width * px, g->height * px, PNG_MAX_SIDE);
		s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)g->width * px,
					       (int)g->height * px);
	}
	pen p = {0};
	bool drawn = cairo_surface_status(s) == CAIRO_STATUS_SUCCESS && pen_init(&p, s);
	if (drawn) {
		if (fmt == FIG_PNG) {
			cairo_scale(p.cr, px, px);
			pango_cairo_update_layout(p.cr, p.layout);
		}
		drawn = draw(&p, f, g) && cairo_status(p.cr) == CAIRO_STATUS_SUCCESS;
	}
	if (p.cr)
		pen_finish(&p);
	cairo_status_t st = CAIRO_STATUS_SUCCESS;
	if (fmt == FIG_PNG && drawn)
		st = cairo_surface_write_to_png_stream(s, to_file, af);
	else
		cairo_surface_finish(s);
	if (fmt == FIG_PDF || !drawn)
		st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (st == CAIRO_STATUS_WRITE_ERROR && !atomic_ok(af))
		return false; /* atomic_commit says why */
	if (!drawn || st != CAIRO_STATUS_SUCCESS)
		return av_fail(err, _("cairo could not draw the figure: %s"),
			       cairo_status_to_string(
				   st != CAIRO_STATUS_SUCCESS ? st : CAIRO_STATUS_NO_MEMORY));
	return true;
}
