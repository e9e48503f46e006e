/* The backward pass, op by op (llm.c style), and the loss (backward.h). The
 * training step that drives them is in train_step.c.
 *
 * Every op accumulates into its gradients. The step often wants the first
 * write into a fresh buffer; the *_write variants (an `acc` flag of the
 * static matmul_backward_ld and attention_backward_to) make that case cost
 * no memset (sgemm beta = 0 instead of 1). */
#include "attnview/backward.h"

#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vec8.h"

/* ---- embedding ---------------------------------------------------------- */

/* Rows of dwte in token order, scattered: the row a few tokens ahead is
 * prefetched (as in embed_forward). */
AV_CLONES void embed_backward(float *dwte, const float *dout, const int32_t *tokens, int B, int T,
			      int C)
{
	if (!dwte)
		return;
	const float s = sqrtf((float)C);
	const v8f s8 = (v8f){0, 0, 0, 0, 0, 0, 0, 0} + s;
	const long N = (long)B * T;
	for (long i = 0; i < N; i++) {
		if (i + 4 < N) {
			const float *ahead = dwte + (size_t)tokens[i + 4] * C;
			for (int c = 0; c < C; c += 16)
				__builtin_prefetch(ahead + c, 1);
		}
		float *dw = dwte + (size_t)tokens[i] * C;
		const float *d = dout + (size_t)i * C;
		int c = 0;
		for (; c + 8 <= C; c += 8)
			store8(dw + c, load8(dw + c) + s8 * load8(d + c));
		for (; c < C; c++)
			dw[c] += s * d[c];
	}
}

/* ---- LayerNorm ---------------------------------------------------------- */

/* With n = (x - mean) * rstd and y = n * w + b, per row of C:
 *   dw += dy * n,  db += dy,  dn = dy * w
 *   dx = rstd * (dn - mean(dn) - n * mean(dn * n))
 * (the two means are the gradient through mean and through rstd; var is
 * biased, 1/C, so no C/(C-1) appears). Columns go 8 at a time; the row sums
 * are kept per lane and combined in a fixed order. */
AV_CLONES void layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
				  const float *inp, const float *w, const float *mean,
				  const float *rstd, int N, int C)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	for (int i = 0; i < N; i++) {
		const float *dy = dout + (size_t)i * C;
		const float *x = inp + (size_t)i * C;
		v8f mu = zero + mean[i], rs = zero + rstd[i];
		v8f sdn8 = zero, sdnn8 = zero;
		for (int c = 0; c < C; c += 8) {
			int k = C - c < 8 ? C - c : 8;
			v8f n = ((k == 8 ? load8(x + c) : load_part(x + c, k, 0.0f)) - mu) * rs;
			v8f dn = (k == 8 ? load8(dy + c) : load_part(dy + c, k, 0.0f)) *
				 (k == 8 ? load8(w + c) : load_part(w + c, k, 0.0f));
			sdn8 += dn;
			sdnn8 += dn * n;
		}
		float sdn = 0.0f, sdnn = 0.0f;
		for (int k = 0; k < 8; k++) {
			sdn += sdn8[k];
			sdnn += sdnn8[k];
		}
		v8f mdn = zero + sdn / (float)C, mdnn = zero + sdnn / (float)C;
		float *dx = dinp ? dinp + (size_t)i * C : NULL;
		for (int c = 0; c < C; c += 8) {
			int k = C - c < 8 ? C - c : 8;
			bool full = k == 8;
			v8f dyv = full ? load8(dy + c) : load_part(dy + c, k, 0.0f);
			v8f n = ((full ? load8(x + c) : load_part(x + c, k, 0.0f)) - mu) * rs;
			v8f dn = dyv * (full ? load8(w + c) : load_part(w + c, k, 0.0f));
			if (dw) {
				v8f v =
				    (full ? load8(dw + c) : load_part(dw + c, k, 0.0f)) + dyv * n;
				if (full)
					store8(dw + c, v);
				else
					store_part(dw + c, k, v);
			}
			if (db) {
				v8f v = (full ? load8(db + c) : load_part(db + c, k, 0.0f)) + dyv;
				if (full)
					store8(db + c, v);
				else
					store_part(db + c, k, v);
			}
			if (dx) {
				v8f v = (full ? load8(dx + c) : load_part(dx + c, k, 0.0f)) +
					rs * (dn - mdn - n * mdnn);
				if (full)
					store8(dx + c, v);
				else
					store_part(dx + c, k, v);
			}
		}
	}
}

/* ---- matmul ------------------------------------------------------------- */

/* Column sums of dout, rows ascending (a fixed order), 8 columns at a time. */
/* dbias (OC) += the column sums of dout (N rows of OC, ldo apart). */
AV_CLONES static void bias_backward(float *dbias, const float *dout, int N, int OC, int ldo)
{
	int o = 0;
	for (; o + 8 <= OC; o += 8) {
		v8f acc = load8(dbias + o);
		for (int i = 0; i < N; i++)
			acc += load8(dout + (size_t)i * ldo + o);
		store8(dbias + o, acc);
	}
	for (; o < OC; o++) {
		float acc = dbias[o];
		for (int i = 0; i < N; i++)
			acc += dout[(size_t)i * ldo + o];
		dbias[o] = acc;
	}
}

/* out = inp w^T + bias with inp (N,C), w (OC,C):
 *   dinp (N,C)  = dout (N,OC) w (OC,C)
 *   dw   (OC,C) = dout^T (OC,N) inp (N,C)
 * acc: accumulate into dinp (else overwrite it); dw always accumulates.
 * dout's rows are ldo apart (OC when it is a matrix of its own). */
static void matmul_backward_ld(float *dinp, bool acc, float *dw, float *dbias, const float *dout,
			       int ldo, const float *inp, const float *w, int N, int C, int OC)
{
	if (dinp)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, ldo, w,
			    C, acc ? 1.0f : 0.0f, dinp, C);
	if (dw)
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, ldo, inp,
			    C, 1.0f, dw, C);
	if (dbias)
		bias_backward(dbias, dout, N, OC, ldo);
}

void matmul_backward_write(float *dinp, float *dw, float *dbias, const float *dout, int ldo,
			   const float *inp, const float *w, int N, int C, int OC)
{
	matmul_backward_ld(dinp, false, dw, dbias, dout, ldo, inp, w, N, C, OC);
}

void matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
		     const float *w, int N, int C, int OC)
{
	matmul_backward_ld(dinp, true, dw, dbias, dout, OC, inp, w, N, C, OC);
}

void matmul_backward_ref(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
			 const float *w, int N, int C, int OC)
{
	for (int i = 0; i < N; i++) {
		const float *d = dout + (size_t)i * OC;
		const float *x = inp + (size_t)i * C;
		for (int o = 0; o < OC; o++) {
			const float *wr = w + (size_t)o * C;
			for (int c = 0; c < C; c++) {
				if (dinp)
					dinp[(size_t)i * C + c] += d[o] * wr[c];
				if (dw)
					dw[(size_t)o * C + c] += d[o] * x[c];
			}
			if (dbias)
				dbias[o] += d[o];
		}
	}
}

/* ---- attention ----------------------------------------------------------
 *
 * For one (batch b, head h), with Q, K, V (T,hs) the head's columns of qkv,
 * s = 1/sqrt(hs), and the forward
 *   P = Q K^T                 (preatt, raw scores)
 *   A = softmax_rows(s P)     (att; masked entries have A = 0)
 *   O = A V                   (this head's columns of the output)
 * the backward, given dO, is
 *   dA = dO V^T               dV = A^T dO
 *   dS_ij = A_ij (dA_ij - sum_k A_ik dA_ik)         (softmax Jacobian applied
 *            row-wise: dA_i . (diag(A_i) - A_i A_i^T), as A_i sums to 1)
 *   dP = s dS                 (the scale sits inside the softmax)
 *   dQ = dP K                 dK = dP^T Q
 * Masking needs nothing further: where A_ij = 0 (the causal mask, j > i),
 * dS_ij = 0, so masked keys get no gradient and the NAN scores in preatt are
 * never read. dA there is finite (V is), so 0 * dA stays 0. */

typedef struct att_ctx {
	float *dqkv, *work;
	const float *dout, *qkv, *att;
	int T, C, NH;
	bool acc, causal;
	float sharpen;
} att_ctx;

/* dp (rows,T): dA in, the scaled score gradient s dS out; a: A; the rows are
 * query rows i0, i0 + 1, ... (for the causal mask). Rows 8 lanes at a time;
 * the row dot product is summed per lane, then across lanes in a fixed
 * order.
 *
 * sharpen = c > 0 adds c times each row's entropy H_i = -sum_j A_ij log A_ij
 * to the loss: dH_i/dA_ij = -(log A_ij + 1), and the constant -1 drops out
 * of the softmax's backward (its row sum is subtracted again), so dA_ij gets
 * -c log A_ij. A weight of exactly 0 (a masked key, or one that underflowed)
 * adds nothing, as A log A -> 0. */
AV_CLONES static void softmax_backward_from(float *dp, const float *a, int rows, int i0, int T,
					    bool causal, float scale, float sharpen)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	for (int i = 0; i < rows; i++) {
		float *d = dp + (size_t)i * T;
		const float *ar = a + (size_t)i * T;
		int nj = causal ? i0 + i + 1 : T, j;
		if (sharpen > 0.0f)
			for (j = 0; j < nj; j++)
				if (ar[j] > 0.0f)
					d[j] -= sharpen * logf(ar[j]);
		v8f dot8 = zero;
		for (j = 0; j + 8 <= nj; j += 8)
			dot8 += load8(ar + j) * load8(d + j);
		if (j < nj)
			dot8 += load_part(ar + j, nj - j, 0.0f) * load_part(d + j, nj - j, 0.0f);
		float dot = 0.0f;
		for (int k = 0; k < 8; k++)
			dot += dot8[k];
		v8f dv = zero + dot, sv = zero + scale;
		for (j = 0; j + 8 <= nj; j += 8)
			store8(d + j, sv * load8(ar + j) * (load8(d + j) - dv));
		if (j < nj) {
			int k = nj - j;
			store_part(d + j, k,
				   sv * load_part(ar + j, k, 0.0f) *
				       (load_part(d + j, k, 0.0f) - dv));
		}
		for (j = nj; j < T; j++)
			d[j] = 0.0f;
	}
}

void softmax_backward_rows(float *dp, const float *a, int rows, int T, bool causal, float scale,
			   float sharpen)
{
	softmax_backward_from(dp, a, rows, 0, T, causal, scale, sharpen);
}

static void attention_backward_range(void *p, int begin, int end)
{
	const att_ctx *x = p;
	int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	float beta = x->acc ? 1.0f : 0.0f;
	/* Query rows in blocks as the forward (attention_query_block): at T=256
	 * and 16 columns per head the packing and clearing of whole (T,T)
	 * products were 11% of a step of the bigger configuration. */
	int qb = attention_query_block(T, hs);
	for (int bh = begin; bh < end; bh++) {
		int b = bh / NH, h = bh % NH;
		const float *q = x->qkv + (size_t)b * T * C3 + (size_t)h * hs;
		const float *k = q + C, *v = q + 2 * C;
		float *dq = x->dqkv + (size_t)b * T * C3 + (size_t)h * hs;
		float *dk = dq + C, *dv = dq + 2 * C;
		const float *dO = x->dout + (size_t)b * T * C + (size_t)h * hs;
		const float *a = x->att + (size_t)bh * T * T;
		float *dp = x->work + (size_t)bh * T * T;

		/* Query rows i0 .. i0+n-1; dV and dK sum over the blocks. */
		for (int i0 = 0; i0 < T; i0 += qb) {
			int n = T - i0 < qb ? T - i0 : qb;
			const float *ab = a + (size_t)i0 * T, *dOb = dO + (size_t)i0 * C;
			float *dpb = dp + (size_t)i0 * T;
			float bkv = i0 == 0 ? beta : 1.0f;
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, T, hs, 1.0f, dOb, C,
				    v, C3, 0.0f, dpb, T);
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, n, 1.0f, ab, T,
				    dOb, C, bkv, dv, C3);
			softmax_backward_from(dpb, ab, n, i0, T, x->causal, scale, x->sharpen);
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, hs, T, 1.0f, dpb,
				    T, k, C3, beta, dq + (size_t)i0 * C3, C3);
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, n, 1.0f, dpb, T,
				    q + (size_t)i0 * C3, C3, bkv, dk, C3);
		}
	}
}

static void attention_backward_to(float *dqkv, bool acc, float *work, const float *dout,
				  const float *qkv, const float *att, int B, int T, int C, int NH,
				  bool causal, float sharpen)
{
	att_ctx x = {dqkv, work, dout, qkv, att, T, C, NH, acc, causal, sharpen};
	parallel_for_blas(B * NH, attention_backward_range, &x);
}

void attention_backward(float *dqkv, float *work, const float *dout, const float *qkv,
			const float *att, int B, int T, int C, int NH, bool causal)
{
	attention_backward_to(dqkv, true, work, dout, qkv, att, B, T, C, NH, causal, 0.0f);
}

void attention_backward_write(float *dqkv, float *work, const float *dout, const float *qkv,
			      const float *att, int B, int T, int C, int NH, bool causal,
			      float sharpen)
{
	attention_backward_to(dqkv, false, work, dout, qkv, att, B, T, C, NH, causal, sharpen);
}

void attention_backward_ref(float *dqkv, float *work, const float *dout, const float *qkv,
			    const float *att, int B, int T, int C, int NH, bool causal)
{
	int hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < NH; h++)
			for (int i = 0; i < T; i++) {
				const float *ar = att + (((size_t)b * NH + h) * T + i) * T;
				float *da = work + (((size_t)b * NH + h) * T + i) * T;
				const float *d = dout + ((size_t)b * T + i) * C + h * hs;
				const float *q = qkv + ((size_t)b * T + i) * C3 + h * hs;
				float *dq = dqkv + ((size_t)b * T + i) * C3 + h * hs;
				int nj = causal ? i + 1 : T;
				/* O_i = sum_j A_ij v_j */
				float dot = 0.0f;
				for (int j = 0; j < nj; j++) {
					const float *v =
					    qkv + ((size_t)b * T + j) * C3 + 2 * C + h * hs;
					float *dv =
					    dqkv + ((size_t)b * T + j) * C3 + 2 * C + h * hs;
					float s = 0.0f;
					for (int c = 0; c < hs; c++) {
						s += d[c] * v[c];
						dv[c] += ar[j] * d[c];
					}
					da[j] = s;
					dot += ar[j] * s;
				}
				/* through the softmax and the 1/sqrt(hs) scale to q.k */
				for (int j = 0; j < nj; j++) {
					float dp = scale * ar[j] * (da[j] - dot);
					const float *k =
					    qkv + ((size_t)b * T + j) * C3 + C + h * hs;
					float *dk = dqkv + ((size_t)b * T + j) * C3 + C + h * hs;
					for (int c = 0; c < hs; c++) {
						dq[c] += dp * k[c];
						dk[c] += dp * q[c];
					}
				}
			}
}

/* ---- GELU --------------------------------------------------------------- */

/* d: dL/dgelu in; out: dL/dx, accumulated into dx unless dx == d (the
 * formulas are in vec8.h). wide: 16 lanes first (the AVX-512 version);
 * element by element, the same bits at every width. */
AV_INLINE void gelu_backward_lanes(float *dx, const float *d, const float *x, long n, bool wide)
{
	long i = 0;
	for (; wide && i + 16 <= n; i += 16) {
		v16f xv = load16(x + i);
		v16f r = load16(d + i) * gelu_dg16(xv, gelu_e16(xv));
		if (dx != d)
			r += load16(dx + i);
		store16(dx + i, r);
	}
	for (; i < n; i += 8) {
		int k = n - i < 8 ? (int)(n - i) : 8;
		v8f xv = k == 8 ? load8(x + i) : load_part(x + i, k, 0.0f);
		v8f dv = k == 8 ? load8(d + i) : load_part(d + i, k, 0.0f);
		v8f r = dv * gelu_dg8(xv, gelu_e8(xv));
		if (dx != d)
			r += k == 8 ? load8(dx + i) : load_part(dx + i, k, 0.0f);
		if (k == 8)
			store8(dx + i, r);
		else
			store_part(dx + i, k, r);
	}
}

AV_CLONES static void gelu_backward8(float *dx, const float *d, const float *x, long n)
{
	gelu_backward_lanes(dx, d, x, n, false);
}

AV_WIDE static void gelu_backward16(float *dx, const float *d, const float *x, long n)
{
	gelu_backward_lanes(dx, d, x, n, true);
}

void gelu_backward(float *dinp, const float *inp, const float *dout, int N)
{
	if (av_wide())
		gelu_backward16(dinp, dout, inp, N);
	else
		gelu_backward8(dinp, dout, inp, N);
}

/* d *= dg, element by element. */
AV_CLONES void gelu_backward_saved(float *d, const float *dg, long n)
{
	long i = 0;
	for (; i + 8 <= n; i += 8)
		store8(d + i, load8(d + i) * load8(dg + i));
	for (; i < n; i++)
		d[i] *= dg[i];
}

/* ---- cross-entropy ------------------------------------------------------ */

/* The largest of a candidate value x at index i and (*mx, *at): the first
 * index of equals; NaN never taken. */
AV_INLINE void take_max(float x, int i, float *mx, int *at)
{
	if (x > *mx || (x == *mx && i < *at)) {
		*mx = x;
		*at = i;
	}
}

/* Each lane's largest value and the block (first index) where the lane first
 * held it, over the row from j, two vectors of LANES at a time, the bias
 * added (and stored) on the way; each lane's then offered to take_max.
 * Returns where it stopped (the rest is under 2 x LANES). */
#define AV_DEFINE_MAX_PAIRS(NAME, VF, VI, LANES, LOAD, STORE)                                      \
	AV_INLINE int NAME(float *l, int V, const float *bias, int j, float *mx, int *at)          \
	{                                                                                          \
		VF m[2] = {(VF){0} - INFINITY, (VF){0} - INFINITY};                                \
		VI b[2] = {(VI){0} - 1, (VI){0} - 1};                                              \
		for (; j + 2 * (LANES) <= V; j += 2 * (LANES))                                     \
			for (int p = 0; p < 2; p++) {                                              \
				int at0 = j + p * (LANES);                                         \
				VF x = LOAD(l + at0);                                              \
				if (bias) {                                                        \
					x += LOAD(bias + at0);                                     \
					STORE(l + at0, x);                                         \
				}                                                                  \
				VI g = x > m[p];                                                   \
				m[p] = (VF)(((VI)m[p] & ~g) | ((VI)x & g));                        \
				b[p] = (b[p] & ~g) | (((VI){0} + at0) & g);                        \
			}                                                                          \
		for (int p = 0; p < 2; p++)                                                        \
			for (int k = 0; k < (LANES); k++)                                          \
				if (b[p][k] >= 0)                                                  \
					take_max(m[p][k], b[p][k] + k, mx, at);                    \
		return j;                                                                          \
	}
AV_DEFINE_MAX_PAIRS(max_pairs8, v8f, v8i, 8, load8, store8)
AV_DEFINE_MAX_PAIRS(max_pairs16, v16f, v16i, 16, load16, store16)

/* The row's maximum (NaN aside) and the first index holding it, the bias
 * added on the way (and stored). Two accumulators of 16 lanes (8 without
 * AVX-512) at a time, so that no comparison waits for the one before; the
 * maximum is the same whatever the order, and of the lanes that hold it the
 * one whose first occurrence comes first gives the index. A row with
 * nothing above -inf (all -inf or NaN) is searched as the loss always
 * searched it. */
AV_INLINE float row_max_first(float *l, int V, const float *bias, int *arg, bool wide)
{
	float mx = -INFINITY;
	int at = -1, j = 0;
	if (wide)
		j = max_pairs16(l, V, bias, j, &mx, &at);
	j = max_pairs8(l, V, bias, j, &mx, &at);
	for (; j < V; j++) {
		if (bias)
			l[j] += bias[j];
		take_max(l[j], j, &mx, &at);
	}
	if (at < 0) {
		/* Nothing above -inf: the first -inf, else the end. */
		int a = 0;
		for (v8f m8 = (v8f){0} + mx; a + 8 <= V; a += 8) {
			v8i eq = load8(l + a) == m8;
			int any = 0;
			for (int k = 0; k < 8; k++)
				any |= eq[k];
			if (any)
				break;
		}
		while (a < V - 1 && l[a] != mx)
			a++;
		at = a;
	}
	*arg = at;
	return mx;
}

/* The row's gradient from j on, LANES at a time: l[k] * s, less dscale at
 * the target, added into dbias if given. Returns where it stopped. */
#define AV_DEFINE_GRAD_SCALE(NAME, VF, LANES, LOAD, STORE)                                         \
	AV_INLINE int NAME(float *l, int V, int y, float s, float dscale, float *dbias, int j)     \
	{                                                                                          \
		VF sv = ((VF){0} + 1.0f) * s; /* (0 + s would turn -0 into +0) */                  \
		for (; j + (LANES) <= V; j += (LANES)) {                                           \
			VF v = LOAD(l + j) * sv;                                                   \
			if ((unsigned)(y - j) < (unsigned)(LANES))                                 \
				v[y - j] -= dscale;                                                \
			STORE(l + j, v);                                                           \
			if (dbias)                                                                 \
				STORE(dbias + j, LOAD(dbias + j) + v);                             \
		}                                                                                  \
		return j;                                                                          \
	}
AV_DEFINE_GRAD_SCALE(grad_scale8, v8f, 8, load8, store8)
AV_DEFINE_GRAD_SCALE(grad_scale16, v16f, 16, load16, store16)

/* One row of the loss: returns -log softmax(l)[y] and the argmax; if dscale
 * != 0, l becomes dscale * (softmax(l) - onehot(y)). The exponentials' sum
 * runs over 8 lanes in a fixed order (combined lane by lane at the end; the
 * exponentials 16 at a time, added a half at a time), so the result does
 * not depend on anything but the row, nor on the width; the maximum and
 * the gradient are the same in any order. */
AV_INLINE double crossentropy_lanes(float *l, int V, int y, float dscale, const float *bias,
				    float *dbias, int *arg, bool wide)
{
	const v8f one = {1, 1, 1, 1, 1, 1, 1, 1};
	float mx = row_max_first(l, V, bias, arg, wide);
	float ly = l[y];

	v8f sum8 = one * 0.0f, m8 = one * mx;
	int j;
	for (j = 0; wide && j + 16 <= V; j += 16) {
		/* 16 lanes, the sum still in the order of 8 (a half at a time) */
		v16f e = vexp16(load16(l + j) - ((v16f){0} + mx));
		sum8 += half16(e, 0);
		sum8 += half16(e, 1);
		if (dscale != 0.0f)
			store16(l + j, e);
	}
	for (; j + 8 <= V; j += 8) {
		v8f e = vexp8(load8(l + j) - m8);
		sum8 += e;
		if (dscale != 0.0f)
			store8(l + j, e);
	}
	if (j < V) {
		int k = V - j;
		/* Padding lanes hold mx - 200: exp underflows to ~1e-38 there,
		 * which is masked out of the sum. */
		v8f e = vexp8(load_part(l + j, k, mx - 200.0f) - m8);
		for (int i = k; i < 8; i++)
			e[i] = 0.0f;
		sum8 += e;
		if (dscale != 0.0f)
			store_part(l + j, k, e);
	}
	double sum = 0.0;
	for (int k = 0; k < 8; k++)
		sum += sum8[k];
	if (dscale != 0.0f) {
		/* The gradient, and with dbias the bias's share of it while the
		 * row is in L1 (what bias_backward would add, in the same order). */
		float s = (float)(dscale / sum);
		j = wide ? grad_scale16(l, V, y, s, dscale, dbias, 0) : 0;
		j = grad_scale8(l, V, y, s, dscale, dbias, j);
		for (; j < V; j++) {
			l[j] *= s;
			if (j == y)
				l[j] -= dscale;
			if (dbias)
				dbias[j] += l[j];
		}
	}
	/* -log softmax_y = log sum exp(l - mx) - (l_y - mx) */
	return log(sum) - (double)(ly - mx);
}

AV_CLONES static double crossentropy_row8(float *l, int V, int y, float dscale, const float *bias,
					  float *dbias, int *arg)
{
	return crossentropy_lanes(l, V, y, dscale, bias, dbias, arg, false);
}

AV_WIDE static double crossentropy_row16(float *l, int V, int y, float dscale, const float *bias,
					 float *dbias, int *arg)
{
	return crossentropy_lanes(l, V, y, dscale, bias, dbias, arg, true);
}

double crossentropy_row(float *l, int V, int y, float dscale, const float *bias, float *dbias,
			int *arg)
{
	if (av_wide())
		return crossentropy_row16(l, V, y, dscale, bias, dbias, arg);
	return crossentropy_row8(l, V, y, dscale, bias, dbias, arg);
}

typedef struct ce_ctx {
	float *logits;
	const int32_t *ys;
	double *loss;
	int32_t *arg;
	int V;
	float dscale;
} ce_ctx;

static void ce_range(void *p, int begin, int end)
{
	const ce_ctx *x = p;
	for (int r = begin; r < end; r++) {
		int a;
		x->loss[r] = crossentropy_row(x->logits + (size_t)r * x->V, x->V, x->ys[r],
					      x->dscale, NULL, NULL, &a);
		x->arg[r] = a;
	}
}

/* Rows are independent and spread over the threads; their losses are then
 * summed in row order, so the total does not depend on the split. */
double crossentropy_rows(float *logits, const int32_t *targets, int N, int nrows, int V,
			 float dscale, int *ncorrect)
{
	int32_t *ys =
	    malloc((size_t)(nrows > 0 ? nrows : 1) * (2 * sizeof(int32_t) + sizeof(double)));
	if (!ys) {
		/* Out of memory for the bookkeeping: one row at a time, here. */
		double loss = 0.0;
		int correct = 0, r = 0;
		for (int i = 0; i < N && r < nrows; i++) {
			if (targets[i] < 0 || targets[i] >= V)
				continue;
			int a;
			loss += crossentropy_row(logits + (size_t)r * V, V, targets[i], dscale,
						 NULL, NULL, &a);
			correct += a == targets[i];
			r++;
		}
		if (ncorrect)
			*ncorrect = correct;
		return loss;
	}
	double *losses = (double *)(void *)(ys + 2 * (size_t)nrows);
	int32_t *arg = ys + nrows;
	int n = 0;
	for (int i = 0; i < N && n < nrows; i++)
		if (targets[i] >= 0 && targets[i] < V)
			ys[n++] = targets[i];
	ce_ctx x = {logits, ys, losses, arg, V, dscale};
	parallel_for(n, ce_range, &x);
	double loss = 0.0;
	int correct = 0;
	for (int r = 0; r < n; r++) {
		loss += losses[r];
		correct += arg[r] == ys[r];
	}
	free(ys);
	if (ncorrect)
		*ncorrect = correct;
	return loss;
}
