/* What the map shows: one head, a summary of several (the mean or maximum of
 * a layer's heads, the mean of all heads, the attention rollout up to a
 * layer), seen character by character or word by word, on its own or as the
 * difference from a pinned matrix. One matrix with its labels, computed on
 * demand from the result on screen and kept until any of that changes; the
 * heatmap, the panel and the figures draw from it. */
#ifndef ATTNVIEW_VIEW_MATRIX_H
#define ATTNVIEW_VIEW_MATRIX_H

#include "attnview/select.h"

#include "heatmap.h"

struct view;

/* The selection within a layer: heads 0..H-1, then the summaries
 * (select.h: SEL_MEAN .. SEL_ALL; Tab goes on past the last head). */
#define SEL_EXTRA SEL_NSUMMARIES /* selections after the heads */

/* SEL_HEAD or a summary: where Tab is. */
sel_kind view_sel(const struct view *v);
/* What the map draws: view_sel, or SEL_CONTRIB on a head with the value
 * contributions on (F11) and their norms at hand. */
sel_kind view_map_kind(const struct view *v);
/* "head 2", "mean of heads", "max of heads", "rollout", "all heads". */
void sel_describe(const struct view *v, char *out, size_t size);

/* A pinned matrix for comparisons (F9 pins what is on the map). */
typedef struct pin {
	bool on;
	int n;
	float *w;	    /* (n, n) */
	bool causal;
	heat_label *labels; /* [n], texts copied */
	char *text_buf;
	char what[96]; /* "layer 0 head 1 of '他说'" */
} pin;

void pin_clear(pin *p);

/* The matrix and labels the map draws now, or false when there is none (no
 * result yet, or out of memory, with a notice). word_of[i] (token i's word)
 * is filled in the word view. */
bool view_matrix(struct view *v, heat_src *out);
/* In the comparison: the two weights behind cell (q, k). */
bool view_compare_cell(struct view *v, int q, int k, float *now, float *pinned);
/* Word view: the tokens [start, end) of word i. */
bool view_word_span(const struct view *v, int i, int *start, int *end);
/* The size of the matrix on the map (0 without one), and the token whose
 * predictions belong to Query row q (in the word view: the word's first). */
int view_n(struct view *v);
int view_query_token(const struct view *v, int q);
/* Forget the cached matrices (the text, the selection or the view changed). */
void view_matrix_invalidate(struct view *v);

#endif
