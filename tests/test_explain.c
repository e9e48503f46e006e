/* What attnview computes from the weights (issue 11) against the PyTorch
 * reference (tests/golden/explain_*.golden, from
 * tests/reference/gen_explain_golden.py): the q and k of the breakdown,
 * value norms, head role scores, aggregates, rollout, words and word
 * attention, ablation and the loss on a text; first the core functions, then
 * the same numbers in the real program's --dump (ATTNVIEW_BIN). */
#include "attnview/analysis.h"
#include "attnview/explain.h"
#include "attnview/modelfile.h"
#include "harness.h"
#include "json.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct explain_case {
	const char *name, *model, *text;
} explain_case;

/* The texts of gen_explain_golden.py. */
static const explain_case cases[] = {
    {"explain_masked", "golden/fwd_masked.attn", "Attention (注意力) is all you need! is all"},
    {"explain_causal", "golden/fwd_causal.attn", "Yes, the cat's mat, the cat."},
};

typedef struct fixture {
	model *m;
	golden g;
	token *tok;
	int32_t *ids;
	int n, L, H, hs;
	activations ws;
	attn_result r;
} fixture;

static bool setup(fixture *f, const explain_case *c)
{
	memset(f, 0, sizeof *f);
	av_error err;
	char path[256];
	snprintf(path, sizeof path, "golden/%s.golden", c->name);
	f->m = model_load(test_path(c->model), &err);
	CHECKF(f->m != NULL, "%s", err.msg);
	CHECKF(golden_load(&f->g, test_path(path)), "%s", path);
	if (!f->m || !f->g.n)
		return false;
	const golden_tensor *ids = golden_get(&f->g, "ids");
	f->n = (int)ids->size;
	f->ids = golden_ids(ids);
	f->L = (int)f->m->cfg.layers, f->H = (int)f->m->cfg.heads;
	f->hs = (int)(f->m->cfg.dim / f->m->cfg.heads);
	cp_buf cps = {0};
	CHECK(tokenize_text(c->text, strlen(c->text), "text", &cps, NULL, &err));
	CHECKF((int)cps.n == f->n, "%zu tokens, golden %d", cps.n, f->n);
	f->tok = malloc((size_t)f->n * sizeof *f->tok);
	vocab_tokenize(&f->m->vocab, cps.v, cps.n, f->tok);
	cp_buf_free(&cps);
	for (int i = 0; i < f->n; i++)
		CHECKF(f->tok[i].id == f->ids[i], "token %d: id %d, golden %d", i, f->tok[i].id,
		       f->ids[i]);
	CHECK(activations_init(&f->ws, &f->m->cfg, 1, f->n, f->n, &err));
	CHECKF(model_attend(f->m, &f->ws, f->tok, f->n, 0, &f->r, &err), "%s", err.msg);
	return true;
}

static void teardown(fixture *f)
{
	attn_result_free(&f->r);
	activations_finish(&f->ws);
	free(f->tok);
	free(f->ids);
	golden_free(&f->g);
	model_destroy(f->m);
}

static const float *gt(const fixture *f, const char *name)
{
	const golden_tensor *t = golden_get(&f->g, name);
	CHECKF(t != NULL, "golden tensor %s", name);
	return t ? t->v : NULL;
}

static void core_checks(fixture *f, const char *name)
{
	char what[128];
	const size_t nn = (size_t)f->n * f->n, L = (size_t)f->L, H = (size_t)f->H;
	snprintf(what, sizeof what, "%s: attention", name);
	check_close(what, f->r.att, gt(f, "att"), L * H * nn, 1e-5f);

	/* q and k of every head at the breakdown's cell, from a plain pass. */
	const float *cell = gt(f, "cell");
	int qi = (int)cell[0], kj = (int)cell[1];
	float *q = malloc(L * H * f->hs * sizeof *q), *k = malloc(L * H * f->hs * sizeof *k);
	model_forward(f->m, &f->ws, f->ids, 1, f->n);
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++)
			qk_from_forward(f->m, &f->ws, l, h, qi, kj, q + (l * f->H + h) * f->hs,
					k + (l * f->H + h) * f->hs);
	snprintf(what, sizeof what, "%s: q at query %d", name, qi);
	check_close_rel(what, q, gt(f, "q"), L * H * f->hs, 1e-5f);
	snprintf(what, sizeof what, "%s: k at key %d", name, kj);
	check_close_rel(what, k, gt(f, "k"), L * H * f->hs, 1e-5f);
	free(q);
	free(k);

	float *vn = malloc(L * H * f->n * sizeof *vn);
	av_error err;
	CHECK(value_norms(f->m, &f->ws, f->n, vn, &err));
	snprintf(what, sizeof what, "%s: value norms", name);
	check_close_rel(what, vn, gt(f, "value_norms"), L * H * f->n, 1e-5f);
	free(vn);

	float roles[ROLE_NKINDS * AV_MAX_HEADS * 4];
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++) {
			attn_matrix a = attn_result_head(&f->r, l, h);
			role_scores rs;
			head_roles(&rs, &a, f->tok);
			for (int s = 0; s < ROLE_NKINDS; s++)
				roles[(l * f->H + h) * ROLE_NKINDS + s] = (float)rs.s[s];
		}
	snprintf(what, sizeof what, "%s: head role scores", name);
	check_close(what, roles, gt(f, "roles"), L * H * ROLE_NKINDS, 1e-5f);

	float *m = malloc(L * nn * sizeof *m), *work = malloc(nn * sizeof *work);
	for (int l = 0; l < f->L; l++)
		aggregate_heads(m + l * nn, &f->r, l, AGG_MEAN);
	snprintf(what, sizeof what, "%s: mean of each layer's heads", name);
	check_close(what, m, gt(f, "mean"), L * nn, 1e-6f);
	for (int l = 0; l < f->L; l++)
		aggregate_heads(m + l * nn, &f->r, l, AGG_MAX);
	snprintf(what, sizeof what, "%s: max of each layer's heads", name);
	check_close(what, m, gt(f, "max"), L * nn, 1e-5f);
	aggregate_heads(m, &f->r, 0, AGG_ALL);
	snprintf(what, sizeof what, "%s: mean of all heads", name);
	check_close(what, m, gt(f, "all"), nn, 1e-6f);
	attention_rollout(m, work, &f->r);
	snprintf(what, sizeof what, "%s: rollout", name);
	check_close(what, m, gt(f, "rollout"), L * nn, 1e-5f);

	word_span w[256];
	int nw = words_split(w, f->tok, f->n);
	const golden_tensor *spans = golden_get(&f->g, "word_spans");
	CHECKF(spans && (int)spans->dims[0] == nw, "%s: %d words, golden %zu", name, nw,
	       spans ? spans->dims[0] : 0);
	for (int i = 0; spans && i < nw && i < (int)spans->dims[0]; i++)
		CHECKF(w[i].start == (int)spans->v[2 * i] && w[i].end == (int)spans->v[2 * i + 1],
		       "%s: word %d is [%d, %d), golden [%g, %g)", name, i, w[i].start, w[i].end,
		       spans->v[2 * i], spans->v[2 * i + 1]);
	float *wa = malloc(L * H * (size_t)nw * nw * sizeof *wa);
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++) {
			attn_matrix a = attn_result_head(&f->r, l, h);
			words_aggregate(wa + (l * f->H + h) * (size_t)nw * nw, &a, w, nw);
		}
	snprintf(what, sizeof what, "%s: word attention", name);
	check_close(what, wa, gt(f, "word_att"), L * H * (size_t)nw * nw, 1e-5f);
	free(wa);
	free(m);
	free(work);
}

static void ablation_checks(fixture *f, const char *name)
{
	const golden_tensor *off = golden_get(&f->g, "ablate");
	uint8_t mask[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	for (size_t i = 0; off && i < off->dims[0]; i++)
		mask[(int)off->v[2 * i] * f->H + (int)off->v[2 * i + 1]] = 1;
	av_error err;
	double before, after;
	int count, count2;
	f->ws.ablate = NULL;
	CHECK(model_text_loss(f->m, &f->ws, f->tok, f->n, &before, &count, &err));
	f->ws.ablate = mask;
	CHECK(model_text_loss(f->m, &f->ws, f->tok, f->n, &after, &count2, &err));
	attn_result r;
	CHECKF(model_attend(f->m, &f->ws, f->tok, f->n, 0, &r, &err), "%s", err.msg);
	f->ws.ablate = NULL;
	char what[128];
	snprintf(what, sizeof what, "%s: attention with heads off", name);
	check_close(what, r.att, gt(f, "att_ablated"), (size_t)f->L * f->H * f->n * f->n, 1e-5f);
	const float *loss = gt(f, "loss");
	float got[3] = {(float)before, (float)after, (float)count};
	snprintf(what, sizeof what, "%s: loss before, after, positions", name);
	check_close(what, got, loss, 3, 2e-5f);
	CHECK(count == count2);
	/* The ablation changes something: a test of it that cannot fail is none. */
	CHECKF(fabs(after - before) > 1e-4, "%s: ablation left the loss at %g", name, before);
	attn_result_free(&r);
}

/* ---- the same numbers in the program's dump ------------------------------ */

/* Numbers of a JSON array (nested arrays flattened) into out; returns how many. */
static size_t flatten(const json *a, float *out, size_t max)
{
	if (!a)
		return 0;
	if (a->type == J_NUM) {
		if (max)
			out[0] = (float)a->num;
		return 1;
	}
	if (a->type == J_NULL) {
		if (max)
			out[0] = NAN;
		return 1;
	}
	size_t n = 0;
	for (size_t i = 0; a->type == J_ARR && i < a->n; i++)
		n += flatten(&a->items[i], out + n, max > n ? max - n : 0);
	return n;
}

static void check_json_array(const char *what, const json *a, const float *want, size_t n,
			     float tol)
{
	float *got = calloc(n + 1, sizeof *got);
	size_t have = flatten(a, got, n);
	CHECKF(have == n, "%s: %zu numbers in the dump, golden %zu", what, have, n);
	if (have == n)
		check_close(what, got, want, n, tol);
	free(got);
}

static void dump_checks(fixture *f, const explain_case *c)
{
	const float *cell = gt(f, "cell");
	char model_path[512], qs[16], ks[16];
	snprintf(model_path, sizeof model_path, "%s", test_path(c->model));
	snprintf(qs, sizeof qs, "%d", (int)cell[0]);
	snprintf(ks, sizeof ks, "%d", (int)cell[1]);
	const char *args[] = {"--model", model_path, "--text", c->text, "--top", "0", "--query",
			      qs, "--key", ks, "--contributions", "--aggregates", "--rollout",
			      "--words", NULL};
	json *j = test_dump_json(args);
	if (!j)
		return;
	const size_t L = (size_t)f->L, H = (size_t)f->H, n = (size_t)f->n, hs = (size_t)f->hs;
	const json *bd = json_get(j, "breakdown");
	CHECKF(bd && bd->n == L * H, "%s: breakdown of %zu heads", c->name, bd ? bd->n : 0);
	float *buf = malloc(L * H * n * n * sizeof *buf);
	char what[128];
	for (size_t i = 0; bd && i < bd->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump breakdown %zu q", c->name, i);
		flatten(json_get(json_at(bd, i), "q"), buf, hs);
		check_close_rel(what, buf, gt(f, "q") + i * hs, hs, 1e-5f);
		snprintf(what, sizeof what, "%s: dump breakdown %zu k", c->name, i);
		flatten(json_get(json_at(bd, i), "k"), buf, hs);
		check_close_rel(what, buf, gt(f, "k") + i * hs, hs, 1e-5f);
	}
	const json *ct = json_get(j, "contributions");
	for (size_t i = 0; ct && i < ct->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump value norms %zu", c->name, i);
		flatten(json_get(json_at(ct, i), "value_norms"), buf, n);
		check_close_rel(what, buf, gt(f, "value_norms") + i * n, n, 1e-5f);
	}
	const json *heads = json_get(j, "heads");
	static const char *const keys[ROLE_NKINDS] = {"previous", "next",	"self",
						      "first",	  "delimiter",	"duplicate",
						      "induction", "local",	"entropy"};
	for (size_t i = 0; heads && i < heads->n && i < L * H; i++) {
		const json *sc = json_get(json_at(heads, i), "scores");
		for (int s = 0; s < ROLE_NKINDS; s++) {
			const json *v = json_get(sc, keys[s]);
			buf[i * ROLE_NKINDS + (size_t)s] = v ? (float)v->num : NAN;
		}
	}
	snprintf(what, sizeof what, "%s: dump head role scores", c->name);
	CHECK(heads && heads->n == L * H);
	check_close(what, buf, gt(f, "roles"), L * H * ROLE_NKINDS, 1e-5f);
	const json *agg = json_get(j, "aggregates");
	CHECKF(agg && agg->n == 2 * L + 1, "%s: %zu aggregates", c->name, agg ? agg->n : 0);
	for (size_t l = 0; agg && l < L && 2 * l + 1 < agg->n; l++) {
		snprintf(what, sizeof what, "%s: dump mean of layer %zu", c->name, l);
		check_json_array(what, json_get(json_at(agg, 2 * l), "weights"),
				 gt(f, "mean") + l * n * n, n * n, 1e-6f);
		snprintf(what, sizeof what, "%s: dump max of layer %zu", c->name, l);
		check_json_array(what, json_get(json_at(agg, 2 * l + 1), "weights"),
				 gt(f, "max") + l * n * n, n * n, 1e-5f);
	}
	const json *ro = json_get(j, "rollout");
	for (size_t l = 0; ro && l < L && l < ro->n; l++) {
		snprintf(what, sizeof what, "%s: dump rollout %zu", c->name, l);
		check_json_array(what, json_get(json_at(ro, l), "weights"),
				 gt(f, "rollout") + l * n * n, n * n, 1e-5f);
	}
	const golden_tensor *wg = golden_get(&f->g, "word_att");
	const json *wa = json_get(json_get(j, "words"), "attention");
	size_t nw = wg ? wg->dims[2] : 0;
	for (size_t i = 0; wa && i < wa->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump word attention %zu", c->name, i);
		check_json_array(what, json_get(json_at(wa, i), "weights"), wg->v + i * nw * nw,
				 nw * nw, 1e-5f);
	}
	json_free(j);

	/* With the heads off: the ablated attention and the losses. */
	const golden_tensor *off = golden_get(&f->g, "ablate");
	char spec[256] = "";
	for (size_t i = 0; off && i < off->dims[0]; i++)
		snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%d.%d", i ? "," : "",
			 (int)off->v[2 * i], (int)off->v[2 * i + 1]);
	const char *args2[] = {"--model", model_path, "--text", c->text, "--top", "0", "--ablate",
			       spec, NULL};
	j = test_dump_json(args2);
	if (!j) {
		free(buf);
		return;
	}
	const json *att = json_get(j, "attention");
	for (size_t i = 0; att && i < att->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump ablated attention %zu", c->name, i);
		check_json_array(what, json_get(json_at(att, i), "weights"),
				 gt(f, "att_ablated") + i * n * n, n * n, 1e-5f);
	}
	const json *ab = json_get(j, "ablation");
	const json *lb = json_get(ab, "loss_before"), *la = json_get(ab, "loss_after");
	const float *loss = gt(f, "loss");
	CHECKF(lb && la && fabs(lb->num - loss[0]) < 2e-5 && fabs(la->num - loss[1]) < 2e-5,
	       "%s: dump loss %g -> %g, golden %g -> %g", c->name, lb ? lb->num : NAN,
	       la ? la->num : NAN, loss[0], loss[1]);
	json_free(j);
	free(buf);
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fixture f;
		if (setup(&f, &cases[i])) {
			core_checks(&f, cases[i].name);
			ablation_checks(&f, cases[i].name);
			dump_checks(&f, &cases[i]);
		}
		teardown(&f);
	}
	return test_summary("explain");
}
