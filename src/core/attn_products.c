/* A head's two attention products (attn_products.h): the scores against
 * keys packed in tiles, and the weights times the values; 16 lanes under
 * AVX-512 (AV_WIDE), 8 under AVX2 (AV_CLONES' x86-64-v3 clone). Every
 * output is the same chain of fused multiply-adds at both widths. */
#include "attnview/attn_products.h"

#include "vec8.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#define TILE ATTN_KEY_TILE

static size_t tiles(int n)
{
	return ((size_t)n + TILE - 1) / TILE;
}

size_t attn_packed_keys_floats(int n, int hs)
{
	return tiles(n) * TILE * (size_t)hs;
}

bool attn_products_run(int hs)
{
	return hs > 0 && hs % 8 == 0 && av_level() >= AV_AVX2;
}

void attn_pack_keys(float *kt, const float *k, int ldk, int n, int hs)
{
	const size_t nt = tiles(n);
	for (size_t t = 0; t < nt; t++) {
		float *o = kt + t * TILE * (size_t)hs;
		int j0 = (int)t * TILE, m = n - j0 < TILE ? n - j0 : TILE;
		for (int j = 0; j < m; j++) {
			const float *kr = k + (size_t)(j0 + j) * ldk;
			for (int d = 0; d < hs; d++)
				o[(size_t)d * TILE + j] = kr[d];
		}
		for (int d = 0; m < TILE && d < hs; d++)
			memset(o + (size_t)d * TILE + m, 0, (size_t)(TILE - m) * sizeof *o);
	}
}

void attn_scores_ref(float *S, int lds, const float *q, int ldq, const float *k, int ldk, int rows,
		     int kn, int hs)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < kn; j++) {
			float a = 0.0f;
			for (int d = 0; d < hs; d++)
				a = fmaf(q[(size_t)i * ldq + d], k[(size_t)j * ldk + d], a);
			S[(size_t)i * lds + j] = a;
		}
}

void attn_mix_ref(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int rows,
		  int kn, int hs)
{
	for (int i = 0; i < rows; i++)
		for (int c = 0; c < hs; c++) {
			float a = 0.0f;
			for (int j = 0; j < kn; j++)
				a = fmaf(P[(size_t)i * ldp + j], v[(size_t)j * ldv + c], a);
			y[(size_t)i * ldy + c] = a;
		}
}

/* Lanes 0..m-1 of v to p (all of them when m >= the width). */
AV_INLINE void put8(float *p, v8f v, int m)
{
	if (m >= 8)
		store8(p, v);
	else if (m > 0)
		store_part(p, m, v);
}

/* x in every lane: one vbroadcastss (GCC builds a vector written as a list
 * of x lane by lane; clang has no __builtin_shuffle). */
AV_INLINE v8f splat8(float x)
{
#if defined(__clang__)
	return (v8f){x, x, x, x, x, x, x, x};
#else
	return __builtin_shuffle((v8f){x}, (v8i){0});
#endif
}

AV_INLINE v16f splat16(float x)
{
#if defined(__clang__)
	return (v16f){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
#else
	return __builtin_shuffle((v16f){x}, (v16i){0});
#endif
}

AV_INLINE void put16(float *p, v16f v, int m)
{
	if (m >= 16) {
		store16(p, v);
	} else {
		put8(p, half16(v, 0), m);
		put8(p + 8, half16(v, 1), m - 8);
	}
}

/* ---- the portable level (ATTNVIEW_SIMD=portable) ----
 *
 * The same chains of fused multiply-adds as plain loops: scalar vfmadd
 * under the x86-64-v3 clone, libm's correctly rounded fmaf in the
 * baseline, the bits of the vector code either way. */

static _Atomic unsigned long plain_calls;

unsigned long attn_products_plain_calls(void)
{
	return atomic_load_explicit(&plain_calls, memory_order_relaxed);
}

AV_CLONES static void scores_plain(float *S, int lds, const float *q, int ldq, const float *kt,
				   int rows, int kn, int hs, float *rmax)
{
	atomic_fetch_add_explicit(&plain_calls, 1, memory_order_relaxed);
	for (int i = 0; i < rows; i++) {
		float m = -INFINITY;
		for (int j = 0; j < kn; j++) {
			const float *kp = kt + (size_t)(j / TILE) * TILE * hs + j % TILE;
			float a = 0.0f;
			for (int d = 0; d < hs; d++)
				a = __builtin_fmaf(q[(size_t)i * ldq + d], kp[(size_t)d * TILE], a);
			S[(size_t)i * lds + j] = a;
			m = a > m ? a : m;
		}
		if (rmax)
			rmax[i] = m;
	}
}

AV_CLONES static void mix_plain(float *y, int ldy, const float *P, int ldp, const float *v, int ldv,
				int rows, int kn, int hs, const float *sc)
{
	atomic_fetch_add_explicit(&plain_calls, 1, memory_order_relaxed);
	for (int i = 0; i < rows; i++)
		for (int c = 0; c < hs; c++) {
			float a = 0.0f;
			for (int j = 0; j < kn; j++)
				a = __builtin_fmaf(P[(size_t)i * ldp + j], v[(size_t)j * ldv + c],
						   a);
			if (sc)
				a *= sc[i];
			y[(size_t)i * ldy + c] = a;
		}
}

/* The kernels' sums zeroed one by one, in registers: an initialiser list
 * (= {{{0}}}) made GCC zero a copy of them in memory too, a rep stos of
 * 1.5 KB each tile (doc/speed.md). */
#define ZERO_SUMS(a, R, W, T)                                                                      \
	_Pragma("GCC unroll 12") for (int i_ = 0; i_ < (R); i_++)                                  \
	    _Pragma("GCC unroll 4") for (int c_ = 0; c_ < (W); c_++)(a)[i_][c_] = (T)              \
	{                                                                                          \
		0                                                                                  \
	}

/* ---- scores ---- */

/* The kernels below are inlined with constant row counts r (and widths w),
 * so that their sums stay in registers and the loops over rows unroll. */

/* 16 lanes: r <= 6 query rows against one tile of 64 keys (24 sums in
 * registers), m of its keys stored. */
AV_INLINE void scores_tile16(float *S, int lds, const float *q, int ldq, const float *kp, int r,
			     int m, int hs, v16f *rm)
{
	v16f a[6][4];
	ZERO_SUMS(a, 6, 4, v16f);
	for (int d = 0; d < hs; d++, kp += TILE) {
		v16f k0 = load16(kp), k1 = load16(kp + 16), k2 = load16(kp + 32),
		     k3 = load16(kp + 48);
#pragma GCC unroll 6
		for (int i = 0; i < 6; i++) {
			if (i >= r)
				break;
			v16f b = splat16(q[(size_t)i * ldq + d]);
			a[i][0] = fma16(b, k0, a[i][0]);
			a[i][1] = fma16(b, k1, a[i][1]);
			a[i][2] = fma16(b, k2, a[i][2]);
			a[i][3] = fma16(b, k3, a[i][3]);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < 6; i++) {
		if (i >= r)
			break;
		float *s = S + (size_t)i * lds;
		for (int c = 0; c < 4; c++)
			put16(s + 16 * c, a[i][c], m - 16 * c);
		if (rm && m == TILE) /* rm first: a NaN sum is passed over */
			rm[i] =
			    max16(max16(max16(max16(rm[i], a[i][0]), a[i][1]), a[i][2]), a[i][3]);
	}
}

/* With rm, each row's largest score: of a whole tile, from the sums in
 * registers into rm[i] (16 lane maxima, reduced at the end); of a last tile
 * of m < 64 keys (whose other lanes hold zeros), from the m just stored.
 * The largest is one number whatever the order: the bits softmax_row would
 * find. */
AV_INLINE void tail_max(float *rmax, const float *S, int lds, int rows, int m)
{
	for (int i = 0; i < rows; i++)
		for (int k = 0; k < m; k++)
			rmax[i] =
			    S[(size_t)i * lds + k] > rmax[i] ? S[(size_t)i * lds + k] : rmax[i];
}

AV_WIDE static void scores16(float *S, int lds, const float *q, int ldq, const float *kt, int rows,
			     int kn, int hs, float *rmax)
{
	v16f rm[ATTN_MAX_ROWS];
	for (int i = 0; rmax && i < rows; i++) {
		rm[i] = (v16f){0} - INFINITY;
		rmax[i] = -INFINITY;
	}
	for (int j = 0; j < kn; j += TILE) {
		const float *kp = kt + (size_t)j * hs;
		const int m = kn - j < TILE ? kn - j : TILE;
		int i = 0;
		v16f *mx = rmax ? rm : NULL;
		for (; i + 6 <= rows; i += 6)
			scores_tile16(S + (size_t)i * lds + j, lds, q + (size_t)i * ldq, ldq, kp, 6,
				      m, hs, mx ? mx + i : NULL);
		for (; i + 4 <= rows; i += 4)
			scores_tile16(S + (size_t)i * lds + j, lds, q + (size_t)i * ldq, ldq, kp, 4,
				      m, hs, mx ? mx + i : NULL);
		for (; i < rows; i++)
			scores_tile16(S + (size_t)i * lds + j, lds, q + (size_t)i * ldq, ldq, kp, 1,
				      m, hs, mx ? mx + i : NULL);
		if (rmax && m < TILE)
			tail_max(rmax, S + j, lds, rows, m);
	}
	for (int i = 0; rmax && i < rows; i++) {
		float m = hmax8(max8(half16(rm[i], 0), half16(rm[i], 1)));
		rmax[i] = m > rmax[i] ? m : rmax[i];
	}
}

/* 8 lanes: r <= 6 query rows against 16 keys of a tile (12 sums). */
AV_INLINE void scores_tile8(float *S, int lds, const float *q, int ldq, const float *kp, int r,
			    int m, int hs, v8f *rm)
{
	v8f a[6][2];
	ZERO_SUMS(a, 6, 2, v8f);
	for (int d = 0; d < hs; d++, kp += TILE) {
		v8f k0 = load8(kp), k1 = load8(kp + 8);
#pragma GCC unroll 6
		for (int i = 0; i < 6; i++) {
			if (i >= r)
				break;
			v8f b = splat8(q[(size_t)i * ldq + d]);
			a[i][0] = fma8(b, k0, a[i][0]);
			a[i][1] = fma8(b, k1, a[i][1]);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < 6; i++) {
		if (i >= r)
			break;
		put8(S + (size_t)i * lds, a[i][0], m);
		put8(S + (size_t)i * lds + 8, a[i][1], m - 8);
		if (rm && m == 16)
			rm[i] = max8(max8(rm[i], a[i][0]), a[i][1]);
	}
}

AV_CLONES static void scores8(float *S, int lds, const float *q, int ldq, const float *kt, int rows,
			      int kn, int hs, float *rmax)
{
	v8f rm[ATTN_MAX_ROWS];
	for (int i = 0; rmax && i < rows; i++) {
		rm[i] = (v8f){0} - INFINITY;
		rmax[i] = -INFINITY;
	}
	for (int j = 0; j < kn; j += 16) {
		const float *kp = kt + (size_t)(j / TILE) * TILE * hs + j % TILE;
		const int m = kn - j < 16 ? kn - j : 16;
		int i = 0;
		v8f *mx = rmax ? rm : NULL;
		for (; i + 6 <= rows; i += 6)
			scores_tile8(S + (size_t)i * lds + j, lds, q + (size_t)i * ldq, ldq, kp, 6,
				     m, hs, mx ? mx + i : NULL);
		for (; i + 4 <= rows; i += 4)
			scores_tile8(S + (size_t)i * lds + j, lds, q + (size_t)i * ldq, ldq, kp, 4,
				     m, hs, mx ? mx + i : NULL);
		for (; i < rows; i++)
			scores_tile8(S + (size_t)i * lds + j, lds, q + (size_t)i * ldq, ldq, kp, 1,
				     m, hs, mx ? mx + i : NULL);
		if (rmax && m < 16)
			tail_max(rmax, S + j, lds, rows, m);
	}
	for (int i = 0; rmax && i < rows; i++) {
		float m = hmax8(rm[i]);
		rmax[i] = m > rmax[i] ? m : rmax[i];
	}
}

void attn_scores(float *S, int lds, const float *q, int ldq, const float *kt, int rows, int kn,
		 int hs)
{
	attn_scores_max(S, lds, q, ldq, kt, rows, kn, hs, NULL);
}

void attn_scores_max(float *S, int lds, const float *q, int ldq, const float *kt, int rows, int kn,
		     int hs, float *rmax)
{
	for (int r0 = 0; r0 < rows; r0 += ATTN_MAX_ROWS) {
		int r = rows - r0 < ATTN_MAX_ROWS ? rows - r0 : ATTN_MAX_ROWS;
		float *S0 = S + (size_t)r0 * lds, *m0 = rmax ? rmax + r0 : NULL;
		const float *q0 = q + (size_t)r0 * ldq;
		if (av_plain_products())
			scores_plain(S0, lds, q0, ldq, kt, r, kn, hs, m0);
		else if (av_wide())
			scores16(S0, lds, q0, ldq, kt, r, kn, hs, m0);
		else
			scores8(S0, lds, q0, ldq, kt, r, kn, hs, m0);
	}
}

/* ---- weights times values ---- */

/* 16 lanes: r <= 12 query rows by w <= 2 vectors of 16 columns (24 sums). */
AV_INLINE void mix_tile16(float *y, int ldy, const float *P, int ldp, const float *v, int ldv,
			  int r, int w, int kn, const float *sc)
{
	v16f a[12][2];
	ZERO_SUMS(a, 12, 2, v16f);
	for (int j = 0; j < kn; j++, v += ldv) {
		v16f v0 = load16(v), v1 = w > 1 ? load16(v + 16) : v0;
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++) {
			if (i >= r)
				break;
			v16f b = splat16(P[(size_t)i * ldp + j]);
			a[i][0] = fma16(b, v0, a[i][0]);
			if (w > 1)
				a[i][1] = fma16(b, v1, a[i][1]);
		}
	}
#pragma GCC unroll 12
	for (int i = 0; i < 12; i++) {
		if (i >= r)
			break;
		if (sc) {
			a[i][0] *= sc[i];
			a[i][1] *= sc[i];
		}
		store16(y + (size_t)i * ldy, a[i][0]);
		if (w > 1)
			store16(y + (size_t)i * ldy + 16, a[i][1]);
	}
}

/* 8 lanes: r <= 6 query rows by w <= 2 vectors of 8 columns. */
AV_INLINE void mix_tile8(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int r,
			 int w, int kn, const float *sc)
{
	v8f a[6][2];
	ZERO_SUMS(a, 6, 2, v8f);
	for (int j = 0; j < kn; j++, v += ldv) {
		v8f v0 = load8(v), v1 = w > 1 ? load8(v + 8) : v0;
#pragma GCC unroll 6
		for (int i = 0; i < 6; i++) {
			if (i >= r)
				break;
			v8f b = splat8(P[(size_t)i * ldp + j]);
			a[i][0] = fma8(b, v0, a[i][0]);
			if (w > 1)
				a[i][1] = fma8(b, v1, a[i][1]);
		}
	}
#pragma GCC unroll 6
	for (int i = 0; i < 6; i++) {
		if (i >= r)
			break;
		if (sc) {
			a[i][0] *= sc[i];
			a[i][1] *= sc[i];
		}
		store8(y + (size_t)i * ldy, a[i][0]);
		if (w > 1)
			store8(y + (size_t)i * ldy + 8, a[i][1]);
	}
}

/* Rows of y's columns from v's (w vectors of 8), r rows at a time. */
#define MIX_ROWS8(r, w)                                                                            \
	for (; i + (r) <= rows; i += (r))                                                          \
	mix_tile8(y + (size_t)i * ldy, ldy, P + (size_t)i * ldp, ldp, v, ldv, r, w, kn,            \
		  sc ? sc + i : NULL)

AV_INLINE void mix_cols8(float *y, int ldy, const float *P, int ldp, const float *v, int ldv,
			 int rows, int kn, int w, const float *sc)
{
	int i = 0;
	if (w == 2) {
		MIX_ROWS8(6, 2);
		MIX_ROWS8(4, 2);
		MIX_ROWS8(1, 2);
	} else {
		MIX_ROWS8(6, 1);
		MIX_ROWS8(4, 1);
		MIX_ROWS8(1, 1);
	}
}

/* Columns c.. of every row, 8 lanes at a time. */
AV_INLINE void mix_rest8(float *y, int ldy, const float *P, int ldp, const float *v, int ldv,
			 int rows, int kn, int c, int hs, const float *sc)
{
	for (int w; c < hs; c += 8 * w) {
		w = hs - c >= 16 ? 2 : 1;
		mix_cols8(y + c, ldy, P, ldp, v + c, ldv, rows, kn, w, sc);
	}
}

AV_WIDE static void mix16(float *y, int ldy, const float *P, int ldp, const float *v, int ldv,
			  int rows, int kn, int hs, const float *sc)
{
	int c = 0;
	for (int w; c + 16 <= hs; c += 16 * w) {
		w = hs - c >= 32 ? 2 : 1;
		float *yc = y + c;
		const float *vc = v + c;
		int i = 0;
#define MIX_ROWS16(r, w)                                                                           \
	for (; i + (r) <= rows; i += (r))                                                          \
	mix_tile16(yc + (size_t)i * ldy, ldy, P + (size_t)i * ldp, ldp, vc, ldv, r, w, kn,         \
		   sc ? sc + i : NULL)
		if (w == 2) {
			MIX_ROWS16(12, 2);
			MIX_ROWS16(4, 2);
			MIX_ROWS16(1, 2);
		} else {
			MIX_ROWS16(12, 1);
			MIX_ROWS16(4, 1);
			MIX_ROWS16(1, 1);
		}
#undef MIX_ROWS16
	}
	mix_rest8(y, ldy, P, ldp, v, ldv, rows, kn, c, hs, sc); /* a last 8 columns */
}

AV_CLONES static void mix8(float *y, int ldy, const float *P, int ldp, const float *v, int ldv,
			   int rows, int kn, int hs, const float *sc)
{
	mix_rest8(y, ldy, P, ldp, v, ldv, rows, kn, 0, hs, sc);
}

void attn_mix(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int rows, int kn,
	      int hs)
{
	attn_mix_scaled(y, ldy, P, ldp, v, ldv, rows, kn, hs, NULL);
}

void attn_mix_scaled(float *y, int ldy, const float *P, int ldp, const float *v, int ldv, int rows,
		     int kn, int hs, const float *rscale)
{
	if (av_plain_products())
		mix_plain(y, ldy, P, ldp, v, ldv, rows, kn, hs, rscale);
	else if (av_wide())
		mix16(y, ldy, P, ldp, v, ldv, rows, kn, hs, rscale);
	else
		mix8(y, ldy, P, ldp, v, ldv, rows, kn, hs, rscale);
}
