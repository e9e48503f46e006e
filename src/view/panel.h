/* The details panel of the map screen. */
#ifndef ATTNVIEW_VIEW_PANEL_H
#define ATTNVIEW_VIEW_PANEL_H

#include "state.h"

/* Draws the panel in v->mg's panel area (nothing if it has none). */
void panel_draw(view *v);

#endif
