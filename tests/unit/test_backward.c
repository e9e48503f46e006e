/* The backward pass: finite differences on every parameter tensor, the PyTorch
 * golden gradients, and the BLAS ops against their plain-loop twins. */
#include "attnview/backward.h"
#include "attnview/modelfile.h"
#include "attnview/ops.h"
#include "attnview/parallel.h"
#include "attnview/rng.h"
#include "attnview/train_step.h"
#include "harness.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* model_train_step_grads, which must succeed here; returns the loss. */
static float train_step(const model *m, activations *a, grad_acts *g, const int32_t *tok,
			const int32_t *tgt, int B, int T, float *grads, int *count, int *correct)
{
	step_stats st;
	av_error err;
	bool ok = model_train_step_grads(m, a, g, tok, tgt, B, T, grads, &st, &err);
	CHECKF(ok, "model_train_step_grads: %s", ok ? "" : err.msg);
	if (count)
		*count = st.count;
	if (correct)
		*correct = st.correct;
	return ok ? st.loss : NAN;
}

static void fill(float *x, size_t n, rng *r, float std)
{
	for (size_t i = 0; i < n; i++)
		x[i] = std * rng_normal(r);
}

static model *tiny_model(objective obj, int V, int d, int h, int L, int T, uint64_t seed)
{
	model_config cfg = {obj, (uint32_t)V, (uint32_t)d, (uint32_t)h, (uint32_t)L, (uint32_t)T, {0}};
	uint32_t *cps = malloc((size_t)V * sizeof *cps);
	for (int i = 0; i < V; i++)
		cps[i] = i < TOK_NSPECIAL ? 0x110000u + (uint32_t)i : 'a' + (uint32_t)i;
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	free(cps);
	if (!m) {
		fprintf(stderr, "model_create: %s\n", err.msg);
		exit(1);
	}
	/* Large random weights, so attention is far from uniform and no
	 * gradient is small by accident; LayerNorm gains around 1. */
	rng r;
	rng_seed(&r, seed);
	tensor_iter it = tensor_iter_start(&cfg);
	tensor_info t;
	while (tensor_iter_next(&it, &t)) {
		float *x = m->params + t.offset;
		fill(x, t.size, &r, t.cols > 1 ? 0.4f : 0.2f);
		if (t.init == INIT_ONE)
			for (size_t j = 0; j < t.size; j++)
				x[j] += 1.0f;
	}
	return m;
}

/* Tensor `name` of P (the parameters in double, in the model's layout), where
 * the size table puts it. */
static const double *param(const model *m, const double *P, const char *name, int layer)
{
	char full[32];
	if (layer >= 0)
		snprintf(full, sizeof full, "h%d.%s", layer, name);
	else
		snprintf(full, sizeof full, "%s", name);
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	while (tensor_iter_next(&it, &t))
		if (strcmp(t.name, full) == 0)
			return P + t.offset;
	fprintf(stderr, "no tensor %s in the size table\n", full);
	exit(1);
}

/* The loss in double precision, written out independently of the engine's
 * ops: the finite differences divide a difference of two nearby losses by
 * 2 eps, so a float forward's rounding (1e-7 of the loss) would swamp the
 * small gradients. P: the parameters in double, in the model's layout. */
static double loss_double(const model *m, const double *P, const int32_t *tok, const int32_t *tgt,
			  int B, int T)
{
	const int C = (int)m->cfg.dim, NH = (int)m->cfg.heads, L = (int)m->cfg.layers;
	const int V = (int)m->cfg.vocab_size, N = B * T, hs = C / NH;
	const bool causal = m->cfg.objective == OBJ_CAUSAL;
	const double *wte = param(m, P, "wte", -1);
	double *x = malloc((size_t)N * C * sizeof *x), *ln = malloc((size_t)N * C * sizeof *x);
	double *qkv = malloc((size_t)N * 3 * C * sizeof *x), *y = malloc((size_t)N * C * sizeof *x);
	double *hbuf = malloc((size_t)N * 4 * C * sizeof *x), *att = malloc((size_t)T * sizeof *x);
	for (int i = 0; i < N; i++)
		for (int c = 0; c < C; c++)
			x[i * C + c] =
			    sqrt((double)C) * wte[(size_t)tok[i] * C + c] + m->pe[(i % T) * C + c];
#define LN(out, in, w, b)                                                                          \
	for (int i = 0; i < N; i++) {                                                              \
		double mu = 0, var = 0;                                                            \
		for (int c = 0; c < C; c++)                                                        \
			mu += in[i * C + c];                                                       \
		mu /= C;                                                                           \
		for (int c = 0; c < C; c++)                                                        \
			var += (in[i * C + c] - mu) * (in[i * C + c] - mu);                        \
		double rs = 1.0 / sqrt(var / C + 1e-5);                                            \
		for (int c = 0; c < C; c++)                                                        \
			out[i * C + c] = (in[i * C + c] - mu) * rs * w[c] + b[c];                  \
	}
			/* out (N,OC) (+)= in (N,IC) w^T + b */
#define LINEAR(out, acc, in, w, b, IC, OC)                                                         \
	for (int i = 0; i < N; i++)                                                                \
		for (int o = 0; o < OC; o++) {                                                     \
			double s = b[o];                                                           \
			for (int c = 0; c < IC; c++)                                               \
				s += in[(size_t)i * IC + c] * w[(size_t)o * IC + c];               \
			out[(size_t)i * OC + o] = (acc ? out[(size_t)i * OC + o] : 0) + s;         \
		}
	for (int l = 0; l < L; l++) {
		const double *ln1w = param(m, P, "ln1_w", l), *ln1b = param(m, P, "ln1_b", l);
		const double *qw = param(m, P, "qkv_w", l), *qb = param(m, P, "qkv_b", l);
		const double *pw = param(m, P, "proj_w", l), *pb = param(m, P, "proj_b", l);
		const double *ln2w = param(m, P, "ln2_w", l), *ln2b = param(m, P, "ln2_b", l);
		const double *fw = param(m, P, "fc_w", l), *fb = param(m, P, "fc_b", l);
		const double *f2w = param(m, P, "fc2_w", l), *f2b = param(m, P, "fc2_b", l);
		LN(ln, x, ln1w, ln1b);
		LINEAR(qkv, false, ln, qw, qb, C, 3 * C);
		for (int b = 0; b < B; b++)
			for (int h = 0; h < NH; h++)
				for (int i = 0; i < T; i++) {
					const double *q =
					    qkv + ((size_t)b * T + i) * 3 * C + h * hs;
					int nj = causal ? i + 1 : T;
					double mx = -INFINITY, sum = 0;
					for (int j = 0; j < nj; j++) {
						const double *k =
						    qkv + ((size_t)b * T + j) * 3 * C + C + h * hs;
						double s = 0;
						for (int c = 0; c < hs; c++)
							s += q[c] * k[c];
						att[j] = s / sqrt((double)hs);
						mx = fmax(mx, att[j]);
					}
					for (int j = 0; j < nj; j++)
						sum += att[j] = exp(att[j] - mx);
					for (int c = 0; c < hs; c++) {
						double s = 0;
						for (int j = 0; j < nj; j++)
							s += att[j] / sum *
							     qkv[((size_t)b * T + j) * 3 * C +
								 2 * C + h * hs + c];
						y[((size_t)b * T + i) * C + h * hs + c] = s;
					}
				}
		LINEAR(x, true, y, pw, pb, C, C);
		LN(ln, x, ln2w, ln2b);
		LINEAR(hbuf, false, ln, fw, fb, C, 4 * C);
		for (size_t i = 0; i < (size_t)N * 4 * C; i++) {
			double v = hbuf[i];
			hbuf[i] = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
		}
		LINEAR(x, true, hbuf, f2w, f2b, 4 * C, C);
	}
	const double *lnfw = param(m, P, "lnf_w", -1), *lnfb = param(m, P, "lnf_b", -1);
	const double *outb = param(m, P, "out_b", -1);
	LN(ln, x, lnfw, lnfb);
#undef LN
#undef LINEAR
	double loss = 0;
	int n = 0;
	for (int i = 0; i < N; i++) {
		if (tgt[i] < 0)
			continue;
		double mx = -INFINITY, sum = 0, ly = 0;
		for (int v = 0; v < V; v++) {
			double s = outb[v];
			for (int c = 0; c < C; c++)
				s += ln[i * C + c] * wte[(size_t)v * C + c];
			hbuf[v] = s;
			mx = fmax(mx, s);
			if (v == tgt[i])
				ly = s;
		}
		for (int v = 0; v < V; v++)
			sum += exp(hbuf[v] - mx);
		loss += log(sum) + mx - ly;
		n++;
	}
	free(x);
	free(ln);
	free(qkv);
	free(y);
	free(hbuf);
	free(att);
	return loss / n;
}

static void gradient_check(objective obj, int L)
{
	const int V = 11, d = 8, h = 2, T = 5, B = 3, N = B * T;
	model *m = tiny_model(obj, V, d, h, L, T, obj == OBJ_CAUSAL ? 7 : 8);
	activations a;
	grad_acts g;
	av_error err;
	CHECK(activations_init(&a, &m->cfg, B, T, N, &err));
	CHECK(grad_acts_init(&g, &m->cfg, B, T, &err));

	rng r;
	rng_seed(&r, 99 + obj);
	int32_t tok[15], tgt[15];
	for (int i = 0; i < N; i++) {
		tok[i] = 3 + (int32_t)rng_below(&r, (uint64_t)V - 3);
		/* Masked: a few targets, some at masked tokens, none at all in the
		 * middle sequence; causal: every position. */
		bool take = obj == OBJ_CAUSAL || (i % 3 == 1 && i / T != 1);
		tgt[i] = take ? 3 + (int32_t)rng_below(&r, V - 3) : -1;
		if (obj == OBJ_MASKED && i % 3 == 1 && i % 2)
			tok[i] = TOK_MASK;
	}

	float *grads = calloc(m->nparams, sizeof(float));
	int count = 0, correct = -1;
	float loss = train_step(m, &a, &g, tok, tgt, B, T, grads, &count, &correct);
	double *P = malloc(m->nparams * sizeof *P);
	for (size_t i = 0; i < m->nparams; i++)
		P[i] = m->params[i];
	double loss_ref = loss_double(m, P, tok, tgt, B, T);
	int want_count = 0;
	for (int i = 0; i < N; i++)
		want_count += tgt[i] >= 0;
	CHECKF(count == want_count, "count %d, want %d", count, want_count);
	CHECK(correct >= 0 && correct <= count);
	CHECKF(fabs(loss - loss_ref) < 1e-5 * fabs(loss_ref), "loss %.9g, in double %.9g", loss,
	       loss_ref);

	/* Double-sided differences in double: truncation error about
	 * eps^2 f''' (1e-8 relative), rounding about 1e-16 / eps. What remains is
	 * the float rounding of the analytic gradients. */
	const double eps = 1e-4;
	size_t nt = model_tensor_table(&m->cfg, NULL, 0);
	tensor_info *tt = malloc(nt * sizeof *tt);
	model_tensor_table(&m->cfg, tt, nt);
	double worst_all = 0.0;
	for (size_t ti = 0; ti < nt; ti++) {
		const tensor_info *t = &tt[ti];
		double worst = 0.0;
		size_t worst_j = 0;
		float wa = 0.0f;
		double wn = 0.0;
		/* Up to 12 elements per tensor, spread over it. */
		size_t nsample = t->size < 12 ? t->size : 12;
		for (size_t s = 0; s < nsample; s++) {
			size_t j = (s * t->size) / nsample + (s * 7) % (t->size / nsample);
			double *p = P + t->offset + j;
			double keep = *p;
			*p = keep + eps;
			double lp = loss_double(m, P, tok, tgt, B, T);
			*p = keep - eps;
			double lm = loss_double(m, P, tok, tgt, B, T);
			*p = keep;
			double num = (lp - lm) / (2.0 * eps);
			float an = grads[t->offset + j];
			/* Relative error, with an absolute floor for gradients that are
			 * zero in exact arithmetic (the key bias) or nearly so. */
			double e = fabs(an - num) / fmax(fmax(fabs(an), fabs(num)), 1e-4);
			if (e > worst) {
				worst = e;
				worst_j = j;
				wa = an;
				wn = num;
			}
		}
		printf("  %s L=%d %-10s worst rel err %.2e (element %zu: analytic %.6g numeric "
		       "%.6g)\n",
		       objective_name(obj), L, t->name, worst, worst_j, wa, wn);
		CHECKF(worst < 1e-3, "%s %s: relative error %.3g", objective_name(obj), t->name,
		       worst);
		if (worst > worst_all)
			worst_all = worst;
	}
	printf("gradient check %s L=%d: %zu tensors, worst relative error %.2e\n",
	       objective_name(obj), L, nt, worst_all);

	/* No target: no loss, and the gradients are left alone. */
	int32_t none[15];
	for (int i = 0; i < N; i++)
		none[i] = -1;
	float *g2 = calloc(m->nparams, sizeof(float));
	int count0 = -1;
	float l0 = train_step(m, &a, &g, tok, none, B, T, g2, &count0, NULL);
	CHECK(isnan(l0) && count0 == 0);
	size_t nz = 0;
	for (size_t i = 0; i < m->nparams; i++)
		nz += g2[i] != 0.0f;
	CHECK(nz == 0);

	/* The validation loss (the full forward, model_forward) is the training
	 * loss (the last block at the target rows only) without the backward. */
	int c2 = 0, k2 = 0;
	float le = model_eval_loss(m, &a, tok, tgt, B, T, &c2, &k2);
	CHECKF(fabsf(le - loss) <= 1e-6f * fabsf(loss) && c2 == count && k2 == correct,
	       "eval %.9g (%d, %d) vs train %.9g (%d, %d)", le, c2, k2, loss, count, correct);

	free(g2);
	free(P);
	free(tt);
	free(grads);
	grad_acts_finish(&g);
	activations_finish(&a);
	model_destroy(m);
}

/* |got - want| <= atol + rtol |want| everywhere, NaNs in want skipped; prints
 * the worst element relative to its bound either way. */
static bool compare(const char *what, const float *got, const float *want, size_t n, double atol,
		    double rtol)
{
	double worst = -1.0, wd = 0.0;
	size_t wi = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(want[i]))
			continue;
		double d = isnan(got[i]) ? INFINITY : fabs((double)got[i] - want[i]);
		double ratio = d / (atol + rtol * fabs(want[i]));
		if (ratio > worst) {
			worst = ratio;
			wi = i;
			wd = d;
		}
	}
	bool ok = worst <= 1.0;
	test_checks++;
	if (!ok)
		test_failures++;
	fprintf(ok ? stdout : stderr,
		"%s %s: %zu values, worst element %zu: got %.9g want %.9g |diff| %.2e (%.2f of the "
		"tolerance)\n",
		ok ? "ok" : "MISMATCH", what, n, wi, n ? got[wi] : 0.0f, n ? want[wi] : 0.0f, wd,
		worst);
	return ok;
}

/* Every parameter gradient in grads against the golden file's grad.NAME,
 * reported as "NAME grad.TENSOR SUFFIX". */
static void golden_grad_check(const char *name, const char *suffix, const float *grads,
			      const tensor_info *tt, size_t nt, const golden *gd)
{
	for (size_t i = 0; i < nt; i++) {
		char key[64], what[192];
		snprintf(key, sizeof key, "grad.%s", tt[i].name);
		const golden_tensor *w = golden_get(gd, key);
		CHECKF(w && w->size == tt[i].size, "%s: %s missing or of the wrong size", name,
		       key);
		if (!w || w->size != tt[i].size)
			continue;
		snprintf(what, sizeof what, "%s %s%s", name, key, suffix);
		compare(what, grads + tt[i].offset, w->v, w->size, 1e-6, 1e-5);
	}
}

static void golden_grads(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "golden/%s.attn", name);
	av_error err;
	model *m = model_load(test_path(path), &err);
	CHECKF(m != NULL, "%s", m ? "" : err.msg);
	golden gd;
	snprintf(path, sizeof path, "golden/%s.golden", name);
	bool ok = golden_load(&gd, test_path(path));
	CHECKF(ok, "cannot load %s", path);
	if (!m || !ok) {
		model_destroy(m);
		if (ok)
			golden_free(&gd);
		return;
	}
	const golden_tensor *gt = golden_get(&gd, "tokens"), *gy = golden_get(&gd, "targets");
	const golden_tensor *gl = golden_get(&gd, "loss");
	CHECK(gt && gy && gl && gt->ndim == 2 && gy->size == gt->size);
	if (!gt || !gy || !gl) {
		golden_free(&gd);
		model_destroy(m);
		return;
	}
	int B = (int)gt->dims[0], T = (int)gt->dims[1], N = B * T;
	int32_t *tok = golden_ids(gt), *tgt = golden_ids(gy);
	activations a;
	grad_acts g;
	CHECK(activations_init(&a, &m->cfg, B, T, N, &err));
	CHECK(grad_acts_init(&g, &m->cfg, B, T, &err));
	float *grads = calloc(m->nparams, sizeof(float));
	float loss = train_step(m, &a, &g, tok, tgt, B, T, grads, NULL, NULL);
	char what[160];
	snprintf(what, sizeof what, "%s loss", name);
	compare(what, &loss, gl->v, 1, 1e-6, 1e-5);

	size_t nt = model_tensor_table(&m->cfg, NULL, 0);
	tensor_info *tt = malloc(nt * sizeof *tt);
	model_tensor_table(&m->cfg, tt, nt);
	golden_grad_check(name, "", grads, tt, nt, &gd);

	/* Same inputs, same thread count: bit for bit the same gradients. */
	float *again = calloc(m->nparams, sizeof(float));
	train_step(m, &a, &g, tok, tgt, B, T, again, NULL, NULL);
	CHECK(memcmp(again, grads, m->nparams * sizeof(float)) == 0);

	/* The step's cache blocking: groups of one sequence, and of two (with
	 * B = 3 on one thread, a group of 1 then a group of 2 at an offset), on
	 * 1 and 2 threads: still PyTorch's loss and gradients. */
	CHECK(B > 2);
	for (int gs = 1; gs <= 2; gs++)
		for (int th = 1; th <= 2; th++) {
			parallel_set_threads(th);
			train_step_set_group_rows(gs == 1 ? 1 : 2 * T);
			memset(again, 0, m->nparams * sizeof(float));
			float l1 = train_step(m, &a, &g, tok, tgt, B, T, again, NULL, NULL);
			train_step_set_group_rows(0);
			parallel_set_threads(0);
			snprintf(what, sizeof what, "%s loss, groups of %d, %d thread(s)", name, gs,
				 th);
			compare(what, &l1, gl->v, 1, 1e-6, 1e-5);
			snprintf(what, sizeof what, ", groups of %d, %d thread(s)", gs, th);
			golden_grad_check(name, what, again, tt, nt, &gd);
		}

	/* --sharpen: the loss plus S times the attention's mean entropy
	 * (gen_sharpen_golden.py), on 1 and 2 threads; the loss reported is
	 * still the cross-entropy alone. */
	golden gs;
	snprintf(path, sizeof path, "golden/%s_sharpen.golden", name);
	ok = golden_load(&gs, test_path(path));
	CHECKF(ok, "cannot load %s", path);
	const golden_tensor *sv = ok ? golden_get(&gs, "sharpen") : NULL;
	CHECK(!ok || sv);
	for (int th = 1; sv && th <= 2; th++) {
		parallel_set_threads(th);
		g.sharpen = sv->v[0];
		memset(again, 0, m->nparams * sizeof(float));
		float l1 = train_step(m, &a, &g, tok, tgt, B, T, again, NULL, NULL);
		g.sharpen = 0.0f;
		parallel_set_threads(0);
		snprintf(what, sizeof what, "%s loss with --sharpen %g, %d thread(s)", name,
			 (double)sv->v[0], th);
		compare(what, &l1, gl->v, 1, 1e-6, 1e-5);
		snprintf(what, sizeof what, " with --sharpen %g, %d thread(s)", (double)sv->v[0],
			 th);
		golden_grad_check(name, what, again, tt, nt, &gs);
	}
	if (ok)
		golden_free(&gs);

	free(again);
	free(tt);
	free(grads);
	free(tok);
	free(tgt);
	grad_acts_finish(&g);
	activations_finish(&a);
	golden_free(&gd);
	model_destroy(m);
}

/* A sequence without targets adds nothing: the gradients of a batch whose
 * last sequence has none are those of the other sequences alone, even when
 * the step before left other values in the buffers (the last block writes
 * that sequence's key and value gradients as zeros, it does not skip them).
 * The sequence must share a group with a targeted one for that path to run:
 * one thread, and two threads with three sequences. */
static void untargeted_case(int threads, int B)
{
	const int V = 13, d = 16, h = 2, L = 2, T = 9;
	model *m = tiny_model(OBJ_MASKED, V, d, h, L, T, 21);
	activations a, a1;
	grad_acts g, g1;
	av_error err;
	CHECK(activations_init(&a, &m->cfg, B, T, B * T, &err));
	CHECK(grad_acts_init(&g, &m->cfg, B, T, &err));
	CHECK(activations_init(&a1, &m->cfg, B - 1, T, (B - 1) * T, &err));
	CHECK(grad_acts_init(&g1, &m->cfg, B - 1, T, &err));
	int32_t tok[3 * 9], all[3 * 9], some[3 * 9];
	for (int i = 0; i < B * T; i++) {
		tok[i] = TOK_NSPECIAL + (i * 5) % (V - TOK_NSPECIAL);
		all[i] = TOK_NSPECIAL + (i * 3 + 1) % (V - TOK_NSPECIAL);
		some[i] = i < (B - 1) * T && i % 3 == 0 ? all[i] : -1;
	}
	float *junk = calloc(m->nparams, sizeof(float));
	float *with = calloc(m->nparams, sizeof(float));
	float *without = calloc(m->nparams, sizeof(float));
	parallel_set_threads(threads);
	/* Every buffer full of this step's values first. */
	train_step(m, &a, &g, tok, all, B, T, junk, NULL, NULL);
	float lw = train_step(m, &a, &g, tok, some, B, T, with, NULL, NULL);
	float lo = train_step(m, &a1, &g1, tok, some, B - 1, T, without, NULL, NULL);
	parallel_set_threads(0);
	char what[128];
	snprintf(what, sizeof what, "loss, target-less last sequence, %d thread(s), B=%d", threads,
		 B);
	compare(what, &lw, &lo, 1, 1e-6, 1e-6);
	snprintf(what, sizeof what, "gradients, target-less last sequence, %d thread(s), B=%d",
		 threads, B);
	compare(what, with, without, m->nparams, 1e-6, 1e-5);
	free(junk);
	free(with);
	free(without);
	grad_acts_finish(&g);
	grad_acts_finish(&g1);
	activations_finish(&a);
	activations_finish(&a1);
	model_destroy(m);
}

static void untargeted_sequence(void)
{
	untargeted_case(1, 2);
	untargeted_case(2, 3);
}

static void matmul_vs_ref(int N, int C, int OC)
{
	rng r;
	rng_seed(&r, (uint64_t)(N * 1000 + C * 10 + OC));
	size_t ni = (size_t)N * C, nw = (size_t)OC * C, no = (size_t)N * OC;
	float *inp = malloc(ni * 4), *w = malloc(nw * 4), *dout = malloc(no * 4);
	float *di[2], *dw[2], *db[2];
	fill(inp, ni, &r, 1.0f);
	fill(w, nw, &r, 1.0f);
	fill(dout, no, &r, 1.0f);
	for (int k = 0; k < 2; k++) {
		/* Start from non-zero gradients: the ops must accumulate. */
		di[k] = malloc(ni * 4), dw[k] = malloc(nw * 4), db[k] = malloc((size_t)OC * 4);
		rng r0;
		rng_seed(&r0, 5);
		fill(di[k], ni, &r0, 1.0f);
		fill(dw[k], nw, &r0, 1.0f);
		fill(db[k], (size_t)OC, &r0, 1.0f);
	}
	matmul_backward(di[0], dw[0], db[0], dout, inp, w, N, C, OC);
	matmul_backward_ref(di[1], dw[1], db[1], dout, inp, w, N, C, OC);
	char what[96];
	/* Sums of up to max(N, OC) products of N(0,1) numbers: float rounding
	 * grows with the square root of the length. */
	double tol = 1e-6 * sqrt((double)(N > OC ? N : OC)) * 4;
	snprintf(what, sizeof what, "matmul_backward dinp (%d,%d,%d)", N, C, OC);
	compare(what, di[0], di[1], ni, tol, 1e-5);
	snprintf(what, sizeof what, "matmul_backward dweight (%d,%d,%d)", N, C, OC);
	compare(what, dw[0], dw[1], nw, tol, 1e-5);
	snprintf(what, sizeof what, "matmul_backward dbias (%d,%d,%d)", N, C, OC);
	compare(what, db[0], db[1], (size_t)OC, tol, 1e-5);
	for (int k = 0; k < 2; k++) {
		free(di[k]);
		free(dw[k]);
		free(db[k]);
	}
	free(inp);
	free(w);
	free(dout);
}

static void attention_vs_ref(int B, int T, int C, int NH, bool causal)
{
	rng r;
	rng_seed(&r, (uint64_t)(B * 100 + T + causal));
	size_t nq = (size_t)B * T * 3 * C, no = (size_t)B * T * C, na = (size_t)B * NH * T * T;
	float *qkv = malloc(nq * 4), *dout = malloc(no * 4), *out = malloc(no * 4);
	float *pre = malloc(na * 4), *att = malloc(na * 4), *work = malloc(na * 4);
	float *dq[3];
	fill(qkv, nq, &r, 1.0f);
	fill(dout, no, &r, 1.0f);
	attention_forward(out, pre, att, qkv, B, T, C, NH, causal);
	{
		/* The forward against its plain loops (in blocks of queries past
		 * attention_query_block's size). */
		float *o2 = malloc(no * 4), *p2 = malloc(na * 4), *a2 = malloc(na * 4);
		attention_forward_ref(o2, p2, a2, qkv, B, T, C, NH, causal);
		const char *name[3] = {"out", "att", "scores"};
		const float *got[3] = {out, att, pre}, *want[3] = {o2, a2, p2};
		for (int t = 0; t < 3; t++) {
			char fw[128];
			snprintf(fw, sizeof fw, "attention_forward B=%d T=%d C=%d NH=%d %s: %s", B,
				 T, C, NH, causal ? "causal" : "full", name[t]);
			compare(fw, got[t], want[t], t ? na : no, t == 1 ? 1e-6 : 1e-5, 1e-5);
		}
		free(o2);
		free(p2);
		free(a2);
	}
	for (int k = 0; k < 3; k++) {
		dq[k] = malloc(nq * 4);
		rng r0;
		rng_seed(&r0, 6);
		fill(dq[k], nq, &r0, 1.0f);
	}
	attention_backward_ref(dq[0], work, dout, qkv, att, B, T, C, NH, causal);
	int blas_threads = openblas_get_num_threads();
	parallel_set_threads(1);
	attention_backward(dq[1], work, dout, qkv, att, B, T, C, NH, causal);
	parallel_set_threads(3);
	attention_backward(dq[2], work, dout, qkv, att, B, T, C, NH, causal);
	parallel_set_threads(0);
	/* BLAS runs single-threaded inside the workers, and gets its count back. */
	CHECK(openblas_get_num_threads() == blas_threads);
	char what[96];
	snprintf(what, sizeof what, "attention_backward B=%d T=%d C=%d NH=%d %s", B, T, C, NH,
		 causal ? "causal" : "full");
	compare(what, dq[1], dq[0], nq, 1e-5, 1e-5);
	/* The threads split (batch, head) pairs, whose outputs are disjoint. */
	CHECKF(memcmp(dq[1], dq[2], nq * 4) == 0, "%s: 1 and 3 threads differ", what);
	for (int k = 0; k < 3; k++)
		free(dq[k]);
	free(qkv);
	free(dout);
	free(out);
	free(pre);
	free(att);
	free(work);
}

/* LayerNorm's backward against the formula in double, for widths that do and
 * do not fill whole vectors, accumulating into non-zero gradients. */
static void layernorm_check(int N, int C)
{
	rng r;
	rng_seed(&r, (uint64_t)(N * 31 + C));
	size_t n = (size_t)N * C;
	float *x = malloc(n * 4), *y = malloc(n * 4), *dy = malloc(n * 4), *dx = malloc(n * 4);
	float *w = malloc((size_t)C * 4), *b = malloc((size_t)C * 4), *mean = malloc((size_t)N * 4);
	float *rstd = malloc((size_t)N * 4), *dw = malloc((size_t)C * 4),
	      *db = malloc((size_t)C * 4);
	fill(x, n, &r, 2.0f);
	fill(dy, n, &r, 1.0f);
	fill(w, (size_t)C, &r, 1.0f);
	fill(b, (size_t)C, &r, 1.0f);
	for (size_t i = 0; i < n; i++)
		dx[i] = 0.25f;
	for (int c = 0; c < C; c++)
		dw[c] = db[c] = 0.5f;
	layernorm_forward(y, mean, rstd, x, w, b, N, C);
	layernorm_backward(dx, dw, db, dy, x, w, mean, rstd, N, C);
	double worst = 0.0, *wdw = calloc((size_t)C, sizeof(double));
	double *wdb = calloc((size_t)C, sizeof(double));
	for (int i = 0; i < N; i++) {
		const float *xi = x + (size_t)i * C, *d = dy + (size_t)i * C;
		double mu = 0, var = 0, sdn = 0, sdnn = 0;
		for (int c = 0; c < C; c++)
			mu += xi[c];
		mu /= C;
		for (int c = 0; c < C; c++)
			var += (xi[c] - mu) * (xi[c] - mu);
		double rs = 1.0 / sqrt(var / C + 1e-5);
		for (int c = 0; c < C; c++) {
			double nn = (xi[c] - mu) * rs;
			sdn += d[c] * w[c];
			sdnn += d[c] * w[c] * nn;
			wdw[c] += d[c] * nn;
			wdb[c] += d[c];
		}
		for (int c = 0; c < C; c++) {
			double nn = (xi[c] - mu) * rs;
			double want = 0.25 + rs * (d[c] * w[c] - sdn / C - nn * sdnn / C);
			worst = fmax(worst, fabs(dx[(size_t)i * C + c] - want) / (1 + fabs(want)));
		}
	}
	for (int c = 0; c < C; c++) {
		worst = fmax(worst, fabs(dw[c] - 0.5 - wdw[c]) / (1 + fabs(wdw[c])));
		worst = fmax(worst, fabs(db[c] - 0.5 - wdb[c]) / (1 + fabs(wdb[c])));
	}
	CHECKF(worst < 1e-5, "layernorm_backward N=%d C=%d: error %.3g", N, C, worst);
	printf("layernorm_backward N=%d C=%d: worst error %.2e\n", N, C, worst);
	free(wdw);
	free(wdb);
	free(x);
	free(y);
	free(dy);
	free(dx);
	free(w);
	free(b);
	free(mean);
	free(rstd);
	free(dw);
	free(db);
}

static void gelu_check(void)
{
	/* Against the derivative of the tanh form in double. */
	const int n = 2001;
	float *x = malloc(n * 4), *d = calloc(n, 4), *ones = malloc(n * 4);
	for (int i = 0; i < n; i++) {
		x[i] = -10.0f + 0.01f * (float)i;
		ones[i] = 1.0f;
	}
	x[0] = -100.0f;
	x[1] = 1e-30f;
	x[n - 1] = 100.0f;
	gelu_backward(d, x, ones, n);
	double worst = 0.0;
	int wi = 0;
	for (int i = 0; i < n; i++) {
		double xx = x[i], s = sqrt(2.0 / M_PI), u = s * (xx + 0.044715 * xx * xx * xx);
		double t = tanh(u);
		double want =
		    0.5 * (1 + t) + 0.5 * xx * (1 - t * t) * s * (1 + 3 * 0.044715 * xx * xx);
		double e = fabs(d[i] - want);
		if (e > worst) {
			worst = e;
			wi = i;
		}
	}
	CHECKF(worst < 5e-7, "gelu' at %g: error %.3g", x[wi], worst);
	printf("gelu_backward: worst |error| %.2e at x = %g\n", worst, x[wi]);

	/* In place: dout *= gelu'. */
	float *d2 = malloc(n * 4);
	for (int i = 0; i < n; i++)
		d2[i] = 2.0f;
	gelu_backward(d2, x, d2, n);
	bool same = true;
	for (int i = 0; i < n; i++)
		same &= d2[i] == 2.0f * d[i];
	CHECK(same);
	free(d2);
	free(x);
	free(d);
	free(ones);
}

/* One row of the loss against plain loops: the loss within the rounding of
 * its sums, the gradient within a few ulps, the bias's gradient added, and
 * the argmax exactly: the first of equal maxima wherever they fall (each
 * lane of the vector code keeps its own first one), NaN never, a row of
 * nothing but -inf at its first one. */
static void loss_row_check(void)
{
	static float l[6100], b[6100], db[6100], ref[6100];
	uint64_t st = 7;
	int sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 100, 6000, 6001};
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
		for (int kind = 0; kind < 6; kind++) {
			int V = sizes[si];
			for (int j = 0; j < V; j++) {
				st = st * 6364136223846793005ull + 1442695040888963407ull;
				int r = (int)(st >> 33);
				/* 0: spread; 1: few values, many ties; 2: -inf holes;
				 * 3: NaN holes; 4: signed zeros; 5: all -inf */
				float x = (float)(r % 2001 - 1000) / 100.0f;
				x = kind == 1	? (float)(r % 3)
				    : kind == 2 ? (r % 4 ? x : -INFINITY)
				    : kind == 3 ? (r % 5 ? x : NAN)
				    : kind == 4 ? (r % 2 ? 0.0f : -0.0f)
				    : kind == 5 ? -INFINITY
						: x;
				l[j] = x;
				/* (no bias on the zeros: -0 + 0 would be +0) */
				b[j] = kind == 5 || kind == 4 ? 0.0f : (float)(r % 7) * 0.25f;
				db[j] = 1.0f;
			}
			/* the plain loops: the bias added, the first maximum, the loss */
			int arg = 0, y = (int)(st % (uint64_t)V);
			float mx = -INFINITY;
			for (int j = 0; j < V; j++) {
				ref[j] = l[j] + b[j];
				if (ref[j] > mx)
					mx = ref[j], arg = j;
			}
			for (int j = 0; j < V && mx == -INFINITY; j++)
				if (ref[j] == -INFINITY) {
					arg = j;
					break;
				}
			double sum = 0;
			for (int j = 0; j < V; j++)
				sum += isnan(ref[j]) ? 0 : exp((double)ref[j] - mx);
			double want = log(sum) - ((double)ref[y] - mx);
			int got_arg = -1;
			double got = crossentropy_row(l, V, y, 0.5f, b, db, &got_arg);
			CHECKF(got_arg == arg, "V %d kind %d: argmax %d, want %d", V, kind, got_arg,
			       arg);
			if (kind == 5 || kind == 3)
				continue; /* (NaN and all -inf: the argmax alone) */
			CHECKF(isinf(want) ? got == want
					   : fabs(got - want) <= 1e-5 * (1 + fabs(want)),
			       "V %d kind %d: loss %.9g, want %.9g", V, kind, got, want);
			int bad = 0;
			for (int j = 0; j < V; j++) {
				double p = ref[j] == -INFINITY ? 0 : exp((double)ref[j] - mx) / sum;
				double g = 0.5 * (p - (j == y));
				bad += fabs(l[j] - g) > 1e-6 * (1 + fabs(g)) ||
				       fabs(db[j] - (1.0 + g)) > 1e-6 * (1 + fabs(g));
			}
			CHECKF(bad == 0, "V %d kind %d: %d gradients off", V, kind, bad);
		}
	/* dscale 0: the row keeps its logits (the bias added), the loss the
	 * same; a negative dscale's gradient keeps its sign where it
	 * underflows to zero (-0, in the vector lanes as in the tail). */
	for (int V = 1; V <= 70; V++) {
		for (int j = 0; j < V; j++)
			l[j] = ref[j] = (float)((j * 7) % 11) - 5.0f, b[j] = 0.5f;
		int a, a2;
		double loss = crossentropy_row(l, V, V / 2, 0.0f, b, NULL, &a);
		int kept = 0;
		for (int j = 0; j < V; j++)
			kept += l[j] == ref[j] + 0.5f;
		CHECKF(kept == V, "V %d, dscale 0: %d of %d logits kept", V, kept, V);
		double again = crossentropy_row(l, V, V / 2, -1e-37f, NULL, NULL, &a2);
		int neg = 0;
		for (int j = 0; j < V; j++)
			neg += j == V / 2 || signbit(l[j]);
		CHECKF(again == loss && a2 == a && neg == V,
		       "V %d, dscale -1e-37: loss %.9g (%.9g), argmax %d (%d), %d of %d negative",
		       V, again, loss, a2, a, neg, V);
	}
	/* The argmax of rows with NaN and of rows of -inf, alone. */
	for (int V = 1; V <= 40; V++) {
		for (int j = 0; j < V; j++)
			l[j] = -INFINITY;
		int a = -1;
		crossentropy_row(l, V, 0, 0.0f, NULL, NULL, &a);
		CHECKF(a == 0, "V %d of -inf: argmax %d", V, a);
		int want = 0;
		for (int j = 0; j < V; j++) {
			l[j] = j % 3 == 1 ? NAN : (float)(j % 5);
			want = l[j] > l[want] ? j : want;
		}
		crossentropy_row(l, V, 0, 0.0f, NULL, NULL, &a);
		CHECKF(a == want, "V %d with NaN: argmax %d, want %d", V, a, want);
	}
}

static void exp_check(void)
{
	/* Every length from 0 to 40 (the vector loop and every tail), then a sweep
	 * of the range against exp in double. */
	float in[41], out[41];
	for (int n = 0; n <= 40; n++) {
		for (int i = 0; i < 41; i++) {
			in[i] = -3.0f + 0.37f * (float)i;
			out[i] = -1.0f;
		}
		vec_exp(out, in, n);
		bool ok = out[n] == -1.0f || n == 41;
		for (int i = 0; i < n; i++)
			ok &= fabs(out[i] - exp((double)in[i])) <= 2e-7 * exp((double)in[i]);
		CHECKF(ok, "vec_exp of length %d", n);
	}
	const int n = 100001;
	float *x = malloc(n * 4), *y = malloc(n * 4);
	for (int i = 0; i < n; i++)
		x[i] = -87.0f + 175.0f * (float)i / (float)(n - 1);
	vec_exp(y, x, n);
	double worst = 0.0;
	int wi = 0;
	for (int i = 0; i < n; i++) {
		double w = exp((double)x[i]), e = fabs(y[i] - w) / w;
		if (e > worst) {
			worst = e;
			wi = i;
		}
	}
	CHECKF(worst < 2e-7, "vec_exp(%g): relative error %.3g", x[wi], worst);
	printf("vec_exp: worst relative error %.2e at %g\n", worst, x[wi]);
	vec_exp(y, x, n); /* in place */
	memcpy(y, x, n * 4);
	vec_exp(y, y, n);
	CHECK(fabs(y[n / 2] - exp((double)x[n / 2])) <= 2e-7 * exp((double)x[n / 2]));
	free(x);
	free(y);
}

int main(void)
{
	exp_check();
	loss_row_check();
	gelu_check();
	layernorm_check(1, 1);
	layernorm_check(5, 13);
	layernorm_check(7, 64);
	matmul_vs_ref(1, 1, 1);
	matmul_vs_ref(7, 13, 5);
	matmul_vs_ref(10, 12, 20);
	matmul_vs_ref(64, 16, 48);
	matmul_vs_ref(300, 64, 256);
	attention_vs_ref(2, 5, 8, 2, false);
	attention_vs_ref(2, 5, 8, 2, true);
	attention_vs_ref(3, 33, 24, 3, false);
	attention_vs_ref(3, 33, 24, 3, true);
	attention_vs_ref(1, 1, 4, 1, true);
	attention_vs_ref(2, 200, 16, 2, true); /* big enough for OpenBLAS to go parallel */
	/* T T hs > 1e6: the backward runs its queries in blocks (query_block) */
	attention_vs_ref(1, 300, 32, 2, true);
	attention_vs_ref(1, 264, 16, 1, false);
	gradient_check(OBJ_MASKED, 2);
	gradient_check(OBJ_CAUSAL, 2);
	gradient_check(OBJ_MASKED, 1); /* the last block is also the first */
	gradient_check(OBJ_CAUSAL, 3);
	golden_grads("train_masked");
	golden_grads("train_causal");
	untargeted_sequence();
	return test_summary("backward");
}
