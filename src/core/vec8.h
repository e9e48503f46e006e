#ifndef ATTNVIEW_SRC_VEC8_H
#define ATTNVIEW_SRC_VEC8_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* 8- and 16-lane float vectors (GCC vector extensions) for the element-wise
 * loops of ops.c, backward.c, last_block.c and optimizer.c; private to those
 * files.
 *
 * The element-wise work of a step (3.8M exponentials in the loss of the
 * reference configuration, 2M GELU derivatives) costs more than the matrix
 * products if done with libm one value at a time (expf ~3 ns, tanhf ~8 ns).
 * These loops use GCC vector extensions, 8 lanes, and are compiled twice
 * (x86-64-v3, i.e. AVX2 and FMA, and the baseline) with the faster one picked
 * when the program loads. The compiler forms no fused multiply-adds of its
 * own (ISO C mode: -ffp-contract=off); the few the code asks for (fma8) are
 * one instruction under x86-64-v3 and libm's correctly rounded fmaf in the
 * baseline, so both versions give the same bits. The softmaxes, GELU and the
 * loss also have a 16-lane version for AVX-512 (AV_WIDE below, v16f), with
 * the same bits again (tests/ci/avx512.sh compares them). */

/* Not under GCC's sanitizers: their instrumented ifunc resolvers run before
 * the sanitizer runtime is set up and crash the program at load. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define AV_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
/* The hottest loops also have a version of 16 lanes (v16f) for CPUs with
 * AVX-512 (x86-64-v4): a function of its own, AV_WIDE, which the caller
 * picks with av_wide(). Each lane's arithmetic is the same at every width,
 * and sums keep the order of 8 lanes, so it gives the others' bits. Not a
 * third clone: under AVX2, GCC splits 16-lane code badly (a softmax row 4
 * times slower than with 8 lanes). */
#define AV_WIDE	     __attribute__((target("arch=x86-64-v4")))
#define AV_HAVE_WIDE 1
#else
#define AV_CLONES
#define AV_WIDE
#define AV_HAVE_WIDE 0
#endif
#define AV_INLINE static inline __attribute__((always_inline))

/* The vector code that runs (ops.c), decided once: the CPU's level
 * (AV_BASELINE: no AVX2 and FMA, or a build with one version of the code),
 * or a lower one asked for with ATTNVIEW_SIMD (avx512, avx2, portable) or
 * ATTNVIEW_NO_AVX512 (avx2); the lower of the two where both are set. */
enum { AV_BASELINE, AV_AVX2, AV_AVX512 };
int av_level(void);
/* ATTNVIEW_SIMD=portable: the attention's products of attn_products.c, where
 * they run, as plain loops (the level is then AVX2 at most). */
bool av_plain_products(void);
/* Whether the AV_WIDE versions run: av_level() == AV_AVX512. */
int av_wide(void);

/* The helpers below pass 32-byte vectors by value; they are always inlined,
 * so the calling convention GCC warns about never applies. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
/* 16 lanes: one register under AVX-512 (used only in AV_WIDE functions). */
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

/* a * b + c rounded once, lane by lane (vfmadd under x86-64-v3 and v4). */
#define AV_DEFINE_FMA(NAME, VF, LANES)                                                             \
	AV_INLINE VF NAME(VF a, VF b, VF c)                                                        \
	{                                                                                          \
		VF r;                                                                              \
		for (int k = 0; k < (LANES); k++)                                                  \
			r[k] = __builtin_fmaf(a[k], b[k], c[k]);                                   \
		return r;                                                                          \
	}
AV_DEFINE_FMA(fma8, v8f, 8)
AV_DEFINE_FMA(fma16, v16f, 16)

/* exp(x) lane by lane: Cephes' expf. x = n ln2 + r, |r| <= ln2/2, with ln2
 * split in two so n ln2 is exact; e^r by a degree-7 polynomial; 2^n from the
 * exponent bits. Relative error below 1e-7 (under an ulp) on
 * [-87.3, 88.7]; inputs outside are clamped (so exp(-inf) is 1e-38, not 0).
 * One body for 8 and 16 lanes: a lane's result does not depend on the width. */
#define AV_DEFINE_EXP(NAME, VF, VI, FMA)                                                           \
	AV_INLINE VF NAME(VF x)                                                                    \
	{                                                                                          \
		const VF one = (VF){0} + 1.0f;                                                     \
		VF lo = one * -87.33654f, hi = one * 88.72283f;                                    \
		VI m = x < lo;                                                                     \
		x = (VF)(((VI)x & ~m) | ((VI)lo & m));                                             \
		m = x > hi;                                                                        \
		x = (VF)(((VI)x & ~m) | ((VI)hi & m));                                             \
		VF t = FMA(x, one * 1.44269504088896341f, one * 0.5f);                             \
		VF n = __builtin_convertvector(__builtin_convertvector(t, VI), VF);                \
		n = n - (VF)((VI)one & (n > t)); /* truncation to floor */                         \
		VF r = FMA(n, one * -0.693359375f, x);                                             \
		r = FMA(n, one * 2.12194440e-4f, r);                                               \
		VF p = FMA(one * 1.9875691500e-4f, r, one * 1.3981999507e-3f);                     \
		p = FMA(p, r, one * 8.3334519073e-3f);                                             \
		p = FMA(p, r, one * 4.1665795894e-2f);                                             \
		p = FMA(p, r, one * 1.6666665459e-1f);                                             \
		p = FMA(p, r, one * 5.0000001201e-1f);                                             \
		p = FMA(p, r * r, r) + 1.0f;                                                       \
		VI e = (__builtin_convertvector(n, VI) + 127) << 23;                               \
		return p * (VF)e;                                                                  \
	}
AV_DEFINE_EXP(vexp8, v8f, v8i, fma8)
#if AV_HAVE_WIDE
#include <immintrin.h>
/* The same under AVX-512 in 12 fewer instructions a vector: the clamps as
 * vmaxps and vminps (the input second, so NaN passes as before), the floor
 * as one vrndscaleps, 2^n as vscalefps, which rounds p 2^n once as the
 * product did (and flushes it under FTZ alike). Where the product's 2^n
 * was 2^128 (x from 88.38, n = 128) it gave +inf; vscalefps would give a
 * finite number, so those lanes are set to +inf: the bits of vexp8 on every
 * input (checked on every float). 30% faster on a row of a softmax. */
/* Not always_inline: the 8-lane versions of the row functions that hold a
 * 16-lane loop (softmax_row_lanes with wide false) keep a call to it in
 * dead code, which a target mismatch would make an error; the AV_WIDE
 * functions inline it (tests/ci/avx512.sh checks the bits, the view
 * benchmark the speed). */
__attribute__((target("arch=x86-64-v4"))) static inline v16f vexp16(v16f v)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	__m512 x = _mm512_max_ps(_mm512_set1_ps(-87.33654f), (__m512)v);
	x = _mm512_min_ps(_mm512_set1_ps(88.72283f), x);
	__m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f));
	__m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x);
	r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
	__m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), r,
				   _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), one);
	__m512 e = _mm512_scalef_ps(p, n);
	__mmask16 top = _mm512_cmp_ps_mask(n, _mm512_set1_ps(128.0f), _CMP_GE_OQ);
	return (v16f)_mm512_mask_mov_ps(e, top, _mm512_set1_ps(__builtin_inff()));
}
#else
AV_DEFINE_EXP(vexp16, v16f, v16i, fma16)
#endif

/* The larger of a and b, lane by lane (b where b > a, else a: vmaxps, one
 * instruction; the order of the operands is the instruction's). A NaN
 * score makes its softmax row NaN whichever it picks. */
AV_INLINE v8f max8(v8f a, v8f b)
{
	v8f r;
	for (int k = 0; k < 8; k++)
		r[k] = b[k] > a[k] ? b[k] : a[k];
	return r;
}

AV_INLINE v16f max16(v16f a, v16f b)
{
	v16f r;
	for (int k = 0; k < 16; k++)
		r[k] = b[k] > a[k] ? b[k] : a[k];
	return r;
}

/* The largest lane, by halves (three steps deep, not eight). */
AV_INLINE float hmax8(v8f v)
{
	float a = v[4] > v[0] ? v[4] : v[0], b = v[5] > v[1] ? v[5] : v[1];
	float c = v[6] > v[2] ? v[6] : v[2], d = v[7] > v[3] ? v[7] : v[3];
	a = c > a ? c : a;
	b = d > b ? d : b;
	return b > a ? b : a;
}

/* Correctly rounded square roots of 8 lanes (one vsqrtps under AVX2: GCC
 * turns the lane loop into it). */
AV_INLINE v8f vsqrt8(v8f x)
{
	v8f r;
	for (int k = 0; k < 8; k++)
		r[k] = __builtin_sqrtf(x[k]);
	return r;
}

AV_INLINE v8f load8(const float *p)
{
	v8f v;
	memcpy(&v, p, sizeof v);
	return v;
}

AV_INLINE void store8(float *p, v8f v)
{
	memcpy(p, &v, sizeof v);
}

AV_INLINE v16f load16(const float *p)
{
	v16f v;
	memcpy(&v, p, sizeof v);
	return v;
}

AV_INLINE void store16(float *p, v16f v)
{
	memcpy(p, &v, sizeof v);
}

/* Lanes 0-7 (half 0) or 8-15 (half 1) of v. */
AV_INLINE v8f half16(v16f v, int half)
{
	v8f h;
	memcpy(&h, (const char *)&v + half * sizeof h, sizeof h);
	return h;
}

/* The scalar tail of a vector loop goes through the same lanes, so every
 * element gets the same arithmetic whatever its position. */
AV_INLINE v8f load_part(const float *p, int n, float fill)
{
	float b[8];
	for (int i = 0; i < 8; i++)
		b[i] = i < n ? p[i] : fill;
	return load8(b);
}

AV_INLINE void store_part(float *p, int n, v8f v)
{
	float b[8];
	store8(b, v);
	for (int i = 0; i < n; i++)
		p[i] = b[i];
}

/* GELU, tanh form: gelu(x) = x/2 (1 + t), t = tanh(u), u = S (x + A x^3),
 *   gelu'(x) = (1 + t)/2 + x/2 (1 - t^2) S (1 + 3 A x^2).
 * With e = exp(2u): 1 + t = 2e / (e + 1) and 1 - t = 2 / (e + 1), so
 * 1 - t^2 = (1 + t)(1 - t) keeps its relative precision where t is near +-1
 * (computing 1 - t*t there cancels away every digit). 2u is clamped to
 * +-80, where both factors have reached their limits in float. The forward
 * (ops.c) and the backward (backward.c) share these, so the derivative the
 * training forward stores is bit for bit the one the backward would compute. */
#define GELU_S 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_A 0.044715f

/* e = exp(2u) of x; gelu(x) = x e / (e + 1), no cancellation at either
 * end; gelu'(x) from x and e. For 8 and 16 lanes (gelu_e8, gelu_y8,
 * gelu_dg8; gelu_e16, ...), the same arithmetic lane by lane. */
#define AV_DEFINE_GELU(W, VF, VI)                                                                  \
	AV_INLINE VF gelu_e##W(VF x)                                                               \
	{                                                                                          \
		const VF one = (VF){0} + 1.0f;                                                     \
		const VF lim = one * 80.0f, nlim = one * -80.0f;                                   \
		VF u2 = 2.0f * GELU_S * (x + GELU_A * x * x * x);                                  \
		VI m = u2 > lim;                                                                   \
		u2 = (VF)(((VI)u2 & ~m) | ((VI)lim & m));                                          \
		m = u2 < nlim;                                                                     \
		u2 = (VF)(((VI)u2 & ~m) | ((VI)nlim & m));                                         \
		return vexp##W(u2);                                                                \
	}                                                                                          \
	AV_INLINE VF gelu_y##W(VF x, VF e)                                                         \
	{                                                                                          \
		return x * e / (e + 1.0f);                                                         \
	}                                                                                          \
	AV_INLINE VF gelu_dg##W(VF x, VF e)                                                        \
	{                                                                                          \
		VF inv = 1.0f / (e + 1.0f);                                                        \
		VF opt = 2.0f * e * inv, omt = 2.0f * inv;                                         \
		return 0.5f * opt +                                                                \
		       0.5f * x * (opt * omt) * GELU_S * (1.0f + 3.0f * GELU_A * x * x);           \
	}
AV_DEFINE_GELU(8, v8f, v8i)
AV_DEFINE_GELU(16, v16f, v16i)

/* GELU, exact form (nanoGPT's nn.GELU()): gelu(x) = x Phi(x), with
 * Phi(x) = (1 + erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2. With
 * z = |x| / sqrt 2: below z = 1, erf(z) = z P(z^2); from 1 on,
 * erfc(z) = exp(-z^2) Q(1/z), Q fitting erfc(z) exp(z^2) for z in [1, 9.4]
 * (beyond, exp(-z^2) is below binary32's normal range and the lane's Phi is
 * 0 or 1 to the last bit). P and Q are least-squares fits on Chebyshev nodes
 * in binary64 (tools/gelu_erf_fit.py). Measured over x in [-14, 14] in steps
 * of 1e-5 against binary64's erfc: Phi within 1.7 u absolute, gelu within
 * 2.3 u |x| (u = 2^-24), inside the |x| (2u + 3u) of attnview(5)'s bound. */
static const float GELU_ERF_P[7] = {7.933493926e-05f,  -8.034846661e-04f, 5.191218378e-03f,
				    -2.685539945e-02f, 1.128362573e-01f,  -3.761262988e-01f,
				    1.128379167e+00f};
static const float GELU_ERF_Q[11] = {-5.039490684e-02f, 3.397911470e-01f,  -1.014572809e+00f,
				     1.744386960e+00f,	-1.845944808e+00f, 1.115277498e+00f,
				     -1.668679277e-01f, -2.558208670e-01f, -2.603366253e-03f,
				     5.643362153e-01f,	-3.561427091e-06f};

/* Phi(x), and exp(-x^2 / 2) into *g (for the derivative); gelu(x) =
 * x Phi(x), its derivative Phi(x) + x phi(x) into *dg (or NULL), phi(x) =
 * exp(-x^2 / 2) / sqrt(2 pi). For 8 and 16 lanes (gelu_phi8, gelu_erf8;
 * gelu_phi16, gelu_erf16), the same arithmetic lane by lane. */
#define AV_DEFINE_GELU_ERF(W, VF, VI)                                                              \
	AV_INLINE VF gelu_phi##W(VF x, VF *g)                                                      \
	{                                                                                          \
		const VF one = (VF){0} + 1.0f, zero = one - one;                                   \
		VI neg = x < zero;                                                                 \
		VF ax = (VF)((VI)x & ~(VI)(one * -0.0f));                                          \
		VF z = ax * 0.70710678118654752f, s = z * z;                                       \
		VF p = one * GELU_ERF_P[0];                                                        \
		for (int i = 1; i < 7; i++)                                                        \
			p = fma##W(p, s, one * GELU_ERF_P[i]);                                     \
		VF e = z * p; /* erf(z), z < 1 */                                                  \
		VI big = z >= one;                                                                 \
		VF zc = (VF)(((VI)z & big) | ((VI)one & ~big)); /* max(z, 1) */                    \
		VF t = one / zc, q = one * GELU_ERF_Q[0];                                          \
		for (int i = 1; i < 11; i++)                                                       \
			q = fma##W(q, t, one * GELU_ERF_Q[i]);                                     \
		*g = vexp##W(-s);                                                                  \
		VF c = *g * q; /* erfc(z), z >= 1 */                                               \
		VF lo = (VF)(((VI)(0.5f * c) & big) | ((VI)(0.5f - 0.5f * e) & ~big));             \
		VF hi = (VF)(((VI)(1.0f - 0.5f * c) & big) | ((VI)(0.5f + 0.5f * e) & ~big));      \
		return (VF)(((VI)lo & neg) | ((VI)hi & ~neg)); /* Phi(-ax), Phi(ax) */             \
	}                                                                                          \
	AV_INLINE VF gelu_erf##W(VF x, VF *dg)                                                     \
	{                                                                                          \
		VF g, phi = gelu_phi##W(x, &g);                                                    \
		if (dg)                                                                            \
			*dg = phi + x * g * 0.39894228040143268f;                                  \
		return x * phi;                                                                    \
	}
AV_DEFINE_GELU_ERF(8, v8f, v8i)
AV_DEFINE_GELU_ERF(16, v16f, v16i)

#endif
