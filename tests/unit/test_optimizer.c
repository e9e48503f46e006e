/* AdamW: the learning-rate schedule, clipping, weight decay, and 10 steps on a
 * fixed batch against the PyTorch reference. */
#include "attnview/modelfile.h"
#include "attnview/optimizer.h"
#include "attnview/parallel.h"
#include "attnview/train_step.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static model *load(const char *name)
{
	char path[256];
	snprintf(path, sizeof path, "golden/%s.attn", name);
	av_error err;
	model *m = model_load(test_path(path), &err);
	if (!m)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	return m;
}

static void schedule(void)
{
	model *m = load("train_masked");
	CHECK(m != NULL);
	if (!m)
		return;
	adamw o;
	av_error err;
	CHECK(adamw_init(&o, m, 1e-2f, 3, 10, &err));
	/* Warmup: linear from lr/warmup up to lr at the last warmup step. */
	CHECK(fabsf(adamw_lr(&o, 0) - 1e-2f / 3) < 1e-9f);
	CHECK(fabsf(adamw_lr(&o, 2) - 1e-2f) < 1e-9f);
	/* Cosine from lr at step `warmup` to lr/10 at `total`, then flat. */
	CHECK(fabsf(adamw_lr(&o, 3) - 1e-2f) < 1e-9f);
	CHECKF(fabsf(adamw_lr(&o, 10) - 1e-3f) < 1e-9f, "lr(10) = %g", adamw_lr(&o, 10));
	CHECK(fabsf(adamw_lr(&o, 1000) - 1e-3f) < 1e-9f);
	for (uint64_t s = 1; s < 12; s++)
		if (s >= 3)
			CHECKF(adamw_lr(&o, s) <= adamw_lr(&o, s - 1), "lr rises at step %lu",
			       (unsigned long)s);
	/* Halfway through the decay the cosine is at its midpoint. */
	adamw o2;
	CHECK(adamw_init(&o2, m, 1.0f, 0, 100, &err));
	CHECKF(fabsf(adamw_lr(&o2, 50) - 0.55f) < 1e-6f, "lr(50) = %g", adamw_lr(&o2, 50));
	CHECK(fabsf(adamw_lr(&o2, 0) - 1.0f) < 1e-7f);
	adamw_finish(&o2);
	adamw_finish(&o);
	model_destroy(m);
}

static double norm2(const float *g, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)g[i] * g[i];
	return sqrt(s);
}

static void clipping_and_decay(void)
{
	model *m = load("train_masked");
	CHECK(m != NULL);
	if (!m)
		return;
	size_t n = m->nparams;
	adamw o;
	av_error err;
	CHECK(adamw_init(&o, m, 1e-2f, 0, 10, &err));
	float *g = malloc(n * sizeof *g), *p0 = malloc(n * sizeof *p0);
	memcpy(p0, m->params, n * sizeof *p0);

	/* A gradient of norm 5 comes back clipped to norm 1 (clip 1.0); the
	 * returned norm is the one before clipping. */
	for (size_t i = 0; i < n; i++)
		g[i] = (i % 3 == 0) ? 1.0f : -0.5f;
	double want = norm2(g, n);
	for (size_t i = 0; i < n; i++)
		g[i] *= (float)(5.0 / want);
	float got = adamw_step(&o, m->params, g);
	CHECKF(fabs(got - 5.0) < 1e-5, "norm %g, want 5", got);
	CHECKF(fabs(norm2(g, n) - 1.0) < 1e-5, "clipped norm %g, want 1", norm2(g, n));
	CHECK(o.step == 1);
	/* First step of Adam: m/(1-b1) = g, v/(1-b2) = g^2, so every parameter
	 * moves by lr * sign(g) (plus decay for matrices). */
	size_t off_b = (size_t)(m->p.out_b - m->params);
	float step = m->params[off_b] - p0[off_b], want_step = g[off_b] > 0 ? -1e-2f : 1e-2f;
	CHECKF(fabsf(step - want_step) < 1e-6f, "out_b[0] moved by %g, want %g", step, want_step);

	/* A small gradient is not scaled. */
	for (size_t i = 0; i < n; i++)
		g[i] = 1e-4f;
	float small = adamw_step(&o, m->params, g);
	CHECK(fabs(small - 1e-4 * sqrt((double)n)) < 1e-6);
	CHECK(g[0] == 1e-4f && g[n - 1] == 1e-4f);

	/* With zero moments and a zero gradient only weight decay acts: matrices
	 * shrink by lr * wd, LayerNorm gains and biases stay. */
	adamw_finish(&o);
	CHECK(adamw_init(&o, m, 1e-2f, 0, 10, &err));
	memcpy(p0, m->params, n * sizeof *p0);
	memset(g, 0, n * sizeof *g);
	adamw_step(&o, m->params, g);
	size_t nt = model_tensor_table(&m->cfg, NULL, 0);
	tensor_info *tt = malloc(nt * sizeof *tt);
	model_tensor_table(&m->cfg, tt, nt);
	for (size_t i = 0; i < nt; i++) {
		size_t j = tt[i].offset;
		bool matrix = tt[i].cols > 1;
		float w = p0[j] * (1.0f - 1e-2f * 0.01f);
		float now = m->params[j];
		if (matrix)
			CHECKF(fabsf(now - w) <= 4e-7f * fabsf(w) && now != p0[j],
			       "%s not decayed: %g -> %g", tt[i].name, p0[j], now);
		else
			CHECKF(now == p0[j], "%s decayed: %g -> %g", tt[i].name, p0[j], now);
	}
	free(tt);
	free(g);
	free(p0);
	adamw_finish(&o);
	model_destroy(m);
}

/* The threads split the parameters into fixed chunks: the same bits with 1
 * thread as with 3, norm included. The model is made big enough (V = 9000)
 * for several chunks. */
static void thread_independence(void)
{
	model_config cfg = {OBJ_MASKED, 9000, 16, 2, 1, 8, {0}};
	uint32_t *cps = malloc(9000 * sizeof *cps);
	for (uint32_t i = 0; i < 9000; i++)
		cps[i] = i < TOK_NSPECIAL ? 0x110000u + i : 0x4E00u + i;
	av_error err;
	model *m[2] = {model_create(&cfg, cps, &err), model_create(&cfg, cps, &err)};
	free(cps);
	CHECK(m[0] && m[1]);
	if (!m[0] || !m[1]) {
		model_destroy(m[0]);
		model_destroy(m[1]);
		return;
	}
	size_t n = m[0]->nparams;
	float *g[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
	float norm[2];
	adamw o[2];
	for (int k = 0; k < 2; k++) {
		model_init_random(m[k], 5);
		CHECK(adamw_init(&o[k], m[k], 1e-2f, 2, 10, &err));
		parallel_set_threads(k == 0 ? 1 : 3);
		for (int s = 0; s < 3; s++) {
			for (size_t i = 0; i < n; i++)
				g[k][i] =
				    (float)((i * 2654435761u + (size_t)s) % 1000) * 1e-3f - 0.5f;
			norm[k] = adamw_step(&o[k], m[k]->params, g[k]);
		}
	}
	parallel_set_threads(0);
	CHECK(n > 4 * 16384);
	CHECK(norm[0] == norm[1]);
	CHECK(memcmp(m[0]->params, m[1]->params, n * sizeof(float)) == 0);
	CHECK(memcmp(o[0].m, o[1].m, n * sizeof(float)) == 0);
	CHECK(memcmp(o[0].v, o[1].v, n * sizeof(float)) == 0);
	CHECK(memcmp(g[0], g[1], n * sizeof(float)) == 0);
	for (int k = 0; k < 2; k++) {
		adamw_finish(&o[k]);
		model_destroy(m[k]);
		free(g[k]);
	}
}

/* |got - want| <= tol where want is not NaN; prints the worst element. */
static bool close_skip_nan(const char *what, const float *got, const float *want, size_t n,
			   double tol)
{
	double worst = 0;
	size_t wi = 0, compared = 0;
	bool nan_got = false;
	for (size_t i = 0; i < n; i++) {
		if (isnan(want[i]))
			continue;
		compared++;
		double d = fabs((double)got[i] - want[i]);
		if (isnan(got[i]) || d > worst) {
			nan_got |= isnan(got[i]);
			worst = isnan(got[i]) ? INFINITY : d;
			wi = i;
		}
	}
	bool ok = !nan_got && worst <= tol;
	test_checks++;
	if (!ok)
		test_failures++;
	fprintf(ok ? stdout : stderr,
		"%s %s: %zu values, worst element %zu: got %.9g want %.9g "
		"|diff| %.2e (tol %.0e)\n",
		ok ? "ok" : "MISMATCH", what, compared, wi, got[wi], want[wi], worst, tol);
	return ok;
}

static void ten_steps(const char *name)
{
	model *m = load(name);
	char path[256];
	snprintf(path, sizeof path, "golden/%s.golden", name);
	golden gd;
	bool ok = golden_load(&gd, test_path(path));
	CHECK(m && ok);
	if (!m || !ok) {
		model_destroy(m);
		if (ok)
			golden_free(&gd);
		return;
	}
	const golden_tensor *gt = golden_get(&gd, "tokens"), *gy = golden_get(&gd, "targets");
	const golden_tensor *hy = golden_get(&gd, "hyper"), *gl = golden_get(&gd, "adamw.losses");
	const golden_tensor *glr = golden_get(&gd, "adamw.lr");
	const golden_tensor *gn = golden_get(&gd, "adamw.grad_norm");
	CHECK(gt && gy && hy && gl && glr && gn && hy->size == 8);
	if (!gt || !gy || !hy || !gl || !glr || !gn || hy->size != 8) {
		golden_free(&gd);
		model_destroy(m);
		return;
	}
	int B = (int)gt->dims[0], T = (int)gt->dims[1], N = B * T;
	int32_t *tok = golden_ids(gt), *tgt = golden_ids(gy);
	av_error err;
	activations a;
	grad_acts g;
	adamw o;
	CHECK(activations_init(&a, &m->cfg, B, T, N, &err));
	CHECK(grad_acts_init(&g, &m->cfg, B, T, &err));
	CHECK(adamw_init(&o, m, hy->v[0], (uint64_t)hy->v[1], (uint64_t)hy->v[2], &err));
	o.clip = hy->v[3];
	o.beta1 = hy->v[4];
	o.beta2 = hy->v[5];
	o.eps = hy->v[6];
	o.weight_decay = hy->v[7];
	CHECK(o.beta1 == 0.9f && o.beta2 == 0.95f && o.eps == 1e-8f && o.weight_decay == 0.01f &&
	      o.clip == 1.0f); /* the defaults of optimizer.h */

	size_t steps = gl->size;
	float *losses = malloc(steps * sizeof *losses), *lrs = malloc(steps * sizeof *lrs);
	float *norms = malloc(steps * sizeof *norms);
	float *grads = malloc(m->nparams * sizeof *grads);
	for (size_t s = 0; s < steps; s++) {
		memset(grads, 0, m->nparams * sizeof *grads);
		losses[s] = train_step(m, &a, &g, tok, tgt, B, T, grads, NULL, NULL);
		lrs[s] = adamw_lr(&o, o.step);
		norms[s] = adamw_step(&o, m->params, grads);
	}
	char what[160];
	snprintf(what, sizeof what, "%s adamw.lr", name);
	close_skip_nan(what, lrs, glr->v, steps, 1e-9);
	snprintf(what, sizeof what, "%s adamw.grad_norm", name);
	close_skip_nan(what, norms, gn->v, steps, 1e-5);
	snprintf(what, sizeof what, "%s adamw.losses", name);
	close_skip_nan(what, losses, gl->v, steps, 1e-5);
	/* The steps must have trained: the loss fell. */
	CHECKF(losses[steps - 1] < losses[0] - 0.1f, "loss %g -> %g", losses[0], losses[steps - 1]);

	size_t nt = model_tensor_table(&m->cfg, NULL, 0);
	tensor_info *tt = malloc(nt * sizeof *tt);
	model_tensor_table(&m->cfg, tt, nt);
	for (size_t i = 0; i < nt; i++) {
		char key[64];
		snprintf(key, sizeof key, "final.%s", tt[i].name);
		const golden_tensor *w = golden_get(&gd, key);
		CHECKF(w && w->size == tt[i].size, "%s missing", key);
		if (!w || w->size != tt[i].size)
			continue;
		snprintf(what, sizeof what, "%s %s", name, key);
		close_skip_nan(what, m->params + tt[i].offset, w->v, w->size, 1e-5);
	}
	free(tt);
	free(grads);
	free(losses);
	free(lrs);
	free(norms);
	free(tok);
	free(tgt);
	adamw_finish(&o);
	grad_acts_finish(&g);
	activations_finish(&a);
	golden_free(&gd);
	model_destroy(m);
}

/* The update runs 8 lanes at a time and the rest of each chunk one by one;
 * both must give exactly what the plain loop of optimizer.h's formulas gives
 * (the same IEEE operations in the same order), so that a parameter's
 * trajectory does not depend on where it sits in the model. Two steps: one
 * clipped (scale < 1), one not. */
static void lanes_exact(void)
{
	model_config cfg = {OBJ_MASKED, 1001, 24, 3, 1, 8, {0}}; /* nparams not a multiple of 8 */
	uint32_t *cps = malloc(1001 * sizeof *cps);
	for (uint32_t i = 0; i < 1001; i++)
		cps[i] = i < TOK_NSPECIAL ? 0x110000u + i : 0x4E00u + i;
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	free(cps);
	CHECK(m != NULL);
	if (!m)
		return;
	model_init_random(m, 9);
	size_t n = m->nparams;
	adamw o;
	CHECK(adamw_init(&o, m, 3e-2f, 1, 10, &err));
	float *g = malloc(n * sizeof(float)), *p = malloc(n * sizeof(float));
	float *mm = malloc(n * sizeof(float)), *vv = malloc(n * sizeof(float));
	float *gg = malloc(n * sizeof(float));
	bool same = n % 8 != 0;
	for (int step = 0; step < 2; step++) {
		for (size_t i = 0; i < n; i++)
			g[i] = ((float)((i * 2654435761u + (size_t)step) % 2001) - 1000.0f) *
			       (step == 0 ? 1e-2f : 1e-6f);
		memcpy(p, m->params, n * sizeof(float));
		memcpy(mm, o.m, n * sizeof(float));
		memcpy(vv, o.v, n * sizeof(float));
		memcpy(gg, g, n * sizeof(float));
		uint64_t t = o.step + 1;
		float lr = adamw_lr(&o, o.step);
		float norm = adamw_step(&o, m->params, g);
		float scale = 1.0f;
		double sc = (double)o.clip / ((double)norm + 1e-6);
		if (sc < 1.0)
			scale = (float)sc;
		CHECKF((step == 0) == (scale < 1.0f), "step %d: clipping %s expected", step,
		       step == 0 ? "was" : "was not");
		float b1 = o.beta1, b2 = o.beta2, c1 = 1.0f - o.beta1, c2 = 1.0f - o.beta2;
		float bc1 = (float)(1.0 - pow(o.beta1, (double)t));
		float bc2 = (float)(1.0 - pow(o.beta2, (double)t)), wd = lr * o.weight_decay;
		for (size_t i = 0; i < n; i++) {
			float gi = scale < 1.0f ? gg[i] * scale : gg[i];
			float mi = b1 * mm[i] + c1 * gi;
			float vi = b2 * vv[i] + c2 * gi * gi;
			float pi = p[i];
			pi -= (float)o.decay[i] * (wd * pi);
			pi -= lr * (mi / bc1) / (sqrtf(vi / bc2) + o.eps);
			same &= memcmp(&pi, &m->params[i], sizeof pi) == 0 &&
				memcmp(&mi, &o.m[i], sizeof mi) == 0 &&
				memcmp(&vi, &o.v[i], sizeof vi) == 0 &&
				memcmp(&gi, &g[i], sizeof gi) == 0;
		}
	}
	CHECKF(same, "AdamW's vector lanes and the plain formulas differ (%zu parameters)", n);
	free(g);
	free(p);
	free(mm);
	free(vv);
	free(gg);
	adamw_finish(&o);
	model_destroy(m);
}

int main(void)
{
	schedule();
	clipping_and_decay();
	thread_independence();
	lanes_exact();
	ten_steps("train_masked");
	ten_steps("train_causal");
	return test_summary("optimizer");
}
