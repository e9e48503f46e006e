/* Line charts (chart.h): the list of what is drawn, its SVG, and writing it
 * in the format a file name asks for, whole or not at all. */
#include "chart.h"
#include "attnview/i18n.h"

#include "figure_draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static chart_op *push(chart *c)
{
	if (c->failed)
		return NULL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		chart_op *ops = realloc(c->ops, cap * sizeof *ops);
		if (!ops) {
			c->failed = true;
			return NULL;
		}
		c->ops = ops;
		c->cap = cap;
	}
	chart_op *op = &c->ops[c->n++];
	memset(op, 0, sizeof *op);
	op->fill = -1;
	return op;
}

void chart_text(chart *c, double x, double y, double size, char anchor, uint32_t rgb, bool bold,
		const char *t)
{
	chart_op *op = push(c);
	if (!op)
		return;
	*op = (chart_op){.kind = CH_TEXT,
			 .rgb = rgb,
			 .fill = -1,
			 .size = size,
			 .anchor = anchor,
			 .bold = bold,
			 .x = x,
			 .y = y,
			 .text = strdup(t)};
	if (!op->text) {
		c->n--;
		c->failed = true;
	}
}

void chart_line(chart *c, const double *xy, int n, uint32_t rgb, double width, bool dashed)
{
	chart_op *op = n >= 2 ? push(c) : NULL;
	if (!op)
		return;
	*op = (chart_op){.kind = CH_LINE,
			 .rgb = rgb,
			 .fill = -1,
			 .size = width,
			 .dashed = dashed,
			 .n = n,
			 .xy = malloc((size_t)n * 2 * sizeof(double))};
	if (!op->xy) {
		c->n--;
		c->failed = true;
		return;
	}
	memcpy(op->xy, xy, (size_t)n * 2 * sizeof(double));
}

void chart_rect(chart *c, double x, double y, double w, double h, int64_t fill, uint32_t stroke)
{
	chart_op *op = push(c);
	if (op)
		*op = (chart_op){.kind = CH_RECT,
				 .rgb = stroke,
				 .fill = fill,
				 .size = 0.75,
				 .x = x,
				 .y = y,
				 .w = w,
				 .h = h};
}

void chart_finish(chart *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->ops[i].xy);
		free(c->ops[i].text);
	}
	free(c->ops);
	memset(c, 0, sizeof *c);
}

/* ---- SVG --------------------------------------------------------------------- */

static void svg_op(FILE *s, const chart_op *op)
{
	switch (op->kind) {
	case CH_TEXT:
		fprintf(s, "<text x=\"%g\" y=\"%g\" font-size=\"%g\" fill=\"#%06x\"%s%s>", op->x,
			op->y, op->size, op->rgb,
			op->anchor == 'm'   ? " text-anchor=\"middle\""
			: op->anchor == 'e' ? " text-anchor=\"end\""
					    : "",
			op->bold ? " font-weight=\"bold\"" : "");
		fig_svg_escape(s, op->text);
		fputs("</text>\n", s);
		break;
	case CH_LINE:
		fputs("<polyline points=\"", s);
		for (int i = 0; i < op->n; i++)
			fprintf(s, "%s%.2f,%.2f", i ? " " : "", op->xy[2 * i], op->xy[2 * i + 1]);
		fprintf(s, "\" fill=\"none\" stroke=\"#%06x\" stroke-width=\"%g\"%s/>\n", op->rgb,
			op->size, op->dashed ? " stroke-dasharray=\"4 3\"" : "");
		break;
	case CH_RECT:
		fprintf(s, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"", op->x, op->y,
			op->w, op->h);
		if (op->fill >= 0)
			fprintf(s, " fill=\"#%06x\"", (unsigned)op->fill);
		else
			fputs(" fill=\"none\"", s);
		if (op->rgb != CH_NONE)
			fprintf(s, " stroke=\"#%06x\" stroke-width=\"%g\"", op->rgb, op->size);
		fputs("/>\n", s);
		break;
	}
}

bool chart_svg(const chart *c, char **out, size_t *n, av_error *err)
{
	*out = NULL;
	*n = 0;
	FILE *s = c->failed ? NULL : open_memstream(out, n);
	if (!s)
		return av_fail(err, _("out of memory for the SVG"));
	fprintf(s,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
		"viewBox=\"0 0 %g %g\" font-family=\"%s\">\n"
		"<desc>attnview " ATTNVIEW_VERSION "</desc>\n"
		"<rect width=\"%g\" height=\"%g\" fill=\"#ffffff\"/>\n",
		c->width, c->height, c->width, c->height,
		"'Noto Sans CJK SC', 'Noto Sans', 'DejaVu Sans', sans-serif", c->width, c->height);
	for (size_t i = 0; i < c->n; i++)
		svg_op(s, &c->ops[i]);
	fputs("</svg>\n", s);
	bool ok = !ferror(s);
	if (fclose(s) != 0 || !ok) {
		free(*out);
		*out = NULL;
		return av_fail(err, _("out of memory for the SVG"));
	}
	return true;
}

bool chart_write(const chart *c, const char *path, bool replace, av_error *err)
{
	fig_format fmt;
	if (!fig_format_of(path, &fmt, err))
		return false;
	if (!fig_format_available(fmt))
		return av_fail(err,
			       _("%s: attnview was built without cairo and pango: PNG and PDF "
				 "need libcairo2-dev and libpango1.0-dev at build time; .svg "
				 "works"),
			       AV_Q(path));
	struct stat st;
	if (!replace && lstat(path, &st) == 0)
		return av_fail(err, _("%s: exists; it was left untouched"), AV_Q(path));
	atomic_mode mode = replace ? ATOMIC_REPLACE : ATOMIC_KEEP;
	av_error drawing;
	if (fmt == FIG_SVG) {
		char *svg;
		size_t n;
		if (!chart_svg(c, &svg, &n, &drawing))
			return av_fail(err, "%s: %s", AV_Q(path), drawing.msg);
		bool ok = atomic_write_file(path, svg, n, mode, err);
		free(svg);
		return ok;
	}
	atomic_file *af = atomic_open(path, err);
	if (!af)
		return false;
	if (!chart_write_cairo(c, fmt, af, &drawing) && atomic_ok(af)) {
		atomic_abort(af);
		return av_fail(err, "%s: %s", AV_Q(path), drawing.msg);
	}
	return atomic_commit(af, mode, err);
}

#ifndef ATTNVIEW_HAVE_CAIRO
bool chart_write_cairo(const chart *c, fig_format fmt, atomic_file *af, av_error *err)
{
	(void)c, (void)fmt, (void)af;
	return av_fail(err, _("attnview was built without cairo and pango"));
}
#endif
