/* Figures as SVG (figure.h), written here without any library: text stays
 * text (searchable, editable), cells are rectangles with their weight as a
 * tooltip, or, past FIG_MAX_RECT_CELLS cells, one PNG image per tile
 * embedded as data (deflated with zlib when the build has it). */
#include "attnview/figure.h"
#include "attnview/i18n.h"

#include "attnview/binio.h"
#include "figure_draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ATTNVIEW_HAVE_ZLIB
#include <zlib.h>
#endif

/* ---- a PNG for the image cells ------------------------------------------------- */

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void png_chunk(byte_buf *b, const char *type, const uint8_t *data, size_t n)
{
	uint8_t be[4];
	put_be32(be, (uint32_t)n);
	bb_bytes(b, be, 4);
	size_t at = b->n;
	bb_bytes(b, type, 4);
	bb_bytes(b, data, n);
	put_be32(be, b->failed ? 0 : av_crc32(0, b->v + at, n + 4));
	bb_bytes(b, be, 4);
}

/* A zlib stream of raw: deflated, or stored (uncompressed blocks) without
 * zlib. */
static bool zlib_stream(byte_buf *out, const uint8_t *raw, size_t n)
{
#ifdef ATTNVIEW_HAVE_ZLIB
	uLongf len = compressBound((uLong)n);
	uint8_t *z = malloc(len);
	if (!z || compress2(z, &len, raw, (uLong)n, 6) != Z_OK) {
		free(z);
		return false;
	}
	bb_bytes(out, z, len);
	free(z);
#else
	static const uint8_t head[2] = {0x78, 0x01};
	bb_bytes(out, head, 2);
	uint32_t a = 1, b = 0; /* Adler-32 */
	for (size_t i = 0; i < n; i++) {
		a = (a + raw[i]) % 65521;
		b = (b + a) % 65521;
	}
	size_t at = 0;
	do {
		size_t k = n - at > 65535 ? 65535 : n - at;
		uint8_t h[5] = {at + k == n, (uint8_t)k, (uint8_t)(k >> 8), (uint8_t)~k,
				(uint8_t)(~k >> 8)};
		bb_bytes(out, h, 5);
		bb_bytes(out, raw + at, k);
		at += k;
	} while (at < n);
	uint8_t tail[4];
	put_be32(tail, b << 16 | a);
	bb_bytes(out, tail, 4);
#endif
	return !out->failed;
}

/* An RGB image of w x h pixels as a PNG file image. */
static bool png_encode(byte_buf *out, const uint8_t *rgb, int w, int h)
{
	size_t stride = (size_t)w * 3, n = (size_t)h * (stride + 1);
	uint8_t *raw = malloc(n);
	if (!raw)
		return false;
	for (int y = 0; y < h; y++) {
		raw[(size_t)y * (stride + 1)] = 0; /* filter: none */
		memcpy(raw + (size_t)y * (stride + 1) + 1, rgb + (size_t)y * stride, stride);
	}
	byte_buf z = {0};
	bool ok = zlib_stream(&z, raw, n);
	free(raw);
	static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	uint8_t ihdr[13] = {0};
	put_be32(ihdr, (uint32_t)w);
	put_be32(ihdr + 4, (uint32_t)h);
	ihdr[8] = 8; /* bits per channel */
	ihdr[9] = 2; /* RGB */
	*out = (byte_buf){0};
	bb_bytes(out, sig, 8);
	png_chunk(out, "IHDR", ihdr, 13);
	if (ok)
		png_chunk(out, "IDAT", z.v, z.n);
	png_chunk(out, "IEND", NULL, 0);
	bb_finish(&z);
	if (!ok || out->failed) {
		bb_finish(out);
		return false;
	}
	return true;
}

static void base64(FILE *s, const uint8_t *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		char q[4] = {tab[v >> 18], tab[(v >> 12) & 63],
			     i + 1 < n ? tab[(v >> 6) & 63] : '=', i + 2 < n ? tab[v & 63] : '='};
		fwrite(q, 1, 4, s);
	}
}

/* ---- SVG pieces ------------------------------------------------------------------- */

void fig_svg_escape(FILE *s, const char *t)
{
	for (; t && *t; t++)
		switch (*t) {
		case '&':
			fputs("&amp;", s);
			break;
		case '<':
			fputs("&lt;", s);
			break;
		case '>':
			fputs("&gt;", s);
			break;
		case '"':
			fputs("&quot;", s);
			break;
		default:
			fputc(*t, s);
		}
}

static void hex(FILE *s, cm_rgb c)
{
	fprintf(s, "#%02x%02x%02x", c.r, c.g, c.b);
}

/* <text> at (x, y): anchor "start", "middle" or "end"; rotated reads upwards. */
static void text(FILE *s, double x, double y, double font, const char *anchor, uint32_t colour,
		 const char *extra, bool rotated, const char *t)
{
	if (rotated)
		fprintf(s, "<text transform=\"translate(%g %g) rotate(-90)\"", x, y);
	else
		fprintf(s, "<text x=\"%g\" y=\"%g\"", x, y);
	fprintf(s, " font-size=\"%g\"", font);
	if (strcmp(anchor, "start") != 0)
		fprintf(s, " text-anchor=\"%s\"", anchor);
	if (colour != FIG_INK) {
		fputs(" fill=\"", s);
		hex(s, fig_hex(colour));
		fputc('"', s);
	}
	fprintf(s, "%s>", extra ? extra : "");
	fig_svg_escape(s, t);
	fputs("</text>\n", s);
}

static void defs(FILE *s, const figure *f)
{
	fprintf(s,
		"<defs>\n<pattern id=\"masked\" width=\"%g\" height=\"%g\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		"<rect width=\"%g\" height=\"%g\" fill=\"#%06x\"/>"
		"<rect width=\"%g\" height=\"%g\" fill=\"#%06x\"/></pattern>\n",
		FIG_MASK_PERIOD, FIG_MASK_PERIOD, FIG_MASK_PERIOD, FIG_MASK_PERIOD, FIG_MASK_BG,
		FIG_MASK_PERIOD / 4, FIG_MASK_PERIOD, FIG_MASK_LINE);
	fputs("<linearGradient id=\"bar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", s);
	for (int i = 0; i < FIG_BAR_STOPS; i++) {
		double t = (double)i / (FIG_BAR_STOPS - 1);
		fprintf(s, "<stop offset=\"%g\" stop-color=\"", t);
		hex(s, colormap_rgb(f->tiles[0].ramp, t));
		fputs("\"/>\n", s);
	}
	fputs("</linearGradient>\n</defs>\n", s);
}

/* ---- cells ---------------------------------------------------------------------- */

static void cell_tooltip(FILE *s, const figure *f, int i, int q, int k, float w)
{
	const fig_heatmap *h = &f->tiles[i];
	fputs("<title>", s);
	if (h->title[0]) {
		fig_svg_escape(s, h->title);
		fputs(" · ", s);
	}
	fprintf(s, "%s %d ", fig_row_axis(h), q);
	fig_svg_escape(s, fig_label_text(f, q));
	if (fig_col_numbered(h, k))
		fprintf(s, " · %s %d ", fig_col_axis(h), k);
	else
		fprintf(s, " · %s: ", fig_col_axis(h));
	fig_svg_escape(s, fig_col_label_text(f, k));
	fprintf(s, h->kind == SCALE_DIFF ? " · %+.6f" : " · %.6f", w);
	fputs("</title>", s);
}

static void cells_rects(FILE *s, const figure *f, const fig_geom *g, int i)
{
	const fig_heatmap *h = &f->tiles[i];
	fputs("<g shape-rendering=\"crispEdges\">\n", s);
	for (int q = 0; q < h->n; q++)
		for (int k = 0; k < h->nk; k++) {
			cm_rgb c;
			if (!fig_cell_rgb(h, q, k, &c))
				continue;
			double x, y;
			fig_cell_origin(f, g, i, q, k, &x, &y);
			fprintf(s,
				"<rect class=\"cell\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
				"fill=\"",
				x, y, g->cell, g->cell);
			hex(s, c);
			fprintf(s, "\" data-tile=\"%d\" data-q=\"%d\" data-k=\"%d\">", i, q, k);
			cell_tooltip(s, f, i, q, k, h->w[(size_t)q * (size_t)h->nk + (size_t)k]);
			fputs("</rect>\n", s);
		}
	fputs("</g>\n", s);
}

static bool cells_image(FILE *s, const figure *f, const fig_geom *g, int i)
{
	const fig_heatmap *h = &f->tiles[i];
	/* Each cell several pixels wide, so that a viewer that smooths images
	 * (librsvg ignores image-rendering) blurs only the cells' edges. */
	int up = (int)ceil(g->cell * FIG_PNG_SCALE);
	up = up < 4 ? 4 : up > FIG_IMAGE_UPSCALE ? FIG_IMAGE_UPSCALE : up;
	uint8_t *px = fig_tile_pixels(h, up);
	byte_buf png;
	bool ok = px && png_encode(&png, px, h->nk * up, h->n * up);
	free(px);
	if (!ok)
		return false;
	double x, y;
	fig_cell_origin(f, g, i, 0, 0, &x, &y);
	fprintf(s,
		"<image class=\"cells\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
		"data-tile=\"%d\" data-n=\"%d\" preserveAspectRatio=\"none\" "
		"image-rendering=\"pixelated\" style=\"image-rendering:pixelated\" "
		"xlink:href=\"data:image/png;base64,",
		x, y, h->nk * g->cell, h->n * g->cell, i, h->n);
	base64(s, png.v, png.n);
	fputs("\"/>\n", s);
	bb_finish(&png);
	return true;
}

/* The masked cells, hatched: one path of a rectangle per row. */
static void cells_masked(FILE *s, const figure *f, const fig_geom *g, int i)
{
	const fig_heatmap *h = &f->tiles[i];
	bool any = false;
	for (int q = 0; q < h->n; q++) {
		int k0;
		if (!fig_masked_run(h, q, &k0))
			continue;
		double x, y;
		fig_cell_origin(f, g, i, q, k0, &x, &y);
		fputs(any ? "" : "<path fill=\"url(#masked)\" d=\"", s);
		fprintf(s, "M%g %gh%gv%gh%gz", x, y, (h->nk - k0) * g->cell, g->cell,
			-(h->nk - k0) * g->cell);
		any = true;
	}
	if (any)
		fputs("\"/>\n", s);
}

static void cells_values(FILE *s, const figure *f, const fig_geom *g)
{
	const fig_heatmap *h = &f->tiles[0];
	fprintf(s, "<g font-size=\"%g\" text-anchor=\"middle\">\n", g->value_font);
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
			fprintf(s, "<text x=\"%g\" y=\"%g\" fill=\"%s\">%s</text>\n",
				x + g->cell / 2, y + g->cell / 2 + 0.35 * g->value_font,
				colormap_dark_text(c) ? "#000000" : "#ffffff", v);
		}
	fputs("</g>\n", s);
}

/* ---- labels, titles, the colour bar ----------------------------------------------- */

static void labels(FILE *s, const figure *f, const fig_geom *g)
{
	const fig_heatmap *h = &f->tiles[0];
	double c = g->cell, across = h->nk * c, side = h->n * c;
	text(s, g->x0 + across / 2, g->key_axis_y, g->axis_font, "middle", FIG_GREY,
	     " font-style=\"italic\"", false, fig_col_axis(h));
	text(s, g->query_axis_x, g->y0 + side / 2, g->axis_font, "middle", FIG_GREY,
	     " font-style=\"italic\"", true, fig_row_axis(h));
	char num[16];
	for (int i = 0; i < h->n || i < h->nk; i++) {
		double mid = i * c + c / 2;
		snprintf(num, sizeof num, "%d", i);
		if (fig_index_shown(g, i) && fig_col_numbered(h, i))
			text(s, g->x0 + mid, g->key_index_y, g->index_font, "middle", FIG_GREY,
			     NULL, false, num);
		if (fig_index_shown(g, i) && i < h->n)
			text(s, g->row_index_x, g->y0 + mid + 0.35 * g->index_font, g->index_font,
			     "end", FIG_GREY, NULL, false, num);
		if (!g->label_font || !h->labels)
			continue;
		bool unk = i < h->nk && fig_col_unknown(h, i);
		uint32_t col = unk ? FIG_UNKNOWN : FIG_INK;
		const char *deco = unk ? " text-decoration=\"underline\"" : NULL;
		if (i < h->nk && g->rotate_keys)
			text(s, g->x0 + mid + 0.35 * g->label_font, g->key_label_y, g->label_font,
			     "start", col, deco, true, fig_col_label_text(f, i));
		else if (i < h->nk)
			text(s, g->x0 + mid, g->key_label_y, g->label_font, "middle", col, deco,
			     false, fig_col_label_text(f, i));
		if (i >= h->n)
			continue;
		unk = h->unknown[i];
		col = unk ? FIG_UNKNOWN : FIG_INK;
		deco = unk ? " text-decoration=\"underline\"" : NULL;
		text(s, g->row_label_x, g->y0 + mid + 0.35 * g->label_font, g->label_font, "end",
		     col, deco, false, h->labels[i]);
	}
}

static void bar(FILE *s, const figure *f, const fig_geom *g)
{
	fprintf(s,
		"<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"url(#bar)\" "
		"stroke=\"#%06x\" stroke-width=\"0.5\"/>\n",
		g->bar_x, g->bar_y, g->bar_w, g->bar_h, FIG_GREY);
	scale_tick ticks[8];
	const char *unit;
	int nt = fig_ticks(f, ticks, 8, &unit);
	text(s, g->bar_x, g->unit_y, g->tick_font, "start", FIG_GREY, NULL, false, unit);
	for (int i = 0; i < nt; i++) {
		double y = g->bar_y + g->bar_h * (1 - ticks[i].t);
		fprintf(s, "<path d=\"M%g %gh4\" stroke=\"#%06x\"/>\n", g->bar_x + g->bar_w, y,
			FIG_GREY);
		text(s, g->bar_x + g->bar_w + 7, y + 0.35 * g->tick_font, g->tick_font, "start",
		     FIG_GREY, NULL, false, ticks[i].label);
	}
	double y = g->legend_y;
	if (g->legend_masked) {
		fprintf(s,
			"<rect x=\"%g\" y=\"%g\" width=\"12\" height=\"12\" fill=\"url(#masked)\" "
			"stroke=\"#%06x\" stroke-width=\"0.5\"/>\n",
			g->bar_x, y, FIG_GREY);
		text(s, g->bar_x + 18, y + 10, g->tick_font, "start", FIG_GREY, NULL, false,
		     "masked");
		y += 20;
	}
	if (g->legend_unknown)
		text(s, g->bar_x, y + 10, g->tick_font, "start", FIG_UNKNOWN,
		     " text-decoration=\"underline\"", false, "unknown character");
}

static bool tiles(FILE *s, const figure *f, const fig_geom *g)
{
	for (int i = 0; i < f->rows * f->cols; i++) {
		const fig_heatmap *h = &f->tiles[i];
		fprintf(s, "<g class=\"heatmap\" data-n=\"%d\" data-scale=\"%s\">\n", h->n,
			scale_name(h->kind));
		if (g->image) {
			if (!cells_image(s, f, g, i))
				return false;
		} else {
			cells_rects(s, f, g, i);
		}
		cells_masked(s, f, g, i);
		if (h->title[0] && f->rows * f->cols > 1) {
			double x, y;
			fig_cell_origin(f, g, i, 0, 0, &x, &y);
			text(s, x, y + g->tile_title_dy, g->tile_font, "start", FIG_INK, NULL,
			     false, h->title);
		}
		fputs("</g>\n", s);
	}
	return true;
}

bool figure_svg(const figure *f, const fig_geom *g, char **out, size_t *n, av_error *err)
{
	*out = NULL;
	*n = 0;
	FILE *s = open_memstream(out, n);
	if (!s)
		return av_fail(err, _("out of memory for the SVG"));
	fprintf(s,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"%g\" height=\"%g\" "
		"viewBox=\"0 0 %g %g\" font-family=\"%s\" fill=\"#%06x\">\n",
		g->width, g->height, g->width, g->height,
		"'Noto Sans CJK SC', 'Noto Sans', 'DejaVu Sans', sans-serif", FIG_INK);
	if (f->title) {
		fputs("<title>", s);
		fig_svg_escape(s, f->title);
		fputs("</title>\n", s);
	}
	fputs("<desc>attnview " ATTNVIEW_VERSION "</desc>\n", s);
	defs(s, f);
	fprintf(s, "<rect width=\"%g\" height=\"%g\" fill=\"#ffffff\"/>\n", g->width, g->height);
	if (f->title)
		text(s, g->margin, g->title_y, g->title_font, "start", FIG_INK,
		     " font-weight=\"bold\"", false, f->title);
	if (f->subtitle)
		text(s, g->margin, g->sub_y, g->sub_font, "start", FIG_GREY, NULL, false,
		     f->subtitle);
	bool ok = tiles(s, f, g);
	if (ok && f->rows * f->cols == 1) {
		if (f->values)
			cells_values(s, f, g);
		labels(s, f, g);
	}
	bar(s, f, g);
	fputs("</svg>\n", s);
	ok = !ferror(s) && ok;
	if (fclose(s) != 0 || !ok) {
		free(*out);
		*out = NULL;
		return av_fail(err, _("out of memory for the SVG"));
	}
	return true;
}
