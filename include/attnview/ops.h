/* The layers of the model, one function per operation on plain float arrays:
 * outputs first, sizes last. The first comment of each gives the shapes.
 * Every BLAS-backed op has a plain-loop twin (*_ref) that the tests check the
 * fast one against; the loops are the specification, the BLAS calls the speed.
 * Backward functions (backward.h) accumulate into their gradients. */
#ifndef ATTNVIEW_OPS_H
#define ATTNVIEW_OPS_H

#include <stdbool.h>
#include <stdint.h>

#define AV_LN_EPS 1e-5f
#define AV_POS_BASE 10000.0

/* Sinusoidal positions, computed in double and rounded to float:
 * pe[t][2i] = sin(t * w_i), pe[t][2i+1] = cos(t * w_i), w_i = 10000^(-2i/C).
 * pe (T,C); C must be even. */
void positions_init(float *pe, int T, int C);

/* tokens (B,T), wte (V,C), pe (T,C) -> out (B,T,C)
 * out[b][t] = scale * wte[tokens[b][t]] + pe[t]; scale is sqrt(C) rounded to
 * binary32 (attnview's models) or 1 (model.emb_scale). */
void embed_forward(float *out, const int32_t *tokens, const float *wte, const float *pe,
		   float scale, int B, int T, int C);

/* inp (N,C) -> out (N,C); mean, rstd (N) kept for the backward pass (may be NULL).
 * out = (inp - mean) * rstd * w + b, rstd = 1/sqrt(var + 1e-5), var biased (1/C). */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
		       const float *b, int N, int C);

/* inp (N,C), w (OC,C), bias (OC) or NULL -> out (N,OC) = inp w^T + bias */
void matmul_forward(float *out, const float *inp, const float *w, const float *bias, int N, int C,
		    int OC);
void matmul_forward_ref(float *out, const float *inp, const float *w, const float *bias, int N,
			int C, int OC);

/* qkv (B,T,3C) -> out (B,T,C), preatt (B,NH,T,T), att (B,NH,T,T)
 * Row t of qkv holds q | k | v, each C wide; head h uses columns h*hs..(h+1)*hs-1
 * of each, hs = C/NH.
 *   preatt[b][h][i][j] = q_i . k_j                       (raw score, unscaled)
 *   att[b][h][i][j]    = softmax_j(preatt[b][h][i][j] / sqrt(hs))
 *   out[b][i][h*hs+c]  = sum_j att[b][h][i][j] * v_j[h*hs+c]
 * causal: keys j > i are masked: preatt is NAN there and att exactly 0.
 * preatt may be NULL (attention_forward only): the scores are not kept. */
void attention_forward(float *out, float *preatt, float *att, const float *qkv, int B, int T,
		       int C, int NH, bool causal);
/* Query rows per block of attention_forward and its backward: the largest of
 * T, T/2, ... (at least 16) whose (rows, T, hs) products OpenBLAS runs with
 * its small-matrix kernels (M N K <= 1e6), which neither pack the operands nor
 * clear the output first. T at the reference configuration (T=128, hs=16);
 * 128 at T=256, hs=16. The blocks give the same sums as a whole product. */
int attention_query_block(int T, int hs);
void attention_forward_ref(float *out, float *preatt, float *att, const float *qkv, int B, int T,
			   int C, int NH, bool causal);

/* inp (N) -> out (N), tanh form:
 * gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
void gelu_forward(float *out, const float *inp, int N);
/* The same, and inp (N) replaced by gelu'(inp): all the backward needs of
 * the GELU's input, one exponential fewer per element than recomputing it. */
void gelu_forward_grad(float *out, float *inp, int N);
/* inp (N) -> out (N), the exact form: gelu(x) = x (1 + erf(x / sqrt 2)) / 2
 * (vec8.h: within 2.3 u |x| of the exact value); the _grad twin as above. */
void gelu_erf_forward(float *out, const float *inp, int N);
void gelu_erf_forward_grad(float *out, float *inp, int N);

/* out (N) = a (N) + b (N) */
void residual_forward(float *out, const float *a, const float *b, int N);

/* Softmax of one score row of length n: att[j] = exp(scale*(s[j]-max)) / sum
 * for the keys j < valid (8 lanes: the maximum, the exponentials, the sum in
 * lane order, one reciprocal). Keys at or after `valid` are masked: their
 * weight is exactly zero and, unless att is preatt (in place), their score
 * becomes NAN, so nobody mistakes a masked cell for a real one. The
 * attention of the forward pass, of training and of the view (infer.c). */
void softmax_row(float *att, float *preatt, int n, int valid, float scale);
/* softmax_row's first steps alone: att[j] = exp(scale*(s[j]-max)) for
 * j < valid, the masked keys as softmax_row leaves them; returns the sum,
 * so that scale_row(att, att, valid, 1 / sum) gives softmax_row's weights
 * to the bit. maxv: the largest of preatt[0..valid) when the caller has it
 * (the view's products find it as they store the scores), NAN to find it
 * here. */
float softmax_row_exp(float *att, float *preatt, int n, int valid, float scale, float maxv);
/* out (n) = in (n) * c; out may be in. */
void scale_row(float *out, const float *in, int n, float c);

/* Row-wise softmax in place, computed in binary64 and rounded once: each
 * result is the exact softmax of its row to within about 1e-7, relative,
 * whatever V. x (N,V) */
void softmax_rows(float *x, int N, int V);

/* log(sum_i exp(x[i])) over x (n > 0), shifted by the maximum and summed in
 * double: the normaliser of a softmax, for one probability (exp(x[i] - it))
 * or one negative log-likelihood (it - x[i]) without the whole row. */
double log_sum_exp(const float *x, int n);

/* out[i] = exp(in[i]) (out == in allowed), 8 lanes at a time with AVX2 where
 * the CPU has it: under 1e-7 relative error on [-87.3, 88.7] (inputs beyond
 * are clamped: exp(-inf) gives 1e-38, not 0), several times faster than
 * libm's expf. The loss and gelu_backward use the same code; the forward's
 * softmax and GELU (tanh(u) = 1 - 2 / (exp(2u) + 1)) could too. */
void vec_exp(float *out, const float *in, int n);

/* The element-wise code this process runs (attnview --version): "AVX-512,
 * 16 lanes" where the CPU has it (x86-64-v4) and ATTNVIEW_SIMD does not ask
 * for less, else the 8-lane code's level, or "portable: ..." (the view's
 * attention products as plain loops); an ATTNVIEW_SIMD not understood is
 * named. Every level gives the same bits. */
const char *ops_vector_code(void);

/* Whether the calling thread flushes subnormal numbers to zero: every thread
 * of the process does, OpenBLAS's too (set before main() and OpenBLAS's
 * threads restarted, ops.c), unless ATTNVIEW_KEEP_SUBNORMALS=1. */
bool ops_flushes_subnormals(void);

#endif
