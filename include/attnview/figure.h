/* Figures: a heatmap, or all heads at once, as an SVG, PNG or PDF file, from
 * the same numbers the screen shows and --dump prints.
 *
 * A figure is described once, whatever the format: a title and subtitle,
 * and one heatmap with its Query/Key labels or a grid of tiles (one per
 * head). figure_layout places everything, in units: a pixel of the SVG, a
 * point of the PDF, FIG_PNG_SCALE pixels of the PNG; the writers (SVG in
 * figure_svg.c, always built; PNG and PDF in figure_cairo.c through cairo
 * and pango, when the build has them) draw that one layout, so a cell is at
 * the same place in every format. Colours are exact: colormap_rgb of the
 * scale position of the weight, as a 24-bit terminal shows them.
 *
 * From what is on a screen (the view):
 *	figure *f = figure_create(1, 1, &err);
 *	figure_set_tile(f, 0, &matrix, labels, SCALE_ROW, RAMP_VIRIDIS, NULL, &err);
 *	figure_set_titles(f, "Layer 0, head 1 · next 0.74", "builtin · row scale", &err);
 *	f->values = true;                     // weights in the cells
 *	figure_write(f, "fig.png", false, &err);
 *	figure_destroy(f);
 * From a result, as --export does: figure_from_result. */
#ifndef ATTNVIEW_FIGURE_H
#define ATTNVIEW_FIGURE_H

#include "attnview/analysis.h"
#include "attnview/colormap.h"
#include "attnview/patch.h"
#include "attnview/scale.h"
#include "attnview/score_split.h"
#include "attnview/select.h"

/* Units per inch: SVG px are 1/96 in. A PNG has FIG_PNG_SCALE pixels per
 * unit (192 dpi); a PDF has one point (1/72 in) per unit. */
#define FIG_PNG_SCALE 2

/* A row's or column's label as given: a text, or (text NULL) a token's
 * codepoint, drawn as attnview draws tokens (cp_glyph: ␣ for a space, ⏎ for
 * a line break...). Unknown characters are marked (red, underlined). */
typedef struct fig_label {
	const char *text;
	uint32_t cp;
	bool unknown;
} fig_label;

/* A heatmap: one n x nk matrix (n x n but for a table, figure_set_table)
 * with its labels and colour scale. */
typedef struct fig_heatmap {
	int n, nk;			 /* rows, columns */
	float *w;			 /* (n, nk), owned: a copy */
	bool causal;			 /* keys after the query are masked: drawn hatched */
	char **labels;			 /* [n] UTF-8 as drawn, or NULL (grid tiles have none) */
	bool *unknown;			 /* [n] */
	char **klabels;			 /* [nk] the columns' labels, or NULL: those of the rows */
	bool *kunknown;			 /* [nk] */
	int knamed;			 /* the last columns are named ("all"), not numbered */
	char row_axis[24], col_axis[24]; /* the axes' names; "": Query and Key */
	scale_kind kind;		 /* SCALE_DIFF for a difference */
	cm_ramp ramp;			 /* RAMP_DIVERGING for a difference */
	char title[224];		 /* a tile's title ("L0 H1 next 0.74"), may be empty */
	char unit[24];			 /* the colour bar's unit instead of the scale's, or "" */
	scale sc;			 /* prepared from w */
	float *row_max;			 /* [n], sc's */
} fig_heatmap;

typedef struct figure {
	char *title, *subtitle; /* may be NULL */
	bool values;		/* weights printed in the cells (one heatmap only) */
	int rows, cols;		/* tiles, 1 x 1 for one heatmap */
	fig_heatmap *tiles;	/* [rows * cols], row-major; all of the same n */
} figure;

figure *figure_create(int rows, int cols, av_error *err);
void figure_destroy(figure *f);

/* Copies the strings; NULL for none. Long ones are cut with "…". */
bool figure_set_titles(figure *f, const char *title, const char *subtitle, av_error *err);

/* Tile i (row-major) shows a (its weights copied, so the caller may free
 * them) on scale `kind` and ramp `ramp` (SCALE_DIFF and RAMP_DIVERGING for a
 * difference); labels [a->n] or NULL; title may be NULL. Every tile of a
 * figure has the same n. */
bool figure_set_tile(figure *f, int i, const attn_matrix *a, const fig_label *labels,
		     scale_kind kind, cm_ramp ramp, const char *title, av_error *err);

/* A single-tile figure of a table rather than attention: w (rows, cols)
 * copied, labels for both (row_labels [rows], col_labels [cols]), the axes
 * named row_axis and col_axis, on scale `kind` (SCALE_FIXED, SCALE_HEAD or
 * SCALE_DIFF) and ramp `ramp`. */
bool figure_set_table(figure *f, const float *w, int rows, int cols, const fig_label *row_labels,
		      const fig_label *col_labels, const char *row_axis, const char *col_axis,
		      scale_kind kind, cm_ramp ramp, av_error *err);
/* The colour of cell (q, k) of h (false for a masked cell). */
bool fig_cell_rgb(const fig_heatmap *h, int q, int k, cm_rgb *out);

/* ---- figures from a result (attnview --export) ----------------------------- */
typedef struct fig_request {
	sel_kind show;		    /* what the map shows (select.h); overview: a grid */
	int layer, head;	    /* layer: of a head, mean, max, rollout, contributions */
	bool words;		    /* the word view (analysis.h, words_split) */
	const bool *marks;	    /* words: [n] a word starts at token i ('|'), or NULL */
	const attn_result *compare; /* a difference: the result minus this one, or NULL */
	const bool *compare_marks;  /* its marks, or NULL */
	scale_kind scale;	    /* not SCALE_DIFF: a comparison gets it anyway */
	cm_ramp ramp;
	bool values;
	const char *model_name;	  /* for the subtitle */
	const char *text, *text2; /* for the subtitle (text2: the compared one) */
	const char *title;	  /* instead of the one made here, or NULL */
} fig_request;

/* The figure of result r as q asks (q->layer and q->head must be in r's
 * range; contributions need r->value_norms, and the compared result's). The
 * title says what is shown ("Layer 0, head 1 · next 0.74"), the subtitle
 * the model, the scale and the text. */
figure *figure_from_result(const attn_result *r, const fig_request *q, av_error *err);

/* The score split s (score_split.h) of a cell of r as a figure: the terms,
 * query-side parts down the left and key-side parts across, named as the
 * dump names them, on a diverging scale; the title names the cell and its
 * score, the subtitle q's model and text (q's values and title are used). */
figure *figure_score_split(const model *m, const score_split *s, const attn_result *r,
			   const fig_request *q, av_error *err);
/* The tables of why and whether as figures (figure_why.c), blocks or heads down the
 * left, r's positions across, q's model, text, values and title used:
 * figure_lens: p (L, n), the lens's probability of the model's own
 * prediction after each block (lens.h, logit_lens_p), on the fixed scale;
 * figure_dla: heads (n, L, H) of logit_attribution, on a diverging scale;
 * figure_patch: p of activation_patch (a last column "all" for a head
 * patched at every position), on a diverging scale; q->text2 names the
 * other text in the title;
 * figure_faith: spearman (n, L, H) of faith_rows over every row, on a
 * diverging scale, a cell left out where the correlation is undefined. */
figure *figure_faith(const attn_result *r, const float *spearman, const fig_request *q,
		     av_error *err);
figure *figure_lens(const attn_result *r, const float *p, const fig_request *q, av_error *err);
figure *figure_dla(const attn_result *r, const float *heads, const fig_request *q, av_error *err);
figure *figure_patch(const model *m, const attn_result *r, const patch_result *p,
		     const fig_request *q, av_error *err);
/* Words as the view's word view makes them: split at spaces and
 * punctuation, and also where marks[i] says (marks may be NULL). Writes up
 * to n spans to out and their labels (the tokens' glyphs, trailing spaces
 * left out) to labels[i], each a malloc'ed string; returns the number of
 * words, or -1 when out of memory. */
int fig_words(word_span *out, char **labels, bool *unknown, const token *tok, int n,
	      const bool *marks);

/* ---- the training timeline (figure_timeline.c) ----------------------------
 * attnview --export F --timeline: the losses over the steps, and a panel per
 * head with its three strongest role scores and its entropy, the phase
 * change marked (timeline.h), in the format of path's extension. A model
 * without a timeline is refused naming `what`. */
bool figure_timeline(const model *m, const char *what, const char *path, bool replace,
		     av_error *err);

/* ---- layout ------------------------------------------------------------------ */
typedef struct fig_geom {
	double width, height; /* the canvas */
	double margin;
	double title_font, title_y, sub_font, sub_y; /* baselines */
	int n, nk;				     /* cells down, across */
	double cell;				     /* side of a cell */
	double x0, y0;				     /* tile 0's cells, top left */
	double pitch_x, pitch_y;		     /* from a tile's cells to the next's */
	bool image;				     /* cells as one image per tile */
	/* One heatmap's labels (label_font 0: none drawn). */
	double label_font, index_font, value_font, axis_font;
	bool rotate_keys;    /* key labels read upwards, for long words */
	int index_every;     /* a position number every this many rows/cols */
	double key_axis_y;   /* baseline of "Key" */
	double key_index_y;  /* baseline of the key numbers */
	double key_label_y;  /* baseline, or the bottom end when rotated */
	double query_axis_x; /* baseline of "Query" (rotated) */
	double row_index_x;  /* right end of the row numbers */
	double row_label_x;  /* right end of the row labels */
	/* Grid: tile titles. */
	double tile_font, tile_title_dy; /* baseline above the cells */
	/* The colour bar and its legend. */
	double bar_x, bar_y, bar_w, bar_h;
	double tick_font, unit_y;
	double legend_y; /* first legend line's top ("masked", "unknown") */
	bool legend_masked, legend_unknown;
} fig_geom;

void figure_layout(const figure *f, fig_geom *g);

/* Top left corner of cell (q, k) of tile i. */
void fig_cell_origin(const figure *f, const fig_geom *g, int i, int q, int k, double *x, double *y);

/* A weight as a cell prints it: "1.00", ".123"; differences "+.123", "-.05". */
void fig_format_value(char out[16], float w, bool diff);

/* Width of text in units at font size `font`, as the layout estimates it
 * (1 em for a wide character, 0.6 em for others). */
double fig_text_width(const char *s, double font);

/* The ticks of tile i's colour bar (the grid's bar stands for every tile: on
 * the head scale its labels are fractions of each head's maximum). */
int fig_ticks(const figure *f, scale_tick *out, int max, const char **unit);

/* ---- files ------------------------------------------------------------------- */
typedef enum fig_format { FIG_SVG, FIG_PNG, FIG_PDF } fig_format;

/* The format named by path's extension (.svg, .png, .pdf, any case); false
 * with a message listing the three for anything else. */
bool fig_format_of(const char *path, fig_format *fmt, av_error *err);
/* PNG and PDF need cairo and pango at build time. */
bool fig_format_available(fig_format fmt);
/* What this build writes: "SVG, PNG, PDF (cairo 1.16.0, pango 1.50.12)" or
 * "SVG only (built without cairo and pango)", for attnview --version. */
const char *fig_formats(void);

/* "svg", "png", "pdf" */
const char *fig_format_ext(fig_format fmt);

/* A file name for a new figure: DIR/STEM.EXT, or DIR/STEM-2.EXT, -3... when
 * that exists (the view's figure key: nothing is overwritten without
 * asking). dir NULL or "" is the current folder. False when the name does
 * not fit in size or 999 are taken. */
bool fig_free_path(char *out, size_t size, const char *dir, const char *stem, fig_format fmt);

/* Write f to path in the format its extension names, atomically
 * (atomicfile.h): a failure leaves no partial file and an existing file as
 * it was. An existing file is replaced only if `replace`; otherwise the
 * message says it exists. */
bool figure_write(const figure *f, const char *path, bool replace, av_error *err);

/* The writers, for tests and benchmarks: the figure as bytes in memory
 * (figure_write puts them in the file). *out is malloc'ed. */
bool figure_svg(const figure *f, const fig_geom *g, char **out, size_t *n, av_error *err);

#endif
