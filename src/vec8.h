#ifndef ATTNVIEW_SRC_VEC8_H
#define ATTNVIEW_SRC_VEC8_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* 8-lane float vectors (GCC vector extensions) for the element-wise loops of
 * ops.c and backward.c; private to those two files.
 *
 * The element-wise work of a step (3.8M exponentials in the loss of the
 * reference configuration, 2M GELU derivatives) costs more than the matrix
 * products if done with libm one value at a time (expf ~3 ns, tanhf ~8 ns).
 * These loops use GCC vector extensions, 8 lanes, and are compiled twice
 * (AVX2 and the baseline) with the faster one picked when the program loads.
 * No fused multiply-adds are formed (ISO C mode: -ffp-contract=off), so both
 * versions give the same bits. */

/* Not under GCC's sanitizers: their instrumented ifunc resolvers run before
 * the sanitizer runtime is set up and crash the program at load. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) &&                    \
	!defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define AV_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define AV_CLONES
#endif
#define AV_INLINE static inline __attribute__((always_inline))

/* The helpers below pass 32-byte vectors by value; they are always inlined,
 * so the calling convention GCC warns about never applies. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* exp(x) for 8 lanes: Cephes' expf. x = n ln2 + r, |r| <= ln2/2, with ln2
 * split in two so n ln2 is exact; e^r by a degree-7 polynomial; 2^n from the
 * exponent bits. Relative error below 1e-7 (under an ulp) on
 * [-87.3, 88.7]; inputs outside are clamped (so exp(-inf) is 1e-38, not 0). */
AV_INLINE v8f vexp8(v8f x)
{
	const v8f one = {1, 1, 1, 1, 1, 1, 1, 1};
	v8f lo = one * -87.33654f, hi = one * 88.72283f;
	v8i m = x < lo;
	x = (v8f)(((v8i)x & ~m) | ((v8i)lo & m));
	m = x > hi;
	x = (v8f)(((v8i)x & ~m) | ((v8i)hi & m));
	v8f t = x * 1.44269504088896341f + 0.5f;
	v8f n = __builtin_convertvector(__builtin_convertvector(t, v8i), v8f);
	n = n - (v8f)((v8i)one & (n > t)); /* truncation to floor */
	v8f r = x - n * 0.693359375f - n * -2.12194440e-4f;
	v8f p = 1.9875691500e-4f * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * (r * r) + r + 1.0f;
	v8i e = (__builtin_convertvector(n, v8i) + 127) << 23;
	return p * (v8f)e;
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

/* C (M,N) = A (M,K) . B (K,N) [+ C when acc], for the per-head attention
 * products whose N is the head size (a multiple of 8, at most 32). At these
 * sizes (128x16x128) OpenBLAS spends more on packing than on arithmetic; here
 * each output row stays in up to four vectors and every B row is read as
 * contiguous lanes. A is addressed as A[i * rsa + p * csa], so a transposed A
 * costs nothing. The sum over p runs in order, so the result depends on
 * neither the thread count nor the instruction set. */
static AV_CLONES __attribute__((unused)) void mm_rows16(int M, int N, int K, const float *A,
							 long rsa, long csa, const float *B,
							 int ldb, float *C, int ldc, int acc)
{
	int nv = N / 8, i = 0;
	if (nv == 2) {
		/* Four rows at a time: eight independent sums hide the add
		 * latency, and each B row is loaded once for the four. */
		for (; i + 4 <= M; i += 4) {
			v8f s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
			v8f s4 = {0}, s5 = {0}, s6 = {0}, s7 = {0};
			const float *a0 = A + (long)i * rsa;
			for (int p = 0; p < K; p++) {
				const float *ap = a0 + (long)p * csa;
				const float *bp = B + (long)p * ldb;
				v8f b0 = load8(bp), b1 = load8(bp + 8);
				float x0 = ap[0], x1 = ap[rsa], x2 = ap[2 * rsa], x3 = ap[3 * rsa];
				s0 += x0 * b0;
				s1 += x0 * b1;
				s2 += x1 * b0;
				s3 += x1 * b1;
				s4 += x2 * b0;
				s5 += x2 * b1;
				s6 += x3 * b0;
				s7 += x3 * b1;
			}
			float *c = C + (long)i * ldc;
			if (acc) {
				s0 += load8(c);
				s1 += load8(c + 8);
				s2 += load8(c + ldc);
				s3 += load8(c + ldc + 8);
				s4 += load8(c + 2 * ldc);
				s5 += load8(c + 2 * ldc + 8);
				s6 += load8(c + 3 * ldc);
				s7 += load8(c + 3 * ldc + 8);
			}
			store8(c, s0);
			store8(c + 8, s1);
			store8(c + ldc, s2);
			store8(c + ldc + 8, s3);
			store8(c + 2 * ldc, s4);
			store8(c + 2 * ldc + 8, s5);
			store8(c + 3 * ldc, s6);
			store8(c + 3 * ldc + 8, s7);
		}
	}
	for (; i < M; i++) {
		v8f s[4] = {{0}, {0}, {0}, {0}};
		const float *ai = A + (long)i * rsa;
		for (int p = 0; p < K; p++) {
			float a = ai[(long)p * csa];
			const float *bp = B + (long)p * ldb;
			for (int v = 0; v < nv; v++)
				s[v] += a * load8(bp + 8 * v);
		}
		float *ci = C + (long)i * ldc;
		for (int v = 0; v < nv; v++)
			store8(ci + 8 * v, acc ? load8(ci + 8 * v) + s[v] : s[v]);
	}
}

/* C (M,N) = A (M,K) . B^T for B (N,K) rows, the per-head score products
 * (128x128x16): B is transposed into a local (K,N) copy so that each 16-column
 * block of C goes through mm_rows16. Returns false (nothing done) when the
 * shape does not fit the copy; callers then use sgemm. */
static __attribute__((unused)) bool mm_nt16(int M, int N, int K, const float *A, int lda,
					    const float *B, int ldb, float *C, int ldc)
{
	float bt[4096];
	if (K % 8 != 0 || K > 32 || N % 16 != 0 || N * K > 4096)
		return false;
	for (int j = 0; j < N; j++)
		for (int p = 0; p < K; p++)
			bt[p * N + j] = B[(long)j * ldb + p];
	for (int j = 0; j < N; j += 16)
		mm_rows16(M, 16, K, A, lda, 1, bt + j, N, C + j, ldc, 0);
	return true;
}

#endif
