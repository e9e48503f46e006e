/* The details panel of the map screen. */
#ifndef ATTNVIEW_VIEW_PANEL_H
#define ATTNVIEW_VIEW_PANEL_H

#include "state.h"

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

#endif
