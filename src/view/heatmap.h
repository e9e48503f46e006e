/* The heatmap: a matrix it is given (one head today; a mean over heads, a
 * rollout, a difference of two texts later) drawn as Query rows x Key
 * columns with their labels, the cursor, a colour bar with the scale's
 * ticks, scrolling and a marker at every edge where rows or columns are
 * hidden, and mouse hit-testing on the same geometry. Written once, used by
 * every screen that shows a matrix.
 *
 * Cells are as large as the screen allows (2 to 8 columns, 1 to 3 lines, kept
 * about square), so a short text fills a projector; a text too long for
 * 2-column cells is drawn compact: a half-block character per cell, two Query
 * rows per line and one column per Key, blocks down-sampled by their maximum
 * so that a diagonal stays a line. */
#ifndef ATTNVIEW_VIEW_HEATMAP_H
#define ATTNVIEW_VIEW_HEATMAP_H

#include "attnview/analysis.h"
#include "attnview/scale.h"

#include "colors.h"
#include "draw.h"

/* A row's or column's label: one token (drawn as attnview draws tokens), or
 * a text such as a word. */
typedef struct heat_label {
	const char *text; /* UTF-8, or NULL: the token cp */
	uint32_t cp;
	int width; /* columns */
	bool unknown;
} heat_label;

/* What to draw. */
typedef struct heat_src {
	attn_matrix m;		  /* the weights: in [0, 1], or differences */
	const heat_label *labels; /* [m.n] */
	int label_w;		  /* the widest label, columns (at least 2) */
	scale sc;		  /* how weights become colours */
	bool diverging;		  /* a difference: the diverging ramp */
} heat_src;

/* How big the cells are. */
typedef enum heat_cells {
	CELLS_FIT,     /* the largest cells that fit; compact if none does */
	CELLS_SCROLL,  /* 2-column cells, scrolling when the text is longer */
	CELLS_COMPACT, /* half blocks, the whole matrix on screen */
	CELLS_NMODES
} heat_cells;

const char *heat_cells_name(heat_cells c); /* "fit", "scroll", "compact" */
/* The same as the screen shows it, in the interface's language. */
const char *heat_cells_title(heat_cells c);

/* Where: an area of the screen, laid out for a matrix of n rows. */
typedef struct heat_geom {
	bool compact;
	int n;
	int x, w;		/* columns of the area: labels, cells, colour bar */
	int tick_y, keys_y;	/* lines of the key positions and the key labels */
	int cells_y, foot_y;	/* first line of the cells; the line below them */
	int posw;		/* digits of the row numbers */
	int label_w;		/* columns of the row labels */
	int cx0;		/* first column of the cells */
	int cell_w, cell_h;	/* cells: columns and lines of one */
	int vis_rows, vis_cols; /* cells: rows and columns on screen */
	int kstep, qstep;	/* compact: keys per column, queries per half line */
	int ncols, nlines;	/* compact: columns and lines in use */
	int bar_x, bar_h;	/* the colour bar's column and height */
	bool halves;		/* compact: two rows per line (colour) or one (shades) */
	bool values;		/* the cells print their weights */
} heat_geom;

/* The cursor and the scroll position, owned by the caller. */
typedef struct heat_view {
	int qrow, kcol; /* the cursor cell */
	int top, left;	/* first Query row and Key column on screen */
} heat_view;

/* Lay out n x n cells in columns [x, x + w) and lines [y, y + h): two lines
 * of key headings, the cells, a footer line. values: the cells print their
 * weights (5 columns at least, never compact); halves: the terminal has
 * colours, so a compact line can hold two rows. */
void heat_layout(heat_geom *g, int n, int label_w, int x, int y, int w, int h, heat_cells cells,
		 bool values, bool halves);
/* Labels for tokens tok[0..n) into out. */
void heat_token_labels(heat_label *out, const token *tok, int n);
/* Scroll so that the cursor is on screen and no space is wasted past the
 * last row or column. */
void heat_scroll(heat_view *hv, const heat_geom *g, int n);
/* Draw s in g with colours col (curses must be started: any screen will
 * do, a terminal or not; tests/unit/test_heatmap.c draws into one on /dev/null
 * and reads the cells back). */
void heat_draw(colors *col, const heat_src *s, const heat_geom *g, const heat_view *hv);
/* The cell under screen position (y, x): a click on a key label keeps the
 * cursor's row, on a row label its column. False outside the cells. */
/* A colour bar of the ramp in use for scale sc: its name at (y_name, x) (the
 * unit under it when there is a line before y0), h lines of ramp from y0
 * down, tick labels right of it rounded to fit before x_end - 1 (a column is
 * left free before the panel's border; none at the screen's edge). */
void heat_draw_bar(colors *col, const scale *sc, int x, int y_name, int y0, int h, int x_end);
bool heat_hit(const heat_geom *g, const heat_view *hv, int n, int y, int x, int *q, int *k);

#endif
