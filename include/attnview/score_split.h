/* The score split by source: the raw score q_i . k_j of
 * one head at one cell taken apart by where the residual stream's parts
 * come from, on the query side and on the key side: the token's embedding,
 * its position, each earlier head's output, each earlier block's projection
 * bias and MLP, and the bias of the LayerNorm and of q (or k). With the
 * LayerNorm's scale frozen at its actual value q and k are linear in the
 * parts, so the terms, one per pair of parts, add up to the score. Exact
 * formulas in man 5 attnview, section 12. */
#ifndef ATTNVIEW_SCORE_SPLIT_H
#define ATTNVIEW_SCORE_SPLIT_H

#include "attnview/model.h"

/* Where a part of the residual stream comes from. */
typedef enum split_source {
	SPLIT_TOKEN,	/* the embedding minus the position: sqrt(d) wte[token] */
	SPLIT_POSITION, /* the sinusoidal position pe[t] */
	SPLIT_HEAD,	/* one head's output y_h W_O^h, of an earlier block */
	SPLIT_PROJ_B,	/* an earlier block's attention minus its heads: proj_b */
	SPLIT_MLP,	/* an earlier block's MLP */
	SPLIT_BIAS,	/* the LayerNorm's shift and q's (k's) bias: no part of the stream */
} split_source;
#define SPLIT_NSOURCES 6

/* "token", "position", "head", "proj_b", "mlp", "bias" (the dump's names). */
const char *split_source_name(split_source s);

typedef struct split_part {
	split_source source;
	int layer, head; /* of SPLIT_HEAD (both), SPLIT_PROJ_B and SPLIT_MLP (layer) */
} split_part;

/* The parts of block `layer`'s input, in the order of the terms: token,
 * position, then per earlier block its heads, proj_b and MLP, then the
 * bias: 3 + layer (H + 2) of them. */
int split_nparts(const model *m, int layer);
split_part split_part_at(const model *m, int layer, int p);
/* The dump's name of part p: "token", "position", "L0H1", "L0.proj_b",
 * "L0.mlp", "bias". */
void split_part_name(const model *m, int layer, int p, char *out, size_t size);

typedef struct score_split {
	int layer, head, query, key, nparts;
	float score;   /* the pass's raw q . k (its q and k, summed in double) */
	double *terms; /* (nparts, nparts): [query part][key part], summing to the score */
} score_split;

/* The split of head `head` of block `layer` at (query, key) from ws, which
 * holds a plain pass of n tokens (model_forward, or infer_forward: the same
 * layout). Fills s (free with score_split_finish). */
bool score_split_compute(const model *m, const activations *ws, int n, int layer, int head,
			 int query, int key, score_split *s, av_error *err);
void score_split_finish(score_split *s);

/* The index of the term with the largest |value|, and its share of the sum
 * of all |values| (0..1). */
int score_split_largest(const score_split *s, double *share);

#endif
