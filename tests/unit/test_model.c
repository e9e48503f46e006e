/* The forward pass against the independent PyTorch implementation
 * (tests/reference): for each golden model and input, the tokens, every
 * attention weight, every raw score, the logits and the prediction logits.
 * PyTorch's numbers are binary32 too: each of the two is within the bound of
 * binary64 that tests/lib/bound.c derives for the number (man 5 attnview, NOTES),
 * so they must agree to twice that bound, whatever BLAS kernel runs. The
 * BLAS path and the plain-loop path are both checked. */
#include "bound.h"
#include "harness.h"

#include "attnview/modelfile.h"
#include "attnview/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static char **read_lines(const char *path, int *n)
{
	size_t len;
	char *text = (char *)test_read_file(path, &len);
	*n = 0;
	if (!text)
		return NULL;
	char **lines = calloc(64, sizeof *lines);
	char *s = text, *end = text + len;
	while (s < end && *n < 64) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t k = nl ? (size_t)(nl - s) : (size_t)(end - s);
		lines[*n] = strndup(s, k);
		(*n)++;
		s += k + 1;
	}
	free(text);
	return lines;
}

static void check_tokens(const model *m, const golden *g, int i, const char *text, token **out,
			 int *nout)
{
	char name[64];
	cp_buf cps = {0};
	av_error err;
	bool ok = tokenize_text(text, strlen(text), "golden input", &cps, NULL, &err);
	CHECKF(ok, "%s", err.msg);
	snprintf(name, sizeof name, "in%d.cps", i);
	const golden_tensor *gc = golden_get(g, name);
	snprintf(name, sizeof name, "in%d.ids", i);
	const golden_tensor *gi = golden_get(g, name);
	*nout = 0;
	*out = NULL;
	if (!ok || !gc || !gi)
		return;
	CHECKF(cps.n == gc->size, "input %d: %zu tokens, PyTorch has %zu", i, cps.n, gc->size);
	if (cps.n != gc->size)
		return;
	token *t = malloc(cps.n * sizeof *t);
	vocab_tokenize(&m->vocab, cps.v, cps.n, t);
	for (size_t k = 0; k < cps.n; k++) {
		CHECKF(cps.v[k] == (uint32_t)gc->v[k], "input %d token %zu: U+%04X vs U+%04X", i, k,
		       cps.v[k], (uint32_t)gc->v[k]);
		CHECKF(t[k].id == (int32_t)gi->v[k], "input %d token %zu: id %d vs %d", i, k,
		       t[k].id, (int32_t)gi->v[k]);
		CHECK(t[k].unknown == (t[k].id == TOK_UNK));
	}
	*out = t;
	*nout = (int)cps.n;
	cp_buf_finish(&cps);
}

/* got (attnview) against want (PyTorch's golden, or another binary32 pass
 * of attnview): within twice the bound err of each number. */
static void within(const char *what, const float *got, const float *want, const double *err,
		   size_t n)
{
	double worst = 0, wabs = 0;
	size_t at = 0;
	for (size_t k = 0; k < n; k++) {
		if (isnan(got[k]) || isnan(want[k])) {
			CHECKF(isnan(got[k]) && isnan(want[k]), "%s [%zu]: NaN against a number", what,
			       k);
			continue;
		}
		double d = fabs((double)got[k] - want[k]), r = d / (2 * err[k]);
		if (d > 0 && r > worst) {
			worst = r;
			at = k;
		}
		wabs = d > wabs ? d : wabs;
	}
	printf("%s: %zu values, largest difference %.2e, %.3f of twice its bound\n", what, n, wabs,
	       worst);
	CHECKF(worst <= 1, "%s [%zu]: %.2f times twice its bound (%.2e)", what, at, worst,
	       2 * err[at]);
}

static void compare(const golden *g, int i, const char *field, const float *got,
		    const double *err, const char *tag)
{
	char name[64], what[128];
	snprintf(name, sizeof name, "in%d.%s", i, field);
	const golden_tensor *t = golden_get(g, name);
	CHECK(t != NULL);
	if (t) {
		snprintf(what, sizeof what, "%s %s", tag, name);
		within(what, got, t->v, err, t->size);
	}
}

static void check_model(const char *stem)
{
	char path[256];
	av_error err;
	snprintf(path, sizeof path, "golden/%s.attn", stem);
	model *m = model_load(test_path(path), &err);
	CHECKF(m != NULL, "%s", err.msg);
	snprintf(path, sizeof path, "golden/%s.golden", stem);
	golden g;
	bool gok = golden_load(&g, test_path(path));
	CHECK(gok);
	int nin;
	char **inputs = read_lines(test_path("golden/inputs.txt"), &nin);
	CHECK(inputs && nin >= 5);
	if (!m || !gok || !inputs)
		return;
	const model_config *c = &m->cfg;
	const size_t L = c->layers, H = c->heads, V = c->vocab_size;
	activations ws;
	CHECK(activations_init(&ws, c, 1, (int)c->context, (int)c->context, &err));
	for (int i = 0; i < nin; i++) {
		token *t;
		int n;
		check_tokens(m, &g, i, inputs[i], &t, &n);
		if (!t)
			continue;
		attn_result r;
		CHECKF(model_attend(m, &ws, t, n, 3, &r, &err), "%s", err.msg);
		int32_t *ids = malloc((size_t)n * sizeof *ids);
		for (int k = 0; k < n; k++)
			ids[k] = t[k].id;
		fwd_bound b;
		CHECK(fwd_bound_compute(&b, m, ids, n, NULL));
		const size_t cells = (size_t)L * H * (size_t)n * n;
		float *ra = malloc(2 * cells * sizeof *ra), *rs = ra + cells;
		attn_result_dense(&r, ra, rs);
		compare(&g, i, "att", ra, b.att_err, stem);
		compare(&g, i, "scores", rs, b.score_err, stem);

		/* Logits of every position. */
		model_forward(m, &ws, ids, 1, n);
		model_logits(m, &ws, NULL, n);
		compare(&g, i, "logits", ws.logits, b.logits_err, stem);

		/* The same through the plain loops. */
		model_forward_ref(m, &ws, ids, 1, n);
		float *att_ref = malloc(H * (size_t)n * n * sizeof(float));
		memcpy(att_ref, ws.layer[L - 1].att, H * (size_t)n * n * sizeof(float));
		within("reference loops vs BLAS, last layer att", ra + (L - 1) * H * (size_t)n * n,
		       att_ref, b.att_err + (L - 1) * H * (size_t)n * n, H * (size_t)n * n);
		free(att_ref);
		free(ra);

		/* Prediction logits: masked models see the position masked. */
		float *pl = malloc((size_t)n * V * sizeof(float));
		double *pe = malloc((size_t)n * V * sizeof(double));
		for (int p = 0; p < n; p++) {
			int32_t save = ids[p];
			if (c->objective == OBJ_MASKED)
				ids[p] = TOK_MASK;
			model_forward(m, &ws, ids, 1, n);
			int32_t row = p;
			model_logits(m, &ws, &row, 1);
			memcpy(pl + (size_t)p * V, ws.logits, V * sizeof(float));
			fwd_bound bp;
			CHECK(fwd_bound_compute_row(&bp, m, ids, n, NULL, p));
			memcpy(pe + (size_t)p * V, bp.logits_err + (size_t)p * V, V * sizeof(double));
			fwd_bound_finish(&bp);
			ids[p] = save;
		}
		compare(&g, i, "pred_logits", pl, pe, stem);

		/* model_attend's top predictions are the arg-max of those logits
		 * over the characters (special tokens are never predicted), to
		 * rounding: a logit within twice the two bounds of the largest may
		 * win in another pass. */
		for (int p = 0; p < n; p++) {
			int best = TOK_NSPECIAL, got = r.pred_id[p * 3];
			for (size_t v = TOK_NSPECIAL + 1; v < V; v++)
				if (pl[(size_t)p * V + v] > pl[(size_t)p * V + best])
					best = (int)v;
			const size_t pb = (size_t)p * V + best, pg = (size_t)p * V + (size_t)got;
			CHECKF(got >= TOK_NSPECIAL && pl[pg] >= pl[pb] - 2 * (pe[pb] + pe[pg]),
			       "%s input %d pos %d: top prediction %d, "
			       "arg-max of the logits %d",
			       stem, i, p, got, best);
			CHECK(r.pred_p[p * 3] >= r.pred_p[p * 3 + 1] &&
			      r.pred_p[p * 3 + 1] >= r.pred_p[p * 3 + 2]);
		}
		free(pl);
		free(pe);
		free(ids);
		fwd_bound_finish(&b);
		attn_result_finish(&r);
		free(t);
	}
	activations_finish(&ws);
	for (int i = 0; i < nin; i++)
		free(inputs[i]);
	free(inputs);
	golden_free(&g);
	model_destroy(m);
}

/* The size table and the carving agree, and cover every parameter once. */
static void check_layout(void)
{
	model_config c = {OBJ_MASKED, 50, 8, 2, 3, 16, {0}};
	size_t nt = model_tensor_table(&c, NULL, 0);
	CHECK(nt == 1 + 12 * 3 + 3);
	tensor_info *t = malloc(nt * sizeof *t);
	model_tensor_table(&c, t, nt);
	size_t off = 0;
	for (size_t i = 0; i < nt; i++) {
		CHECKF(t[i].offset == off, "%s at %zu, expected %zu", t[i].name, t[i].offset, off);
		off += t[i].size;
	}
	CHECK(off == model_num_params(&c));
	float *base = calloc(off, sizeof(float));
	model_params p;
	model_params_map(&p, base, &c);
	CHECK(p.wte == base);
	CHECK(p.layer[1].fc2_w == base + t[1 + 12 + 10].offset);
	CHECK(!strcmp(t[1 + 12 + 10].name, "h1.fc2_w"));
	CHECK(p.out_b == base + t[nt - 1].offset);
	/* Weight decay on the matrices, and only there. */
	for (size_t i = 0; i < nt; i++)
		CHECKF(t[i].decay == (t[i].cols > 1), "%s: decay %d", t[i].name, t[i].decay);
	free(base);
	free(t);

	av_error err;
	model_config bad = c;
	bad.heads = 3;
	CHECK(!model_config_check(&bad, &err) && strstr(err.msg, "divisible"));
	bad = c;
	bad.context = AV_MAX_CONTEXT + 1;
	CHECK(!model_config_check(&bad, &err) && strstr(err.msg, "context"));
	bad = c;
	bad.dim = 7;
	CHECK(!model_config_check(&bad, &err));
}

/* model_init_random fills every tensor as the size table says: LayerNorm
 * gains 1, biases 0, weights N(0, 0.02), the residual projections narrower by
 * sqrt(2L); and the same seed gives the same model. */
static void check_init(void)
{
	model_config c = {OBJ_CAUSAL, 40, 16, 2, 2, 8, {0}};
	uint32_t cps[40];
	for (uint32_t i = 0; i < 40; i++)
		cps[i] = i < TOK_NSPECIAL ? 0x110000u + i : 'A' + i;
	av_error err;
	model *m = model_create(&c, cps, &err), *m2 = model_create(&c, cps, &err);
	CHECK(m && m2);
	if (!m || !m2) {
		model_destroy(m);
		model_destroy(m2);
		return;
	}
	model_init_random(m, 3);
	model_init_random(m2, 3);
	CHECK(memcmp(m->params, m2->params, m->nparams * sizeof(float)) == 0);
	tensor_iter it = tensor_iter_start(&c);
	tensor_info t;
	while (tensor_iter_next(&it, &t)) {
		const float *x = m->params + t.offset;
		double ss = 0.0;
		size_t ones = 0, zeros = 0;
		for (size_t j = 0; j < t.size; j++) {
			ss += (double)x[j] * x[j];
			ones += x[j] == 1.0f;
			zeros += x[j] == 0.0f;
		}
		double sd = sqrt(ss / (double)t.size);
		bool gain = strstr(t.name, "ln") && t.name[strlen(t.name) - 1] == 'w';
		bool residual = strstr(t.name, "proj_w") || strstr(t.name, "fc2_w");
		if (gain)
			CHECKF(ones == t.size, "%s: %zu of %zu are 1", t.name, ones, t.size);
		else if (t.cols == 1)
			CHECKF(zeros == t.size, "%s: %zu of %zu are 0", t.name, zeros, t.size);
		else
			CHECKF(fabs(sd / (residual ? 0.01 : 0.02) - 1.0) < 0.2, "%s: sd %g", t.name,
			       sd);
	}
	model_destroy(m);
	model_destroy(m2);
}

/* Positions follow the documented formula. */
static void check_positions(void)
{
	float pe[4 * 6];
	positions_init(pe, 4, 6);
	CHECK(pe[0] == 0.0f && pe[1] == 1.0f);
	CHECK(fabsf(pe[3 * 6 + 2] - (float)sin(3 * pow(10000.0, -2.0 / 6))) < 1e-7f);
	CHECK(fabsf(pe[2 * 6 + 5] - (float)cos(2 * pow(10000.0, -4.0 / 6))) < 1e-7f);
}

/* The softmax over a large vocabulary: one likely id and 20000 unlikely ones,
 * as at the output of a model. Summed in binary32, the many small terms are
 * rounded at every addition, mostly the same way, and every probability is off
 * in the same direction (by 1.8e-4 here); each result must be the exact
 * softmax to within 1e-7, relative, as man 5 attnview says. */
static void check_softmax(void)
{
	enum { V = 20001 };
	float *x = malloc(2 * V * sizeof *x);
	for (int i = 0; i < V; i++) {
		x[i] = i == 0 ? 3.0f : -5.0f + 1e-4f * (float)(i % 7);
		x[V + i] = (float)(i % 97) * 0.25f; /* a second row, unlike the first */
	}
	double sum[2] = {0, 0}, mx[2] = {3.0, 24.0};
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < V; i++)
			sum[r] += exp((double)x[r * V + i] - mx[r]);
	double want[2][3];
	const int ids[3] = {0, 1, 96};
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < 3; k++)
			want[r][k] = exp((double)x[r * V + ids[k]] - mx[r]) / sum[r];
	softmax_rows(x, 2, V);
	double worst = 0, total = 0;
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < 3; k++)
			worst = fmax(worst, fabs(x[r * V + ids[k]] - want[r][k]) / want[r][k]);
	for (int i = 0; i < V; i++)
		total += x[i];
	CHECKF(worst <= 1e-7, "softmax: relative error %.3g", worst);
	CHECKF(fabs(total - 1) <= 1e-6, "softmax: the row sums to 1 + %.3g", total - 1);
	free(x);
}

int main(void)
{
	check_layout();
	check_init();
	check_positions();
	check_softmax();
	check_model("fwd_masked");
	check_model("fwd_causal");
	return test_summary("model");
}
