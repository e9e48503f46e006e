/* Weight-only circuits: what each head does from its
 * weights alone, no text needed. Per head: the positional QK profile (the
 * score against the relative offset of key and query from the sinusoidal
 * positions), the QK table over the most frequent characters, the OV
 * copying score of W_E W_OV W_E^T with its largest character maps, and the
 * composition scores of Elhage et al. (2021) with the heads of every earlier
 * block, beside the random-rotation baseline 1/sqrt(d). The LayerNorms are
 * read with their scale frozen; exact formulas in man 5 attnview, section 9.
 * Computed in double. */
#ifndef ATTNVIEW_CIRCUITS_H
#define ATTNVIEW_CIRCUITS_H

#include "attnview/model.h"

#define CIRC_QK_CHARS 12 /* the QK table's characters: the most frequent */
#define CIRC_MAP_FROM 64 /* a top map's source is one of the 64 most frequent */
#define CIRC_MAPS     8	 /* the largest maps kept per head */

typedef struct circ_map {
	int32_t from, to;
	float value; /* (W_E W_OV W_E^T)[from, to] */
} circ_map;

/* One head's circuits. */
typedef struct circ_head {
	float *positional;			/* (noffsets): at offset offset0 + i */
	float qk[CIRC_QK_CHARS][CIRC_QK_CHARS]; /* [query char][key char] */
	float ov_copying;			/* sum lambda / sum |lambda|, in -1..1 */
	circ_map maps[CIRC_MAPS];		/* largest first */
	int nmaps;
	/* Composition with head j of block k < this block, at [k * H + j]
	 * (layer * H each; NULL in block 0). */
	float *comp_q, *comp_k, *comp_v;
} circ_head;

typedef struct circuits {
	int layers, heads;
	int offset0, noffsets;	       /* -(T-1) .. 0 (causal) or .. T-1 (masked) */
	int nqk;		       /* characters in the QK table */
	int32_t qk_ids[CIRC_QK_CHARS]; /* their ids, most frequent first */
	float baseline;		       /* 1/sqrt(d): the rms over random rotations */
	circ_head *head;	       /* (layers * heads), [l * heads + h] */
	float *mem;
} circuits;

/* The circuits of every head of m. Fails for memory, or if LAPACK finds no
 * eigenvalues of an OV circuit. */
bool circuits_init(circuits *c, const model *m, av_error *err);
void circuits_finish(circuits *c);

/* The positional pattern of head (l, h) into out (T, T): at query i the
 * softmax of its positional scores over the keys it sees (man 5 attnview,
 * section 9), 0 elsewhere; what --export --circuits draws. Fails only for
 * memory. */
bool circuits_positional_pattern(const model *m, int l, int h, float *out, av_error *err);

/* The offset with the largest positional score of head (l, h). */
int circuits_peak(const circuits *c, int l, int h);

#endif
