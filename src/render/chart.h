/* Line charts (the training timeline's figure, figure_timeline.c): what is
 * drawn is kept as a list of texts, polylines and rectangles in units (a
 * pixel of the SVG, a point of the PDF, FIG_PNG_SCALE pixels of the PNG),
 * and each writer draws that one list (SVG in chart.c, PNG and PDF in
 * cairo/chart_cairo.c), so a line is at the same place in every format.
 * Private to render. */
#ifndef ATTNVIEW_RENDER_CHART_H
#define ATTNVIEW_RENDER_CHART_H

#include "attnview/atomicfile.h"
#include "attnview/figure.h"

typedef enum chart_kind { CH_TEXT, CH_LINE, CH_RECT } chart_kind;

typedef struct chart_op {
	chart_kind kind;
	uint32_t rgb; /* text, line, rectangle outline (CH_NONE: none) */
	int64_t fill; /* rectangle: a colour, or -1 */
	double size;  /* text: font size; line, outline: width */
	char anchor;  /* text: 's' start, 'm' middle, 'e' end at x */
	bool bold, dashed;
	double x, y, w, h; /* text: the baseline's anchor; rectangle */
	double *xy;	   /* line: n points, x y x y ... */
	int n;
	char *text;
} chart_op;

#define CH_NONE 0xffffffffu

typedef struct chart {
	double width, height;
	chart_op *ops;
	size_t n, cap;
	bool failed; /* out of memory: the list is incomplete */
} chart;

void chart_text(chart *c, double x, double y, double size, char anchor, uint32_t rgb, bool bold,
		const char *t);
void chart_line(chart *c, const double *xy, int n, uint32_t rgb, double width, bool dashed);
void chart_rect(chart *c, double x, double y, double w, double h, int64_t fill, uint32_t stroke);
void chart_finish(chart *c);

/* The SVG document (malloc'ed, *n bytes). */
bool chart_svg(const chart *c, char **out, size_t *n, av_error *err);
/* PNG or PDF through cairo into af (chart_cairo.c; without cairo, a refusal). */
bool chart_write_cairo(const chart *c, fig_format fmt, atomic_file *af, av_error *err);
/* To path in the format its extension names, whole or not at all; an
 * existing file only with replace. */
bool chart_write(const chart *c, const char *path, bool replace, av_error *err);

#endif
