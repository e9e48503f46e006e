/* The two products of a head's attention in the view's pass (infer.c) and
 * in the scores and weights a result recomputes from its queries and keys
 * (result.c), by code of our own where the CPU has AVX2 and FMA:
 *
 *   scores  S[i][j] = q_i . k_j                 (i < rows, j < kn)
 *   mix     y[i][c] = sum_j P[i][j] v_j[c]      (c < hs)
 *
 * Each number is one chain of fused multiply-adds in a fixed order (over
 * the head's dimensions for a score, over the keys for a mixed value),
 * starting from zero; the lanes of a vector are different outputs. So a
 * result does not depend on the vector width (AVX-512's 16 lanes or AVX2's
 * 8: tests/ci/avx512.sh compares them), on the OpenBLAS kernel, on how the
 * rows are cut into blocks or on where the keys are stored. OpenBLAS's
 * sgemm, whose sums follow its kernel, packs the keys into its own layout
 * again for every block of 64 query rows and clears its output first; the
 * keys are packed here once a head (attn_pack_keys), in tiles of 64 keys
 * whose 64 values of one dimension lie together. */
#ifndef ATTNVIEW_ATTN_PRODUCTS_H
#define ATTNVIEW_ATTN_PRODUCTS_H

#include <stdbool.h>
#include <stddef.h>

#define ATTN_KEY_TILE 64
#define ATTN_MAX_ROWS 64 /* attn_scores_max's rows at a time (its stack) */

/* Whether these products run here: a CPU with AVX2 and FMA (x86-64-v3),
 * a build with a run-time choice of vector code, and a head size hs that
 * is a multiple of 8. Otherwise the callers keep OpenBLAS (a CPU without
 * FMA would spend a library call on each fused multiply-add), whatever
 * ATTNVIEW_SIMD says. Where they run, ATTNVIEW_SIMD=portable makes them
 * plain loops of the same chains (the same bits, slowly, for comparing).
 * Decided once per process. */
bool attn_products_run(int hs);
/* How many products the plain loops have made (the tests check that
 * ATTNVIEW_SIMD=portable runs them). */
unsigned long attn_products_plain_calls(void);

/* Floats of the packed keys of n keys of hs dimensions. */
size_t attn_packed_keys_floats(int n, int hs);

/* Keys k (n rows of hs floats, ldk apart) into kt: tiles of ATTN_KEY_TILE
 * keys, [tile][hs][ATTN_KEY_TILE], zeros past key n. */
void attn_pack_keys(float *kt, const float *k, int ldk, int n, int hs);

/* S (rows x kn, row stride lds >= kn) = q (rows of hs floats, ldq apart)
 * times the packed keys 0..kn-1 (kt of at least kn keys). */
void attn_scores(float *S, int lds, const float *q, int ldq, const float *kt, int rows, int kn,
		 int hs);
/* The same, and rmax[i] (if not NULL) the largest of row i's scores (NaN
 * passed over, as softmax_row does; -inf if all are NaN), taken while they
 * are still in registers: a masked model's softmax then needs no pass of
 * its own for it (softmax_row_exp). */
void attn_scores_max(float *S, int lds, const float *q, int ldq, const float *kt, int rows, int kn,
		     int hs, float *rmax);

/* y (rows of hs floats, ldy apart) = P (rows x kn, ldp apart) times v (kn
 * rows of hs floats, ldv apart); hs a multiple of 8. */
void attn_mix(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int rows, int kn,
	      int hs);
/* The same, each output row then multiplied by rscale[i] (if not NULL): the
 * softmax's 1 / sum, when P holds its exponentials. One rounding more, at
 * every width. */
void attn_mix_scaled(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int rows,
		     int kn, int hs, const float *rscale);

/* The same products as plain loops, one fmaf chain an output: what the
 * fast ones must give to the bit (tests/unit/test_attn_products.c). */
void attn_scores_ref(float *S, int lds, const float *q, int ldq, const float *k, int ldk, int rows,
		     int kn, int hs);
void attn_mix_ref(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int rows,
		  int kn, int hs);

#endif
