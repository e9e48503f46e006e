/* Colour scales: how a weight becomes a position t in [0, 1] on the colour
 * ramp. A fixed 0..1 scale makes a broad head one flat block (its weights are
 * all near 1/n); the others scale to the data, as matplotlib's imshow does.
 *
 *   fixed  t = w                         every head on the same footing
 *   head   t = w / (the matrix's max)    this head's own range
 *   row    t = w / (the row's max)       where each Query looks, row by row
 *   log    t = 1 + log10(w) / 3          1e-3 .. 1, for the long tail
 *
 * Masked cells take no part in a maximum. Used by the view and the figures. */
#ifndef ATTNVIEW_SCALE_H
#define ATTNVIEW_SCALE_H

#include "attnview/analysis.h"

typedef enum scale_kind {
	SCALE_FIXED = 0,
	SCALE_HEAD,
	SCALE_ROW,
	SCALE_LOG,
	SCALE_NKINDS,
	/* Not a choice but what a difference of two matrices gets: t = 1/2 +
	 * d / (2 max|d|), 0 in the middle of a diverging ramp. */
	SCALE_DIFF = SCALE_NKINDS,
} scale_kind;

#define SCALE_LOG_DECADES 3 /* the log scale spans 10^-3 .. 1 */

const char *scale_name(scale_kind k); /* "fixed", "head", "row", "log" */
bool scale_parse(const char *name, scale_kind *k);

typedef struct scale {
	scale_kind kind;
	float max;	/* SCALE_HEAD: the largest visible weight; SCALE_DIFF: max |d| */
	float *row_max; /* SCALE_ROW: [n], the caller's memory */
} scale;

/* A scale for matrix a. row_max: n floats the caller owns, used by
 * SCALE_ROW (may be NULL for the other kinds). A zero maximum counts as 1. */
void scale_init(scale *s, scale_kind kind, const attn_matrix *a, float *row_max);
/* Position on the ramp of weight w in row q, in [0, 1]; NaN gives 0. */
float scale_pos(const scale *s, int q, float w);

/* The matrix as rows x cols samples of scale positions, each the largest
 * over its block of cells (so a diagonal stays a line): sample (r, c) covers
 * queries [r*n/rows, (r+1)*n/rows) and keys [c*n/cols, (c+1)*n/cols), at
 * least one of each, so that rows or cols above n repeat cells (a small
 * matrix fills a large tile). masked[i] is 1 where every cell of the block is
 * masked (out[i] is 0 there). */
void scale_pool(float *out, uint8_t *masked, const attn_matrix *a, const scale *s, int rows,
		int cols);

/* The ticks of a colour bar for this scale: positions t and labels, from
 * t = 0 up; returns how many. For SCALE_ROW the labels are fractions of the
 * row's maximum ("0", ".5", "1"). */
typedef struct scale_tick {
	float t;
	char label[16];
} scale_tick;
int scale_ticks(const scale *s, scale_tick *out, int max);
/* What the bar's ticks are in: "weight", "÷ row max". */
const char *scale_unit(scale_kind k);

#endif
