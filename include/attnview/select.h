/* What a map shows: one name per kind, one table, one function that makes
 * the matrix (ggml's op enum beside its name table). The view, --dump and
 * --export read the names here (--show, the dump's "kind" and TSV head
 * column, the figure key's file names) and make their matrices with
 * sel_matrix.
 *
 * Two things go with any kind and are not kinds: the word view (the matrix
 * aggregated to words, analysis.h's words_aggregate) and a difference (one
 * text's matrix minus another's, or minus a pinned one: matrix_difference).
 * The view and --export combine them with every kind (the words of the
 * rollout, the difference of two means), so they are flags beside the kind.
 *
 * Adding a kind: a row in sel_kind and sel_names (the static assert in
 * select.c counts them), its case in sel_matrix, its description in the
 * view (matrix.c, sel_describe) and its title in the figures
 * (render/figure_result.c); --show, --dump's names and the help follow. */
#ifndef ATTNVIEW_SELECT_H
#define ATTNVIEW_SELECT_H

#include "attnview/model.h"

typedef enum sel_kind {
	SEL_HEAD,     /* one head's weights */
	SEL_MEAN,     /* the mean of a layer's heads */
	SEL_MAX,      /* their largest weight, cell by cell */
	SEL_ROLLOUT,  /* attention rollout through a layer */
	SEL_ALL,      /* the mean of every head of every layer */
	SEL_CONTRIB,  /* one head's value contributions, as shares of each row */
	SEL_OVERVIEW, /* every head of every layer, a tile each (not one matrix) */
	SEL_NKINDS
} sel_kind;

/* The view's Tab goes on from a layer's last head through these. */
#define SEL_FIRST_SUMMARY SEL_MEAN
#define SEL_NSUMMARIES	  (SEL_ALL - SEL_MEAN + 1)

/* "head", "mean", "max", "rollout", "all", "contributions", "overview" */
const char *sel_name(sel_kind k);
bool sel_parse(const char *name, sel_kind *k);
/* The names joined: "head, mean, max, rollout, all, contributions or
 * overview" (`last` between the last two), for messages and help. */
const char *sel_names_list(const char *last);

/* The kind is of one head (head and contributions), of one layer (those,
 * mean, max and the rollout through it), or of the whole model. */
bool sel_has_head(sel_kind k);
bool sel_has_layer(sel_kind k);

/* What sel_matrix keeps from one call to the next on the same result: the
 * rollout of every layer. {0} is empty; forget it when the result changes. */
typedef struct sel_cache {
	float *roll, *work; /* (L, n, n), (n, n) */
	size_t cap;
	const attn_result *of; /* the result roll was made of, NULL: none */
} sel_cache;

void sel_cache_forget(sel_cache *c);
void sel_cache_finish(sel_cache *c);

/* out (n, n), n = r->n: kind at layer/head of r (the overview: that head).
 * Contributions need r->value_norms: C[i][j] = A[i][j] |v_j W_O|, divided
 * by the row's sum (rows sum to 1, or are 0). False, with a message, when
 * out of memory or the norms are missing. */
bool sel_matrix(float *out, const attn_result *r, sel_kind kind, int layer, int head,
		sel_cache *c, av_error *err);

#endif
