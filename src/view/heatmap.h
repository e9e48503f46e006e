/* The heatmap: a matrix it is given (one head today; a mean over heads, a
 * rollout, a difference of two texts later) drawn as Query rows x Key
 * columns with their labels, the cursor, scrolling and the markers at hidden
 * edges, and mouse hit-testing on the same geometry. Written once, used by
 * every screen that shows a matrix. */
#ifndef ATTNVIEW_VIEW_HEATMAP_H
#define ATTNVIEW_VIEW_HEATMAP_H

#include "attnview/analysis.h"

#include "draw.h"

struct view;

/* What to draw. */
typedef struct heat_src {
	attn_matrix m;	  /* the weights, in [0, 1] */
	const token *tok; /* [m.n]: the labels */
} heat_src;

/* Where: an area of the screen, laid out for a matrix of n rows. */
typedef struct heat_geom {
	int x, w;	       /* columns of the area: labels and cells */
	int tick_y, keys_y;    /* lines of the key positions and the key labels */
	int cells_y, vis_rows; /* first line of the cells, lines for them */
	int posw;	       /* digits of the row numbers */
	int cx0;	       /* first column of the cells */
	int cell_w, vis_cols;  /* columns per cell, cells that fit */
} heat_geom;

/* The cursor and the scroll position, owned by the caller. */
typedef struct heat_view {
	int qrow, kcol; /* the cursor cell */
	int top, left;	/* first Query row and Key column on screen */
} heat_view;

/* Lay out n x n cells of cell_w columns in columns [x, x + w) and lines
 * [y, y + h): two lines of key headings, then the rows. */
void heat_layout(heat_geom *g, int n, int x, int y, int w, int h, int cell_w);
/* Scroll so that the cursor is on screen and no space is wasted past the
 * last row or column. */
void heat_scroll(heat_view *hv, const heat_geom *g, int n);
void heat_draw(const struct view *v, const heat_src *s, const heat_geom *g, const heat_view *hv);
/* The cell under screen position (y, x): a click on a key label keeps the
 * cursor's row, on a row label its column. False outside the cells. */
bool heat_hit(const heat_geom *g, const heat_view *hv, int n, int y, int x, int *q, int *k);

#endif
