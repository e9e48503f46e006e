/* Forward operations of the model (ops.h). The *_ref twins are plain loops in
 * the order the man page describes; the fast versions hand the products to
 * BLAS and must agree with them to float rounding. */
#include "attnview/ops.h"
#include "attnview/blas.h"

#include "attnview/parallel.h"

#include "vec8.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* The rows of wte are read in token order, scattered over a table of
 * V * C floats (1.6 MB at the reference configuration): the row a few tokens
 * ahead is prefetched. 8 lanes, the same two roundings per element. */
AV_CLONES void embed_forward(float *out, const int32_t *tokens, const float *wte, const float *pe,
			     float scale, int B, int T, int C)
{
	const v8f s8 = (v8f){0, 0, 0, 0, 0, 0, 0, 0} + scale;
	const long N = (long)B * T;
	for (long i = 0; i < N; i++) {
		if (i + 4 < N) {
			const float *ahead = wte + (size_t)tokens[i + 4] * C;
			for (int c = 0; c < C; c += 16)
				__builtin_prefetch(ahead + c);
		}
		float *o = out + (size_t)i * C;
		const float *e = wte + (size_t)tokens[i] * C;
		const float *p = pe + (size_t)(i % T) * C;
		int c = 0;
		for (; c + 8 <= C; c += 8)
			store8(o + c, s8 * load8(e + c) + load8(p + c));
		for (; c < C; c++)
			o[c] = scale * e[c] + p[c];
	}
}

/* Sum of the 8 lanes, in lane order. */
AV_INLINE float hsum8(v8f v)
{
	float s = 0.0f;
	for (int k = 0; k < 8; k++)
		s += v[k];
	return s;
}

/* Eight columns at a time; a row's sums are kept per lane and added in lane
 * order, so every row gets the same arithmetic wherever it sits. */
AV_CLONES void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
				 const float *w, const float *b, int N, int C)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	for (int n = 0; n < N; n++) {
		const float *x = inp + (size_t)n * C;
		float *o = out + (size_t)n * C;
		v8f s8 = zero;
		for (int c = 0; c < C; c += 8)
			s8 += C - c >= 8 ? load8(x + c) : load_part(x + c, C - c, 0.0f);
		float m = hsum8(s8) / (float)C;
		v8f m8 = zero + m, v8 = zero;
		for (int c = 0; c < C; c += 8) {
			/* Padding lanes hold the mean: they add nothing. */
			v8f d = (C - c >= 8 ? load8(x + c) : load_part(x + c, C - c, m)) - m8;
			v8 += d * d;
		}
		float s = 1.0f / sqrtf(hsum8(v8) / (float)C + AV_LN_EPS);
		v8f sv = zero + s;
		for (int c = 0; c < C; c += 8) {
			int k = C - c;
			if (k >= 8) {
				store8(o + c,
				       (load8(x + c) - m8) * sv * load8(w + c) + load8(b + c));
			} else {
				v8f y = (load_part(x + c, k, 0.0f) - m8) * sv *
					    load_part(w + c, k, 0.0f) +
					load_part(b + c, k, 0.0f);
				store_part(o + c, k, y);
			}
		}
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
			memcpy(out + (size_t)n * OC, bias, (size_t)OC * sizeof(float));
		beta = 1.0f;
	}
	/* One row (a causal keystroke, a generated character): OpenBLAS 0.3.21's
	 * sgemm would copy all of w into its packed layout for it, which costs
	 * more than the product; the matrix-vector product reads w once. */
	if (N == 1)
		cblas_sgemv(CblasRowMajor, CblasNoTrans, OC, C, 1.0f, w, C, inp, 1, beta, out, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, w, C,
			    beta, out, OC);
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

/* An environment switch: set to anything but empty or "0". */
static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

/* The CPU's best level (vec8.h). */
static int cpu_level(void)
{
#if AV_HAVE_WIDE
	if (__builtin_cpu_supports("x86-64-v4"))
		return AV_AVX512;
	if (__builtin_cpu_supports("x86-64-v3"))
		return AV_AVX2;
#endif
	return AV_BASELINE;
}

/* What the process runs, decided once (simd_decide). */
static struct {
	int level;
	bool plain;	/* ATTNVIEW_SIMD=portable */
	char code[200]; /* ops_vector_code's text */
} simd;
static pthread_once_t simd_once = PTHREAD_ONCE_INIT;

static void simd_decide(void)
{
	const int best = cpu_level();
	int asked = AV_AVX512;
	bool unknown = false;
	const char *v = getenv("ATTNVIEW_SIMD");
	if (v && *v) {
		if (strcasecmp(v, "portable") == 0) {
			simd.plain = true;
			asked = AV_AVX2;
		} else if (strcasecmp(v, "avx2") == 0) {
			asked = AV_AVX2;
		} else if (strcasecmp(v, "avx512") != 0) {
			unknown = true;
		}
	}
	if (env_on("ATTNVIEW_NO_AVX512"))
		asked = AV_AVX2;
	simd.level = asked < best ? asked : best;
	const char *what = simd.level == AV_AVX512 ? "AVX-512, 16 lanes"
			   : simd.level == AV_AVX2 ? "AVX2 and FMA, 8 lanes"
			   : AV_HAVE_WIDE
			       ? "x86-64 baseline, 8 lanes"
			       : "one version, 8 lanes (no run-time choice in this build)";
	/* The plain loops replace the products where they run (attn_products.h):
	 * on the baseline the products are OpenBLAS's at every level. */
	const char *plain = simd.plain && simd.level >= AV_AVX2
				? "portable: the attention's products as plain loops, the rest "
				: "";
	int k = snprintf(simd.code, sizeof simd.code, "%s%s", plain, what);
	if (unknown && k >= 0 && (size_t)k < sizeof simd.code)
		snprintf(simd.code + k, sizeof simd.code - (size_t)k,
			 " (ATTNVIEW_SIMD=%.40s not understood: avx512, avx2 or portable)", v);
}

int av_level(void)
{
	pthread_once(&simd_once, simd_decide);
	return simd.level;
}

bool av_plain_products(void)
{
	pthread_once(&simd_once, simd_decide);
	return simd.plain;
}

int av_wide(void)
{
	return av_level() == AV_AVX512;
}

const char *ops_vector_code(void)
{
	pthread_once(&simd_once, simd_decide);
	return simd.code;
}

/* ---- subnormal numbers ------------------------------------------------------
 *
 * A sure attention head puts weights of 1e-38 and less on most keys (vec8.h's
 * exponential bottoms out at 2^-126; divided by the row's sum, under it), and
 * a model whose loss is near 0 has gradients as small. Every multiply-add
 * with a subnormal operand or result then takes a microcode assist on Intel
 * CPUs, about a hundred cycles: the lab's duplicate task trained 8.6 times
 * slower on an Intel Xeon with them than without (141 s against 16.5 s;
 * doc/speed.md). So the process computes with subnormals flushed to zero,
 * in results (FTZ) and operands (DAZ), as TensorFlow's CPU threads do: set here before main() and
 * inherited by every thread started after, the thread pool's workers and the view's worker.
 * OpenBLAS started its threads when it loaded, before this: blas_restart_threads() stops them, and
 * its next threaded product starts them again from a thread that flushes, so that no share of a
 * product keeps subnormals. A number under 2^-126 adds nothing to a sum of numbers 2^-100 and
 * larger, so only results that small change, and what follows from them only where they decided
 * something (a training stuck on a plateau): a weight of 1e-40 reads 0 (attnview(5), Accuracy,
 * allows it). ATTNVIEW_KEEP_SUBNORMALS=1 keeps them, to measure the difference. i386 without SSE
 * computes on the x87 unit, which has no such mode. */
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
#include <xmmintrin.h>
#define MXCSR_FTZ_DAZ 0x8040u /* flush to zero (bit 15), denormals are zero (6) */
#endif

__attribute__((constructor)) static void flush_subnormals_at_start(void)
{
	if (env_on("ATTNVIEW_KEEP_SUBNORMALS"))
		return;
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
	_mm_setcsr(_mm_getcsr() | MXCSR_FTZ_DAZ);
#elif defined(__aarch64__)
	uint64_t fpcr;
	__asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
	__asm__ volatile("msr fpcr, %0" : : "r"(fpcr | (UINT64_C(1) << 24))); /* FZ */
#else
	return;
#endif
	blas_restart_threads();
}

bool ops_flushes_subnormals(void)
{
	volatile float tiny = 0x1p-100f, small = 0x1p-40f;
	return tiny * small == 0.0f; /* 2^-140: a subnormal, or 0 flushed */
}

/* The row's arithmetic, 16 lanes at a time where they fit (wide: the AVX-512
 * version), then 8, then the tail's 8; the sum in the order of 8 lanes
 * throughout (a 16-lane block adds its halves in turn), so both versions
 * give the same bits. Half the masked pass's time outside the matrix
 * products is here. The exponentials (softmax_exp_lanes) and their scaling
 * by the sum's reciprocal are apart: the view's pass scales the head's
 * output instead (infer.c). */

/* The largest of preatt[0..valid): four running maxima, since one would
 * wait on each comparison before the next, and the lanes joined by halves
 * (a block of 64 rows of 512 keys: finding the maxima took 5.5 us of the
 * softmax's 17 with one maximum and the lanes one after another,
 * AVX-512). The largest is one number whatever the order; a NaN is passed
 * over. */
AV_INLINE float row_max_lanes(const float *preatt, int valid, bool wide)
{
	v8f m0 = (v8f){0} - INFINITY, m1 = m0, m2 = m0, m3 = m0;
	int j = 0;
	if (wide) {
		v16f w0 = (v16f){0} - INFINITY, w1 = w0, w2 = w0, w3 = w0;
		for (; j + 64 <= valid; j += 64) {
			w0 = max16(w0, load16(preatt + j));
			w1 = max16(w1, load16(preatt + j + 16));
			w2 = max16(w2, load16(preatt + j + 32));
			w3 = max16(w3, load16(preatt + j + 48));
		}
		for (; j + 16 <= valid; j += 16)
			w0 = max16(w0, load16(preatt + j));
		w0 = max16(max16(w0, w1), max16(w2, w3));
		m0 = max8(half16(w0, 0), half16(w0, 1));
	}
	for (; j + 32 <= valid; j += 32) {
		m0 = max8(m0, load8(preatt + j));
		m1 = max8(m1, load8(preatt + j + 8));
		m2 = max8(m2, load8(preatt + j + 16));
		m3 = max8(m3, load8(preatt + j + 24));
	}
	for (; j + 8 <= valid; j += 8)
		m0 = max8(m0, load8(preatt + j));
	float maxv = hmax8(max8(max8(m0, m1), max8(m2, m3)));
	for (int i = j; i < valid; i++)
		maxv = preatt[i] > maxv ? preatt[i] : maxv;
	return maxv;
}

/* att[j] = exp(scale (preatt[j] - maxv)) for j < valid, masked keys as
 * softmax_row leaves them; returns the sum. */
AV_INLINE float softmax_exp_lanes(float *att, float *preatt, int n, int valid, float scale,
				  float maxv, bool wide)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	v8f m8 = zero + maxv, s8 = zero + scale, sum8 = zero;
	int j = 0;
	if (wide) {
		v16f m16 = (v16f){0} + maxv;
		for (; j + 16 <= valid; j += 16) {
			v16f e = vexp16(scale * (load16(preatt + j) - m16));
			sum8 += half16(e, 0);
			sum8 += half16(e, 1);
			store16(att + j, e);
		}
	}
	for (; j + 8 <= valid; j += 8) {
		v8f e = vexp8(scale * (load8(preatt + j) - m8));
		sum8 += e;
		store8(att + j, e);
	}
	if (j < valid) {
		v8f e = vexp8(s8 * (load_part(preatt + j, valid - j, maxv) - m8));
		for (int k = valid - j; k < 8; k++)
			e[k] = 0.0f;
		sum8 += e;
		store_part(att + j, valid - j, e);
	}
	for (j = valid; j < n; j++) {
		if (preatt != att)
			preatt[j] = NAN;
		att[j] = 0.0f;
	}
	return hsum8(sum8);
}

AV_INLINE void scale_lanes(float *out, const float *in, int n, float c, bool wide)
{
	int j = 0;
	if (wide)
		for (; j + 16 <= n; j += 16)
			store16(out + j, load16(in + j) * c);
	for (; j + 8 <= n; j += 8)
		store8(out + j, load8(in + j) * ((v8f){0} + c));
	for (; j < n; j++)
		out[j] = in[j] * c;
}

AV_INLINE void softmax_row_lanes(float *att, float *preatt, int n, int valid, float scale,
				 bool wide)
{
	float maxv = row_max_lanes(preatt, valid, wide);
	float inv = 1.0f / softmax_exp_lanes(att, preatt, n, valid, scale, maxv, wide);
	scale_lanes(att, att, valid, inv, wide);
}

AV_CLONES static void softmax_row8(float *att, float *preatt, int n, int valid, float scale)
{
	softmax_row_lanes(att, preatt, n, valid, scale, false);
}

AV_WIDE static void softmax_row16(float *att, float *preatt, int n, int valid, float scale)
{
	softmax_row_lanes(att, preatt, n, valid, scale, true);
}

void softmax_row(float *att, float *preatt, int n, int valid, float scale)
{
	if (av_wide())
		softmax_row16(att, preatt, n, valid, scale);
	else
		softmax_row8(att, preatt, n, valid, scale);
}

AV_CLONES static float softmax_exp8(float *att, float *preatt, int n, int valid, float scale,
				    float maxv)
{
	if (isnan(maxv))
		maxv = row_max_lanes(preatt, valid, false);
	return softmax_exp_lanes(att, preatt, n, valid, scale, maxv, false);
}

AV_WIDE static float softmax_exp16(float *att, float *preatt, int n, int valid, float scale,
				   float maxv)
{
	if (isnan(maxv))
		maxv = row_max_lanes(preatt, valid, true);
	return softmax_exp_lanes(att, preatt, n, valid, scale, maxv, true);
}

float softmax_row_exp(float *att, float *preatt, int n, int valid, float scale, float maxv)
{
	if (av_wide())
		return softmax_exp16(att, preatt, n, valid, scale, maxv);
	return softmax_exp8(att, preatt, n, valid, scale, maxv);
}

AV_CLONES static void scale8(float *out, const float *in, int n, float c)
{
	scale_lanes(out, in, n, c, false);
}

AV_WIDE static void scale16(float *out, const float *in, int n, float c)
{
	scale_lanes(out, in, n, c, true);
}

void scale_row(float *out, const float *in, int n, float c)
{
	if (av_wide())
		scale16(out, in, n, c);
	else
		scale8(out, in, n, c);
}

typedef struct att_fwd {
	float *out, *preatt, *att;
	const float *qkv;
	int T, C, NH, begin, end;
	bool causal;
} att_fwd;

int attention_query_block(int T, int hs)
{
	int qb = T;
	while (qb > 16 && (double)qb * T * hs > 1e6)
		qb = (qb + 1) / 2;
	return qb;
}

static void attention_pairs(const att_fwd *x)
{
	const int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	const float scale = 1.0f / sqrtf((float)hs);
	const int qb = attention_query_block(T, hs);
	for (int bh = x->begin; bh < x->end; bh++) {
		int b = bh / NH, h = bh % NH;
		const float *q = x->qkv + (size_t)b * T * C3 + (size_t)h * hs;
		const float *k = q + C;
		const float *v = q + 2 * C;
		float *at = x->att + (size_t)bh * T * T;
		/* Without preatt, the scores go to att and the softmax runs in
		 * place (a (T,T) array less to write and read back). */
		float *pa = x->preatt ? x->preatt + (size_t)bh * T * T : at;
		/* Query rows i0 .. i0+n-1 at a time (attention_query_block). */
		for (int i0 = 0; i0 < T; i0 += qb) {
			int n = T - i0 < qb ? T - i0 : qb;
			float *pb = pa + (size_t)i0 * T, *ab = at + (size_t)i0 * T;
			/* Raw scores for all (i, j): q_i . k_j. Q and K are strided
			 * views into qkv (row stride 3C). */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, T, hs, 1.0f,
				    q + (size_t)i0 * C3, C3, k, C3, 0.0f, pb, T);
			for (int i = 0; i < n; i++)
				softmax_row(ab + (size_t)i * T, pb + (size_t)i * T, T,
					    x->causal ? i0 + i + 1 : T, scale);
			/* out_h (T,hs) = att (T,T) . V_h (T,hs), written into the
			 * head's columns of out (row stride C). */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, hs, T, 1.0f, ab, T,
				    v, C3, 0.0f, x->out + ((size_t)b * T + i0) * C + (size_t)h * hs,
				    C);
		}
	}
}

static void attention_range(void *p, int begin, int end)
{
	att_fwd x = *(const att_fwd *)p;
	x.begin = begin;
	x.end = end;
	attention_pairs(&x);
}

/* The (batch, head) pairs are independent: they are split over the threads
 * (parallel_for_blas), each calling BLAS single-threaded (OpenBLAS threading
 * these small products from inside the workers, or even from one caller at
 * T >= 256, is several times slower). The split does not change the results.
 * Inside a slice of the training step, OpenBLAS is already single-threaded
 * and the pairs run in place. */
void attention_forward(float *out, float *preatt, float *att, const float *qkv, int B, int T, int C,
		       int NH, bool causal)
{
	att_fwd x = {out, preatt, att, qkv, T, C, NH, 0, B * NH, causal};
	parallel_for_blas(B * NH, attention_range, &x);
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

/* gelu(inp) into out (the formulas are in vec8.h), the tanh form or (erf)
 * the exact one; with grad, also gelu'(inp) into grad (which may be inp
 * itself). wide: 16 lanes first (the AVX-512 version); element by element,
 * the same bits at every width. */
AV_INLINE void gelu_lanes(float *out, float *grad, const float *inp, int N, bool erf, bool wide)
{
	int i = 0;
	for (; wide && i + 16 <= N; i += 16) {
		v16f x = load16(inp + i), y, dg;
		if (erf) {
			y = gelu_erf16(x, grad ? &dg : NULL);
		} else {
			v16f e = gelu_e16(x);
			y = gelu_y16(x, e);
			if (grad)
				dg = gelu_dg16(x, e);
		}
		store16(out + i, y);
		if (grad)
			store16(grad + i, dg);
	}
	for (; i < N; i += 8) {
		int n = N - i < 8 ? N - i : 8;
		v8f x = n == 8 ? load8(inp + i) : load_part(inp + i, n, 0.0f);
		v8f y, dg;
		if (erf) {
			y = gelu_erf8(x, grad ? &dg : NULL);
		} else {
			v8f e = gelu_e8(x);
			y = gelu_y8(x, e);
			if (grad)
				dg = gelu_dg8(x, e);
		}
		if (n == 8)
			store8(out + i, y);
		else
			store_part(out + i, n, y);
		if (grad) {
			if (n == 8)
				store8(grad + i, dg);
			else
				store_part(grad + i, n, dg);
		}
	}
}

AV_CLONES static void gelu_lanes8(float *out, float *grad, const float *inp, int N, bool erf)
{
	gelu_lanes(out, grad, inp, N, erf, false);
}

AV_WIDE static void gelu_lanes16(float *out, float *grad, const float *inp, int N, bool erf)
{
	gelu_lanes(out, grad, inp, N, erf, true);
}

static void gelu_any(float *out, float *grad, const float *inp, int N, bool erf)
{
	if (av_wide())
		gelu_lanes16(out, grad, inp, N, erf);
	else
		gelu_lanes8(out, grad, inp, N, erf);
}

void gelu_forward(float *out, const float *inp, int N)
{
	gelu_any(out, NULL, inp, N, false);
}

void gelu_forward_grad(float *out, float *inp, int N)
{
	gelu_any(out, inp, inp, N, false);
}

void gelu_erf_forward(float *out, const float *inp, int N)
{
	gelu_any(out, NULL, inp, N, true);
}

void gelu_erf_forward_grad(float *out, float *inp, int N)
{
	gelu_any(out, inp, inp, N, true);
}

void residual_forward(float *out, const float *a, const float *b, int N)
{
	for (int i = 0; i < N; i++)
		out[i] = a[i] + b[i];
}

/* In binary64, rounded once at the end. Over a vocabulary of thousands of
 * ids the denominator is a sum of many small terms: accumulated in binary32
 * it lost them (on the built-in model, 4154 ids, every probability came out
 * up to 2e-5 too high, relative); with log_sum_exp's binary64 sum each p is
 * the softmax of its binary32 logits to within the final rounding. */
void softmax_rows(float *x, int N, int V)
{
	for (int n = 0; n < N; n++) {
		float *r = x + (size_t)n * V;
		const double lse = log_sum_exp(r, V);
		for (int i = 0; i < V; i++)
			r[i] = (float)exp((double)r[i] - lse);
	}
}

AV_CLONES void vec_exp(float *out, const float *in, int n)
{
	int i = 0;
	for (; i + 8 <= n; i += 8)
		store8(out + i, vexp8(load8(in + i)));
	if (i < n)
		store_part(out + i, n - i, vexp8(load_part(in + i, n - i, 0.0f)));
}

double log_sum_exp(const float *x, int n)
{
	float mx = x[0];
	for (int i = 1; i < n; i++)
		mx = x[i] > mx ? x[i] : mx;
	double z = 0;
	for (int i = 0; i < n; i++)
		z += exp((double)x[i] - mx);
	return log(z) + mx;
}
