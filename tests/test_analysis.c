/* Head statistics, top keys, ranks and pooling (src/core/analysis.c) on
 * matrices whose answers can be worked out by hand. */
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
	head_stats s = {0};
	s.prev = 0.6;
	CHECK(strcmp(head_pattern(&s), "previous") == 0);
	s.prev = 0.2, s.next = 0.7;
	CHECK(strcmp(head_pattern(&s), "next") == 0);
	s.next = 0, s.self = 0.5;
	CHECK(strcmp(head_pattern(&s), "self") == 0);
	s.self = 0.1, s.distance = 3.3, s.n = 24;
	CHECK(strcmp(head_pattern(&s), "local") == 0);
	s.distance = 7.4; /* the built-in model's layer 1 on the 24-character poem */
	CHECK(strcmp(head_pattern(&s), "broad") == 0);
	s.distance = 2.7, s.n = 8; /* a uniform head on 8 characters */
	CHECK(strcmp(head_pattern(&s), "broad") == 0);
}

/* Tokens from an ASCII string. */
static void toks(token *t, const char *s)
{
	for (int i = 0; s[i]; i++)
		t[i] = (token){.cp = (uint32_t)(unsigned char)s[i], .id = 3 + s[i], .width = 1};
}

static void roles(void)
{
	token t[8];
	role_scores rs;
	/* Previous-token head on 4 tokens: 3 of 4 rows on the key before. */
	float prev[16] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
	attn_matrix a = {prev, 4, false, 0};
	toks(t, "wxyz");
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_PREVIOUS && near(rs.score, 0.75) && near(rs.s[ROLE_PREVIOUS], 0.75),
	       "previous head: %s %g", role_name(rs.role), rs.score);
	CHECK(near(rs.s[ROLE_SELF], 0.25) && near(rs.s[ROLE_FIRST], 0.5) && near(rs.s[ROLE_NEXT], 0));
	CHECK(near(rs.s[ROLE_LOCAL], 1)); /* a previous head is local too: previous wins */
	CHECK(near(rs.s[ROLE_BROAD], 0)); /* every row sure: no entropy */

	/* Every row on key 0: the first-token (sink) head. */
	float first[16] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
	a.w = first;
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_FIRST && near(rs.score, 1), "first head: %s", role_name(rs.role));

	/* Uniform: broad, normalised entropy 1. */
	float u[16];
	for (int i = 0; i < 16; i++)
		u[i] = 0.25f;
	a.w = u;
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_BROAD && near(rs.score, 1) && near(rs.s[ROLE_SELF], 0.25),
	       "uniform head: %s %g", role_name(rs.role), rs.score);

	/* "a b,c": every row on the space (key 1) — delimiter 1 against a
	 * uniform share of 2/5. */
	float d[25] = {0};
	for (int i = 0; i < 5; i++)
		d[i * 5 + 1] = 1;
	attn_matrix b = {d, 5, false, 0};
	toks(t, "a b,c");
	head_roles(&rs, &b, t);
	CHECKF(rs.role == ROLE_DELIMITER && near(rs.score, 1), "delimiter head: %s",
	       role_name(rs.role));

	/* "abab", each row on the other copy of its character: duplicate. */
	float dup[16] = {0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0};
	a.w = dup;
	toks(t, "abab");
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_DUPLICATE && near(rs.score, 1) && near(rs.s[ROLE_INDUCTION], 0),
	       "duplicate head: %s, induction %g", role_name(rs.role), rs.s[ROLE_INDUCTION]);

	/* "abab", each row on the token after an earlier copy of itself: rows
	 * 0 (a -> 3), 2 (a -> 1), 3 (b -> 2); row 1 has none and looks at itself. */
	float ind[16] = {0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
	a.w = ind;
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_INDUCTION && near(rs.score, 0.75), "induction head: %s %g",
	       role_name(rs.role), rs.s[ROLE_INDUCTION]);

	/* Each row even over the keys within 2 of it: a local window, with no
	 * neighbour above 1/3. */
	float loc[64] = {0};
	for (int i = 0; i < 8; i++) {
		int lo = i - 2 < 0 ? 0 : i - 2, hi = i + 2 > 7 ? 7 : i + 2;
		for (int j = lo; j <= hi; j++)
			loc[i * 8 + j] = 1.0f / (float)(hi - lo + 1);
	}
	attn_matrix c = {loc, 8, false, 0};
	toks(t, "stuvwxyz");
	head_roles(&rs, &c, t);
	CHECKF(rs.role == ROLE_LOCAL && near(rs.score, 1), "local head: %s %g (previous %g)",
	       role_name(rs.role), rs.score, rs.s[ROLE_PREVIOUS]);
	CHECK(strcmp(role_name(ROLE_LOCAL), "local") == 0);
	char text[128];
	role_sentence(&rs, false, false, text, sizeof text);
	CHECKF(strcmp(text, "each character looks at its neighbours, two places either side") == 0,
	       "%s", text);

	/* The causal window, each row even over itself and the two before: the
	 * sentence speaks of no neighbour to the right, which it cannot see. */
	float cloc[64] = {0};
	for (int i = 0; i < 8; i++) {
		int lo = i - 2 < 0 ? 0 : i - 2;
		for (int j = lo; j <= i; j++)
			cloc[i * 8 + j] = 1.0f / (float)(i - lo + 1);
	}
	attn_matrix cc = {cloc, 8, true, 0};
	head_roles(&rs, &cc, t);
	role_sentence(&rs, true, false, text, sizeof text);
	CHECKF(rs.role == ROLE_LOCAL && strcmp(text, "each character looks at its neighbours, "
						     "the two before it") == 0,
	       "causal local head: %s, %s", role_name(rs.role), text);
}

/* A matrix with every row on one key: key_of(i) for row i. */
static void one_key_rows(float *w, int n, int (*key_of)(int, int), int arg)
{
	for (int i = 0; i < n * n; i++)
		w[i] = 0;
	for (int i = 0; i < n; i++)
		w[i * n + key_of(i, arg)] = 1;
}

static int two_right(int i, int n)
{
	return i + 2 < n ? i + 2 : i;
}

static int mirror_of(int i, int n)
{
	return n - 1 - i;
}

static int key_three(int i, int n)
{
	(void)i, (void)n;
	return 3;
}

/* In "abc,def." each row on the same place of the other line. */
static int parallel_of(int i, int n)
{
	(void)n;
	return i < 4 ? i + 4 : i - 4;
}

/* In "ab cdef": each row on the first character of its word. */
static int word_start_of(int i, int n)
{
	(void)n;
	return i < 3 ? 0 : 3;
}

static int one_left(int i, int n)
{
	(void)n;
	return i > 0 ? i - 1 : 0;
}

/* Word start, causal: every row on its word's first character is labelled
 * so, with the sentence; a head on the previous character scores 0 (the
 * rows counted stand two or more into their word); a text of short words
 * has too few rows for a score. */
static void word_start(void)
{
	token t[8];
	role_scores rs;
	float w[64];
	char text[256];
	attn_matrix a = {w, 8, true, 0};
	toks(t, "ab cdefg");
	one_key_rows(w, 8, word_start_of, 8);
	head_roles(&rs, &a, t);
	/* The rows counted are e, f and g (two or more into "cdefg"; "ab" is
	 * too short): all on c. */
	CHECKF(rs.role == ROLE_WORDSTART && near(rs.score, 1) &&
		   near(rs.uniform[ROLE_WORDSTART], (1.0 / 6 + 1.0 / 7 + 1.0 / 8) / 3),
	       "word start: %s %g (uniform %g)", role_name(rs.role), rs.score,
	       rs.uniform[ROLE_WORDSTART]);
	role_sentence(&rs, true, false, text, sizeof text);
	CHECKF(strcmp(text, "each character looks at the first character of its word (after "
			    "the last space or punctuation mark)") == 0,
	       "%s", text);
	one_key_rows(w, 8, one_left, 8);
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_PREVIOUS && near(rs.s[ROLE_WORDSTART], 0),
	       "previous: %s, word start %g", role_name(rs.role), rs.s[ROLE_WORDSTART]);
	toks(t, "ab cd ef");
	one_key_rows(w, 8, word_start_of, 8);
	head_roles(&rs, &a, t);
	CHECK(near(rs.s[ROLE_WORDSTART], 0));
}

static void new_roles(void)
{
	token t[8];
	role_scores rs;
	float w[64];
	char text[256];
	attn_matrix a = {w, 8, false, 0};
	toks(t, "stuvwxyz");

	one_key_rows(w, 8, two_right, 8);
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_OFFSET && rs.offset == 2 && near(rs.score, 1),
	       "two to the right: %s, k %d, %g", role_name(rs.role), rs.offset, rs.score);
	role_label(&rs, false, text, sizeof text);
	CHECKF(strcmp(text, "2 right") == 0, "label %s", text);
	role_sentence(&rs, false, false, text, sizeof text);
	CHECKF(strcmp(text, "each character looks 2 places to its right") == 0, "%s", text);

	one_key_rows(w, 8, mirror_of, 8);
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_MIRROR && rs.mirror == 7 && near(rs.score, 1),
	       "mirror: %s, c %d, %g", role_name(rs.role), rs.mirror, rs.score);

	one_key_rows(w, 8, key_three, 8);
	head_roles(&rs, &a, t);
	role_label(&rs, false, text, sizeof text);
	CHECKF(rs.role == ROLE_KEYWORD && rs.nkeys == 1 && rs.keys[0] == 'v' &&
		   strcmp(text, "keyword v") == 0,
	       "every row on v: %s (%s)", role_name(rs.role), text);

	toks(t, "abc,def.");
	one_key_rows(w, 8, parallel_of, 8);
	head_roles(&rs, &a, t);
	CHECKF(rs.role == ROLE_PARALLEL && near(rs.s[ROLE_PARALLEL], 1),
	       "the same place of the other line: %s %g", role_name(rs.role),
	       rs.s[ROLE_PARALLEL]);

	/* "ab中文cd国家": each row even over the keys of its own script. */
	const uint32_t cps[8] = {'a', 'b', 0x4E2D, 0x6587, 'c', 'd', 0x56FD, 0x5BB6};
	for (int i = 0; i < 8; i++)
		t[i] = (token){.cp = cps[i], .id = 3 + i, .width = 1};
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			w[i * 8 + j] = (cps[i] < 128) == (cps[j] < 128) ? 0.25f : 0;
	head_roles(&rs, &a, t);
	CHECKF(near(rs.s[ROLE_SCRIPT], 1) && rs.role == ROLE_SCRIPT, "same script: %s %g",
	       role_name(rs.role), rs.s[ROLE_SCRIPT]);
	/* One script only: no score. */
	toks(t, "abcdefgh");
	head_roles(&rs, &a, t);
	CHECK(near(rs.s[ROLE_SCRIPT], 0));
}

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
	roles();
	new_roles();
	word_start();
	aggregates_and_rollout();
	words();
	differences();
	result_head();
	return test_summary("analysis");
}
