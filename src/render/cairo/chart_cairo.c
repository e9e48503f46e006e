/* Line charts (chart.h) as PNG and PDF through cairo, text shaped by pango
 * in the system's fonts, drawing the list chart.c writes as SVG. */
#include "attnview/i18n.h"

#include "chart.h"
#include "figure_draw.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <pango/pangocairo.h>

#define PNG_MAX_SIDE 32767

static void colour(cairo_t *cr, uint32_t rgb)
{
	cairo_set_source_rgb(cr, (rgb >> 16 & 255) / 255.0, (rgb >> 8 & 255) / 255.0,
			     (rgb & 255) / 255.0);
}

static void text(cairo_t *cr, PangoLayout *lay, PangoFontDescription *font, const chart_op *op)
{
	pango_font_description_set_absolute_size(font, op->size * PANGO_SCALE);
	pango_font_description_set_weight(font, op->bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
	pango_layout_set_font_description(lay, font);
	pango_layout_set_text(lay, op->text, -1);
	PangoRectangle logical;
	pango_layout_get_extents(lay, NULL, &logical);
	double w = (double)logical.width / PANGO_SCALE;
	double base = (double)pango_layout_get_baseline(lay) / PANGO_SCALE;
	double dx = op->anchor == 'm' ? -w / 2 : op->anchor == 'e' ? -w : 0;
	cairo_move_to(cr, op->x + dx, op->y - base);
	colour(cr, op->rgb);
	pango_cairo_show_layout(cr, lay);
}

static void draw_op(cairo_t *cr, PangoLayout *lay, PangoFontDescription *font, const chart_op *op)
{
	static const double dash[] = {4, 3};
	switch (op->kind) {
	case CH_TEXT:
		text(cr, lay, font, op);
		break;
	case CH_LINE:
		cairo_new_path(cr);
		for (int i = 0; i < op->n; i++)
			cairo_line_to(cr, op->xy[2 * i], op->xy[2 * i + 1]);
		cairo_set_line_width(cr, op->size);
		cairo_set_dash(cr, dash, op->dashed ? 2 : 0, 0);
		colour(cr, op->rgb);
		cairo_stroke(cr);
		break;
	case CH_RECT:
		cairo_rectangle(cr, op->x, op->y, op->w, op->h);
		if (op->fill >= 0) {
			colour(cr, (uint32_t)op->fill);
			cairo_fill_preserve(cr);
		}
		cairo_set_dash(cr, dash, 0, 0);
		cairo_set_line_width(cr, op->size);
		if (op->rgb != CH_NONE) {
			colour(cr, op->rgb);
			cairo_stroke(cr);
		} else {
			cairo_new_path(cr);
		}
		break;
	}
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int n)
{
	return atomic_write(closure, data, n) ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static bool draw(cairo_surface_t *s, const chart *c, int px)
{
	cairo_t *cr = cairo_create(s);
	cairo_scale(cr, px, px);
	PangoLayout *lay = pango_cairo_create_layout(cr);
	cairo_font_options_t *fo = cairo_font_options_create();
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	pango_cairo_context_set_font_options(pango_layout_get_context(lay), fo);
	cairo_font_options_destroy(fo);
	pango_layout_context_changed(lay);
	PangoFontDescription *font = pango_font_description_new();
	pango_font_description_set_family(font, FIG_FONTS);
	colour(cr, 0xffffff);
	cairo_paint(cr);
	for (size_t i = 0; i < c->n; i++)
		draw_op(cr, lay, font, &c->ops[i]);
	bool ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
	pango_font_description_free(font);
	g_object_unref(lay);
	cairo_destroy(cr);
	return ok;
}

bool chart_write_cairo(const chart *c, fig_format fmt, atomic_file *af, av_error *err)
{
	int px = fmt == FIG_PNG ? FIG_PNG_SCALE : 1;
	if (c->failed)
		return av_fail(err, _("out of memory"));
	cairo_surface_t *s;
	if (fmt == FIG_PDF) {
		s = cairo_pdf_surface_create_for_stream(to_file, af, c->width, c->height);
	} else {
		if (c->width * px > PNG_MAX_SIDE || c->height * px > PNG_MAX_SIDE)
			return av_fail(err,
				       _("the figure is %.0fx%.0f pixels, more than a PNG can "
					 "have here (%d); write an .svg or .pdf instead"),
				       c->width * px, c->height * px, PNG_MAX_SIDE);
		s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)c->width * px,
					       (int)c->height * px);
	}
	bool drawn = cairo_surface_status(s) == CAIRO_STATUS_SUCCESS && draw(s, c, px);
	cairo_status_t st = CAIRO_STATUS_SUCCESS;
	if (fmt == FIG_PNG && drawn)
		st = cairo_surface_write_to_png_stream(s, to_file, af);
	else
		cairo_surface_finish(s);
	if (fmt == FIG_PDF || !drawn)
		st = cairo_surface_status(s);
	cairo_surface_destroy(s);
	if (st == CAIRO_STATUS_WRITE_ERROR && !atomic_ok(af))
		return false;
	if (!drawn || st != CAIRO_STATUS_SUCCESS)
		return av_fail(err, _("cairo could not draw the figure: %s"),
			       cairo_status_to_string(
				   st != CAIRO_STATUS_SUCCESS ? st : CAIRO_STATUS_NO_MEMORY));
	return true;
}
