/* What the view and the dump say about attention, computed without a
 * terminal: statistics of a head, a row's strongest keys and a weight's rank,
 * and pooling a matrix into a smaller grid for the overview.
 *
 * Everything works on an attn_matrix: one n x n matrix of weights, rows the
 * queries i, columns the keys j. Today that is one head of one text; it is
 * also what a mean over heads, a rollout or a difference of two texts will
 * be, so the view's heatmap and these functions never ask where it came from. */
#ifndef ATTNVIEW_ANALYSIS_H
#define ATTNVIEW_ANALYSIS_H

#include "attnview/model.h"

typedef struct attn_matrix {
	const float *w; /* (n, n), row-major: w[i * n + j] */
	int n;
	bool causal; /* keys after the query are masked: not shown, not counted */
} attn_matrix;

/* Head `head` of layer `layer` of a result. */
attn_matrix attn_result_head(const attn_result *r, int layer, int head);

static inline bool attn_masked(const attn_matrix *a, int q, int k)
{
	return a->causal && k > q;
}

static inline float attn_at(const attn_matrix *a, int q, int k)
{
	return a->w[(size_t)q * (size_t)a->n + (size_t)k];
}

/* Statistics of a head on one text, averaged over its n query rows. Masked
 * keys have weight 0 and take no part.
 *   entropy      mean over rows of -sum_j A[i][j] ln A[i][j] (nats)
 *   max_entropy  mean over rows of ln(number of visible keys): a uniform row
 *   distance     mean over rows of sum_j A[i][j] |i - j| (positions)
 *   self, prev, next
 *                share of rows whose largest weight (the first, on ties) is
 *                on the query itself, the key before it, the key after it */
typedef struct head_stats {
	int n; /* rows */
	double entropy, max_entropy, distance;
	double self, prev, next;
} head_stats;

void head_stats_compute(head_stats *s, const attn_matrix *a);

/* The strongest keys of row q, by weight, ties by position: writes up to k
 * key indices to keys and returns how many (masked keys are never listed). */
int row_top_keys(const attn_matrix *a, int q, int k, int *keys);

/* Rank of cell (q, j) in its row: 1 + the number of visible keys with a
 * larger weight. *visible (may be NULL) gets the number of visible keys. */
int row_rank(const attn_matrix *a, int q, int j, int *visible);

/* A one-word description of a head's pattern on this text, from its
 * statistics: "previous", "next" or "self" when that is where at least half
 * of the rows have their maximum, "local" when the weight lies on average
 * within 5 positions of the query and within a quarter of the text,
 * otherwise "broad". */
const char *head_pattern(const head_stats *s);

/* Pooling an n x n matrix into rows x cols samples (rows, cols <= n): sample
 * (r, c) covers queries [r*n/rows, (r+1)*n/rows) and keys [c*n/cols,
 * (c+1)*n/cols). */
typedef enum pool_kind {
	POOL_MEAN, /* mean weight of the block, masked cells counted as 0 */
	POOL_MAX,  /* largest visible weight: a diagonal stays a line */
} pool_kind;

/* out (rows, cols) the pooled values; masked (rows, cols) 1 where every
 * cell of the block is masked (out is 0 there). */
void pool_grid(float *out, uint8_t *masked, const attn_matrix *a, int rows, int cols,
	       pool_kind kind);

#endif
