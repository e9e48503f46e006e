/* The details panel of the map screen. */
#ifndef ATTNVIEW_VIEW_PANEL_H
#define ATTNVIEW_VIEW_PANEL_H

#include "state.h"

#include <stdarg.h>

/* Lines of a panel page are written from y on while they fit above ymax,
 * x and w wide: pen_line one line (and the next y), pen_wrapped a text over
 * as many lines as it needs, broken after a space where there is one
 * (Chinese has none: anywhere). */
typedef struct pen {
	int x, w, y, ymax;
} pen;
void pen_vline(pen *p, style s, const char *fmt, va_list ap);
void pen_line(pen *p, style s, const char *fmt, ...) AV_PRINTF(3, 4);
void pen_wrapped(pen *p, style s, const char *text);
/* A grid's key on one line at y from x, w wide: "██ pos  ██ neg  · small",
 * the blocks in the colours of a positive and a negative value. */
void sign_key(view *v, int y, int x, int w, const char *pos, const char *neg);

/* What the matrix on the map does on this text (its statistics, and for
 * characters its roles in v->roles), made once per matrix: what the panel
 * and, in the word view, the heading say. */
const head_stats *panel_map_stats(view *v, const heat_src *s);

/* Draws the panel in v->mg's panel area (nothing if it has none). */
void panel_draw(view *v);
/* The circuits page (panel_circuits.c) from column x, w wide, rows y..ymax. */
void circuits_panel_draw(view *v, int x, int w, int y, int ymax);
/* The faithfulness page (panel_faith.c), the same way. */
void faith_panel_draw(view *v, int x, int w, int y, int ymax);
/* The why page (Alt-L) and the patching page (Alt-X), panel_why.c. */
void why_lines(view *v, pen *p);
void patch_lines(view *v, pen *p);

#endif
