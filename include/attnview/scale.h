/* Colour scales: how a weight becomes a position t in [0, 1] on the colour
 * ramp. A fixed 0..1 scale makes a broad head one flat block (its weights are
 * all near 1/n); the others scale to the data, as matplotlib's imshow does.
 *
 *   fixed  t = w                         every head on the same footing
 *   head   t = w / (the matrix's max)    this head's own range
 *   row    t = w / (the row's max)       where each Query looks, row by row
 *   log    t = 1 + log10(w) / 3          1e-3 .. 1, for the long tail
 *   lift   t = 1/2 + log10(w n_q) / 5    w against uniform attention: n_q is
 *          (within 1/3.16 .. 3.16)       the number of keys row q sees, so a
 *                                        uniform row is the middle of a
 *                                        diverging ramp; beyond, the rest of
 *                                        each half is log-linear up to n, the
 *                                        text's largest lift (at most 316)
 *
 * Why 2.5 decades each way about uniform: on the 15 steps of the diverging
 * ramp the three nearest uniform span lifts 0.3 .. 3 (where the broad heads
 * of the built-in model draw at least 93% of their cells). Why the ends at n:
 * a row's whole weight on one key is lift n, 24 on a 24-character text, and
 * it takes the ramp's far colour rather than a pale one; a key holding a
 * third of a row of 24 keys (lift 8) is five steps away (test_overview).
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
	SCALE_LIFT,
	SCALE_NKINDS,
	/* Not a choice but what a difference of two matrices gets: t = 1/2 +
	 * d / (2 max|d|), 0 in the middle of a diverging ramp. */
	SCALE_DIFF = SCALE_NKINDS,
} scale_kind;

#define SCALE_LOG_DECADES 3 /* the log scale spans 10^-3 .. 1 */
#define SCALE_LIFT_SHARP                                                                           \
	0.25f			/* pooled lift: a weight this large (and twice uniform)            \
				   shows as itself, not as the block's mean */
#define SCALE_LIFT_DECADES     2.5f /* the lift scale spans at most 10^-2.5 .. 10^2.5 */
#define SCALE_LIFT_MIN_DECADES 1.0f /* ... and at least 10^-1 .. 10 */
#define SCALE_LIFT_NEAR                                                                            \
	0.5f /* lifts 10^-0.5 .. 10^0.5 sit where they do on the full range at any length */

/* The defaults: a head's map shows where each row looks (row); the overview
 * shows each weight against uniform attention (lift), which draws a broad
 * head near the neutral colour and keeps a sharp head's pattern
 * (tests/unit/test_overview.c measures it on the built-in model). */
#define SCALE_DEFAULT_MAP      SCALE_ROW
#define SCALE_DEFAULT_OVERVIEW SCALE_LIFT

const char *scale_name(scale_kind k); /* "fixed", "head", "row", "log", "lift" */
/* The name as a person reads it, in the interface's language (the colour
 * bar, the overview's heading); option values keep scale_name. */
const char *scale_title(scale_kind k);
bool scale_parse(const char *name, scale_kind *k);
/* The names as a list for a message, the last after `last` (" or "): in a
 * static buffer. */
const char *scale_names_list(const char *last);
/* The scale is drawn on a diverging ramp (lift, differences). */
bool scale_diverging(scale_kind k);

typedef struct scale {
	scale_kind kind;
	float max;	/* SCALE_HEAD: the largest visible weight; SCALE_DIFF: max |d|;
			 * SCALE_LIFT: the matrix's size */
	float *row_max; /* SCALE_ROW: [n], the caller's memory; SCALE_LIFT: the
			 * number of keys each row sees */
	bool causal;	/* SCALE_LIFT without row_max: row q sees q + 1 keys */
	float decades;	/* SCALE_LIFT: the scale spans 10^-decades .. 10^decades */
} scale;

/* A scale for matrix a. row_max: n floats the caller owns, used by
 * SCALE_ROW and SCALE_LIFT (may be NULL for the other kinds; without it the
 * lift of row q counts every key the mask leaves it). A zero maximum counts
 * as 1. */
void scale_init(scale *s, scale_kind kind, const attn_matrix *a, float *row_max);
/* The lift scale's decades each way for a matrix of n tokens: log10(n), the
 * largest lift a weight can have, between SCALE_LIFT_MIN_DECADES and
 * SCALE_LIFT_DECADES. */
float scale_lift_decades(int n);
/* Position on the ramp of a lift (a weight times the keys its row sees)
 * under lift scale s. */
float scale_lift_pos(const scale *s, float lift);
/* Position on the ramp of weight w in row q, in [0, 1]; NaN gives 0. */
float scale_pos(const scale *s, int q, float w);

/* The matrix as rows x cols samples of scale positions, each the largest
 * over its block of cells (so a diagonal stays a line): sample (r, c) covers
 * queries [r*n/rows, (r+1)*n/rows) and keys [c*n/cols, (c+1)*n/cols), at
 * least one of each, so that rows or cols above n repeat cells (a small
 * matrix fills a large tile). masked[i] is 1 where every cell of the block is
 * masked (out[i] is 0 there). Under SCALE_LIFT a block is its mean lift (a
 * broad head's noise averages out) unless a cell holds SCALE_LIFT_SHARP of
 * its row's weight and twice uniform's: then the largest such cell. */
void scale_pool(float *out, uint8_t *masked, const attn_matrix *a, const scale *s, int rows,
		int cols);

/* The ticks of a colour bar for this scale: positions t and labels, from
 * t = 0 up; returns how many. For SCALE_ROW the labels are fractions of the
 * row's maximum ("0", ".5", "1"). */
typedef struct scale_tick {
	float t;
	double v; /* the value the label says */
	char label[16];
} scale_tick;
int scale_ticks(const scale *s, scale_tick *out, int max);
/* A tick's value as a label of at most width columns: ".25", "1", "100",
 * "-.048", rounded to one significant digit ("-.05") where two do not fit;
 * false if even that does not fit (".001" in 3 columns: leave the tick
 * unlabelled rather than cut it into another number). */
bool scale_tick_label(char out[16], double v, int width);
/* What the bar's ticks are in: "weight", "÷ row max", "× uniform". */
const char *scale_unit(scale_kind k);

#endif
