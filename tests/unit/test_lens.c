/* The logit lens and the direct logit attribution (lens.h)
 * against the PyTorch reference (tests/golden/lens_*.golden, from
 * tests/reference/gen_lens_golden.py, in float64), and the attribution's
 * promise that the parts plus the rest are the logit; then the same numbers
 * in the real program's --dump --lens --dla (ATTNVIEW_BIN).
 *
 * Tolerances from the bounds of tests/lib/bound.c (man 5 attnview, NOTES,
 * Accuracy): t is the largest bound of a logit of the text's plain pass.
 * A probability moves by at most half the largest move of the logits
 * (|dp_i| <= p_i (|dz_i| + sum_j p_j |dz_j|)), so t bounds it too; the
 * lens after an earlier block runs a part of the same computation and
 * stays within it. A head's part is a term of the logit's sum through the
 * same LayerNorm and dot product, with the same per-element errors, so it
 * is within t; the golden rest is the logit minus L H heads, within
 * (1 + L H) t; the parts plus the rest differ from the logit by the pass's
 * own rounding, within t. A top character is compared where the golden
 * probabilities (or logits) of the ranks around it are more than 2t apart. */
#include "attnview/lens.h"
#include "attnview/modelfile.h"
#include "bound.h"
#include "harness.h"
#include "json.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K 5

typedef struct lens_case {
	const char *golden, *model, *text;
} lens_case;

/* The texts of gen_lens_golden.py. */
static const lens_case cases[] = {
    {"golden/lens_masked.golden", "golden/fwd_masked.attn",
     "Attention (注意力) is all you need! is all"},
    {"golden/lens_causal.golden", "golden/fwd_causal.attn", "Yes, the cat's mat, the cat."},
};

static const float *gt(const golden *g, const char *name, size_t size)
{
	const golden_tensor *t = golden_get(g, name);
	CHECKF(t && t->size == size, "golden tensor %s of %zu", name, size);
	return t && t->size == size ? t->v : NULL;
}

static double num(const json *j)
{
	return j && j->type == J_NUM ? j->num : NAN;
}

/* The program's --dump --lens --dla: the same numbers, within the same
 * tolerances (the dump prints floats exactly, %.9g), and in the printed
 * numbers too the heads plus the rest are the logit. */
static void check_dump(const lens_case *c, const golden *g, int n, int L, int H, double t)
{
	char model_path[512];
	snprintf(model_path, sizeof model_path, "%s", test_path(c->model));
	const char *args[] = {"--model", model_path, "--text", c->text, "--lens", "--dla", NULL};
	json *j = test_dump_json(args);
	if (!j)
		return;
	const json *lens = json_get(j, "lens"), *dla = json_get(j, "dla");
	const float *gp = gt(g, "lens_p", (size_t)L * n * K), *gl = gt(g, "dla_logit", n);
	const float *gh = gt(g, "dla_heads", (size_t)n * L * H);
	CHECKF(lens && lens->n == (size_t)L * n, "lens of %zu entries", lens ? lens->n : 0);
	CHECKF(dla && dla->n == (size_t)n, "dla of %zu entries", dla ? dla->n : 0);
	for (size_t i = 0; gp && lens && i < lens->n && i < (size_t)L * n; i++) {
		const json *e = json_at(lens, i), *top = json_get(e, "top");
		CHECK(num(json_get(e, "layer")) == (double)(i / n));
		CHECK(num(json_get(e, "position")) == (double)(i % n));
		CHECKF(top && top->n == K &&
			   fabs(num(json_get(json_at(top, 0), "p")) - gp[i * K]) <= t,
		       "dump lens %zu", i);
	}
	for (int q = 0; gl && gh && dla && q < (int)dla->n && q < n; q++) {
		const json *e = json_at(dla, (size_t)q), *heads = json_get(e, "heads");
		double logit = num(json_get(e, "logit")), s = num(json_get(e, "rest"));
		CHECKF(fabs(logit - gl[q]) <= t, "dump dla %d: logit %g, golden %g", q, logit,
		       gl[q]);
		CHECK(heads && heads->n == (size_t)L);
		for (int l = 0; heads && l < (int)heads->n && l < L; l++)
			for (int h = 0; h < H; h++) {
				double v = num(json_at(json_at(heads, (size_t)l), (size_t)h));
				CHECKF(fabs(v - gh[((size_t)q * L + l) * H + h]) <= t,
				       "dump dla %d L%dH%d: %g", q, l, h, v);
				s += v;
			}
		CHECKF(fabs(s - logit) <= t, "dump dla %d: heads + rest %.9g, logit %.9g", q, s,
		       logit);
	}
	json_free(j);
}

static void check_lens(const model *m, activations *ws, const int32_t *ids, int n, const golden *g,
		       double t)
{
	const int L = (int)m->cfg.layers;
	const size_t cnt = (size_t)L * n * K;
	int32_t *id = malloc(cnt * sizeof *id);
	float *p = malloc(cnt * sizeof *p);
	int *commit = malloc((size_t)n * sizeof *commit);
	av_error err;
	CHECKF(logit_lens(m, ws, ids, n, (lens_rows){0, n}, K, id, p, commit, &err), "%s", err.msg);
	const float *gid = gt(g, "lens_id", cnt), *gp = gt(g, "lens_p", cnt);
	int compared = 0;
	for (size_t i = 0; gid && gp && i < cnt; i++) {
		CHECKF(fabs((double)p[i] - gp[i]) <= t, "lens p[%zu] %g, golden %g, tolerance %.2e",
		       i, p[i], gp[i], t);
		size_t k = i % K;
		bool apart = (k == 0 || gp[i - 1] - gp[i] > 2 * t) &&
			     (k == K - 1 || gp[i] - gp[i + 1] > 2 * t);
		if (apart) {
			CHECKF(id[i] == (int32_t)gid[i], "lens id[%zu] %d, golden %g", i, id[i],
			       gid[i]);
			compared++;
		}
	}
	CHECK(compared > (int)cnt / 2);
	/* The lens's probability of the last block's top-1 (--export --lens):
	 * the top-1's own at the last block, at most each block's top-1. */
	int32_t *target = malloc((size_t)n * sizeof *target);
	float *pt = malloc((size_t)L * n * sizeof *pt);
	for (int q = 0; q < n; q++)
		target[q] = id[((size_t)(L - 1) * n + q) * K];
	CHECKF(logit_lens_p(m, ws, ids, n, (lens_rows){0, n}, target, pt, &err), "%s", err.msg);
	for (int l = 0; l < L; l++)
		for (int q = 0; q < n; q++) {
			const float top = p[((size_t)l * n + q) * K], got = pt[(size_t)l * n + q];
			CHECKF(l < L - 1 ? got <= top : got == top, "lens p of the top-1 at L%d %d: %g",
			       l, q, got);
		}
	free(target);
	free(pt);
	/* One row alone is that row of the whole. */
	const int r = n - 1;
	int32_t id1[AV_MAX_LAYERS * K];
	float p1[AV_MAX_LAYERS * K];
	int c1;
	CHECK(logit_lens(m, ws, ids, n, (lens_rows){r, 1}, K, id1, p1, &c1, &err));
	CHECK(c1 == commit[r]);
	for (int l = 0; l < L; l++)
		CHECK(memcmp(id1 + l * K, id + ((size_t)l * n + r) * K, K * sizeof *id1) == 0 &&
		      memcmp(p1 + l * K, p + ((size_t)l * n + r) * K, K * sizeof *p1) == 0);
	/* The commitment: from commit[p] on the top is the last block's, and
	 * not at commit[p] - 1. */
	for (int q = 0; q < n; q++) {
		int32_t last = id[((size_t)(L - 1) * n + q) * K];
		CHECK(commit[q] >= 0 && commit[q] < L);
		for (int l = commit[q]; l < L; l++)
			CHECK(id[((size_t)l * n + q) * K] == last);
		if (commit[q] > 0)
			CHECK(id[((size_t)(commit[q] - 1) * n + q) * K] != last);
	}
	free(id);
	free(p);
	free(commit);
}

/* Sum of heads plus rest against the logit, at every position. */
static void check_sum(const float *logit, const float *heads, const float *rest, int n, int LH,
		      double t, const char *what)
{
	for (int q = 0; q < n; q++) {
		double s = rest[q];
		for (int k = 0; k < LH; k++)
			s += heads[(size_t)q * LH + k];
		CHECKF(fabs(s - logit[q]) <= t, "%s: position %d: heads + rest %.9g, logit %.9g",
		       what, q, s, (double)logit[q]);
	}
}

static void check_dla(const model *m, activations *ws, int32_t *ids, int n, const golden *g,
		      double t)
{
	const int LH = (int)(m->cfg.layers * m->cfg.heads);
	int32_t *target = malloc((size_t)n * sizeof *target);
	float *logit = malloc((size_t)n * sizeof *logit), *rest = malloc((size_t)n * sizeof *rest);
	float *heads = malloc((size_t)n * LH * sizeof *heads);
	av_error err;
	CHECKF(logit_attribution(m, ws, ids, n, (lens_rows){0, n}, NULL, target, logit, heads, rest,
				 &err),
	       "%s", err.msg);
	const float *gtg = gt(g, "dla_target", n), *gl = gt(g, "dla_logit", n);
	const float *gh = gt(g, "dla_heads", (size_t)n * LH), *gr = gt(g, "dla_rest", n);
	for (int q = 0; gtg && gl && gh && gr && q < n; q++) {
		CHECKF(target[q] == (int32_t)gtg[q], "position %d: target %d, golden %g", q,
		       target[q], gtg[q]);
		CHECKF(fabs((double)logit[q] - gl[q]) <= t, "position %d: logit %g, golden %g", q,
		       logit[q], gl[q]);
		CHECKF(fabs((double)rest[q] - gr[q]) <= (1 + LH) * t,
		       "position %d: rest %g, golden %g", q, rest[q], gr[q]);
		for (int k = 0; k < LH; k++)
			CHECKF(fabs((double)heads[(size_t)q * LH + k] - gh[(size_t)q * LH + k]) <=
				   t,
			       "position %d head %d: %g, golden %g", q, k,
			       heads[(size_t)q * LH + k], gh[(size_t)q * LH + k]);
	}
	check_sum(logit, heads, rest, n, LH, t, "the top-1");
	/* One row alone (the view's question) is that row of the whole. */
	const int mid = n / 2;
	int32_t id1;
	float logit1, rest1, *heads1 = malloc((size_t)LH * sizeof *heads1);
	CHECK(logit_attribution(m, ws, ids, n, (lens_rows){mid, 1}, NULL, &id1, &logit1, heads1,
				&rest1, &err));
	CHECK(id1 == target[mid] && logit1 == logit[mid] && rest1 == rest[mid]);
	CHECK(memcmp(heads1, heads + (size_t)mid * LH, (size_t)LH * sizeof *heads1) == 0);
	CHECK(!logit_attribution(m, ws, ids, n, (lens_rows){n, 1}, NULL, &id1, &logit1, heads1,
				 &rest1, &err));
	free(heads1);
	/* A chosen character (the text's own at each position), and a head off:
	 * its part is 0 and the sum still holds. */
	uint8_t *off = calloc((size_t)LH, 1);
	off[LH - 1] = 1;
	ws->ablate = off;
	int32_t *chosen = malloc((size_t)n * sizeof *chosen);
	CHECK(logit_attribution(m, ws, ids, n, (lens_rows){0, n}, ids, chosen, logit, heads, rest,
				&err));
	ws->ablate = NULL;
	for (int q = 0; q < n; q++) {
		CHECK(chosen[q] == ids[q]);
		CHECK(heads[(size_t)q * LH + LH - 1] == 0);
	}
	check_sum(logit, heads, rest, n, LH, t, "the text's character, a head off");
	int32_t bad = (int32_t)m->cfg.vocab_size;
	CHECK(!logit_attribution(m, ws, &bad, 1, (lens_rows){0, 1}, &bad, chosen, logit, heads,
				 rest, &err));
	free(off);
	free(chosen);
	free(target);
	free(logit);
	free(rest);
	free(heads);
}

static void run_case(const lens_case *c)
{
	av_error err;
	golden g = {0};
	model *m = model_load(test_path(c->model), &err);
	CHECKF(m != NULL, "%s", err.msg);
	CHECKF(golden_load(&g, test_path(c->golden)), "%s", c->golden);
	const golden_tensor *gi = golden_get(&g, "ids");
	if (!m || !gi) {
		model_destroy(m);
		golden_free(&g);
		return;
	}
	const int n = (int)gi->size;
	int32_t *ids = golden_ids(gi);
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, n, NULL));
	double t = 0;
	for (size_t i = 0; i < (size_t)n * b.V; i++)
		t = fmax(t, b.logits_err[i]);
	fwd_bound_finish(&b);
	printf("%s: %d tokens, tolerance from the bounds %.2e\n", c->golden, n, t);
	activations ws;
	CHECK(activations_init(&ws, &m->cfg, 1, n, n, &err));
	check_lens(m, &ws, ids, n, &g, t);
	check_dla(m, &ws, ids, n, &g, t);
	check_dump(c, &g, n, (int)m->cfg.layers, (int)m->cfg.heads, t);
	activations_finish(&ws);
	free(ids);
	golden_free(&g);
	model_destroy(m);
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
	return test_summary("lens");
}
