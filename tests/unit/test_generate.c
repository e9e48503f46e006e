/* Writing text with a causal model (generate.h): the logits after a text and
 * the characters the sampler picks, greedy and at temperatures, against the
 * PyTorch forward and a sampler written again from the man page
 * (tests/reference/gen_generate_golden.py); the sampler's distribution, its
 * exclusions and tie rule; and the same characters from the program's
 * --dump --generate. Tolerances from the bounds of tests/lib/bound.c (man 5
 * attnview, NOTES, Accuracy): PyTorch's logits and attnview's differ by at
 * most twice the bound of each; a probability p_i = softmax(l)_i moves by
 * p_i (e_i - sum_j p_j e_j), at most twice the largest change of a logit. */
#include "attnview/generate.h"
#include "attnview/modelfile.h"
#include "bound.h"
#include "harness.h"
#include "run_dump.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const golden_runs[] = {"greedy", "t08_k20_s1", "t15_all_s7", "t1_k3_s42"};

/* The largest bound of the logits of row n - 1 after ids[0..n). */
static double logits_bound(const model *m, const int32_t *ids, int n, double *row_err)
{
	fwd_bound b;
	double worst = 0;
	CHECK(fwd_bound_compute_row(&b, m, ids, n, NULL, n - 1));
	for (int v = 0; v < b.V; v++) {
		double e = b.logits_err[(size_t)(n - 1) * b.V + v];
		if (row_err)
			row_err[v] = 2 * e;
		worst = e > worst ? e : worst;
	}
	fwd_bound_finish(&b);
	return worst;
}

/* got against want, each within twice its bound (tol, per element). */
static void check_tol(const char *what, const float *got, const float *want, const double *tol,
		      size_t n)
{
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)got[i] - want[i]);
		worst = fmax(worst, d / tol[i]);
	}
	printf("%s: largest difference %.3f of its tolerance\n", what, worst);
	CHECKF(worst <= 1, "%s: a difference %.2f times its tolerance", what, worst);
}

/* The golden runs, step by step, through model_next_logits and gen_pick. */
static void test_golden(void)
{
	golden g;
	av_error err;
	model *m = model_load(test_path("golden/fwd_causal.attn"), &err);
	CHECKF(m != NULL, "%s", err.msg);
	CHECK(golden_load(&g, test_path("golden/generate_causal.golden")));
	if (!m || !g.t)
		return;
	const int T = (int)m->cfg.context, V = (int)m->cfg.vocab_size;
	activations ws;
	CHECKF(activations_init(&ws, &m->cfg, 1, T, T, &err), "%s", err.msg);
	const golden_tensor *start = golden_get(&g, "ids");
	int32_t *ids = calloc((size_t)T, sizeof *ids);
	float *logits = malloc((size_t)V * sizeof *logits);
	int32_t *first = golden_ids(start);
	int n0 = (int)start->size;
	memcpy(ids, first, (size_t)n0 * sizeof *ids);
	CHECK(model_next_logits(m, &ws, ids, n0, logits, &err));
	double *tol = malloc((size_t)(V > T ? V : T) * sizeof *tol);
	logits_bound(m, ids, n0, tol);
	check_tol("logits after the text", logits, golden_get(&g, "logits")->v, tol, (size_t)V);

	for (size_t r = 0; r < sizeof golden_runs / sizeof golden_runs[0]; r++) {
		char name[64];
		snprintf(name, sizeof name, "run_%s", golden_runs[r]);
		const golden_tensor *run = golden_get(&g, name);
		snprintf(name, sizeof name, "gen_%s", golden_runs[r]);
		const golden_tensor *want = golden_get(&g, name);
		snprintf(name, sizeof name, "p_%s", golden_runs[r]);
		const golden_tensor *want_p = golden_get(&g, name);
		CHECK(run && want && want_p);
		if (!run || !want || !want_p)
			continue;
		gen_sampler s;
		gen_sampler_init(&s, run->v[0], (int)run->v[1], (uint64_t)run->v[2]);
		memcpy(ids, first, (size_t)n0 * sizeof *ids);
		int n = n0, steps = (int)want->size, same = 0;
		float *p = malloc((size_t)steps * sizeof *p);
		for (int k = 0; k < steps && n < T; k++) {
			model_next_logits(m, &ws, ids, n, logits, &err);
			tol[k] = 2 * 2 * logits_bound(m, ids, n, NULL);
			ids[n] = gen_pick(&s, logits, V, &p[k]);
			same += ids[n] == (int32_t)want->v[k];
			n++;
		}
		CHECKF(same == steps, "%s: %d of %d characters as PyTorch's", golden_runs[r], same,
		       steps);
		snprintf(name, sizeof name, "%s: probabilities", golden_runs[r]);
		check_tol(name, p, want_p->v, tol, (size_t)steps);
		free(p);
		gen_sampler_finish(&s);
	}
	free(first);
	free(ids);
	free(logits);
	free(tol);
	activations_finish(&ws);
	golden_free(&g);
	model_destroy(m);
}

/* The rules: no specials, the lowest id on a tie, top-k 1 is greedy, the
 * seed decides, and the frequencies are the tempered softmax. */
static void test_sampler(void)
{
	/* ids 0..2 are specials; the mask has the largest logit of all */
	float logits[8] = {0, 1, 9, 2, 3, 3, 1, 0.5f};
	float p;
	gen_sampler s;
	gen_sampler_init(&s, 0, 0, 1);
	CHECK(gen_pick(&s, logits, 8, &p) == 4); /* 4 and 5 tie: the lower id */
	double z = 0;
	for (int i = 0; i < 8; i++)
		z += exp(logits[i] - 9.0);
	CHECKF(fabs(p - exp(3.0 - 9.0) / z) < 1e-6, "p %g", (double)p);
	gen_sampler_finish(&s);

	gen_sampler_init(&s, 2.0f, 1, 5);
	for (int i = 0; i < 50; i++)
		CHECK(gen_pick(&s, logits, 8, NULL) == 4);
	gen_sampler_finish(&s);

	/* Frequencies over 200000 picks at temperature 0.5 among the top 3
	 * (ids 4, 5, 3): weights exp(2 (l - 3)), so 1 : 1 : e^-2. */
	enum { N = 200000 };
	int count[8] = {0};
	gen_sampler_init(&s, 0.5f, 3, 11);
	for (int i = 0; i < N; i++)
		count[gen_pick(&s, logits, 8, NULL)]++;
	gen_sampler_finish(&s);
	double w3 = exp(-2.0), tot = 2 + w3;
	CHECK(count[0] + count[1] + count[2] + count[6] + count[7] == 0);
	for (int id = 3; id <= 5; id++) {
		double want = (id == 3 ? w3 : 1) / tot, got = (double)count[id] / N;
		/* five standard deviations of a binomial proportion */
		double sd = sqrt(want * (1 - want) / N);
		CHECKF(fabs(got - want) < 5 * sd, "id %d: %.4f of the picks, want %.4f", id, got,
		       want);
	}

	/* The same seed, the same picks; another seed, others. */
	int32_t a[64], b[64], c[64];
	gen_sampler sa, sb, sc;
	gen_sampler_init(&sa, 1, 0, 3);
	gen_sampler_init(&sb, 1, 0, 3);
	gen_sampler_init(&sc, 1, 0, 4);
	for (int i = 0; i < 64; i++) {
		a[i] = gen_pick(&sa, logits, 8, NULL);
		b[i] = gen_pick(&sb, logits, 8, NULL);
		c[i] = gen_pick(&sc, logits, 8, NULL);
	}
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(memcmp(a, c, sizeof a) != 0);
	gen_sampler_finish(&sa);
	gen_sampler_finish(&sb);
	gen_sampler_finish(&sc);
}

/* A masked model does not write: the message says what to use instead. */
static void test_masked(void)
{
	av_error err;
	model *m = model_load(test_path("golden/fwd_masked.attn"), &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		return;
	activations ws;
	CHECK(activations_init(&ws, &m->cfg, 1, 4, 4, &err));
	int32_t ids[2] = {5, 6};
	float *logits = malloc(m->cfg.vocab_size * sizeof *logits);
	CHECK(!model_next_logits(m, &ws, ids, 2, logits, &err));
	CHECKF(strstr(err.msg, "causal") && strstr(err.msg, "builtin-causal"), "%s", err.msg);
	free(logits);
	activations_finish(&ws);
	model_destroy(m);
}

/* The program: --dump --generate writes the golden characters and reports
 * them under "generated", and the dump is of the longer text. */
static void test_dump(void)
{
	golden g;
	CHECK(golden_load(&g, test_path("golden/generate_causal.golden")));
	const golden_tensor *want = golden_get(&g, "gen_t08_k20_s1");
	const golden_tensor *want_p = golden_get(&g, "p_t08_k20_s1");
	const char *model_path = test_path("golden/fwd_causal.attn");
	char count[16];
	snprintf(count, sizeof count, "%zu", want ? want->size : 0);
	const char *args[] = {"--model", model_path, "--text", "The cat",	"--generate",
			      count,	 "--temperature", "0.8", "--top-k", "20",
			      "--seed", "1",	   "--top",  "0", NULL};
	json *j = want && want_p ? test_dump_json(args) : NULL;
	const json *gen = j ? json_get(j, "generated") : NULL;
	const json *toks = gen ? json_get(gen, "tokens") : NULL;
	CHECK(toks && toks->type == J_ARR && toks->n == want->size);
	for (size_t i = 0; toks && i < toks->n && i < want->size; i++) {
		const json *t = json_at(toks, i);
		CHECKF(json_get(t, "id")->num == want->v[i], "character %zu: id %g, want %g", i,
		       json_get(t, "id")->num, (double)want->v[i]);
		CHECKF(fabs(json_get(t, "p")->num - want_p->v[i]) < 1e-5, "character %zu: p %g", i,
		       json_get(t, "p")->num);
	}
	const json *n = j ? json_get(j, "n_tokens") : NULL;
	CHECK(n && n->num == 7 + (double)want->size);
	CHECK(gen && json_get(gen, "from")->num == 7 && json_get(gen, "seed")->num == 1 &&
	      json_get(gen, "top_k")->num == 20);
	json_free(j);
	golden_free(&g);
}

int main(void)
{
	test_golden();
	test_sampler();
	test_masked();
	test_dump();
	return test_summary("generate");
}
