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
	attn_matrix a = {eye, 3, false};
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
	attn_matrix b = {u, 3, false};
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
	attn_matrix a = {w, 4, true};
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
	attn_matrix a = {w, 4, false};
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
	attn_matrix b = {c, 3, true};
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
	attn_matrix a = {w, 4, false};
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
	attn_matrix b = {c, 4, true};
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
	attn_matrix e = {eye, 6, false};
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
	result_head();
	return test_summary("analysis");
}
