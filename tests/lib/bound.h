/* The forward pass of man 5 attnview in binary64, with a first-order bound of
 * how far any binary32 implementation of it may be from the exact result,
 * whatever order it sums in and whatever BLAS kernel it calls (man 5
 * attnview, NOTES, Accuracy: the assumptions and the rules). The tests check
 * every number attnview computes against this reference, to within the bound
 * for the element, instead of against a tolerance measured on one kernel. */
#ifndef ATTNVIEW_TESTS_BOUND_H
#define ATTNVIEW_TESTS_BOUND_H

#include "attnview/model.h"

typedef struct fwd_bound {
	int L, H, n, d, V;
	/* Each array with its bound beside it (the same shape). */
	double *att, *att_err;	     /* [L][H][n][n], 0 where masked */
	double *score, *score_err;   /* [L][H][n][n] raw q.k; NAN where masked */
	double *qkv, *qkv_err;	     /* [L][n][3d] q, k and v of each layer */
	double *hidden, *hidden_err; /* [n][d] the last block's output */
	double *logits, *logits_err; /* [n][V] through the final LayerNorm */
} fwd_bound;

/* The pass over ids[0..n) with the heads of ablate (NULL: none; as
 * activations.ablate) switched off. False if out of memory. */
bool fwd_bound_compute(fwd_bound *b, const model *m, const int32_t *ids, int n,
		       const uint8_t *ablate);
/* The same with the logits of one row only (row >= 0; the others are 0). */
bool fwd_bound_compute_row(fwd_bound *b, const model *m, const int32_t *ids, int n,
			   const uint8_t *ablate, int row);
void fwd_bound_finish(fwd_bound *b);

/* The largest |got - want| / err over n elements (got binary32 from the code
 * under test); NAN in want must be NAN in got, an infinity the same
 * infinity. Returns INFINITY where a
 * difference exceeds a zero bound or the NANs disagree. A result <= 1 means
 * every element is within its bound. *worst_abs receives the largest
 * |got - want| (may be NULL). Differences within 2^-125 (subnormals, which
 * the weights' bounds allow for) count as 0. */
double bound_ratio(const float *got, const double *want, const double *err, size_t n,
		   double *worst_abs);

#endif
