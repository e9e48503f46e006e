/* The faithfulness meter (faith.h) against the PyTorch
 * reference (tests/golden/faith_*.golden, from
 * tests/reference/gen_faith_golden.py, in float64), faith_spearman on
 * known cases, and the known answer: on the lab's previous-character model
 * (lab.h) the previous key is the one whose blanking costs the most, and
 * the head that looks at it is faithful.
 *
 * Tolerances from the bounds of tests/lib/bound.c (man 5 attnview, NOTES,
 * Accuracy): each pass of the meter (the row's own text, or one key
 * blanked) is bounded on its own, t the largest bound of a logit at the row.
 * A loss, log-sum-exp minus a logit, moves by at most the largest move of
 * the logits plus the target's: within 2t; an effect, the difference of two
 * losses, within 2t of each. A Spearman correlation is compared where no
 * two of its effects are within their tolerances of each other and no two
 * attention weights within their bounds: the ranks, and so the correlation,
 * are then the golden's exactly. */
#include "attnview/faith.h"
#include "attnview/lab.h"
#include "attnview/modelfile.h"
#include "bound.h"
#include "harness.h"
#include "json.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The texts of gen_faith_golden.py. */
static const char *const cases[][3] = {
    {"golden/faith_masked.golden", "golden/fwd_masked.attn", "Attention is all you need!"},
    {"golden/faith_causal.golden", "golden/fwd_causal.attn", "Yes, the cat's mat, the cat."},
};

/* The largest logit bound at `row` of text x; with att not NULL, the
 * binary64 attention of the row's heads (L H, n) and its bounds after it. */
static double pass_bound(const model *m, const int32_t *x, int n, int row, double *att)
{
	fwd_bound b;
	if (!fwd_bound_compute_row(&b, m, x, n, NULL, row))
		return INFINITY;
	double t = 0;
	for (int v = 0; v < b.V; v++)
		t = fmax(t, b.logits_err[(size_t)row * b.V + v]);
	const size_t LHn = (size_t)b.L * b.H * n;
	for (size_t k = 0; att && k < (size_t)b.L * b.H; k++)
		for (int j = 0; j < n; j++) {
			att[k * n + j] = b.att[(k * n + row) * n + j];
			att[LHn + k * n + j] = b.att_err[(k * n + row) * n + j];
		}
	fwd_bound_finish(&b);
	return t;
}

/* w[a] = how many of the values v (tolerances e) are within tolerance of
 * v[a]: how far a's rank may move. */
static void windows(const double *v, const double *e, int n, int *w)
{
	for (int a = 0; a < n; a++) {
		w[a] = 0;
		for (int b = 0; b < n; b++)
			w[a] += b != a && fabs(v[a] - v[b]) <= e[a] + e[b];
	}
}

/* How far a Spearman correlation of n values may move when each value's
 * rank moves by up to wx[a] in x and wy[a] in y: with d the rank
 * differences, rho = 1 - 6 sum d^2 / (n (n^2 - 1)), and each |d_a| <= n - 1
 * moves by at most m_a = wx[a] + wy[a], so sum d^2 by at most
 * sum (2 (n - 1) m_a + m_a^2). */
static double rho_tolerance(const int *wx, const int *wy, int n)
{
	double s = 0;
	for (int a = 0; a < n; a++) {
		double ma = wx[a] + wy[a];
		s += 2.0 * (n - 1) * ma + ma * ma;
	}
	return 6 * s / ((double)n * ((double)n * n - 1)) + 1e-12;
}

static double num(const json *j)
{
	return j && j->type == J_NUM ? j->num : NAN;
}

/* The program's --dump --faithfulness of the golden's text into loss, eff
 * and sp (NAN where it printed null), for the same checks. */
static void dump_of(const char *model_path, const char *text, int n, int LH, float *loss,
		    float *eff, float *sp)
{
	char path[512];
	snprintf(path, sizeof path, "%s", test_path(model_path));
	const char *args[] = {"--model", path, "--text", text, "--faithfulness", NULL};
	json *j = test_dump_json(args);
	const json *f = json_get(j, "faithfulness"), *rows = json_get(j, "faithfulness_rows");
	CHECK(f && f->n == (size_t)LH && rows && rows->n == (size_t)n);
	for (int q = 0; q < n; q++) {
		const json *r = json_at(rows, (size_t)q), *e = json_get(r, "effects");
		loss[q] = (float)num(json_get(r, "loss"));
		for (int k = 0; k < n; k++)
			eff[(size_t)q * n + k] = (float)num(json_at(e, (size_t)k));
		for (int k = 0; k < LH; k++)
			sp[(size_t)q * LH + k] = (float)num(
			    json_get(json_at(json_get(json_at(f, (size_t)k), "rows"), (size_t)q),
				     "spearman"));
	}
	json_free(j);
}

static void run_case(const char *golden_path, const char *model_path, const char *text)
{
	av_error err;
	golden g = {0};
	model *m = model_load(test_path(model_path), &err);
	CHECKF(m != NULL, "%s", err.msg);
	CHECKF(golden_load(&g, test_path(golden_path)), "%s", golden_path);
	const golden_tensor *gi = golden_get(&g, "ids");
	if (!m || !gi) {
		model_destroy(m);
		golden_free(&g);
		return;
	}
	const int n = (int)gi->size, LH = (int)(m->cfg.layers * m->cfg.heads);
	const bool causal = m->cfg.objective == OBJ_CAUSAL;
	int32_t *ids = golden_ids(gi), *x = malloc((size_t)n * sizeof *x);
	float *loss = malloc((size_t)n * sizeof *loss), *eff = malloc((size_t)n * n * sizeof *eff);
	float *sp = malloc((size_t)n * LH * sizeof *sp);
	double *ae = malloc(2 * (size_t)LH * n * sizeof *ae), *te = malloc((size_t)n * sizeof *te);
	double *v = malloc(2 * (size_t)n * sizeof *v), *e = v + n;
	CHECKF(faith_rows(m, ids, n, 0, n, loss, eff, sp, NULL, NULL, NULL, &err), "%s", err.msg);
	/* [0] the library's, [1] the program's --dump */
	float *dl = malloc((size_t)n * (1 + n + LH) * sizeof *dl), *de = dl + n,
	      *ds = de + (size_t)n * n;
	dump_of(model_path, text, n, LH, dl, de, ds);
	const float *LS[2] = {loss, dl}, *SS[2] = {sp, ds};
	/* One row alone (the view's question; a causal model's rows together
	 * take another path) agrees with the golden the same way. */
	const int mid = n / 2;
	float l1, *e1 = malloc(((size_t)n + LH) * sizeof *e1), *s1 = e1 + n;
	CHECK(faith_rows(m, ids, n, mid, 1, &l1, e1, s1, NULL, NULL, NULL, &err));
	const golden_tensor *gl = golden_get(&g, "loss"), *ge = golden_get(&g, "effect"),
			    *gs = golden_get(&g, "spearman");
	CHECK(gl && gl->size == (size_t)n && ge && ge->size == (size_t)n * n && gs &&
	      gs->size == (size_t)n * LH);
	int rows = 0, exact = 0, defined = 0, *wx = malloc(2 * (size_t)n * sizeof *wx),
	    *wy = wx + n;
	double worst = 0, widest = 0, largest = 0;
	for (int i = 0; gl && ge && gs && i < n; i++) {
		for (int u = 0; u < 2; u++)
			CHECKF(isnan(LS[u][i]) == isnan(gl->v[i]), "%s row %d: loss %g, golden %g",
			       u ? "dump" : "", i, LS[u][i], gl->v[i]);
		if (isnan(gl->v[i]))
			continue;
		rows++;
		memcpy(x, ids, (size_t)n * sizeof *x);
		if (!causal)
			x[i] = TOK_MASK;
		const double t0 = pass_bound(m, x, n, i, ae);
		for (int u = 0; u < 2; u++)
			CHECKF(fabs(LS[u][i] - gl->v[i]) <= 2 * t0,
			       "%s row %d: loss %.9g, golden %.9g", u ? "dump" : "", i, LS[u][i],
			       gl->v[i]);
		for (int j = 0; j < n; j++) {
			const double want = ge->v[(size_t)i * n + j], got = eff[(size_t)i * n + j];
			const double got2 = de[(size_t)i * n + j];
			CHECKF(isnan(got) == isnan(want) && isnan(got2) == isnan(want),
			       "row %d key %d: effect %g (dump %g), golden %g", i, j, got, got2,
			       want);
			if (isnan(want))
				continue;
			const int32_t keep = x[j];
			x[j] = causal ? TOK_UNK : TOK_MASK;
			te[j] = 2 * t0 + 2 * pass_bound(m, x, n, i, NULL);
			x[j] = keep;
			worst = fmax(worst, fabs(got - want) / te[j]);
			CHECKF(fabs(got2 - want) <= te[j],
			       "dump row %d key %d: effect %.9g, golden %.9g", i, j, got2, want);
			CHECKF(i != mid || fabs(e1[j] - want) <= te[j],
			       "row %d alone, key %d: effect %.9g, golden %.9g", i, j, e1[j], want);
			CHECKF(fabs(got - want) <= te[j],
			       "row %d key %d: effect %.9g, golden %.9g, "
			       "tolerance %.2e",
			       i, j, got, want, te[j]);
		}
		int nk = 0;
		for (int j = 0; j < n; j++)
			if (!isnan(ge->v[(size_t)i * n + j]))
				v[nk] = ge->v[(size_t)i * n + j], e[nk++] = te[j];
		windows(v, e, nk, wx);
		for (int k = 0; k < LH; k++) {
			const double want = gs->v[(size_t)i * LH + k], got = sp[(size_t)i * LH + k];
			const double got2 = SS[1][(size_t)i * LH + k];
			defined += !isnan(want);
			int na = 0;
			for (int j = 0; j < n; j++)
				if (!isnan(ge->v[(size_t)i * n + j])) {
					v[na] = ae[(size_t)k * n + j];
					e[na++] = ae[((size_t)LH + k) * n + j];
				}
			if (isnan(want)) {
				CHECKF(isnan(got) && isnan(got2),
				       "row %d head %d: Spearman %g (dump %g), golden nan", i, k,
				       got, got2);
				continue;
			}
			windows(v, e, na, wy);
			const double tol = rho_tolerance(wx, wy, na);
			exact += tol < 1e-9;
			widest = fmax(widest, tol);
			largest = fmax(largest, fabs(got - want));
			CHECKF(fabs(got2 - want) <= tol,
			       "dump row %d head %d: Spearman %.9g, golden %.9g", i, k, got2, want);
			CHECKF(fabs(got - want) <= tol,
			       "row %d head %d: Spearman %.9g, golden %.9g, tolerance %.2e", i, k,
			       got, want, tol);
		}
	}
	printf("%s: %d rows, effects within %.2f of their tolerance; %d Spearman "
	       "correlations, %d with unambiguous ranks, the widest tolerance %.3f, the largest "
	       "difference %.2e\n",
	       golden_path, rows, worst, defined, exact, widest, largest);
	CHECK(rows > n / 2 && defined > 0);
	free(wx);
	free(dl);
	free(e1);
	free(ids);
	free(x);
	free(loss);
	free(eff);
	free(sp);
	free(ae);
	free(te);
	free(v);
	golden_free(&g);
	model_destroy(m);
}

/* Known answers of the rank correlation. */
static void check_spearman(void)
{
	const float a[] = {1, 2, 3, 4}, b[] = {10, 20, 30, 45}, c[] = {4, 3, 2, 1};
	const float tie[] = {1, 1, 2, 2}, flat[] = {5, 5, 5, 5};
	CHECK(fabs(faith_spearman(a, b, 4) - 1) < 1e-12);
	CHECK(fabs(faith_spearman(a, c, 4) + 1) < 1e-12);
	/* ranks 1.5 1.5 3.5 3.5 against 1 2 3 4: 4 / sqrt(5 * 4) */
	CHECK(fabs(faith_spearman(tie, a, 4) - 4 / sqrt(20.0)) < 1e-12);
	CHECK(isnan(faith_spearman(flat, a, 4)));
	CHECK(isnan(faith_spearman(a, b, 1)));
}

/* The lab's previous-character task: at the rows where the next letter is
 * the one before (text[i+1] = text[i-1], as the task's blocks make them),
 * blanking the previous key raises the loss the most of the keys other
 * than the query's own on most rows, and the model's one head, which looks
 * at it, has a clearly positive mean Spearman correlation there. */
static void known_answer(void)
{
	av_error err;
	const lab_task *t = lab_find("previous");
	lab_options o = {.seed = 1};
	model *m = t ? lab_model_create(t, &o, &err) : NULL;
	const bool trained = m && lab_train(m, t, &o, NULL, NULL, &err);
	CHECKF(trained, "%s", err.msg);
	if (!trained) {
		model_destroy(m);
		return;
	}
	const int T = (int)m->cfg.context, LH = (int)(m->cfg.layers * m->cfg.heads);
	uint32_t *cps = malloc(((size_t)T + 1) * sizeof *cps);
	int32_t *ids = malloc((size_t)T * sizeof *ids);
	float *loss = malloc((size_t)T * sizeof *loss), *eff = malloc((size_t)T * T * sizeof *eff);
	float *sp = malloc((size_t)T * LH * sizeof *sp);
	int rows = 0, hits = 0, defined = 0;
	double sum = 0;
	for (int s = 0; s < 4; s++) {
		lab_sample(t, o.seed, s, T, cps);
		for (int i = 0; i < T; i++)
			ids[i] = vocab_id(&m->vocab, cps[i]);
		CHECKF(faith_rows(m, ids, T, 0, T, loss, eff, sp, NULL, NULL, NULL, &err), "%s",
		       err.msg);
		for (int i = 1; i + 1 < T; i++) {
			if (cps[i + 1] != cps[i - 1] || isnan(loss[i]))
				continue;
			int best = 0;
			for (int j = 1; j < i; j++)
				best =
				    eff[(size_t)i * T + j] > eff[(size_t)i * T + best] ? j : best;
			rows++;
			hits += best == i - 1;
			if (!isnan(sp[(size_t)i * LH])) {
				sum += sp[(size_t)i * LH];
				defined++;
			}
		}
	}
	printf("previous: the previous key matters most on %d of %d rows; mean Spearman %.3f\n",
	       hits, rows, defined ? sum / defined : NAN);
	CHECKF(rows >= 20 && hits * 2 > rows, "the previous key matters most on %d of %d rows",
	       hits, rows);
	CHECKF(defined && sum / defined > 0.4, "mean Spearman %.3f", sum / defined);
	free(cps);
	free(ids);
	free(loss);
	free(eff);
	free(sp);
	model_destroy(m);
}

int main(void)
{
	check_spearman();
	known_answer();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(cases[i][0], cases[i][1], cases[i][2]);
	return test_summary("faith");
}
