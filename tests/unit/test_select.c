/* What a map shows (src/core/select.c): one name per kind, read back by the
 * parser, and sel_matrix giving each kind's matrix as the functions it stands
 * for give it (analysis.c), the rollout kept between calls on one result. */
#include "attnview/analysis.h"
#include "attnview/select.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void names(void)
{
	const char *want[SEL_NKINDS] = {"head", "mean", "max", "rollout", "all", "contributions",
					"overview"};
	for (int k = 0; k < SEL_NKINDS; k++) {
		sel_kind back;
		CHECKF(strcmp(sel_name((sel_kind)k), want[k]) == 0, "kind %d: %s", k,
		       sel_name((sel_kind)k));
		CHECK(sel_parse(want[k], &back) && back == (sel_kind)k);
	}
	sel_kind k = SEL_HEAD;
	CHECK(!sel_parse("heads", &k) && !sel_parse("", &k) && k == SEL_HEAD);
	CHECK(strcmp(sel_name(SEL_NKINDS), "?") == 0);
	CHECK(strcmp(sel_names_list(" or "),
		     "head, mean, max, rollout, all, contributions or overview") == 0);
	/* The view's Tab: the summaries follow each other. */
	CHECK(SEL_FIRST_SUMMARY == SEL_MEAN && SEL_NSUMMARIES == 4 &&
	      SEL_FIRST_SUMMARY + SEL_NSUMMARIES - 1 == SEL_ALL);
	CHECK(sel_has_head(SEL_HEAD) && sel_has_head(SEL_CONTRIB) && !sel_has_head(SEL_MEAN));
	CHECK(sel_has_layer(SEL_ROLLOUT) && !sel_has_layer(SEL_ALL) &&
	      !sel_has_layer(SEL_OVERVIEW));
}

static void matrices(void)
{
	/* 2 layers x 2 heads of 2 x 2, as test_analysis has them. */
	float att[16] = {1, 0, 0, 1, /* L0 H0 */ 0, 1, 1, 0, /* L0 H1 */
			 0.5f, 0.5f, 0.5f, 0.5f, /* L1 H0 */ 1, 0, 1, 0 /* L1 H1 */};
	attn_result r;
	memset(&r, 0, sizeof r);
	r.n = 2, r.layers = 2, r.heads = 2, r.att = att;
	sel_cache c = {0};
	av_error err;
	float out[4], want[8], work[4];

	CHECK(sel_matrix(out, &r, SEL_HEAD, 1, 1, &c, &err));
	check_close("head L1 H1", out, att + 12, 4, 0);
	CHECK(sel_matrix(out, &r, SEL_OVERVIEW, 0, 1, &c, &err));
	check_close("an overview tile is its head", out, att + 4, 4, 0);
	for (sel_kind k = SEL_MEAN; k <= SEL_ALL; k++) {
		if (k == SEL_ROLLOUT)
			continue;
		CHECK(sel_matrix(out, &r, k, 1, 0, &c, &err));
		aggregate_heads(want, &r, 1, k);
		check_close(sel_name(k), out, want, 4, 0);
	}
	attention_rollout(want, work, &r);
	CHECK(sel_matrix(out, &r, SEL_ROLLOUT, 1, 0, &c, &err));
	check_close("rollout through layer 1", out, want + 4, 4, 0);
	/* Kept: the same result again does not make it anew... */
	const float *kept = c.roll;
	c.roll[4] = 42;
	CHECK(sel_matrix(out, &r, SEL_ROLLOUT, 1, 0, &c, &err) && out[0] == 42 && c.roll == kept);
	/* ... until it is forgotten (a result recycled at the same address). */
	sel_cache_forget(&c);
	CHECK(sel_matrix(out, &r, SEL_ROLLOUT, 1, 0, &c, &err));
	check_close("rollout made anew", out, want + 4, 4, 0);

	/* Contributions: A[i][j] |v_j W_O|, each row as shares of its sum. */
	CHECK(!sel_matrix(out, &r, SEL_CONTRIB, 1, 0, &c, &err) && strstr(err.msg, "norms"));
	float norms[8] = {1, 1, 1, 1, /* L1 H0: */ 1, 3, /* L1 H1: */ 2, 2};
	r.value_norms = norms;
	CHECK(sel_matrix(out, &r, SEL_CONTRIB, 1, 0, &c, &err));
	float contrib[4] = {0.25f, 0.75f, 0.25f, 0.75f};
	check_close("contributions of L1 H0", out, contrib, 4, 1e-7f);
	/* A causal result: masked keys contribute nothing. */
	r.causal = true;
	CHECK(sel_matrix(out, &r, SEL_CONTRIB, 1, 0, &c, &err));
	float causal[4] = {1, 0, 0.25f, 0.75f};
	check_close("causal contributions", out, causal, 4, 1e-7f);
	CHECK(!sel_matrix(out, &r, SEL_NKINDS, 0, 0, &c, &err));
	sel_cache_finish(&c);
	CHECK(!c.roll && !c.work && c.cap == 0);
}

int main(void)
{
	names();
	matrices();
	return test_summary("select");
}
