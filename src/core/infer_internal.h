/* What infer.c and infer_row.c share: one layer's pass over rows p..n-1,
 * its setup, and the attention of a block of query rows. */
#ifndef ATTNVIEW_INFER_INTERNAL_H
#define ATTNVIEW_INFER_INTERNAL_H

#include "attnview/infer.h"

/* Floating-point operations worth a thread of a phase: waking a pool thread
 * and waiting for it costs some 10-50 us, 1-2 MFLOP of BLAS. */
#define FLOPS_PER_THREAD 4e6

typedef struct layer_pass {
	const model *m;
	activations *a;
	int l, d, H, hs, T;
	bool causal;
	int p, n;	     /* rows p..n-1 are computed (0..p-1 are the cache's) */
	const float *x;	     /* the layer's input rows (T, d) */
	float *att, *scores; /* this layer's [H][n][n] in the result, or NULL */
	float *catt;	     /* this layer's packed rows in the cache's store, or NULL */
	size_t cstride;	     /* floats per head in the store */
	float *qk;	     /* this layer's q and k rows (2d each) to keep, or NULL */
	float *qk_base;	     /* where they go: [L][qk_rows][2d], or NULL */
	int qk_rows;
	const uint8_t *off; /* this layer's heads switched off, or NULL */
	float *work;	    /* ATT_BLOCK x n per slice */
	float *kt;	    /* the layer's keys packed, a head after another
			       (attn_pack_keys), or NULL: OpenBLAS's products */
	size_t kt_head;	    /* floats of a head's in kt */
	int nt;		    /* slices of the phase under way */
	int nblk;	    /* blocks of query rows per head */
} layer_pass;

/* lp's fields of layer l (its input, where its weights, scores, queries and
 * keys go, its heads switched off). */
void infer_layer_setup(layer_pass *lp, infer_cache *c, float *att, float *scores, int l);

/* Query rows i0..i1-1 of head h (at most INFER_ATT_BLOCK): scores against
 * the keys they may see, the softmax, and the head's columns of y = weights
 * x values. S: room for (i1 - i0) x n floats. */
void infer_attend_block(const layer_pass *lp, float *S, int h, int i0, int i1);

/* Every layer of the one row lp->p = lp->n - 1 (typing at the end of a
 * causal text; or a text of one token) on a team of two threads (parallel_team), each product's
 * outputs and the heads split between them, a spin barrier between the
 * phases: one wake-up a keystroke. Returns false, having done nothing, when
 * the row is too small to share or no team can be had; else *ran is what
 * run_layers would return (false: stale). */
bool infer_row_team(layer_pass *lp, infer_cache *c, float *att, float *scores, int *done,
		    infer_stale_fn stale, void *stale_ctx, bool *ran);

#endif
