/* The weight-only circuits (circuits.h) against the
 * PyTorch reference (tests/golden/circuits_*.golden, from
 * tests/reference/gen_circuits_golden.py), then the known answer: on the
 * lab's previous-character model (lab.h) the head that carries the task
 * peaks at offset -1 with no text at all and copies what it reads.
 *
 * Tolerance. Both sides compute in binary64 from the same binary32 weights:
 * a sum of k terms whose magnitudes add up to A is within k 2^-53 A of the
 * exact one on each side (k <= V d, some 2^12 here, and A within 2^4 of a
 * tensor's largest value: under 2^-37 of it), far below the rounding of
 * both results to binary32, 2^-24 relative each. So a value is within
 * 2^-23 |want| + 2^-24 m, m the tensor's largest magnitude (the absolute
 * part for the values that cancel to near 0, as a centred score does). The
 * copying score takes the eigenvalues of b^T a (hs x hs) where the golden
 * takes all V of M (V x V, rank hs): its V - hs zero eigenvalues come out
 * of a backward-stable solver within V 2^-52 |M|_F each, which enlarges
 * sum |lambda| by at most V^2 2^-52 |M|_F, under 2^-30 of it here. A map's
 * character is compared where its value is apart from its neighbours'. */
#include "attnview/circuits.h"
#include "attnview/lab.h"
#include "attnview/modelfile.h"
#include "harness.h"
#include "json.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>

static const char *const cases[][2] = {
    {"golden/circuits_masked.golden", "golden/fwd_masked.attn"},
    {"golden/circuits_causal.golden", "golden/fwd_causal.attn"},
};

/* got[i] (stride apart) against the golden tensor want of n values. */
static void compare(const char *what, const float *got, size_t stride, const golden_tensor *want,
		    size_t n)
{
	CHECKF(want && want->size == n, "golden %s of %zu values", what, n);
	if (!want || want->size != n)
		return;
	double m = 0, worst = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(want->v[i]));
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)got[i * stride] - want->v[i]);
		double tol = ldexp(fabs(want->v[i]), -23) + ldexp(m, -24);
		worst = fmax(worst, d / tol);
		CHECKF(d <= tol, "%s[%zu]: %.9g, golden %.9g, tolerance %.2e", what, i,
		       got[i * stride], want->v[i], tol);
	}
	printf("  %s: %zu values, worst %.2f of the tolerance\n", what, n, worst);
}

static double num(const json *j)
{
	return j && j->type == J_NUM ? j->num : NAN;
}

/* The program's --dump --circuits: every head, its positional profile and
 * copying score as circuits_init gives them (checked against the golden
 * above; the dump prints floats exactly, %.9g). */
static void check_dump(const char *model_path, const circuits *c)
{
	char path[512];
	snprintf(path, sizeof path, "%s", test_path(model_path));
	const char *args[] = {"--model", path, "--text", "ab", "--circuits", NULL};
	json *j = test_dump_json(args);
	const json *heads = j ? json_get(j, "circuits") : NULL;
	const size_t LH = (size_t)c->layers * c->heads;
	CHECKF(heads && heads->n == LH, "dump: %zu heads", heads ? heads->n : 0);
	for (size_t i = 0; heads && i < heads->n && i < LH; i++) {
		const json *e = json_at(heads, i), *pos = json_get(e, "positional");
		CHECK(num(json_get(e, "layer")) == (double)(i / c->heads));
		CHECK(num(json_get(e, "head")) == (double)(i % c->heads));
		/* The program may run another BLAS kernel: its binary64 sums
		 * differ far below binary32, at most one ulp once rounded. */
		CHECK(fabs(num(json_get(e, "ov_copying")) - c->head[i].ov_copying) <=
		      ldexp(1, -24));
		CHECKF(pos && pos->n == (size_t)c->noffsets, "dump: head %zu's profile", i);
		for (size_t o = 0; pos && o < pos->n && o < (size_t)c->noffsets; o++) {
			const json *p = json_at(pos, o);
			CHECK(num(json_get(p, "offset")) == c->offset0 + (double)o);
			CHECKF((float)num(json_get(p, "score")) == c->head[i].positional[o],
			       "dump: head %zu offset %zu", i, o);
		}
		const json *comp = json_get(e, "composition");
		CHECK(comp && json_get(comp, "q") && json_get(comp, "q")->n == i / c->heads);
	}
	json_free(j);
}

static void run_case(const char *golden_path, const char *model_path)
{
	av_error err;
	golden g = {0};
	model *m = model_load(test_path(model_path), &err);
	CHECKF(m != NULL, "%s", err.msg);
	CHECKF(golden_load(&g, test_path(golden_path)), "%s", golden_path);
	circuits c;
	if (!m || !circuits_init(&c, m, &err)) {
		CHECKF(!m, "%s", err.msg);
		model_destroy(m);
		golden_free(&g);
		return;
	}
	printf("%s:\n", golden_path);
	const int L = c.layers, H = c.heads, LH = L * H, N = c.nqk;
	float *v = malloc((size_t)LH * (c.noffsets + N * N + 1 + 3 * LH) * sizeof *v);
	float *pos = v, *qk = pos + (size_t)LH * c.noffsets, *ov = qk + (size_t)LH * N * N;
	float *comp[3] = {ov + LH, ov + LH + LH * LH, ov + LH + 2 * LH * LH};
	for (int i = 0; i < LH; i++) {
		const circ_head *ch = &c.head[i];
		for (int o = 0; o < c.noffsets; o++)
			pos[(size_t)i * c.noffsets + o] = ch->positional[o];
		for (int a = 0; a < N; a++)
			for (int b = 0; b < N; b++)
				qk[((size_t)i * N + a) * N + b] = ch->qk[a][b];
		ov[i] = ch->ov_copying;
		for (int k = 0; k < LH; k++) {
			const float *src[3] = {ch->comp_q, ch->comp_k, ch->comp_v};
			for (int s = 0; s < 3; s++)
				comp[s][(size_t)i * LH + k] = k < (i / H) * H ? src[s][k] : 0.0f;
		}
	}
	compare("positional", pos, 1, golden_get(&g, "positional"), (size_t)LH * c.noffsets);
	compare("qk", qk, 1, golden_get(&g, "qk"), (size_t)LH * N * N);
	compare("ov_copying", ov, 1, golden_get(&g, "ov_copying"), (size_t)LH);
	compare("comp_q", comp[0], 1, golden_get(&g, "comp_q"), (size_t)LH * LH);
	compare("comp_k", comp[1], 1, golden_get(&g, "comp_k"), (size_t)LH * LH);
	compare("comp_v", comp[2], 1, golden_get(&g, "comp_v"), (size_t)LH * LH);
	const golden_tensor *gf = golden_get(&g, "map_from"), *gto = golden_get(&g, "map_to");
	const golden_tensor *gv = golden_get(&g, "map_value");
	float *mv = malloc((size_t)LH * CIRC_MAPS * sizeof *mv);
	for (int i = 0; i < LH; i++) {
		CHECK(c.head[i].nmaps == CIRC_MAPS);
		for (int k = 0; k < CIRC_MAPS; k++)
			mv[i * CIRC_MAPS + k] = c.head[i].maps[k].value;
	}
	compare("map_value", mv, 1, gv, (size_t)LH * CIRC_MAPS);
	int compared = 0;
	for (int i = 0; gf && gto && gv && i < LH * CIRC_MAPS; i++) {
		const int k = i % CIRC_MAPS;
		const double tol = ldexp(fabs(gv->v[i]), -22);
		if ((k > 0 && gv->v[i - 1] - gv->v[i] <= tol) ||
		    (k < CIRC_MAPS - 1 && gv->v[i] - gv->v[i + 1] <= tol))
			continue;
		const circ_map *mp = &c.head[i / CIRC_MAPS].maps[k];
		CHECKF(mp->from == (int32_t)gf->v[i] && mp->to == (int32_t)gto->v[i],
		       "map %d: %d -> %d, golden %g -> %g", i, mp->from, mp->to, gf->v[i],
		       gto->v[i]);
		compared++;
	}
	CHECK(compared > LH * CIRC_MAPS / 2);
	CHECK(fabs(c.baseline - 1 / sqrt(m->cfg.dim)) < 1e-7);
	check_dump(model_path, &c);
	free(mv);
	free(v);
	circuits_finish(&c);
	golden_free(&g);
	model_destroy(m);
}

/* The lab's previous-character task: its head (the one whose absence costs
 * the most accuracy) has its positional profile's peak at -1, from the
 * weights alone, and copies (a positive OV copying score). */
static void known_answer(void)
{
	av_error err;
	const lab_task *t = lab_find("previous");
	lab_options o = {.seed = 1};
	model *m = t ? lab_model_create(t, &o, &err) : NULL;
	CHECKF(m && lab_train(m, t, &o, NULL, NULL, &err), "%s", err.msg);
	const int LH = m ? (int)(m->cfg.layers * m->cfg.heads) : 0;
	double *acc = malloc((size_t)(LH ? LH : 1) * sizeof *acc);
	circuits c;
	bool ok = m && lab_ablate_each(m, t, o.seed, acc, &err) && circuits_init(&c, m, &err);
	CHECKF(ok, "%s", err.msg);
	if (ok) {
		int carrier = 0;
		for (int k = 1; k < LH; k++)
			if (acc[k] < acc[carrier])
				carrier = k;
		const int l = carrier / c.heads, h = carrier % c.heads;
		const circ_head *ch = &c.head[carrier];
		printf("previous: head %d.%d carries it (accuracy %.3f without it); peak at %d, "
		       "OV copying %.3f\n",
		       l, h, acc[carrier], circuits_peak(&c, l, h), ch->ov_copying);
		CHECKF(circuits_peak(&c, l, h) == -1, "the previous head peaks at %d",
		       circuits_peak(&c, l, h));
		CHECKF(ch->ov_copying > 0.5f, "the previous head's OV copying %.3f",
		       ch->ov_copying);
		/* Its positional pattern (what --export --circuits draws): each
		 * row a distribution over the keys it sees, its largest weight
		 * on the previous position at most rows. */
		const int T = (int)m->cfg.context;
		float *pat = malloc((size_t)T * T * sizeof *pat);
		CHECK(pat && circuits_positional_pattern(m, l, h, pat, &err));
		int prev = 0;
		for (int i = 1; pat && i < T; i++) {
			double sum = 0;
			int best = 0;
			for (int j = 0; j < T; j++) {
				sum += pat[(size_t)i * T + j];
				best =
				    pat[(size_t)i * T + j] > pat[(size_t)i * T + best] ? j : best;
			}
			CHECKF(fabs(sum - 1) < 1e-5, "row %d of the pattern sums to %g", i, sum);
			prev += best == i - 1;
		}
		CHECKF(prev >= (T - 1) * 3 / 4,
		       "the pattern peaks at the previous key on %d of %d rows", prev, T - 1);
		free(pat);
		circuits_finish(&c);
	}
	free(acc);
	model_destroy(m);
}

int main(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(cases[i][0], cases[i][1]);
	known_answer();
	return test_summary("circuits");
}
