/* The backward pass, op by op (llm.c style), and the training-step driver.
 *
 * Every op accumulates into its gradients. Internally the driver often wants
 * the first write into a fresh buffer; the static *_to variants take an `acc`
 * flag so that case costs no memset (sgemm beta = 0 instead of 1). */
#include "attnview/backward.h"

#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vec8.h"

/* ---- embedding ---------------------------------------------------------- */

void embed_backward(float *dwte, const float *dout, const int32_t *tokens, int B, int T, int C)
{
	if (!dwte)
		return;
	float s = sqrtf((float)C);
	for (long i = 0; i < (long)B * T; i++) {
		float *dw = dwte + (size_t)tokens[i] * C;
		const float *d = dout + (size_t)i * C;
		for (int c = 0; c < C; c++)
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

static void matmul_backward_to(float *dinp, bool acc, float *dw, float *dbias, const float *dout,
			       const float *inp, const float *w, int N, int C, int OC)
{
	matmul_backward_ld(dinp, acc, dw, dbias, dout, OC, inp, w, N, C, OC);
}

void matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
		     const float *w, int N, int C, int OC)
{
	matmul_backward_to(dinp, true, dw, dbias, dout, inp, w, N, C, OC);
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
} att_ctx;

/* dp (rows,T): dA in, the scaled score gradient s dS out; a: A. Rows 8 lanes
 * at a time; the row dot product is summed per lane, then across lanes in a
 * fixed order. */
AV_CLONES static void softmax_backward_rows(float *dp, const float *a, int rows, int T, bool causal,
					    float scale)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	for (int i = 0; i < rows; i++) {
		float *d = dp + (size_t)i * T;
		const float *ar = a + (size_t)i * T;
		int nj = causal ? i + 1 : T, j;
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

static void attention_backward_range(void *p, int begin, int end)
{
	const att_ctx *x = p;
	int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	float beta = x->acc ? 1.0f : 0.0f;
	for (int bh = begin; bh < end; bh++) {
		int b = bh / NH, h = bh % NH;
		const float *q = x->qkv + (size_t)b * T * C3 + (size_t)h * hs;
		const float *k = q + C, *v = q + 2 * C;
		float *dq = x->dqkv + (size_t)b * T * C3 + (size_t)h * hs;
		float *dk = dq + C, *dv = dq + 2 * C;
		const float *dO = x->dout + (size_t)b * T * C + (size_t)h * hs;
		const float *a = x->att + (size_t)bh * T * T;
		float *dp = x->work + (size_t)bh * T * T;

		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dO, C, v, C3,
			    0.0f, dp, T);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, dO, C,
			    beta, dv, C3);
		softmax_backward_rows(dp, a, T, T, x->causal, scale);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, dp, T, k, C3,
			    beta, dq, C3);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, dp, T, q, C3,
			    beta, dk, C3);
	}
}

static void attention_backward_to(float *dqkv, bool acc, float *work, const float *dout,
				  const float *qkv, const float *att, int B, int T, int C, int NH,
				  bool causal)
{
	att_ctx x = {dqkv, work, dout, qkv, att, T, C, NH, acc, causal};
	parallel_for_blas(B * NH, attention_backward_range, &x);
}

void attention_backward(float *dqkv, float *work, const float *dout, const float *qkv,
			const float *att, int B, int T, int C, int NH, bool causal)
{
	attention_backward_to(dqkv, true, work, dout, qkv, att, B, T, C, NH, causal);
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
 * formulas are in vec8.h). */
AV_CLONES static void gelu_backward_lanes(float *dx, const float *d, const float *x, long n)
{
	for (long i = 0; i < n; i += 8) {
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

void gelu_backward(float *dinp, const float *inp, const float *dout, int N)
{
	gelu_backward_lanes(dinp, dout, inp, N);
}

/* d *= dg, element by element: the GELU's backward in the training step,
 * where the forward left gelu' in place of the GELU's input. */
AV_CLONES static void mul_inplace(float *d, const float *dg, long n)
{
	long i = 0;
	for (; i + 8 <= n; i += 8)
		store8(d + i, load8(d + i) * load8(dg + i));
	for (; i < n; i++)
		d[i] *= dg[i];
}

/* ---- cross-entropy ------------------------------------------------------ */

/* One row of the loss: returns -log softmax(l)[y] and the argmax; if dscale
 * != 0, l becomes dscale * (softmax(l) - onehot(y)). Max, exponentials and
 * sums run over 8 lanes in a fixed order (the sum is combined lane by lane
 * at the end), so the result does not depend on anything but the row. */
AV_CLONES static double ce_row(float *l, int V, int y, float dscale, const float *bias,
			       float *dbias, int *arg)
{
	const v8f one = {1, 1, 1, 1, 1, 1, 1, 1};
	v8f mx8 = one * -INFINITY;
	int j = 0;
	for (; j + 8 <= V; j += 8) {
		v8f v = load8(l + j);
		if (bias) {
			v += load8(bias + j);
			store8(l + j, v);
		}
		mx8 = (v8f)(((v8i)mx8 & ~(v > mx8)) | ((v8i)v & (v > mx8)));
	}
	float mx = mx8[0];
	for (int k = 1; k < 8; k++)
		mx = mx8[k] > mx ? mx8[k] : mx;
	for (; j < V; j++) {
		if (bias)
			l[j] += bias[j];
		mx = l[j] > mx ? l[j] : mx;
	}
	/* The first maximum: the first 8-block holding mx, then within it. */
	int a = 0;
	for (v8f m8 = one * mx; a + 8 <= V; a += 8) {
		v8i eq = load8(l + a) == m8;
		int any = 0;
		for (int k = 0; k < 8; k++)
			any |= eq[k];
		if (any)
			break;
	}
	while (a < V - 1 && l[a] != mx)
		a++;
	*arg = a;
	float ly = l[y];

	v8f sum8 = one * 0.0f, m8 = one * mx;
	for (j = 0; j + 8 <= V; j += 8) {
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
		v8f s8 = one * (float)(dscale / sum);
		for (j = 0; j + 8 <= V; j += 8) {
			v8f v = load8(l + j) * s8;
			if ((unsigned)(y - j) < 8u)
				v[y - j] -= dscale;
			store8(l + j, v);
			if (dbias)
				store8(dbias + j, load8(dbias + j) + v);
		}
		for (; j < V; j++) {
			l[j] *= s8[0];
			if (j == y)
				l[j] -= dscale;
			if (dbias)
				dbias[j] += l[j];
		}
	}
	/* -log softmax_y = log sum exp(l - mx) - (l_y - mx) */
	return log(sum) - (double)(ly - mx);
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
		x->loss[r] =
		    ce_row(x->logits + (size_t)r * x->V, x->V, x->ys[r], x->dscale, NULL, NULL, &a);
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
			loss +=
			    ce_row(logits + (size_t)r * V, V, targets[i], dscale, NULL, NULL, &a);
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

/* ---- the driver --------------------------------------------------------- */

bool grad_acts_init(grad_acts *g, const model_config *cfg, int B, int T, av_error *err)
{
	memset(g, 0, sizeof(*g));
	size_t N = (size_t)B * T, C = cfg->dim, NH = cfg->heads;
	/* dresidual, dln, datty, lnf_rows, dlnf_rows, ln1_rows, qrows, dqrows,
	 * dres_rows: N*C each; dqkv 3NC; dfch 4NC; datt (the attention work) B*NH*T*T; rows,
	 * N int32, batch_start and seq_row0 B+1 each. */
	size_t nf = N * C * 9 + N * C * 3 + N * C * 4 + (size_t)B * NH * T * T;
	size_t total = nf + N + 2 * ((size_t)B + 1);
	g->mem = malloc(total * sizeof(float));
	if (!g->mem)
		return av_fail_errno(
		    err, ENOMEM,
		    "cannot allocate %zu MB for the gradients of a batch of %d x %d "
		    "tokens; use a smaller --batch or --context",
		    total * sizeof(float) / (1024 * 1024), B, T);
	g->B = B;
	g->T = T;
	g->max_rows = (int)N;
	g->nfloats = nf;
	float *p = g->mem;
	g->dresidual = p, p += N * C;
	g->dln = p, p += N * C;
	g->datty = p, p += N * C;
	g->lnf_rows = p, p += N * C;
	g->dlnf_rows = p, p += N * C;
	g->ln1_rows = p, p += N * C;
	g->qrows = p, p += N * C;
	g->dqrows = p, p += N * C;
	g->dres_rows = p, p += N * C;
	g->dqkv = p, p += 3 * N * C;
	g->dfch = p, p += 4 * N * C;
	g->datt = p, p += (size_t)B * NH * T * T;
	/* The scores' gradient is computed in place over datt; dgelu in place
	 * over dfch; dlogits in place over the activations' logits. */
	g->dpreatt = g->datt;
	g->dfch_gelu = g->dfch;
	g->dlogits = NULL;
	g->rows = (int32_t *)p;
	g->batch_start = g->rows + N;
	g->seq_row0 = g->batch_start + B + 1;
	return true;
}

void grad_acts_finish(grad_acts *g)
{
	free(g->mem);
	free(g->slice_grads);
	memset(g, 0, sizeof(*g));
}

/* Copy the final-LayerNorm rows that carry a target into rows_out (nrows, C);
 * rows (may be NULL) gets their indices. Returns nrows. */
static int gather_target_rows(float *rows_out, int32_t *rows, const float *lnf,
			      const int32_t *targets, int N, int C, int V, int max_rows)
{
	int n = 0;
	for (int i = 0; i < N && n < max_rows; i++) {
		if (targets[i] < 0 || targets[i] >= V)
			continue;
		memcpy(rows_out + (size_t)n * C, lnf + (size_t)i * C, (size_t)C * sizeof(float));
		if (rows)
			rows[n] = i;
		n++;
	}
	return n;
}

float model_eval_loss(const model *m, activations *a, const int32_t *tokens, const int32_t *targets,
		      int B, int T, int *ncount, int *ncorrect)
{
	int N = B * T, C = (int)m->cfg.dim, V = (int)m->cfg.vocab_size;
	model_forward(m, a, tokens, B, T);
	/* scratch is (B,T,4d): room for every row of lnf. */
	int nrows = gather_target_rows(a->scratch, NULL, a->lnf, targets, N, C, V, a->max_rows);
	if (ncount)
		*ncount = nrows;
	if (ncorrect)
		*ncorrect = 0;
	if (nrows == 0)
		return NAN;
	matmul_forward(a->logits, a->scratch, m->p.wte, m->p.out_b, nrows, C, V);
	double loss = crossentropy_rows(a->logits, targets, N, nrows, V, 0.0f, ncorrect);
	return (float)(loss / nrows);
}

/* ---- training forward and backward --------------------------------------
 *
 * Only the rows with a target reach the loss. In every block but the last,
 * each row still feeds the others through attention; in the last block, a
 * row without a target is only ever used as a key and a value. So the last
 * block computes LayerNorm 1, keys and values for every row, and the queries
 * and everything after (attention, projection, feed-forward, final
 * LayerNorm) for the R target rows only: at 15% targets most of a block's
 * work disappears. The loss and
 * the gradients are exactly those of the full forward (the tests compare
 * both with PyTorch).
 *
 * Compact layout of the last block's activations (r = 0..R-1, the target
 * rows in ascending order, rows[r] = b*T + i):
 *   ln1, ln1_mean/rstd        all N rows, as model_forward
 *   qkv                       all N rows, keys and values only (columns d..3d)
 *   g->ln1_rows, g->qrows (R,d)  LayerNorm 1 and the queries of the target rows
 *   att (NH,R,T)              softmax weights, att[h][r][j]
 *   atty, res2, ln2, res3 (R,d), ln2_mean/rstd (R), fch, fch_gelu (R,4d)
 *   g->lnf_rows (R,d), a->lnf_mean/rstd (R)
 * batch_start[b]..batch_start[b+1]-1 are the target rows of sequence b
 * (R for the last sequence). All of this is per slice of the batch when the
 * step runs on several threads (see "the step over the threads" below). */

typedef struct sel_ctx {
	const grad_acts *g;
	float *att, *out, *work, *dqkv;
	const float *qkv, *dout;
	int B, T, C, NH, R;
	bool causal;
} sel_ctx;

/* exp(x - max) / sum over the first n of T entries, zeros after. */
AV_CLONES static void softmax_prefix(float *a, int n, int T, float scale)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	float mx = -INFINITY;
	for (int j = 0; j < n; j++)
		mx = a[j] > mx ? a[j] : mx;
	v8f m8 = zero + mx, s8 = zero + scale, sum8 = zero;
	int j = 0;
	for (; j + 8 <= n; j += 8) {
		v8f e = vexp8((load8(a + j) - m8) * s8);
		sum8 += e;
		store8(a + j, e);
	}
	if (j < n) {
		v8f e = vexp8((load_part(a + j, n - j, mx) - m8) * s8);
		for (int k = n - j; k < 8; k++)
			e[k] = 0.0f;
		sum8 += e;
		store_part(a + j, n - j, e);
	}
	float sum = 0.0f;
	for (int k = 0; k < 8; k++)
		sum += sum8[k];
	v8f inv = zero + 1.0f / sum;
	for (j = 0; j + 8 <= n; j += 8)
		store8(a + j, load8(a + j) * inv);
	for (; j < n; j++)
		a[j] *= inv[0];
	for (j = n; j < T; j++)
		a[j] = 0.0f;
}

/* Attention of the target rows of sequence b, head h, over all T keys. */
static void sel_attention_forward_range(void *p, int begin, int end)
{
	const sel_ctx *x = p;
	int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	for (int bh = begin; bh < end; bh++) {
		int b = bh / NH, h = bh % NH;
		int r0 = x->g->batch_start[b];
		int nr = (b + 1 < x->B ? x->g->batch_start[b + 1] : x->R) - r0;
		if (nr == 0)
			continue;
		const float *q = x->g->qrows + (size_t)r0 * C + (size_t)h * hs;
		const float *k = x->qkv + (size_t)b * T * C3 + C + (size_t)h * hs, *v = k + C;
		float *a = x->att + ((size_t)h * x->R + r0) * T;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, T, hs, 1.0f, q, C, k, C3,
			    0.0f, a, T);
		for (int r = 0; r < nr; r++) {
			int i = x->g->rows[r0 + r] - b * T;
			softmax_prefix(a + (size_t)r * T, x->causal ? i + 1 : T, T, scale);
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nr, hs, T, 1.0f, a, T, v, C3,
			    0.0f, x->out + (size_t)r0 * C + (size_t)h * hs, C);
	}
}

/* Its backward: dout (R,d) -> dqrows (R,d), and the key and value columns of
 * dqkv (N,3d), all written (each head's block of a sequence by one product;
 * zeros for a sequence without target rows). Masked keys have a = 0 and so
 * get no gradient, as in attention_backward. */
static void sel_attention_backward_range(void *p, int begin, int end)
{
	const sel_ctx *x = p;
	int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	for (int bh = begin; bh < end; bh++) {
		int b = bh / NH, h = bh % NH;
		int r0 = x->g->batch_start[b];
		int nr = (b + 1 < x->B ? x->g->batch_start[b + 1] : x->R) - r0;
		const float *q = x->g->qrows + (size_t)r0 * C + (size_t)h * hs;
		const float *k = x->qkv + (size_t)b * T * C3 + C + (size_t)h * hs, *v = k + C;
		float *dk = x->dqkv + (size_t)b * T * C3 + C + (size_t)h * hs, *dv = dk + C;
		if (nr == 0) {
			for (int j = 0; j < T; j++) {
				memset(dk + (size_t)j * C3, 0, (size_t)hs * sizeof(float));
				memset(dv + (size_t)j * C3, 0, (size_t)hs * sizeof(float));
			}
			continue;
		}
		const float *dO = x->dout + (size_t)r0 * C + (size_t)h * hs;
		const float *a = x->att + ((size_t)h * x->R + r0) * T;
		float *dp = x->work + ((size_t)h * x->R + r0) * T;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, T, hs, 1.0f, dO, C, v, C3,
			    0.0f, dp, T);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, nr, 1.0f, a, T, dO, C,
			    0.0f, dv, C3);
		softmax_backward_rows(dp, a, nr, T, false, scale);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nr, hs, T, 1.0f, dp, T, k,
			    C3, 0.0f, x->g->dqrows + (size_t)r0 * C + (size_t)h * hs, C);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, nr, 1.0f, dp, T, q, C,
			    0.0f, dk, C3);
	}
}

/* Blocks [0, L-1) as model_forward computes them; returns the last block's
 * input. */
static const float *forward_body(const model *m, activations *a, const int32_t *tokens, int B,
				 int T)
{
	embed_forward(a->encoded, tokens, m->p.wte, m->pe, B, T, (int)m->cfg.dim);
	const float *x = a->encoded;
	for (int l = 0; l + 1 < (int)m->cfg.layers; l++)
		x = model_block_forward(m, a, l, x, B, T);
	return x;
}

/* The last block at the R target rows (layout above), then the final
 * LayerNorm into g->lnf_rows. */
static void last_block_forward(const model *m, activations *a, grad_acts *g, const float *x, int B,
			       int T, int R)
{
	const model_config *c = &m->cfg;
	const int d = (int)c->dim, NH = (int)c->heads, N = B * T, L = (int)c->layers;
	const layer_params *p = &m->p.layer[L - 1];
	layer_acts *la = &a->layer[L - 1];
	layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, p->ln1_w, p->ln1_b, N, d);
	/* Keys and values for every row: columns d..3d of qkv, from rows d..3d
	 * of the weight, onto the bias as matmul_forward does it. */
	for (int n = 0; n < N; n++)
		memcpy(la->qkv + (size_t)n * 3 * d + d, p->qkv_b + d,
		       2 * (size_t)d * sizeof(float));
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, 2 * d, d, 1.0f, la->ln1, d,
		    p->qkv_w + (size_t)d * d, d, 1.0f, la->qkv + d, 3 * d);
	/* Queries at the target rows only. */
	for (int r = 0; r < R; r++)
		memcpy(g->ln1_rows + (size_t)r * d, la->ln1 + (size_t)g->rows[r] * d,
		       (size_t)d * sizeof(float));
	matmul_forward(g->qrows, g->ln1_rows, p->qkv_w, p->qkv_b, R, d, d);
	sel_ctx sc = {.g = g,
		      .att = la->att,
		      .out = la->atty,
		      .qkv = la->qkv,
		      .B = B,
		      .T = T,
		      .C = d,
		      .NH = NH,
		      .R = R,
		      .causal = c->objective == OBJ_CAUSAL};
	parallel_for_blas(B * NH, sel_attention_forward_range, &sc);
	matmul_forward(a->scratch, la->atty, p->proj_w, p->proj_b, R, d, d);
	for (int r = 0; r < R; r++) {
		const float *xr = x + (size_t)g->rows[r] * d;
		for (int i = 0; i < d; i++)
			la->res2[(size_t)r * d + i] = xr[i] + a->scratch[(size_t)r * d + i];
	}
	layernorm_forward(la->ln2, la->ln2_mean, la->ln2_rstd, la->res2, p->ln2_w, p->ln2_b, R, d);
	matmul_forward(la->fch, la->ln2, p->fc_w, p->fc_b, R, d, 4 * d);
	gelu_forward_grad(la->fch_gelu, la->fch, R * 4 * d);
	matmul_forward(a->scratch, la->fch_gelu, p->fc2_w, p->fc2_b, R, 4 * d, d);
	residual_forward(la->res3, la->res2, a->scratch, R * d);
	layernorm_forward(g->lnf_rows, a->lnf_mean, a->lnf_rstd, la->res3, m->p.lnf_w, m->p.lnf_b,
			  R, d);
}

/* Forward, loss and backward of one slice of a batch: B sequences with R
 * target rows, rows and batch_start already filled (relative to the slice),
 * gradients accumulated into grads. dscale is 1 / the batch's target count.
 * Returns the slice's summed loss. */
static double train_slice(const model *m, activations *a, grad_acts *g, const int32_t *tokens,
			  const int32_t *targets, int B, int T, int R, float dscale, float *grads,
			  int *ncorrect)
{
	const model_config *cfg = &m->cfg;
	int N = B * T, C = (int)cfg->dim, V = (int)cfg->vocab_size, NH = (int)cfg->heads;
	int L = (int)cfg->layers;
	bool causal = cfg->objective == OBJ_CAUSAL;
	model_params gp;
	model_params_map(&gp, grads, cfg);

	const float *xlast = forward_body(m, a, tokens, B, T);
	last_block_forward(m, a, g, xlast, B, T, R);

	/* Logits at the target rows only: one (R, C) x (C, V) product. The loss
	 * is the mean over rows: each row's gradient carries 1/R. */
	matmul_forward(a->logits, g->lnf_rows, m->p.wte, NULL, R, C, V);
	double loss = 0.0;
	int correct = 0;
	for (int r = 0; r < R; r++) {
		/* The output bias is added, and its gradient taken, inside the
		 * loss's passes over each row: two passes over (R,V) fewer. */
		int y = targets[g->rows[r]], arg;
		loss += ce_row(a->logits + (size_t)r * V, V, y, dscale, m->p.out_b, gp.out_b, &arg);
		correct += arg == y;
	}
	if (ncorrect)
		*ncorrect = correct;

	/* Tied output projection: wte gets dlogits^T lnf here and the embedding's
	 * gradient at the end. */
	matmul_backward_to(g->dlnf_rows, false, gp.wte, NULL, a->logits, g->lnf_rows, m->p.wte, R,
			   C, V);

	/* The last block, at the target rows: dres_rows is dL/dx of its output,
	 * then of res2. */
	{
		const layer_params *lp = &m->p.layer[L - 1];
		layer_params *lg = &gp.layer[L - 1];
		const layer_acts *la = &a->layer[L - 1];
		memset(g->dres_rows, 0, (size_t)R * C * sizeof(float));
		layernorm_backward(g->dres_rows, gp.lnf_w, gp.lnf_b, g->dlnf_rows, la->res3,
				   m->p.lnf_w, a->lnf_mean, a->lnf_rstd, R, C);
		matmul_backward_to(g->dfch, false, lg->fc2_w, lg->fc2_b, g->dres_rows, la->fch_gelu,
				   lp->fc2_w, R, 4 * C, C);
		mul_inplace(g->dfch, la->fch, (long)R * 4 * C);
		matmul_backward_to(g->dln, false, lg->fc_w, lg->fc_b, g->dfch, la->ln2, lp->fc_w, R,
				   C, 4 * C);
		layernorm_backward(g->dres_rows, lg->ln2_w, lg->ln2_b, g->dln, la->res2, lp->ln2_w,
				   la->ln2_mean, la->ln2_rstd, R, C);
		matmul_backward_to(g->datty, false, lg->proj_w, lg->proj_b, g->dres_rows, la->atty,
				   lp->proj_w, R, C, C);
		/* Every row's keys and values get gradient, only target rows' queries. */
		sel_ctx sc = {.g = g,
			      .att = la->att,
			      .work = g->datt,
			      .dqkv = g->dqkv,
			      .qkv = la->qkv,
			      .dout = g->datty,
			      .B = B,
			      .T = T,
			      .C = C,
			      .NH = NH,
			      .R = R,
			      .causal = causal};
		parallel_for_blas(B * NH, sel_attention_backward_range, &sc);
		/* Q|K|V's backward in two parts, as the forward: K|V at every row
		 * (columns C..3C of dqkv), Q at the target rows, its input gradient
		 * (into dlnf_rows, free again) then added to those rows. */
		matmul_backward_ld(g->dln, false, lg->qkv_w + (size_t)C * C, lg->qkv_b + C,
				   g->dqkv + C, 3 * C, la->ln1, lp->qkv_w + (size_t)C * C, N, C,
				   2 * C);
		matmul_backward_to(g->dlnf_rows, false, lg->qkv_w, lg->qkv_b, g->dqrows,
				   g->ln1_rows, lp->qkv_w, R, C, C);
		for (int r = 0; r < R; r++) {
			float *dl = g->dln + (size_t)g->rows[r] * C;
			const float *s = g->dlnf_rows + (size_t)r * C;
			for (int i = 0; i < C; i++)
				dl[i] += s[i];
		}
		/* dx = the residual path (target rows) + LayerNorm 1's backward. */
		memset(g->dresidual, 0, (size_t)N * C * sizeof(float));
		for (int r = 0; r < R; r++)
			memcpy(g->dresidual + (size_t)g->rows[r] * C, g->dres_rows + (size_t)r * C,
			       (size_t)C * sizeof(float));
		layernorm_backward(g->dresidual, lg->ln1_w, lg->ln1_b, g->dln, xlast, lp->ln1_w,
				   la->ln1_mean, la->ln1_rstd, N, C);
	}

	/* The other blocks, last first. dresidual holds dL/dx for the block's
	 * output; each residual branch adds its input gradient into it, which
	 * turns it into dL/dx for the block's input. */
	for (int l = L - 2; l >= 0; l--) {
		const layer_params *lp = &m->p.layer[l];
		layer_params *lg = &gp.layer[l];
		const layer_acts *la = &a->layer[l];
		const float *xin = l > 0 ? a->layer[l - 1].res3 : a->encoded;

		matmul_backward_to(g->dfch, false, lg->fc2_w, lg->fc2_b, g->dresidual, la->fch_gelu,
				   lp->fc2_w, N, 4 * C, C);
		mul_inplace(g->dfch, la->fch, (long)N * 4 * C);
		matmul_backward_to(g->dln, false, lg->fc_w, lg->fc_b, g->dfch, la->ln2, lp->fc_w, N,
				   C, 4 * C);
		layernorm_backward(g->dresidual, lg->ln2_w, lg->ln2_b, g->dln, la->res2, lp->ln2_w,
				   la->ln2_mean, la->ln2_rstd, N, C);

		matmul_backward_to(g->datty, false, lg->proj_w, lg->proj_b, g->dresidual, la->atty,
				   lp->proj_w, N, C, C);
		attention_backward_to(g->dqkv, false, g->datt, g->datty, la->qkv, la->att, B, T, C,
				      NH, causal);
		matmul_backward_to(g->dln, false, lg->qkv_w, lg->qkv_b, g->dqkv, la->ln1, lp->qkv_w,
				   N, C, 3 * C);
		layernorm_backward(g->dresidual, lg->ln1_w, lg->ln1_b, g->dln, xin, lp->ln1_w,
				   la->ln1_mean, la->ln1_rstd, N, C);
	}
	embed_backward(gp.wte, g->dresidual, tokens, B, T, C);
	return loss;
}

/* ---- the step over the threads ------------------------------------------
 *
 * Sequences are independent until the loss, and the loss is a sum over rows:
 * a batch splits into slices of whole sequences, each run forward, through
 * the loss and backward on one thread with single-threaded BLAS, with no
 * synchronisation in between (one fork and one join per step instead of one
 * per op, every op of a slice on one core's cache, and no serial element-wise
 * work between threaded products). Only the weight gradients are shared:
 * slice 0 accumulates into grads, slice s > 0 into a private zeroed copy,
 * added into grads afterwards in slice order. Within a slice, groups of a
 * few sequences (step_group) run one after the other, each accumulating into
 * the slice's gradients. The split depends only on the batch (its shape
 * and where its targets are), the thread count and the group size, so a step
 * is reproducible for a given thread count (as it was when OpenBLAS's thread
 * count changed the rounding of the products).
 *
 * Each slice works in its own region of the activations: the rows of its
 * sequences, its own target rows of the compact arrays (rows r0..r1-1), and
 * the (NH,T,T) blocks of its sequences for the attention weights, in which
 * the last block keeps its (NH,R_s,T) layout; each of its groups uses the
 * start of that region. rows[] and batch_start[] are relative to the group
 * (row b0*T and target row seq_row0[b0] of its first sequence b0). */

#define MAX_SLICES PARALLEL_MAX_THREADS

typedef struct slice {
	int b0, b1, r0, r1, ngroups;
	double loss;
	int correct;
} slice;

typedef struct step_ctx {
	const model *m;
	const activations *a;
	const grad_acts *g;
	const int32_t *tokens, *targets;
	float *grads, *priv;
	int T, R, group;
	slice sl[MAX_SLICES];
} step_ctx;

/* Sequences per group: about GROUP_ROWS token rows (at least one sequence).
 * A slice runs its sequences group by group, each forward, through the loss
 * and backward, all in the slice's first rows: at the reference
 * configuration a group's activations (attention weights included) stay in
 * the caches between its forward and its backward instead of streaming the
 * whole slice's through memory. Measured at d=64 h=4 L=2 T=128 B=32 on 2
 * threads (bench_train, medians of 30 steps, three alternating runs): groups
 * of 16 (one per slice) 27.0 ms, 4 26.0-26.4 ms, 2 25.4-26.3 ms, 1 26.1-28.3
 * ms; below ~256 rows the products get too small. */
#define GROUP_ROWS 512

static int g_group_rows = GROUP_ROWS;

void backward_set_group_rows(int rows)
{
	g_group_rows = rows > 0 ? rows : GROUP_ROWS;
}

static int step_group(int T)
{
	return T >= g_group_rows ? 1 : g_group_rows / T;
}

/* First sequence of group k of a slice: the slice's sequences spread evenly
 * over its groups (17 sequences in groups of at most 4: 3, 3, 4, 3, 4, not
 * four of 4 and one of 1, whose products would be too small to run well). */
static int group_start(const slice *sl, int k)
{
	return sl->b0 + (int)((long)(sl->b1 - sl->b0) * k / sl->ngroups);
}

static void acts_view(activations *v, const activations *a, const model_config *c, size_t b0,
		      size_t r0, size_t T)
{
	const size_t d = c->dim, n0 = b0 * T, att0 = b0 * c->heads * T * T;
	*v = *a;
	v->encoded = a->encoded + n0 * d;
	for (uint32_t l = 0; l < c->layers; l++) {
		const layer_acts *s = &a->layer[l];
		layer_acts *t = &v->layer[l];
		/* The last block holds target rows after Q|K|V. */
		size_t k = l + 1 < c->layers ? n0 : r0;
		t->ln1 = s->ln1 + n0 * d;
		t->ln1_mean = s->ln1_mean + n0;
		t->ln1_rstd = s->ln1_rstd + n0;
		t->qkv = s->qkv + n0 * 3 * d;
		t->preatt = NULL; /* the step never reads the raw scores */
		t->att = s->att + att0;
		t->atty = s->atty + k * d;
		t->res2 = s->res2 + k * d;
		t->ln2 = s->ln2 + k * d;
		t->ln2_mean = s->ln2_mean + k;
		t->ln2_rstd = s->ln2_rstd + k;
		t->fch = s->fch + k * 4 * d;
		t->fch_gelu = s->fch_gelu + k * 4 * d;
		t->res3 = s->res3 + k * d;
	}
	v->lnf = a->lnf + n0 * d;
	v->lnf_mean = a->lnf_mean + r0;
	v->lnf_rstd = a->lnf_rstd + r0;
	v->logits = a->logits + r0 * c->vocab_size;
	v->scratch = a->scratch + n0 * 4 * d;
}

static void grads_view(grad_acts *v, const grad_acts *g, const model_config *c, size_t b0,
		       size_t r0, size_t T)
{
	const size_t C = c->dim, n0 = b0 * T;
	*v = *g;
	v->dresidual = g->dresidual + n0 * C;
	v->dln = g->dln + n0 * C;
	v->datty = g->datty + n0 * C;
	v->dqkv = g->dqkv + n0 * 3 * C;
	v->dfch = g->dfch + n0 * 4 * C;
	v->datt = g->datt + b0 * c->heads * T * T;
	v->dpreatt = v->datt;
	v->dfch_gelu = v->dfch;
	v->lnf_rows = g->lnf_rows + r0 * C;
	v->dlnf_rows = g->dlnf_rows + r0 * C;
	v->ln1_rows = g->ln1_rows + r0 * C;
	v->qrows = g->qrows + r0 * C;
	v->dqrows = g->dqrows + r0 * C;
	v->dres_rows = g->dres_rows + r0 * C;
	v->rows = g->rows + r0;
	v->batch_start = g->batch_start + b0;
}

static void step_range(void *p, int begin, int end)
{
	step_ctx *x = p;
	const model_config *c = &x->m->cfg;
	const size_t np = x->m->nparams;
	for (int s = begin; s < end; s++) {
		slice *sl = &x->sl[s];
		/* The copies are zero here: zeroed when allocated, and by sum_range
		 * as it adds them in. */
		float *gr = s == 0 ? x->grads : x->priv + (size_t)(s - 1) * np;
		sl->loss = 0.0;
		sl->correct = 0;
		/* Every group of the slice works in the slice's first rows, so
		 * its activations are still in cache for its backward. */
		activations av;
		grad_acts gv;
		acts_view(&av, x->a, c, (size_t)sl->b0, (size_t)sl->r0, (size_t)x->T);
		grads_view(&gv, x->g, c, (size_t)sl->b0, (size_t)sl->r0, (size_t)x->T);
		for (int k = 0; k < sl->ngroups; k++) {
			int b0 = group_start(sl, k), b1 = group_start(sl, k + 1);
			int r0 = x->g->seq_row0[b0], r1 = x->g->seq_row0[b1];
			if (r1 == r0) /* no target: no loss, no gradient */
				continue;
			gv.rows = x->g->rows + r0;
			gv.batch_start = x->g->batch_start + b0;
			size_t n0 = (size_t)b0 * x->T;
			int correct = 0;
			sl->loss +=
			    train_slice(x->m, &av, &gv, x->tokens + n0, x->targets + n0, b1 - b0,
					x->T, r1 - r0, 1.0f / (float)x->R, gr, &correct);
			sl->correct += correct;
		}
	}
}

typedef struct sum_ctx {
	float *dst, *src;
	size_t n;
	int nsrc;
} sum_ctx;

#define SUM_CHUNK 16384

/* dst += src[0] + src[1] + ..., left to right, per element; the sources are
 * left zeroed for the next step (here, in parallel and while in cache, rather
 * than at the start of each slice). */
static void sum_range(void *p, int begin, int end)
{
	const sum_ctx *x = p;
	size_t lo = (size_t)begin * SUM_CHUNK, hi = (size_t)end * SUM_CHUNK;
	if (hi > x->n)
		hi = x->n;
	for (int s = 0; s < x->nsrc; s++) {
		float *src = x->src + (size_t)s * x->n;
		for (size_t i = lo; i < hi; i++)
			x->dst[i] += src[i];
		memset(src + lo, 0, (hi - lo) * sizeof(float));
	}
}

float model_train_step_grads(const model *m, activations *a, grad_acts *g, const int32_t *tokens,
			     const int32_t *targets, int B, int T, float *grads, int *ncount,
			     int *ncorrect)
{
	const int V = (int)m->cfg.vocab_size;
	const size_t np = m->nparams;
	int nt = parallel_threads();
	if (nt > B)
		nt = B;
	if (nt > MAX_SLICES)
		nt = MAX_SLICES;
	if (nt > 1 && g->slice_grads_n < (size_t)(nt - 1) * np) {
		float *p = realloc(g->slice_grads, (size_t)(nt - 1) * np * sizeof(float));
		if (p) {
			memset(p + g->slice_grads_n, 0,
			       ((size_t)(nt - 1) * np - g->slice_grads_n) * sizeof(float));
			g->slice_grads = p;
			g->slice_grads_n = (size_t)(nt - 1) * np;
		} else {
			nt = 1; /* no memory for the copies: one slice, slower */
		}
	}

	step_ctx x = {m, a, g, tokens, targets, grads, g->slice_grads, T, 0, 1, {{0}}};
	/* Slices of contiguous sequences with about the same work: a sequence
	 * costs its rows through the blocks (in the last, keys and values) plus
	 * each of its target rows through the rest of the last block and the
	 * output projection (the products' FLOPs, as
	 * bench_train counts them). An even split by sequences left one thread
	 * idle for 5% of a reference step (targets 296 vs 337). */
	int max_rows = a->max_rows < g->max_rows ? a->max_rows : g->max_rows;
	const double d = (double)m->cfg.dim, Td = (double)T;
	const double f_seq =
	    ((double)m->cfg.layers - 1.0) * (24.0 * Td * d * d + 4.0 * Td * Td * d) +
	    4.0 * Td * d * d;
	const double f_row = 4.0 * Td * d + 20.0 * d * d + 2.0 * d * (double)V;
	double total = 0.0;
	for (int b = 0; b < B; b++) {
		int n = 0;
		for (int i = b * T; i < (b + 1) * T; i++)
			n += targets[i] >= 0 && targets[i] < V;
		g->seq_row0[b] = n; /* for now, the count */
		total += f_seq + n * f_row;
	}
	double cum = 0.0;
	for (int s = 0, b = 0; s < nt; s++) {
		slice *sl = &x.sl[s];
		sl->b0 = b;
		double goal = total * (s + 1) / nt;
		while (b < B - (nt - 1 - s)) {
			double c = f_seq + g->seq_row0[b] * f_row;
			if (b > sl->b0 && cum + c / 2 > goal)
				break;
			cum += c;
			b++;
		}
		sl->b1 = s + 1 < nt ? b : B;
	}

	/* The target rows, ascending, relative to their group. */
	x.group = step_group(T);
	int R = 0;
	for (int s = 0; s < nt; s++) {
		slice *sl = &x.sl[s];
		sl->r0 = R;
		int n = sl->b1 - sl->b0;
		sl->ngroups = (n + x.group - 1) / x.group;
		for (int k = 0; k < sl->ngroups; k++) {
			int gb = group_start(sl, k), ge = group_start(sl, k + 1), gr0 = R;
			for (int b = gb; b < ge; b++) {
				g->seq_row0[b] = R;
				g->batch_start[b] = R - gr0;
				for (int i = b * T; i < (b + 1) * T && R < max_rows; i++)
					if (targets[i] >= 0 && targets[i] < V)
						g->rows[R++] = i - gb * T;
			}
		}
		sl->r1 = R;
	}
	g->seq_row0[B] = R;
	x.R = R;
	if (ncount)
		*ncount = R;
	if (ncorrect)
		*ncorrect = 0;
	if (R == 0)
		return NAN;

	if (nt > 1) {
		int nb = blas_single_thread_begin();
		parallel_for_n(nt, nt, step_range, &x);
		blas_single_thread_end(nb);
		sum_ctx sc = {grads, g->slice_grads, np, nt - 1};
		parallel_for_n(nt, (int)((np + SUM_CHUNK - 1) / SUM_CHUNK), sum_range, &sc);
	} else {
		step_range(&x, 0, 1);
	}
	double loss = 0.0;
	int correct = 0;
	for (int s = 0; s < nt; s++) {
		loss += x.sl[s].loss;
		correct += x.sl[s].correct;
	}
	if (ncorrect)
		*ncorrect = correct;
	return (float)(loss / R);
}
