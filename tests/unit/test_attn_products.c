/* The attention's own products (attn_products.h) against their plain-loop
 * twins, to the bit: every score and every mixed value is the same chain of
 * fused multiply-adds whatever the vector width, the rows' count, the keys'
 * tiles or the columns left over, so any difference is a wrong lane, a row
 * or a key dropped, or a sum taken in another order. Shapes cover 1 to 70
 * query rows (the kernels' blocks of 12, 6 and 4 rows and the single rows
 * after them), keys ending inside a tile of 16 and of 64 (more keys
 * packed than the scores ask for, as in a causal block), and head sizes of
 * 8 to 72 (the columns left after the 32-wide blocks). Nothing is
 * written outside the output. The rows' largest scores (attn_scores_max)
 * are the largest the loops give, also where every score is negative and
 * the zeros past the last key must not count; a mix scaled by rows
 * (attn_mix_scaled) is the loops' mix times each row's factor, rounded
 * once; and the softmax in two steps (softmax_row_exp, then scale_row by
 * 1 / sum) gives softmax_row's bits. Run as is, with ATTNVIEW_NO_AVX512=1
 * and with ATTNVIEW_SIMD=portable (meson.build), so both widths and the
 * portable loops are held to the reference loops. */
#include "harness.h"

#include "attnview/attn_products.h"
#include "attnview/ops.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAD   5 /* floats of canary past each output row */
#define GUARD 123.25f

static uint64_t state = 88172645463325252ull;

/* Random floats of mixed sign and size (some exact zeros), so the sums
 * round at every step. */
static float rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	if (state % 17 == 0)
		return 0.0f;
	double u = (double)(state >> 11) / 9007199254740992.0;
	return (float)((u - 0.5) * ldexp(1.0, (int)(state % 7) - 3));
}

static void fill(float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = rnd();
}

static bool canaries_ok(const float *o, int rows, int cols, int ld)
{
	for (int i = 0; i < rows; i++)
		for (int c = cols; c < ld; c++)
			if (o[(size_t)i * ld + c] != GUARD)
				return false;
	return true;
}

/* The first cols floats of each of rows rows, ld apart, alike to the bit. */
static bool same_rows(const float *a, const float *b, int rows, int cols, int ld)
{
	for (int i = 0; i < rows; i++)
		if (memcmp(a + (size_t)i * ld, b + (size_t)i * ld, (size_t)cols * sizeof *a) != 0)
			return false;
	return true;
}

static void set_canaries(float *o, int rows, int cols, int ld)
{
	for (int i = 0; i < rows; i++)
		for (int c = cols; c < ld; c++)
			o[(size_t)i * ld + c] = GUARD;
}

/* One shape: q and k rows ldq = ldk = 3 hs + 1 apart (strided, as the
 * pass's q | k | v rows), keys packed, then both products. */
/* The largest of each row of S0 against rmax; false on the first miss. */
static bool maxima_ok(const float *S0, int lds, const float *rmax, int rows, int kn)
{
	for (int i = 0; i < rows; i++) {
		float m = -INFINITY;
		for (int j = 0; j < kn; j++)
			m = S0[(size_t)i * lds + j] > m ? S0[(size_t)i * lds + j] : m;
		if (memcmp(&m, &rmax[i], sizeof m) != 0)
			return false;
	}
	return true;
}

/* neg: every score negative (q >= 0, k <= 0), so a zero lane past the last
 * key would be the largest. */
static void check_shape(int rows, int kn, int hs, bool neg)
{
	const int ld = 3 * hs + 1, lds = kn + PAD, ldy = hs + PAD, ldp = kn + 3;
	/* The keys packed are more than the scores ask for, as a causal
	 * block's (keys 0..kn-1 of the n packed). */
	const int nk = kn + 37;
	float *q = malloc((size_t)rows * ld * sizeof *q), *k = malloc((size_t)nk * ld * sizeof *k);
	float *kt = malloc(attn_packed_keys_floats(nk, hs) * sizeof *kt);
	float *S = malloc((size_t)rows * lds * sizeof *S),
	      *S0 = malloc((size_t)rows * lds * sizeof *S0);
	float *P = malloc((size_t)rows * ldp * sizeof *P);
	float *y = malloc((size_t)rows * ldy * sizeof *y),
	      *y0 = malloc((size_t)rows * ldy * sizeof *y0);
	if (!q || !k || !kt || !S || !S0 || !P || !y || !y0) {
		CHECK(!"out of memory");
		goto out;
	}
	fill(q, (size_t)rows * ld);
	fill(k, (size_t)nk * ld);
	fill(P, (size_t)rows * ldp);
	for (size_t i = 0; neg && i < (size_t)rows * ld; i++)
		q[i] = fabsf(q[i]) + 0.125f;
	for (size_t i = 0; neg && i < (size_t)nk * ld; i++)
		k[i] = -fabsf(k[i]) - 0.125f;
	/* And a NaN score in every row, key 3's, which the maxima pass over. */
	if (neg && kn > 3)
		k[3 * ld] = NAN;
	attn_pack_keys(kt, k, ld, nk, hs);
	set_canaries(S, rows, kn, lds);
	attn_scores(S, lds, q, ld, kt, rows, kn, hs);
	attn_scores_ref(S0, lds, q, ld, k, ld, rows, kn, hs);
	CHECKF(same_rows(S, S0, rows, kn, lds),
	       "scores of %d rows, %d keys, hs %d differ from the loops", rows, kn, hs);
	CHECKF(canaries_ok(S, rows, kn, lds),
	       "scores of %d rows, %d keys, hs %d: written past key %d", rows, kn, hs, kn);
	float *rmax = malloc((size_t)rows * sizeof *rmax), *sc = malloc((size_t)rows * sizeof *sc);
	if (!rmax || !sc) {
		CHECK(!"out of memory");
		free(rmax), free(sc);
		goto out;
	}
	set_canaries(S, rows, kn, lds);
	attn_scores_max(S, lds, q, ld, kt, rows, kn, hs, rmax);
	CHECKF(same_rows(S, S0, rows, kn, lds) && canaries_ok(S, rows, kn, lds),
	       "scores with their maxima, %d rows, %d keys, hs %d: not the scores alone", rows, kn,
	       hs);
	CHECKF(maxima_ok(S0, lds, rmax, rows, kn),
	       "the rows' largest scores, %d rows, %d keys, hs %d%s: not the loops'", rows, kn, hs,
	       neg ? ", all negative" : "");
	/* The values are the keys' rows shifted by hs (the pass's v beside k). */
	set_canaries(y, rows, hs, ldy);
	attn_mix(y, ldy, P, ldp, k + hs, ld, rows, kn, hs);
	attn_mix_ref(y0, ldy, P, ldp, k + hs, ld, rows, kn, hs);
	CHECKF(same_rows(y, y0, rows, hs, ldy),
	       "mix of %d rows, %d keys, hs %d differs from the loops", rows, kn, hs);
	CHECKF(canaries_ok(y, rows, hs, ldy),
	       "mix of %d rows, %d keys, hs %d: written past column %d", rows, kn, hs, hs);
	for (int i = 0; i < rows; i++) {
		sc[i] = 1.0f / (1.0f + (float)(i % 9) * 0.37f);
		for (int c = 0; c < hs; c++)
			y0[(size_t)i * ldy + c] *= sc[i];
	}
	attn_mix_scaled(y, ldy, P, ldp, k + hs, ld, rows, kn, hs, sc);
	CHECKF(same_rows(y, y0, rows, hs, ldy) && canaries_ok(y, rows, hs, ldy),
	       "mix of %d rows, %d keys, hs %d, scaled by rows: not the loops' times the factor",
	       rows, kn, hs);
	free(rmax), free(sc);
out:
	free(q), free(k), free(kt), free(S), free(S0), free(P), free(y), free(y0);
}

/* softmax_row_exp then scale_row by 1 / sum: softmax_row's bits, with the
 * largest score given and found, in place and apart, a row at a time of
 * every length to 70 and part of it masked. */
static void check_softmax_steps(void)
{
	float s[70], a[70], b[70], e[70];
	for (int n = 1; n <= 70; n++)
		for (int valid = 1; valid <= n; valid += valid < 20 ? 1 : 13) {
			fill(s, (size_t)n);
			for (int j = 0; j < n; j++)
				s[j] *= 16.0f;
			float mx = -INFINITY;
			for (int j = 0; j < valid; j++)
				mx = s[j] > mx ? s[j] : mx;
			memcpy(a, s, sizeof s);
			softmax_row(a, a, n, valid, 0.35f);
			for (int given = 0; given < 4; given++) {
				/* given & 1: the maximum given; given & 2: in place */
				memcpy(b, s, sizeof s);
				float *out = given & 2 ? b : e;
				float sum =
				    softmax_row_exp(out, b, n, valid, 0.35f, given & 1 ? mx : NAN);
				scale_row(out, out, valid, 1.0f / sum);
				CHECKF(!memcmp(a, out, (size_t)n * sizeof *a) &&
					   (given & 2 || isnan(b[n - 1]) == (valid < n)),
				       "softmax in two steps, %d keys, %d visible, max %s, %s: not "
				       "softmax_row's bits",
				       n, valid, given & 1 ? "given" : "found",
				       given & 2 ? "in place" : "apart");
			}
		}
}

int main(void)
{
	check_softmax_steps();
	/* The packing: key j's dimension d at [j / 64][d][j % 64], zeros after
	 * the last key. */
	{
		const int n = 70, hs = 8;
		float k[70 * 8], kt[2 * 64 * 8];
		for (int i = 0; i < n * hs; i++)
			k[i] = (float)i;
		CHECK(attn_packed_keys_floats(n, hs) == 2 * 64 * 8);
		attn_pack_keys(kt, k, hs, n, hs);
		CHECK(kt[3 * 64 + 5] == k[5 * hs + 3]);
		CHECK(kt[64 * 8 + 7 * 64 + 69 - 64] == k[69 * hs + 7]);
		CHECK(kt[64 * 8 + 2 * 64 + 6] == 0.0f && kt[2 * 64 * 8 - 1] == 0.0f);
	}
	const char *level = getenv("ATTNVIEW_SIMD");
	const bool plain = level && strcmp(level, "portable") == 0 && attn_products_run(8);
	if (plain)
		CHECKF(strncmp(ops_vector_code(), "portable", 8) == 0,
		       "ATTNVIEW_SIMD=portable: the code is \"%s\"", ops_vector_code());
	if (!attn_products_run(8)) {
		/* A CPU without FMA, or a build with one version of the vector
		 * code: the pass keeps OpenBLAS, and the fast products would
		 * spend a library call on each multiply-add. */
		CHECK(!attn_products_run(32));
		return test_summary("attn_products");
	}
	CHECK(attn_products_run(32) && attn_products_run(48) && !attn_products_run(20) &&
	      !attn_products_run(0));
	const int hss[] = {8, 16, 24, 32, 40, 48, 56, 64, 72};
	const int kns[] = {1, 7, 15, 16, 17, 63, 64, 65, 130};
	for (size_t a = 0; a < sizeof hss / sizeof *hss; a++)
		for (size_t b = 0; b < sizeof kns / sizeof *kns; b++)
			for (int rows = 1; rows <= 70; rows += rows < 14 ? 1 : 7)
				check_shape(rows, kns[b], hss[a], false);
	for (size_t b = 0; b < sizeof kns / sizeof *kns; b++)
		for (int rows = 1; rows <= 70; rows += 23)
			check_shape(rows, kns[b], 32, true);
	/* The view's shape: a block of 64 query rows, 512 keys, hs 32; and
	 * more rows than attn_scores_max takes at a time. */
	check_shape(64, 512, 32, false);
	check_shape(150, 100, 16, true);
	/* The plain loops made the products under ATTNVIEW_SIMD=portable, and
	 * only then. */
	CHECKF(plain == (attn_products_plain_calls() > 0), "%lu products by the plain loops",
	       attn_products_plain_calls());
	return test_summary("attn_products");
}
