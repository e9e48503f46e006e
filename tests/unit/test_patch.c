/* Activation patching between two texts (patch.h)
 * against the PyTorch reference (tests/golden/patch_*.golden, from
 * tests/reference/gen_patch_golden.py, in float64); its promise that
 * patching the text into itself changes nothing, exactly; then the same
 * numbers in the real program's --dump --patch (ATTNVIEW_BIN).
 *
 * Tolerances from the bounds of tests/lib/bound.c (man 5 attnview, NOTES,
 * Accuracy): t is the largest bound of a logit of either text's plain
 * pass. A patched pass runs the same operations on values of the two
 * passes, within the magnitudes those two bounds cover, so each of its
 * logits is within t as well; a difference z_a - z_b is within 2t and a
 * change of it, D(patched) - D(text), within 4t. */
#include "attnview/modelfile.h"
#include "attnview/patch.h"
#include "bound.h"
#include "harness.h"
#include "json.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct patch_case {
	const char *golden, *model, *text, *text2;
} patch_case;

/* The texts of gen_patch_golden.py. */
static const patch_case cases[] = {
    {"golden/patch_masked.golden", "golden/fwd_masked.attn",
     "Attention (注意力) is all you need! is all", "Intention (注意力) is all you need! is bad"},
    {"golden/patch_causal.golden", "golden/fwd_causal.attn", "Yes, the cat's mat, the cat.",
     "Yes, the dog's mat, the dog."},
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

static double max_logit_bound(const model *m, const int32_t *ids, int n)
{
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, m, ids, n, NULL));
	double t = 0;
	for (size_t i = 0; i < (size_t)n * b.V; i++)
		t = fmax(t, b.logits_err[i]);
	fwd_bound_finish(&b);
	return t;
}

/* Every number of r against the golden, within 4t (2t for a difference). */
static void check_golden(const patch_result *r, const golden *g, double t)
{
	const int n = r->n, LH = r->L * r->H;
	const float *tg = gt(g, "targets", 2), *df = gt(g, "diff", 1), *df2 = gt(g, "diff2", 1);
	const float *gh = gt(g, "heads", LH), *gc = gt(g, "cells", (size_t)n * LH);
	if (!tg || !df || !df2 || !gh || !gc)
		return;
	CHECKF(r->target[0] == (int32_t)tg[0] && r->target[1] == (int32_t)tg[1],
	       "targets %d %d, golden %g %g", r->target[0], r->target[1], tg[0], tg[1]);
	CHECKF(fabs(r->diff - df[0]) <= 2 * t, "diff %g, golden %g", r->diff, df[0]);
	CHECKF(fabs(r->diff2 - df2[0]) <= 2 * t, "diff2 %g, golden %g", r->diff2, df2[0]);
	double worst = 0, big = 0;
	for (int k = 0; k < LH; k++) {
		worst = fmax(worst, fabs(r->heads[k] - gh[k]));
		big = fmax(big, fabs(gh[k]));
	}
	for (size_t k = 0; k < (size_t)n * LH; k++)
		worst = fmax(worst, fabs(r->cells[k] - gc[k]));
	printf("  worst difference %.2e (tolerance %.2e), largest effect of a head %.3g\n", worst,
	       4 * t, big);
	CHECKF(worst <= 4 * t, "patching: worst difference %.2e > %.2e", worst, 4 * t);
	CHECKF(big > 100 * t, "the two texts move some head's effect well above the tolerance");
}

/* Patching the text into itself: every number is 0, exactly, with and
 * without a head switched off; and in a causal model a position after the
 * row read is 0 whatever the other text. */
static void check_exact(const model *m, activations *ws, const int32_t *ids, const int32_t *ids2,
			int n)
{
	const int LH = (int)(m->cfg.layers * m->cfg.heads);
	patch_result r;
	av_error err;
	uint8_t *off = calloc((size_t)LH, 1);
	for (int pass = 0; pass < 2; pass++) {
		off[0] = (uint8_t)pass;
		ws->ablate = off;
		CHECKF(activation_patch(m, ws, ids, ids, n, n / 2, NULL, &r, &err), "%s", err.msg);
		ws->ablate = NULL;
		for (int k = 0; k < LH; k++)
			CHECKF(r.heads[k] == 0, "itself: head %d moves by %g", k, r.heads[k]);
		for (size_t k = 0; k < (size_t)n * LH; k++)
			CHECKF(r.cells[k] == 0, "itself: cell %zu moves by %g", k, r.cells[k]);
		CHECK(r.target[0] != r.target[1]);
		patch_result_finish(&r);
	}
	free(off);
	const int32_t tg[2] = {ids[0], ids[1] == ids[0] ? ids[2] : ids[1]};
	CHECK(activation_patch(m, ws, ids, ids2, n, n / 2, tg, &r, &err));
	CHECK(r.target[0] == tg[0] && r.target[1] == tg[1]);
	for (int p = n / 2 + 1; m->cfg.objective == OBJ_CAUSAL && p < n; p++)
		for (int k = 0; k < LH; k++)
			CHECK(r.cells[(size_t)p * LH + k] == 0);
	patch_result_finish(&r);
	CHECK(!activation_patch(m, ws, ids, ids2, n, n, NULL, &r, &err));
	const int32_t bad[2] = {0, (int32_t)m->cfg.vocab_size};
	CHECK(!activation_patch(m, ws, ids, ids2, n, 0, bad, &r, &err));
}

/* The program's --dump --patch: the same numbers (printed %.9g). */
static void check_dump(const patch_case *c, const patch_result *r, double t)
{
	char model_path[512];
	snprintf(model_path, sizeof model_path, "%s", test_path(c->model));
	const char *args[] = {"--model", model_path, "--text", c->text, "--patch", c->text2, NULL};
	json *j = test_dump_json(args);
	if (!j)
		return;
	const json *p = json_get(j, "patching");
	const json *tg = json_get(p, "targets"), *heads = json_get(p, "heads");
	const json *pos = json_get(p, "positions");
	CHECK(num(json_get(p, "position")) == r->pos);
	CHECK(num(json_at(tg, 0)) == r->target[0] && num(json_at(tg, 1)) == r->target[1]);
	CHECK(heads && heads->n == (size_t)r->L && pos && pos->n == (size_t)r->n);
	for (int l = 0; heads && l < r->L; l++)
		for (int h = 0; h < r->H; h++) {
			double v = num(json_at(json_at(heads, (size_t)l), (size_t)h));
			CHECKF(fabs(v - r->heads[l * r->H + h]) <= 4 * t, "dump L%dH%d %g", l, h,
			       v);
		}
	for (int q = 0; pos && q < (int)pos->n && q < r->n; q++)
		for (int l = 0; l < r->L; l++)
			for (int h = 0; h < r->H; h++) {
				const json *e =
				    json_at(json_at(json_at(pos, (size_t)q), (size_t)l), (size_t)h);
				size_t k = ((size_t)q * r->L + l) * r->H + h;
				CHECKF(fabs(num(e) - r->cells[k]) <= 4 * t, "dump %d L%dH%d", q, l,
				       h);
			}
	json_free(j);
}

static void run_case(const patch_case *c)
{
	av_error err;
	golden g = {0};
	model *m = model_load(test_path(c->model), &err);
	CHECKF(m != NULL, "%s", err.msg);
	CHECKF(golden_load(&g, test_path(c->golden)), "%s", c->golden);
	const golden_tensor *gi = golden_get(&g, "ids"), *gi2 = golden_get(&g, "ids2");
	if (!m || !gi || !gi2 || gi->size != gi2->size) {
		model_destroy(m);
		golden_free(&g);
		return;
	}
	const int n = (int)gi->size;
	int32_t *ids = golden_ids(gi), *ids2 = golden_ids(gi2);
	double t = fmax(max_logit_bound(m, ids, n), max_logit_bound(m, ids2, n));
	printf("%s: %d tokens, tolerance from the bounds %.2e\n", c->golden, n, t);
	activations ws;
	CHECK(activations_init(&ws, &m->cfg, 1, n, n, &err));
	patch_result r;
	const float *pos = gt(&g, "pos", 1);
	CHECKF(pos && activation_patch(m, &ws, ids, ids2, n, (int)pos[0], NULL, &r, &err), "%s",
	       err.msg);
	if (pos) {
		check_golden(&r, &g, t);
		check_dump(c, &r, t);
		patch_result_finish(&r);
	}
	check_exact(m, &ws, ids, ids2, n);
	activations_finish(&ws);
	free(ids);
	free(ids2);
	golden_free(&g);
	model_destroy(m);
}

/* The default targets: the two characters where the texts differ in one
 * place, and none where they differ in none or several. */
static void difference_targets(void)
{
	int32_t a[4] = {5, 6, 7, 8}, b[4] = {5, 9, 7, 8}, c[4] = {5, 9, 7, 3}, t[2];
	CHECK(patch_difference_targets(a, b, 4, t) && t[0] == 6 && t[1] == 9);
	CHECK(!patch_difference_targets(a, a, 4, t) && !patch_difference_targets(a, c, 4, t));
	CHECK(strcmp(patch_targets_from_name(PATCH_DIFFERENCE), "difference") == 0);
}

int main(void)
{
	difference_targets();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
	return test_summary("patch");
}
