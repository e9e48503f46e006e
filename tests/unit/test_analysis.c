/* Head statistics, top keys, ranks and pooling (src/core/analysis.c) on
 * matrices whose answers can be worked out by hand (the head roles:
 * test_roles.c). */
#include "attnview/analysis.h"
#include "harness.h"

#include <math.h>
#include <string.h>

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

static void stats_identity_and_uniform(void)
{
	/* Every query on itself: no entropy, no distance, all maxima on self. */
	float eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
	attn_matrix a = {eye, 3, false, 0};
	head_stats s;
	head_stats_compute(&s, &a);
	CHECKF(near(s.entropy, 0) && near(s.distance, 0) && near(s.self, 1),
	       "identity: entropy %g distance %g self %g", s.entropy, s.distance, s.self);
	CHECKF(near(s.max_entropy, log(3.0)), "identity: max entropy %g", s.max_entropy);

	/* Uniform rows: the entropy is the maximum; distance (0+1+2, 1+0+1,
	 * 2+1+0)/3 per row = (1 + 2/3 + 1)/3; the first maximum of each row
	 * is key 0: self for row 0, previous for row 1, neither for row 2. */
	float u[9];
	for (int i = 0; i < 9; i++)
		u[i] = 1.0f / 3;
	attn_matrix b = {u, 3, false, 0};
	head_stats_compute(&s, &b);
	CHECKF(near(s.entropy, log(3.0)) && near(s.max_entropy, log(3.0)),
	       "uniform: entropy %g of %g", s.entropy, s.max_entropy);
	CHECKF(near(s.distance, (1.0 + 2.0 / 3 + 1.0) / 3), "uniform: distance %g", s.distance);
	CHECKF(near(s.self, 1.0 / 3) && near(s.prev, 1.0 / 3) && near(s.next, 0),
	       "uniform: self %g prev %g next %g", s.self, s.prev, s.next);

	/* A layer's max of heads: rows that do not sum to 1 (every head on
	 * a different key). Their entropy and distance are those of the row
	 * as a distribution: of (0.9, 0.9, 0.9) the uniform row's, never
	 * above log 3 (it was 2.97 > 1.10) nor, with rows above 1 on one
	 * key, below 0. */
	float mx[9] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
	attn_matrix c = {mx, 3, false, 0};
	head_stats_compute(&s, &c);
	CHECKF(near(s.entropy, log(3.0)) && near(s.distance, (1.0 + 2.0 / 3 + 1.0) / 3),
	       "max of heads: entropy %g of %g, distance %g", s.entropy, s.max_entropy,
	       s.distance);
	float big[9] = {1.6f, 0, 0, 0, 1.6f, 0, 0, 0, 1.6f};
	attn_matrix d = {big, 3, false, 0};
	head_stats_compute(&s, &d);
	CHECKF(near(s.entropy, 0) && near(s.distance, 0), "summed rows: entropy %g distance %g",
	       s.entropy, s.distance);
}

static void stats_causal_previous(void)
{
	/* Causal, each query on the key before it (row 0 on itself): the
	 * masked keys count neither in the entropy's maximum nor anywhere. */
	float w[16] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
	attn_matrix a = {w, 4, true, 0};
	head_stats s;
	head_stats_compute(&s, &a);
	double maxent = (log(1.0) + log(2.0) + log(3.0) + log(4.0)) / 4;
	CHECKF(near(s.max_entropy, maxent), "causal: max entropy %g, want %g", s.max_entropy,
	       maxent);
	CHECKF(near(s.prev, 0.75) && near(s.self, 0.25) && near(s.next, 0),
	       "previous-token head: prev %g self %g next %g", s.prev, s.self, s.next);
	CHECKF(near(s.distance, 0.75), "previous-token head: distance %g", s.distance);
	CHECK(attn_masked(&a, 1, 2) && !attn_masked(&a, 2, 1) && !attn_masked(&a, 2, 2));
}

static void top_keys_and_rank(void)
{
	/* Row 1: keys 2 and 0 tie at 0.3 (key 0 first, by position), 3 has 0.4. */
	float w[16] = {0, 0, 0, 0, 0.3f, 0.0f, 0.3f, 0.4f, 0, 0, 0, 0, 0, 0, 0, 0};
	attn_matrix a = {w, 4, false, 0};
	int keys[4];
	int n = row_top_keys(&a, 1, 3, keys);
	CHECKF(n == 3 && keys[0] == 3 && keys[1] == 0 && keys[2] == 2,
	       "top 3 of row 1: %d keys: %d %d %d", n, keys[0], keys[1], keys[2]);
	n = row_top_keys(&a, 1, 1, keys);
	CHECKF(n == 1 && keys[0] == 3, "top 1 of row 1: %d", keys[0]);
	int vis;
	CHECKF(row_rank(&a, 1, 3, &vis) == 1 && vis == 4, "rank of the largest");
	CHECKF(row_rank(&a, 1, 0, NULL) == 2 && row_rank(&a, 1, 2, NULL) == 2,
	       "tied weights share a rank");
	CHECKF(row_rank(&a, 1, 1, NULL) == 4, "rank of the smallest: %d", row_rank(&a, 1, 1, NULL));

	/* Causal: row 1 sees keys 0 and 1 only; asking for 4 gives 2. */
	float c[9] = {1, 0, 0, 0.25f, 0.75f, 0, 0.2f, 0.3f, 0.5f};
	attn_matrix b = {c, 3, true, 0};
	n = row_top_keys(&b, 1, 4, keys);
	CHECKF(n == 2 && keys[0] == 1 && keys[1] == 0, "causal row 1: %d keys", n);
	CHECKF(row_rank(&b, 1, 0, &vis) == 2 && vis == 2, "causal rank: %d visible", vis);
}

static void pooling(void)
{
	/* 4 x 4 into 2 x 2: block means. */
	float w[16];
	for (int i = 0; i < 16; i++)
		w[i] = (float)i / 16;
	attn_matrix a = {w, 4, false, 0};
	float out[4];
	uint8_t m[4];
	pool_grid(out, m, &a, 2, 2, POOL_MEAN);
	float want[4] = {(0 + 1 + 4 + 5) / 64.0f, (2 + 3 + 6 + 7) / 64.0f,
			 (8 + 9 + 12 + 13) / 64.0f, (10 + 11 + 14 + 15) / 64.0f};
	check_close("pooled block means", out, want, 4, 1e-6f);
	CHECK(!m[0] && !m[1] && !m[2] && !m[3]);

	/* Causal: the top-right block is all masked; the diagonal blocks count
	 * their masked cell as 0 in the mean. */
	float c[16] = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 0.2f, 0.2f, 0.6f, 0, 0.1f, 0.1f, 0.1f, 0.7f};
	attn_matrix b = {c, 4, true, 0};
	pool_grid(out, m, &b, 2, 2, POOL_MEAN);
	CHECKF(m[1] && out[1] == 0 && !m[0] && !m[2] && !m[3], "masked block flags %d %d %d %d",
	       m[0], m[1], m[2], m[3]);
	CHECKF(near(out[0], 2.0 / 4) && near(out[3], 1.4 / 4), "causal means %g %g", out[0],
	       out[3]);

	/* Max pooling keeps a diagonal a line: a 6 x 6 identity into 3 x 3
	 * gives 1 on the diagonal blocks (the mean would give 0.5), 0 off it. */
	float eye[36] = {0};
	for (int i = 0; i < 6; i++)
		eye[i * 7] = 1;
	attn_matrix e = {eye, 6, false, 0};
	float pooled[9];
	uint8_t pm[9];
	pool_grid(pooled, pm, &e, 3, 3, POOL_MAX);
	float want_eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
	check_close("max-pooled identity", pooled, want_eye, 9, 0);
	pool_grid(pooled, pm, &b, 2, 2, POOL_MAX);
	CHECKF(pm[1] && near(pooled[0], 1) && near(pooled[3], 0.7), "causal max pooling %g %g",
	       pooled[0], pooled[3]);

	/* One sample per cell is the matrix itself. */
	float same[16];
	uint8_t ms[16];
	pool_grid(same, ms, &a, 4, 4, POOL_MEAN);
	check_close("pooling 4x4 into 4x4", same, w, 16, 0);
}

static void patterns(void)
{
	head_stats s = {.column = -1};
	s.prev = 0.6;
	CHECK(strcmp(head_pattern(&s), "previous") == 0);
	s.prev = 0.2, s.next = 0.7;
	CHECK(strcmp(head_pattern(&s), "next") == 0);
	s.next = 0, s.self = 0.5;
	CHECK(strcmp(head_pattern(&s), "self") == 0);
	s.self = 0.1, s.distance = 3.3, s.n = 24;
	CHECK(strcmp(head_pattern(&s), "local") == 0);
	/* far and spread: the built-in model's layer 1 on the 24-character poem */
	s.distance = 7.4, s.nowhere = 13;
	CHECK(strcmp(head_pattern(&s), "broad") == 0);
	/* far and sharp, on no one key: no pattern to name ("broad" said
	 * the rows spread their weight, which they do not) */
	s.nowhere = 2;
	CHECK(strcmp(head_pattern(&s), "unclear") == 0);
	/* one key for half the rows: a column, however far */
	s.column = 6, s.column_rows = 12;
	CHECK(strcmp(head_pattern(&s), "column") == 0);
	s.column = 0;
	CHECK(strcmp(head_pattern(&s), "first") == 0);
	s.column_rows = 11;
	CHECK(strcmp(head_pattern(&s), "unclear") == 0);
	s.column = -1, s.distance = 2.7, s.n = 8, s.nowhere = 8; /* uniform on 8 characters */
	CHECK(strcmp(head_pattern(&s), "broad") == 0);
	/* From a matrix: seven rows of eight on key 5, one on itself; and
	 * every row even (nowhere). */
	float w[64];
	for (int i = 0; i < 64; i++)
		w[i] = i / 8 == 7 ? (i % 8 == 7 ? 0.93f : 0.01f) : (i % 8 == 5 ? 0.93f : 0.01f);
	attn_matrix a = {w, 8, false, 0};
	head_stats h;
	head_stats_compute(&h, &a);
	CHECKF(h.column == 5 && h.column_rows == 7 && h.nowhere == 0 &&
		   strcmp(head_pattern(&h), "column") == 0,
	       "a column: key %d, %d rows, %d nowhere", h.column, h.column_rows, h.nowhere);
	for (int i = 0; i < 64; i++)
		w[i] = 0.125f;
	head_stats_compute(&h, &a);
	CHECKF(h.nowhere == 8 && strcmp(head_pattern(&h), "broad") == 0, "even: %d nowhere",
	       h.nowhere);
	/* Two keys tied at the top of every row: no key it looks at (the
	 * labeller's rule), not a column on the first of them */
	for (int i = 0; i < 64; i++)
		w[i] = i % 8 == 2 || i % 8 == 5 ? 0.47f : 0.01f;
	head_stats_compute(&h, &a);
	CHECKF(h.nowhere == 8 && h.column < 0 && strcmp(head_pattern(&h), "broad") == 0,
	       "ties: %d nowhere, column %d", h.nowhere, h.column);
	/* A causal model's first row has no choice: not counted for key 0 */
	for (int i = 0; i < 64; i++)
		w[i] = i % 8 > i / 8 ? 0 : i / 8 == 0 ? 1 : i % 8 == i / 8 ? 0.93f : 0.01f;
	attn_matrix c = {w, 8, true, 0};
	head_stats_compute(&h, &c);
	CHECKF(h.column != 0 && strcmp(head_pattern(&h), "self") == 0, "causal: column %d %s",
	       h.column, head_pattern(&h));
}

/* Tokens from an ASCII string. */
static void aggregates_and_rollout(void)
{
	/* 2 layers x 2 heads of 2 x 2. */
	float att[16] = {1, 0, 0, 1, /* L0 H0 */ 0, 1, 1, 0, /* L0 H1 */
			 0.5f, 0.5f, 0.5f, 0.5f, /* L1 H0 */ 1, 0, 1, 0 /* L1 H1 */};
	attn_result r;
	memset(&r, 0, sizeof r);
	r.n = 2, r.layers = 2, r.heads = 2, r.att = att;
	float out[4];
	aggregate_heads(out, &r, 0, SEL_MEAN);
	float mean0[4] = {0.5f, 0.5f, 0.5f, 0.5f};
	check_close("mean of layer 0", out, mean0, 4, 1e-7f);
	aggregate_heads(out, &r, 1, SEL_MAX);
	float max1[4] = {1, 0.5f, 1, 0.5f};
	check_close("max of layer 1", out, max1, 4, 1e-7f);
	aggregate_heads(out, &r, 7, SEL_ALL);
	float all[4] = {0.625f, 0.375f, 0.625f, 0.375f};
	check_close("mean of all heads", out, all, 4, 1e-7f);

	/* Rollout: A_0 = W_0/2 + I/2 = [[.75 .25] [.25 .75]];
	 * W_1 = [[.75 .25] [.75 .25]], A_1 = [[.875 .125] [.375 .625]];
	 * R_1 = A_1 A_0 = [[.6875 .3125] [.4375 .5625]]. */
	float roll[8], work[4];
	attention_rollout(roll, work, &r);
	float want[8] = {0.75f, 0.25f, 0.25f, 0.75f, 0.6875f, 0.3125f, 0.4375f, 0.5625f};
	check_close("rollout", roll, want, 8, 1e-6f);
}

static void toks(token *t, const char *s)
{
	for (int i = 0; s[i]; i++)
		t[i] = (token){.cp = (uint32_t)(unsigned char)s[i], .id = 3 + s[i], .width = 1};
}

static void words(void)
{
	token t[16];
	toks(t, "Time flies, ok");
	word_span w[16];
	int nw = words_split(w, t, 14);
	/* "Time " "flies" ", " "ok": spaces go with what comes before them. */
	CHECKF(nw == 4, "%d words", nw);
	CHECK(w[0].start == 0 && w[0].end == 5);   /* "Time " */
	CHECK(w[1].start == 5 && w[1].end == 10);  /* "flies" */
	CHECK(w[2].start == 10 && w[2].end == 12); /* ", " */
	CHECK(w[3].start == 12 && w[3].end == 14); /* "ok" */
	toks(t, " a");
	nw = words_split(w, t, 2);
	CHECK(nw == 2 && w[0].end == 1 && w[1].start == 1); /* leading space, then "a" */

	bool marks[5] = {false, false, true, false, true};
	nw = words_from_marks(w, marks, 5);
	CHECK(nw == 3 && w[0].end == 2 && w[1].start == 2 && w[1].end == 4 && w[2].end == 5);

	/* 3 tokens, words {0,1} {2}: W[0][0] = mean over rows 0,1 of A[i][0]+A[i][1]. */
	float a3[9] = {0.5f, 0.3f, 0.2f, 0.1f, 0.1f, 0.8f, 0.3f, 0.3f, 0.4f};
	attn_matrix a = {a3, 3, false, 0};
	word_span ws[2] = {{0, 2}, {2, 3}};
	float wo[4];
	words_aggregate(wo, &a, ws, 2);
	float want[4] = {(0.8f + 0.2f) / 2, (0.2f + 0.8f) / 2, 0.6f, 0.4f};
	check_close("word attention", wo, want, 4, 1e-6f);
	CHECK(near(wo[0] + wo[1], 1) && near(wo[2] + wo[3], 1));
}

static void differences(void)
{
	float x[4] = {0.5f, 0.5f, 0.2f, 0.8f}, y[9] = {1, 0, 0, 0.4f, 0.6f, 0, 0, 0, 1};
	attn_matrix a = {x, 2, false, 0}, b = {y, 3, true, 0};
	float d[4];
	matrix_difference(d, &a, &b, 2);
	float want[4] = {-0.5f, 0.5f, -0.2f, 0.2f};
	check_close("difference by position", d, want, 4, 1e-6f);
}

static void result_head(void)
{
	/* attn_result_head finds [layer][head] in the result's layout. */
	float att[2 * 3 * 4];
	for (int i = 0; i < 24; i++)
		att[i] = (float)i;
	attn_result r;
	memset(&r, 0, sizeof r);
	r.n = 2;
	r.layers = 2;
	r.heads = 3;
	r.att = att;
	attn_matrix a = attn_result_head(&r, 1, 2);
	CHECK(a.n == 2 && !a.causal && attn_at(&a, 0, 0) == 20 && attn_at(&a, 1, 0) == 22);
}

int main(void)
{
	stats_identity_and_uniform();
	stats_causal_previous();
	top_keys_and_rank();
	pooling();
	patterns();
	aggregates_and_rollout();
	words();
	differences();
	result_head();
	return test_summary("analysis");
}
