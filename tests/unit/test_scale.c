/* Colour scales (src/render/scale.c): where a weight lands on the ramp under
 * each scale, the colour bar's ticks, and the names the options take. */
#include "attnview/scale.h"
#include "harness.h"

#include <math.h>
#include <string.h>

static bool near(float a, float b)
{
	return fabsf(a - b) < 1e-6f;
}

static void positions(void)
{
	/* A broad head: weights between 0.2 and 0.3 and a row whose largest
	 * weight is 0.25. */
	float w[9] = {0.3f, 0.3f, 0.4f, 0.2f, 0.5f, 0.3f, 0.25f, 0.25f, 0.25f};
	attn_matrix a = {w, 3, false, 0};
	float rmax[3];
	scale s;

	scale_init(&s, SCALE_FIXED, &a, NULL);
	CHECK(near(scale_pos(&s, 0, 0.3f), 0.3f) && near(scale_pos(&s, 0, 1), 1));

	scale_init(&s, SCALE_HEAD, &a, NULL);
	CHECKF(near(s.max, 0.5f), "head max %g", s.max);
	CHECK(near(scale_pos(&s, 1, 0.5f), 1) && near(scale_pos(&s, 2, 0.25f), 0.5f));

	scale_init(&s, SCALE_ROW, &a, rmax);
	CHECK(near(scale_pos(&s, 2, 0.25f), 1)); /* every cell of a uniform row is its max */
	CHECK(near(scale_pos(&s, 0, 0.2f), 0.5f));
	CHECK(near(scale_pos(&s, 1, 0.25f), 0.5f));

	scale_init(&s, SCALE_LOG, &a, NULL);
	CHECK(near(scale_pos(&s, 0, 1), 1) && near(scale_pos(&s, 0, 0.1f), 2.0f / 3));
	CHECK(near(scale_pos(&s, 0, 0.001f), 0) && scale_pos(&s, 0, 1e-6f) == 0);
	CHECK(scale_pos(&s, 0, 0) == 0 && scale_pos(&s, 0, NAN) == 0);
}

static void masked_maxima(void)
{
	/* Causal: row 0 sees only itself; the masked 0.9 (which a buggy caller
	 * might leave there) takes no part in any maximum. */
	float w[4] = {0.4f, 0.9f, 0.3f, 0.7f};
	attn_matrix a = {w, 2, true, 0};
	float rmax[2];
	scale s;
	scale_init(&s, SCALE_HEAD, &a, NULL);
	CHECKF(near(s.max, 0.7f), "head max over visible cells: %g", s.max);
	scale_init(&s, SCALE_ROW, &a, rmax);
	CHECK(near(rmax[0], 0.4f) && near(rmax[1], 0.7f));
	/* An all-zero head divides by 1, not 0. */
	float z[4] = {0};
	attn_matrix b = {z, 2, false, 0};
	scale_init(&s, SCALE_HEAD, &b, NULL);
	CHECK(s.max == 1 && scale_pos(&s, 0, 0) == 0);
}

static void ticks(void)
{
	float w[4] = {0.5f, 0.5f, 0.2f, 0.8f};
	attn_matrix a = {w, 2, false, 0};
	scale s;
	scale_tick t[8];
	scale_init(&s, SCALE_FIXED, &a, NULL);
	int n = scale_ticks(&s, t, 8);
	CHECKF(n == 5 && strcmp(t[0].label, "0") == 0 && strcmp(t[1].label, ".25") == 0 &&
		   strcmp(t[4].label, "1") == 0 && near(t[2].t, 0.5f),
	       "fixed ticks: %d, %s %s %s", n, t[0].label, t[1].label, t[4].label);
	scale_init(&s, SCALE_HEAD, &a, NULL);
	n = scale_ticks(&s, t, 8);
	CHECKF(n == 3 && strcmp(t[1].label, ".4") == 0 && strcmp(t[2].label, ".8") == 0,
	       "head ticks: %s %s", t[1].label, t[2].label);
	scale_init(&s, SCALE_LOG, &a, NULL);
	n = scale_ticks(&s, t, 8);
	CHECKF(n == 4 && strcmp(t[0].label, ".001") == 0 && strcmp(t[3].label, "1") == 0 &&
		   near(t[1].t, 1.0f / 3),
	       "log ticks: %s .. %s", t[0].label, t[3].label);
	/* The bar's tick positions land where scale_pos puts those weights. */
	CHECK(near(scale_pos(&s, 0, 0.01f), t[1].t));
	CHECK(scale_ticks(&s, t, 2) == 2);
}

static void pooling(void)
{
	/* A 4 x 4 identity under the fixed scale: pooled into 2 x 2 by the
	 * maximum, the diagonal stays at full strength; into 8 x 8, every cell
	 * repeats as a 2 x 2 block. */
	float eye[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	attn_matrix a = {eye, 4, true, 0};
	scale s;
	scale_init(&s, SCALE_FIXED, &a, NULL);
	float out[64];
	uint8_t m[64];
	scale_pool(out, m, &a, &s, 2, 2);
	CHECKF(out[0] == 1 && out[3] == 1 && out[2] == 0 && m[1] && !m[2],
	       "2x2 pooled identity: %g %g %g %g, masked %d %d", out[0], out[1], out[2], out[3],
	       m[1], m[2]);
	scale_pool(out, m, &a, &s, 8, 8);
	int bad = 0;
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 8; c++) {
			bool diag = r / 2 == c / 2, hidden = c / 2 > r / 2;
			bad += out[r * 8 + c] != (diag ? 1.0f : 0.0f) || m[r * 8 + c] != hidden;
		}
	CHECKF(bad == 0, "8x8 upsampled identity: %d cells wrong", bad);
	/* The row scale pools positions, not weights: row maxima of 0.2 and 0.8
	 * both reach the top of the ramp. */
	float w[4] = {0.2f, 0.1f, 0.8f, 0.2f};
	attn_matrix b = {w, 2, false, 0};
	float rmax[2];
	scale_init(&s, SCALE_ROW, &b, rmax);
	scale_pool(out, m, &b, &s, 2, 1);
	CHECKF(near(out[0], 1) && near(out[1], 1), "row-scaled pooling %g %g", out[0], out[1]);
}

/* scale_pool as its header defines it, cell by cell: the largest scale_pos
 * of a block's visible cells, or under lift the sharp cell's or the mean
 * lift. */
static float pool_by_cells(const attn_matrix *a, const scale *s, int q0, int q1, int k0, int k1,
			   bool *any)
{
	float best = 0, sharp = -1;
	double lift = 0;
	int seen = 0;
	for (int q = q0; q < q1; q++)
		for (int k = k0; k < k1; k++) {
			if (attn_masked(a, q, k))
				continue;
			float w = attn_at(a, q, k), t = scale_pos(s, q, w);
			float keys = s->row_max	 ? s->row_max[q]
				     : s->causal ? (float)(q + 1)
						 : s->max;
			best = t > best ? t : best;
			if (w >= SCALE_LIFT_SHARP && w * keys >= 2 && t > sharp)
				sharp = t;
			lift += w * keys;
			seen++;
		}
	*any = seen > 0;
	if (s->kind != SCALE_LIFT || !seen)
		return best;
	float mean = (float)(lift / seen);
	return sharp >= 0 ? sharp : scale_lift_pos(s, mean);
}

/* The pooling takes a block's largest weight and places it on the ramp
 * once: the same numbers, to the bit, as placing every cell, on random
 * heads of every scale, causal or not, pooled smaller and larger. */
static void pooling_by_block(void)
{
	uint64_t x = 7;
	int bad = 0, samples = 0;
	for (int trial = 0; trial < 120; trial++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int n = 1 + (int)(x >> 58), rows = 1 + (int)(x >> 40) % 20;
		int cols = 1 + (int)(x >> 30) % 30;
		bool causal = trial % 2;
		float w[64 * 64], keys[64], out[600];
		uint8_t m[600];
		for (int q = 0; q < n; q++) {
			float sum = 0;
			for (int k = 0; k < n; k++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				float u = (float)(x >> 40) / (float)(1 << 24);
				w[q * n + k] =
				    causal && k > q ? 0 : powf(u, 1 + (float)(trial % 7));
				sum += w[q * n + k];
			}
			for (int k = 0; k < n; k++)
				w[q * n + k] = sum > 0 ? w[q * n + k] / sum : 0;
		}
		attn_matrix a = {w, n, causal, 0};
		for (int kind = 0; kind <= SCALE_DIFF; kind++) {
			scale s;
			scale_init(&s, (scale_kind)kind, &a, keys);
			scale_pool(out, m, &a, &s, rows, cols);
			for (int r = 0; r < rows; r++)
				for (int c = 0; c < cols; c++) {
					int q0 = r * n / rows, q1 = (r + 1) * n / rows;
					int k0 = c * n / cols, k1 = (c + 1) * n / cols;
					q1 = q1 > q0 ? q1 : q0 + 1;
					k1 = k1 > k0 ? k1 : k0 + 1;
					bool any;
					float want = pool_by_cells(&a, &s, q0, q1, k0, k1, &any);
					bad += out[r * cols + c] != want || m[r * cols + c] != !any;
					samples++;
				}
		}
	}
	CHECKF(bad == 0, "%d of %d pooled samples differ from the cells' maximum", bad, samples);
}

static void differences(void)
{
	/* A difference of -0.4 .. 0.2: 0 in the middle, -0.4 at the bottom. */
	float d[4] = {0.2f, -0.4f, 0.0f, 0.1f};
	attn_matrix a = {d, 2, false, 0};
	scale s;
	scale_init(&s, SCALE_DIFF, &a, NULL);
	CHECK(near(s.max, 0.4f) && near(scale_pos(&s, 0, 0), 0.5f));
	CHECK(near(scale_pos(&s, 0, -0.4f), 0) && near(scale_pos(&s, 0, 0.2f), 0.75f));
	scale_tick t[8];
	int n = scale_ticks(&s, t, 8);
	CHECKF(n == 5 && strcmp(t[0].label, "-.4") == 0 && strcmp(t[2].label, "0") == 0 &&
		   strcmp(t[4].label, ".4") == 0,
	       "diff ticks %s %s %s", t[0].label, t[2].label, t[4].label);
}

/* The lift scale's ends follow the text's length: on 24 characters a row's
 * whole weight on one key (lift 24) is the top of the ramp and the bar's top
 * tick says 24; lifts near uniform sit where they do on a long text; from
 * 316 characters on the scale is 10^-2.5 .. 10^2.5, ticks .01 .. 100. */
static void lift_lengths(void)
{
	static float w24[24 * 24], w400[400 * 400];
	attn_matrix a24 = {w24, 24, false, 0}, a400 = {w400, 400, false, 0};
	scale s24, s400;
	scale_init(&s24, SCALE_LIFT, &a24, NULL);
	scale_init(&s400, SCALE_LIFT, &a400, NULL);
	CHECK(near(scale_pos(&s24, 0, 1), 1) &&
	      near(scale_pos(&s24, 0, 0.5f),
		   0.5f + 0.5f * (0.2f + 0.8f * (log10f(12) - 0.5f) / (log10f(24) - 0.5f))));
	CHECK(near(scale_pos(&s24, 0, 2.0f / 24), scale_pos(&s400, 0, 2.0f / 400)));
	CHECK(near(scale_pos(&s24, 0, 0.5f / 24), scale_pos(&s400, 0, 0.5f / 400)));
	CHECK(near(scale_pos(&s400, 0, 10.0f / 400), 0.5f + 0.5f / SCALE_LIFT_DECADES));
	CHECK(scale_pos(&s400, 0, 1) == 1 && near(scale_pos(&s400, 0, 316.2278f / 400), 1));
	scale_tick t[8];
	int n = scale_ticks(&s24, t, 8);
	CHECKF(n == 4 && strcmp(t[0].label, ".1") == 0 && strcmp(t[1].label, "1") == 0 &&
		   strcmp(t[2].label, "10") == 0 && strcmp(t[3].label, "24") == 0 &&
		   near(t[3].t, 1),
	       "lift ticks at 24: %d, %s .. %s", n, t[0].label, t[n - 1].label);
	n = scale_ticks(&s400, t, 8);
	CHECKF(n == 5 && strcmp(t[0].label, ".01") == 0 && strcmp(t[4].label, "100") == 0 &&
		   near(t[4].t, 0.9f),
	       "lift ticks at 400: %d, %s .. %s", n, t[0].label, t[n - 1].label);
}

/* Lift: a weight against uniform attention over the keys the row sees. A
 * uniform row is the middle of the ramp at any length and under the causal
 * mask; near uniform (1/3.16 .. 3.16 times) 10 times is 2.5 steps of 5, at
 * every length; the ends are the text's largest lift, n (at least 10, at
 * most 316), so that a row's whole weight on one key is the far colour.
 * Pooled, a broad block shows its mean lift (the largest cell of noise does
 * not), a key with a quarter of a row's attention shows as itself. */
static void lifts(void)
{
	float w[9] = {0.5f, 0.25f, 0.25f, 0.25f, 0.5f, 0.25f, 0.1f, 0.1f, 0.8f};
	attn_matrix a = {w, 3, false, 0};
	float keys[3];
	scale s;
	scale_init(&s, SCALE_LIFT, &a, keys);
	CHECK(scale_diverging(SCALE_LIFT) && !scale_diverging(SCALE_LOG));
	CHECK(near(keys[0], 3) && near(scale_pos(&s, 0, 1.0f / 3), 0.5f));
	CHECK(near(scale_pos(&s, 0, 3.0f / 3), 0.5f + 0.5f * log10f(3) / SCALE_LIFT_DECADES));
	CHECK(near(scale_pos(&s, 0, 10.0f / 3), 1)); /* 3 keys: the range is 1/10 .. 10 */
	CHECK(scale_pos(&s, 0, 0) == 0 && scale_pos(&s, 0, NAN) == 0);
	float c[4] = {1, 0.9f, 0.5f, 0.5f};
	attn_matrix b = {c, 2, true, 0}; /* row 0 sees 1 key, row 1 two */
	scale_init(&s, SCALE_LIFT, &b, NULL);
	CHECK(near(scale_pos(&s, 0, 1), 0.5f) && near(scale_pos(&s, 1, 0.5f), 0.5f));
	scale_tick t[8];
	int n = scale_ticks(&s, t, 8);
	CHECKF(n == 3 && strcmp(t[0].label, ".1") == 0 && strcmp(t[1].label, "1") == 0 &&
		   strcmp(t[2].label, "10") == 0 && near(t[1].t, 0.5f) && near(t[2].t, 1),
	       "lift ticks: %d, %s %s %s", n, t[0].label, t[1].label, t[2].label);
	CHECK(near(scale_pos(&s, 1, 50.0f), 1)); /* 50 of 2 keys' 0.5: 100 times, clamped */
	lift_lengths();
	/* 4 x 4, broad: weights .15 .. .35 in every row; pooled into one cell,
	 * the mean lift 1 (the middle), not the largest cell (lift 1.4). */
	float u[16] = {.35f, .15f, .25f, .25f, .15f, .35f, .25f, .25f,
		       .25f, .25f, .35f, .15f, .25f, .25f, .15f, .35f};
	attn_matrix ub = {u, 4, false, 0};
	float k4[4], out[4];
	uint8_t m[4];
	scale_init(&s, SCALE_LIFT, &ub, k4);
	scale_pool(out, m, &ub, &s, 1, 1);
	CHECKF(near(out[0], 0.5f), "pooled broad head: %g", out[0]);
	/* An identity: each block with a diagonal cell shows its lift (4). */
	float eye[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	attn_matrix e = {eye, 4, false, 0};
	scale_init(&s, SCALE_LIFT, &e, k4);
	scale_pool(out, m, &e, &s, 2, 2);
	CHECKF(near(out[0], scale_pos(&s, 0, 1)) && near(out[3], out[0]) && out[1] == 0,
	       "pooled identity: %g %g %g", out[0], out[1], out[3]);
}

/* Tick labels fit the room the bar has, rounded, never cut (-.04
 * for -0.048). */
static void tick_labels(void)
{
	char l[16];
	scale_tick_label(l, -0.048, 5);
	CHECKF(strcmp(l, "-.048") == 0, "%s", l);
	scale_tick_label(l, -0.048, 4);
	CHECKF(strcmp(l, "-.05") == 0, "%s", l);
	scale_tick_label(l, 0.25, 3);
	CHECKF(strcmp(l, ".25") == 0, "%s", l);
	scale_tick_label(l, -0.125, 3);
	CHECKF(strcmp(l, "-.1") == 0, "%s", l);
	CHECK(scale_tick_label(l, 100, 3) && strcmp(l, "100") == 0);
	/* .001 has no 3-column form: no label, not ".00". */
	CHECK(!scale_tick_label(l, 0.001, 3) && scale_tick_label(l, 0.001, 4));
}

static void names(void)
{
	for (int k = 0; k < SCALE_NKINDS; k++) {
		scale_kind got;
		CHECK(scale_parse(scale_name((scale_kind)k), &got) && got == (scale_kind)k);
	}
	scale_kind got;
	CHECK(!scale_parse("linear", &got));
	CHECK(strcmp(scale_unit(SCALE_ROW), "weight") != 0);
}

int main(void)
{
	positions();
	masked_maxima();
	ticks();
	pooling();
	pooling_by_block();
	differences();
	lifts();
	tick_labels();
	names();
	return test_summary("scale");
}
