/* Forward operations of the model (ops.h). The *_ref twins are plain loops in
 * the order the man page describes; the fast versions hand the products to
 * BLAS and must agree with them to float rounding. */
#include "attnview/ops.h"

#include <cblas.h>
#include <math.h>
#include <stddef.h>

void positions_init(float *pe, int T, int C)
{
	for (int t = 0; t < T; t++) {
		for (int i = 0; i < C / 2; i++) {
			double w = pow(AV_POS_BASE, -2.0 * i / C);
			pe[(size_t)t * C + 2 * i] = (float)sin(t * w);
			pe[(size_t)t * C + 2 * i + 1] = (float)cos(t * w);
		}
	}
}

void embed_forward(float *out, const int32_t *tokens, const float *wte, const float *pe, int B,
		   int T, int C)
{
	const float scale = sqrtf((float)C);
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			float *o = out + ((size_t)b * T + t) * C;
			const float *e = wte + (size_t)tokens[b * T + t] * C;
			const float *p = pe + (size_t)t * C;
			for (int c = 0; c < C; c++)
				o[c] = scale * e[c] + p[c];
		}
	}
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
		       const float *b, int N, int C)
{
	for (int n = 0; n < N; n++) {
		const float *x = inp + (size_t)n * C;
		float m = 0.0f;
		for (int c = 0; c < C; c++)
			m += x[c];
		m /= (float)C;
		float v = 0.0f;
		for (int c = 0; c < C; c++) {
			float d = x[c] - m;
			v += d * d;
		}
		v /= (float)C;
		float s = 1.0f / sqrtf(v + AV_LN_EPS);
		float *o = out + (size_t)n * C;
		for (int c = 0; c < C; c++)
			o[c] = (x[c] - m) * s * w[c] + b[c];
		if (mean)
			mean[n] = m;
		if (rstd)
			rstd[n] = s;
	}
}

void matmul_forward(float *out, const float *inp, const float *w, const float *bias, int N, int C,
		    int OC)
{
	/* out (N,OC) = inp (N,C) . w^T, with the bias broadcast into out first
	 * so that BLAS accumulates onto it (beta = 1). */
	float beta = 0.0f;
	if (bias) {
		for (int n = 0; n < N; n++)
			for (int o = 0; o < OC; o++)
				out[(size_t)n * OC + o] = bias[o];
		beta = 1.0f;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, w, C, beta,
		    out, OC);
}

void matmul_forward_ref(float *out, const float *inp, const float *w, const float *bias, int N,
			int C, int OC)
{
	for (int n = 0; n < N; n++) {
		const float *x = inp + (size_t)n * C;
		for (int o = 0; o < OC; o++) {
			const float *wr = w + (size_t)o * C;
			double s = bias ? bias[o] : 0.0;
			for (int c = 0; c < C; c++)
				s += (double)x[c] * wr[c];
			out[(size_t)n * OC + o] = (float)s;
		}
	}
}

/* Softmax of one score row of length n: att[j] = exp(scale*(s[j]-max)) / sum.
 * Keys at or after `valid` are masked: their weight is exactly zero and
 * their score becomes NAN, so nobody mistakes a masked cell for a real one. */
static void softmax_row(float *att, float *preatt, int n, int valid, float scale)
{
	float maxv = -INFINITY;
	for (int j = 0; j < valid; j++)
		if (preatt[j] > maxv)
			maxv = preatt[j];
	float sum = 0.0f;
	for (int j = 0; j < valid; j++) {
		float e = expf(scale * (preatt[j] - maxv));
		att[j] = e;
		sum += e;
	}
	float inv = 1.0f / sum;
	for (int j = 0; j < valid; j++)
		att[j] *= inv;
	for (int j = valid; j < n; j++) {
		att[j] = 0.0f;
		preatt[j] = NAN;
	}
}

void attention_forward(float *out, float *preatt, float *att, const float *qkv, int B, int T,
		       int C, int NH, bool causal)
{
	const int hs = C / NH;
	const int C3 = 3 * C;
	const float scale = 1.0f / sqrtf((float)hs);
	for (int b = 0; b < B; b++) {
		for (int h = 0; h < NH; h++) {
			const float *q = qkv + (size_t)b * T * C3 + (size_t)h * hs;
			const float *k = q + C;
			const float *v = q + 2 * C;
			float *pa = preatt + ((size_t)b * NH + h) * T * T;
			float *at = att + ((size_t)b * NH + h) * T * T;
			/* Raw scores for all (i, j): q_i . k_j. Q and K are strided
			 * views into qkv (row stride 3C). */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, q, C3,
				    k, C3, 0.0f, pa, T);
			for (int i = 0; i < T; i++)
				softmax_row(at + (size_t)i * T, pa + (size_t)i * T, T,
					    causal ? i + 1 : T, scale);
			/* out_h (T,hs) = att (T,T) . V_h (T,hs), written into the head's
			 * columns of out (row stride C). */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, at, T,
				    v, C3, 0.0f, out + (size_t)b * T * C + (size_t)h * hs, C);
		}
	}
}

void attention_forward_ref(float *out, float *preatt, float *att, const float *qkv, int B, int T,
			   int C, int NH, bool causal)
{
	const int hs = C / NH;
	const int C3 = 3 * C;
	const float scale = 1.0f / sqrtf((float)hs);
	for (int b = 0; b < B; b++) {
		for (int h = 0; h < NH; h++) {
			float *pa = preatt + ((size_t)b * NH + h) * T * T;
			float *at = att + ((size_t)b * NH + h) * T * T;
			for (int i = 0; i < T; i++) {
				const float *q = qkv + ((size_t)b * T + i) * C3 + (size_t)h * hs;
				for (int j = 0; j < T; j++) {
					const float *k =
						qkv + ((size_t)b * T + j) * C3 + C + (size_t)h * hs;
					double s = 0.0;
					for (int c = 0; c < hs; c++)
						s += (double)q[c] * k[c];
					pa[(size_t)i * T + j] = (float)s;
				}
				softmax_row(at + (size_t)i * T, pa + (size_t)i * T, T,
					    causal ? i + 1 : T, scale);
				float *o = out + ((size_t)b * T + i) * C + (size_t)h * hs;
				for (int c = 0; c < hs; c++) {
					double s = 0.0;
					for (int j = 0; j < T; j++) {
						const float *v = qkv + ((size_t)b * T + j) * C3 +
								 2 * C + (size_t)h * hs;
						s += (double)at[(size_t)i * T + j] * v[c];
					}
					o[c] = (float)s;
				}
			}
		}
	}
}

void gelu_forward(float *out, const float *inp, int N)
{
	const float k = 0.7978845608028654f; /* sqrt(2/pi) */
	for (int i = 0; i < N; i++) {
		float x = inp[i];
		out[i] = 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
	}
}

void residual_forward(float *out, const float *a, const float *b, int N)
{
	for (int i = 0; i < N; i++)
		out[i] = a[i] + b[i];
}

void softmax_rows(float *x, int N, int V)
{
	for (int n = 0; n < N; n++) {
		float *r = x + (size_t)n * V;
		float maxv = -INFINITY;
		for (int i = 0; i < V; i++)
			if (r[i] > maxv)
				maxv = r[i];
		float sum = 0.0f;
		for (int i = 0; i < V; i++) {
			r[i] = expf(r[i] - maxv);
			sum += r[i];
		}
		for (int i = 0; i < V; i++)
			r[i] /= sum;
	}
}
