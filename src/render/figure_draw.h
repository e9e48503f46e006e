/* What the figure writers share (figure.c lays out, figure_svg.c and
 * figure_cairo.c draw): colours of the chrome, the cells of a tile as
 * pixels, the masked cells as rectangles. Private to render. */
#ifndef ATTNVIEW_RENDER_FIGURE_DRAW_H
#define ATTNVIEW_RENDER_FIGURE_DRAW_H

#include "attnview/atomicfile.h"
#include "attnview/figure.h"
#include <stdio.h>

/* The look, shared by every format. */
#define FIG_FONTS	  "Noto Sans CJK SC, Noto Sans, DejaVu Sans, sans-serif"
#define FIG_INK		  0x202020 /* titles, labels */
#define FIG_GREY	  0x666666 /* subtitle, axis names, numbers, ticks */
#define FIG_UNKNOWN	  0xc0392b /* labels of unknown characters */
#define FIG_MASK_BG	  0xeeeeee /* masked cells: light grey ... */
#define FIG_MASK_LINE	  0xbbbbbb /* ... hatched */
#define FIG_MASK_PERIOD	  6.0	   /* hatch lines this far apart, at 45 degrees */
#define FIG_BAR_STOPS	  33	   /* the colour bar's gradient stops */
#define FIG_IMAGE_UPSCALE 12	   /* SVG image cells: at most this many pixels a side */

static inline cm_rgb fig_hex(uint32_t c)
{
	return (cm_rgb){(uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};
}

/* Next codepoint of UTF-8 text *s, advancing *s; invalid bytes count as
 * U+FFFD. */
uint32_t fig_next_cp(const char **s);
/* A malloc'ed copy of s cut to at most max_cols terminal columns, "…"
 * marking a cut; NULL when out of memory. */
char *fig_dup_cut(const char *s, int max_cols);

/* The n x nk cells of h as RGB pixels (3 bytes each, row-major), each cell
 * `up` x `up` pixels; masked cells in FIG_MASK_BG. NULL when out of memory. */
uint8_t *fig_tile_pixels(const fig_heatmap *h, int up);

/* The masked cells of row q: keys [*k0, n) for a causal matrix; false when
 * the row has none. */
bool fig_masked_run(const fig_heatmap *h, int q, int *k0);

/* Any masked cell, any unknown label in the figure. */
bool fig_any_masked(const figure *f);
bool fig_any_unknown(const figure *f);

/* Row label i, column label k of the single heatmap (NULL: none). */
const char *fig_label_text(const figure *f, int i);
const char *fig_col_label_text(const figure *f, int k);
/* Whether column k's label is of an unknown character. */
bool fig_col_unknown(const fig_heatmap *h, int k);
/* The names of the rows' and the columns' axis ("Query", "Key"). */
const char *fig_row_axis(const fig_heatmap *h);
const char *fig_col_axis(const fig_heatmap *h);

/* SVG text content or an attribute value, escaped (& < > "), into s. */
void fig_svg_escape(FILE *s, const char *t);

/* The position number of row/column i is drawn. */
static inline bool fig_index_shown(const fig_geom *g, int i)
{
	return g->index_every > 0 && i % g->index_every == 0;
}

/* Column k is a position, numbered (a table's last, named ones are not:
 * patching's "all"). */
static inline bool fig_col_numbered(const fig_heatmap *h, int k)
{
	return k < h->nk - h->knamed;
}

/* The PNG and PDF writers (figure_cairo.c), streaming into af. */
bool fig_write_cairo(const figure *f, const fig_geom *g, fig_format fmt, atomic_file *af,
		     av_error *err);

#endif
