/* The score split by source (score_split.h) against the
 * PyTorch reference (tests/golden/split_*.golden, from
 * tests/reference/gen_split_golden.py, in float64); its promise that the
 * terms add up to the raw score; the parts' order and names; then the same
 * numbers in the real program's --dump --query I --key J (ATTNVIEW_BIN).
 *
 * Tolerances from the bounds of tests/lib/bound.c (man 5 attnview, NOTES,
 * Accuracy): t is the bound of the cell's raw score q . k in the plain
 * pass. Each term is a part of the same dot product through the same
 * LayerNorm and projections, with the same per-element errors, so it is
 * within t; the sum of the terms is the pass's q . k summed again in
 * double, so it is within t of the exact score and of the pass's float
 * score. */
#include "attnview/modelfile.h"
#include "attnview/score_split.h"
#include "bound.h"
#include "harness.h"
#include "json.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct split_case {
	const char *golden, *model, *text;
} split_case;

/* The texts of gen_split_golden.py. */
static const split_case cases[] = {
    {"golden/split_masked.golden", "golden/fwd_masked.attn",
     "Attention (注意力) is all you need! is all"},
    {"golden/split_causal.golden", "golden/fwd_causal.attn", "Yes, the cat's mat, the cat."},
};

static double num(const json *j)
{
	return j && j->type == J_NUM ? j->num : NAN;
}

static double sum_terms(const score_split *s)
{
	double sum = 0;
	for (int i = 0; i < s->nparts * s->nparts; i++)
		sum += s->terms[i];
	return sum;
}

/* The parts of a block's input: token, position, per earlier block its
 * heads, proj_b and mlp, and the bias, named as the dump names them. */
static void check_parts(const model *m)
{
	const int H = (int)m->cfg.heads;
	char name[32];
	CHECK(split_nparts(m, 0) == 3 && split_nparts(m, 1) == 3 + H + 2);
	split_part_name(m, 1, 0, name, sizeof name);
	CHECK(strcmp(name, "token") == 0);
	split_part_name(m, 1, 1, name, sizeof name);
	CHECK(strcmp(name, "position") == 0);
	split_part_name(m, 1, 3, name, sizeof name);
	CHECK(strcmp(name, "L0H1") == 0);
	split_part_name(m, 1, 2 + H, name, sizeof name);
	CHECK(strcmp(name, "L0.proj_b") == 0);
	split_part_name(m, 1, 3 + H, name, sizeof name);
	CHECK(strcmp(name, "L0.mlp") == 0);
	split_part_name(m, 1, 4 + H, name, sizeof name);
	CHECK(strcmp(name, "bias") == 0);
	split_part p = split_part_at(m, 1, 3);
	CHECK(p.source == SPLIT_HEAD && p.layer == 0 && p.head == 1);
}

/* The program's --dump --query --key --layer --head: the same terms,
 * named, and their sum the score. */
static void check_dump(const split_case *c, const model *m, const score_split *s, double t)
{
	char model_path[512], args_q[16], args_k[16], args_l[16], args_h[16];
	snprintf(model_path, sizeof model_path, "%s", test_path(c->model));
	snprintf(args_q, sizeof args_q, "%d", s->query);
	snprintf(args_k, sizeof args_k, "%d", s->key);
	snprintf(args_l, sizeof args_l, "%d", s->layer);
	snprintf(args_h, sizeof args_h, "%d", s->head);
	const char *args[] = {"--model", model_path, "--text", c->text,	 "--query", args_q, "--key",
			      args_k,	 "--layer",  args_l,   "--head", args_h,    NULL};
	json *j = test_dump_json(args);
	if (!j)
		return;
	const json *sp = json_get(j, "score_split"), *terms = json_get(sp, "terms");
	const int P = s->nparts;
	CHECKF(terms && terms->n == (size_t)P * P, "score_split with %zu terms",
	       terms ? terms->n : 0);
	double sum = 0, score = num(json_get(sp, "score"));
	char name[32];
	for (int i = 0; terms && i < (int)terms->n && i < P * P; i++) {
		const json *e = json_at(terms, (size_t)i), *qp = json_get(e, "query_part");
		double v = num(json_get(e, "value"));
		split_part_name(m, s->layer, i / P, name, sizeof name);
		CHECKF(qp && qp->type == J_STR && strcmp(qp->str, name) == 0, "term %d: %s", i,
		       name);
		CHECKF(fabs(v - s->terms[i]) <= t, "dump term %d: %g, library %g", i, v,
		       s->terms[i]);
		sum += v;
	}
	CHECKF(fabs(sum - score) <= t, "dump: terms add up to %.9g, score %.9g", sum, score);
	const json *bd = json_at(json_get(j, "breakdown"), 0);
	CHECKF(fabs(num(json_get(bd, "score")) - score) <= t,
	       "the breakdown's score %g, split's %g", num(json_get(bd, "score")), score);
	json_free(j);
}

static void run_case(const split_case *c)
{
	av_error err;
	golden g = {0};
	model *m = model_load(test_path(c->model), &err);
	CHECKF(m != NULL, "%s", err.msg);
	CHECKF(golden_load(&g, test_path(c->golden)), "%s", c->golden);
	const golden_tensor *gi = golden_get(&g, "ids"), *gc = golden_get(&g, "cell");
	const golden_tensor *gs = golden_get(&g, "score"), *gt = golden_get(&g, "terms");
	if (!m || !gi || !gc || gc->size != 4 || !gs || !gt) {
		model_destroy(m);
		golden_free(&g);
		return;
	}
	const int n = (int)gi->size, l = (int)gc->v[0], h = (int)gc->v[1];
	const int q = (int)gc->v[2], k = (int)gc->v[3];
	int32_t *ids = golden_ids(gi);
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, n, NULL));
	const size_t cell = (((size_t)l * b.H + h) * n + q) * n + k;
	const double t = b.score_err[cell], exact = b.score[cell];
	fwd_bound_finish(&b);
	activations ws;
	CHECK(activations_init(&ws, &m->cfg, 1, n, n, &err));
	model_forward(m, &ws, ids, 1, n);
	score_split s;
	CHECKF(score_split_compute(m, &ws, n, l, h, q, k, &s, &err), "%s", err.msg);
	const int P = s.nparts;
	CHECK(P == split_nparts(m, l) && gt->size == (size_t)P * P);
	double worst = 0;
	for (int i = 0; gt->size == (size_t)P * P && i < P * P; i++)
		worst = fmax(worst, fabs(s.terms[i] - gt->v[i]));
	const double sum = sum_terms(&s);
	printf("%s: L%dH%d (%d, %d), %d parts: worst term %.2e, sum %.9g, score %.9g, "
	       "tolerance %.2e\n",
	       c->golden, l, h, q, k, P, worst, sum, (double)s.score, t);
	CHECKF(worst <= t, "a term %.2e from the golden (tolerance %.2e)", worst, t);
	CHECKF(fabs(sum - s.score) <= t && fabs(sum - exact) <= t && fabs(gs->v[0] - exact) <= t,
	       "terms %.9g, score %.9g, exact %.9g", sum, (double)s.score, exact);
	int best = -1;
	double share = 0;
	best = score_split_largest(&s, &share);
	CHECK(best >= 0 && best < P * P && share > 0 && share <= 1);
	for (int i = 0; i < P * P; i++)
		CHECK(fabs(s.terms[i]) <= fabs(s.terms[best]));
	check_dump(c, m, &s, t);
	score_split_finish(&s);
	CHECK(!score_split_compute(m, &ws, n, l, h, n, k, &s, &err));
	check_parts(m);
	activations_finish(&ws);
	free(ids);
	golden_free(&g);
	model_destroy(m);
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
	return test_summary("split");
}
