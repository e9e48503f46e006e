/* Forward operations of the model (ops.h). The *_ref twins are plain loops in
 * the order the man page describes; the fast versions hand the products to
 * BLAS and must agree with them to float rounding. */
#include "attnview/ops.h"

#include "attnview/backward.h" /* vec_exp */

#include <cblas.h>
#include <math.h>
#include <pthread.h>
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
	for (int j = 0; j < valid; j++)
		att[j] = scale * (preatt[j] - maxv);
	vec_exp(att, att, valid);
	float sum = 0.0f;
	for (int j = 0; j < valid; j++)
		sum += att[j];
	float inv = 1.0f / sum;
	for (int j = 0; j < valid; j++)
		att[j] *= inv;
	for (int j = valid; j < n; j++) {
		att[j] = 0.0f;
		preatt[j] = NAN;
	}
}

typedef struct att_fwd {
	float *out, *preatt, *att;
	const float *qkv;
	int T, C, NH, begin, end;
	bool causal;
} att_fwd;

static void attention_pairs(const att_fwd *x)
{
	const int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	const float scale = 1.0f / sqrtf((float)hs);
	for (int bh = x->begin; bh < x->end; bh++) {
		int b = bh / NH, h = bh % NH;
		const float *q = x->qkv + (size_t)b * T * C3 + (size_t)h * hs;
		const float *k = q + C;
		const float *v = q + 2 * C;
		float *pa = x->preatt + (size_t)bh * T * T;
		float *at = x->att + (size_t)bh * T * T;
		/* Raw scores for all (i, j): q_i . k_j. Q and K are strided views
		 * into qkv (row stride 3C). */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, q, C3, k, C3,
			    0.0f, pa, T);
		for (int i = 0; i < T; i++)
			softmax_row(at + (size_t)i * T, pa + (size_t)i * T, T,
				    x->causal ? i + 1 : T, scale);
		/* out_h (T,hs) = att (T,T) . V_h (T,hs), written into the head's
		 * columns of out (row stride C). */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, at, T, v, C3,
			    0.0f, x->out + (size_t)b * T * C + (size_t)h * hs, C);
	}
}

static void *attention_pairs_main(void *p)
{
	attention_pairs(p);
	return NULL;
}

#define ATT_MAX_THREADS 64

/* The (batch, head) pairs are independent: they are split over as many
 * threads as OpenBLAS has, each calling BLAS single-threaded (OpenBLAS
 * threading these small products from inside the workers, or even from one
 * caller at T >= 256, is several times slower). The split does not change
 * the results. */
void attention_forward(float *out, float *preatt, float *att, const float *qkv, int B, int T, int C,
		       int NH, bool causal)
{
	int n = B * NH, nt = openblas_get_num_threads();
	if (nt > n)
		nt = n;
	if (nt > ATT_MAX_THREADS)
		nt = ATT_MAX_THREADS;
	if (nt < 1)
		nt = 1;
	int blas = openblas_get_num_threads();
	if (blas > 1)
		openblas_set_num_threads(1);
	att_fwd job[ATT_MAX_THREADS];
	pthread_t tid[ATT_MAX_THREADS];
	bool started[ATT_MAX_THREADS];
	for (int i = 0; i < nt; i++) {
		job[i] = (att_fwd){out,
				   preatt,
				   att,
				   qkv,
				   T,
				   C,
				   NH,
				   (int)((long)n * i / nt),
				   (int)((long)n * (i + 1) / nt),
				   causal};
		started[i] =
		    i > 0 && pthread_create(&tid[i], NULL, attention_pairs_main, &job[i]) == 0;
	}
	attention_pairs(&job[0]);
	for (int i = 1; i < nt; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			attention_pairs(&job[i]);
	}
	if (blas > 1)
		openblas_set_num_threads(blas);
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

/* 0.5 x (1 + tanh(u)) = x e / (e + 1) with e = exp(2u): one exponential and
 * no cancellation at either end (2u clamped to +-80, where e/(e+1) has
 * reached 0 or 1 in float). */
void gelu_forward(float *out, const float *inp, int N)
{
	const float k = 0.7978845608028654f; /* sqrt(2/pi) */
	for (int i0 = 0; i0 < N; i0 += 4096) {
		int n = N - i0 < 4096 ? N - i0 : 4096;
		float *o = out + i0;
		const float *in = inp + i0;
		for (int i = 0; i < n; i++) {
			float x = in[i], u2 = 2.0f * k * (x + 0.044715f * x * x * x);
			o[i] = u2 > 80.0f ? 80.0f : u2 < -80.0f ? -80.0f : u2;
		}
		vec_exp(o, o, n);
		for (int i = 0; i < n; i++)
			o[i] = in[i] * o[i] / (o[i] + 1.0f);
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
