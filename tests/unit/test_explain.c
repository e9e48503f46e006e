/* What attnview computes from the weights against the PyTorch
 * reference (tests/golden/explain_*.golden, from
 * tests/reference/gen_explain_golden.py): the q and k of the breakdown,
 * value norms, head role scores, aggregates, rollout, words and word
 * attention, ablation and the loss on a text; first the core functions, then
 * the same numbers in the real program's --dump (ATTNVIEW_BIN).
 *
 * The tolerances come from the bounds of tests/lib/bound.c (man 5 attnview,
 * NOTES, Accuracy): PyTorch and attnview each stay within the bound of every
 * weight, q, k and logit, so they differ by at most twice it (t below: twice
 * the largest weight bound of the text). What is computed from the weights
 * inherits that: a mean or a maximum of weights is within t; a word's
 * attention (its keys summed, its rows averaged) within t times its longest
 * word; the rollout, a product of L row-stochastic matrices each within t/2
 * per entry (Â = W/2 + I/2), within L n t / 2 (the rows of n entries add up
 * in the infinity norm); a role score counts rows by where they look, so
 * it is exact but for the rows whose largest weight is within t of the
 * second largest or of the threshold of looking (the golden file's
 * role_margins): each such row may count either way, moving a score by one
 * row of its rows (twenty for same script, divided by 1 - C >= 0.05); a
 * value norm |v W_O| within
 * |e_v| |W_O| (its Frobenius norm); the loss, a mean of log-softmaxes, within
 * twice the largest logit bound, doubled. */
#include "attnview/analysis.h"
#include "attnview/explain.h"
#include "attnview/infer.h"
#include "attnview/modelfile.h"
#include "bound.h"
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
	fwd_bound b;	/* the text's binary64 pass and its bounds */
	double t;	/* twice the largest weight bound */
	double t_words; /* for the word attention */
	double t_loss;	/* for the losses */
} fixture;

/* The tolerances of the comment at the top, from the text's bounds. */
static void set_tolerances(fixture *f)
{
	CHECK(fwd_bound_compute(&f->b, f->m, f->ids, f->n, NULL));
	const size_t cells = (size_t)f->L * f->H * f->n * f->n;
	double emax = 0, lmax = 0;
	for (size_t k = 0; k < cells; k++)
		emax = f->b.att_err[k] > emax ? f->b.att_err[k] : emax;
	f->t = 2 * emax;
	word_span w[256];
	int nw = words_split(w, f->tok, f->n), longest = 1;
	for (int i = 0; i < nw; i++)
		longest = w[i].end - w[i].start > longest ? w[i].end - w[i].start : longest;
	f->t_words = longest * f->t;
	/* The loss's rows: a masked model's from one pass per masked position. */
	const size_t V = f->b.V;
	for (int p = 0; p < f->n; p++) {
		fwd_bound bp;
		int32_t keep = f->ids[p];
		if (f->m->cfg.objective == OBJ_MASKED)
			f->ids[p] = TOK_MASK;
		CHECK(fwd_bound_compute_row(&bp, f->m, f->ids, f->n, NULL, p));
		f->ids[p] = keep;
		for (size_t v = 0; v < V; v++)
			lmax = fmax(lmax, bp.logits_err[(size_t)p * V + v]);
		fwd_bound_finish(&bp);
	}
	f->t_loss = 2 * 2 * lmax;
	printf("tolerances from the bounds: weights %.2e, words %.2e, loss %.2e\n", f->t,
	       f->t_words, f->t_loss);
}

static const float *gt(const fixture *f, const char *name);

/* Each role score's tolerance (the comment at the top): the rows within t
 * of changing where they look, each a row of the role's rows. */
static double *role_tolerances(const fixture *f)
{
	const float *margin = gt(f, "role_margins");
	double *tol = malloc((size_t)f->L * f->H * ROLE_NKINDS * sizeof *tol);
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++) {
			const size_t k = (size_t)l * f->H + h;
			int unsure = 0;
			for (int i = 0; margin && i < f->n; i++)
				unsure += margin[k * f->n + i] <= f->t;
			attn_matrix a = attn_result_head(&f->r, l, h);
			role_scores rs;
			head_roles(&rs, &a, f->tok);
			for (int s = 0; s < ROLE_NKINDS; s++) {
				int rows = rs.rows[s] > ROLE_MIN_ROWS ? rs.rows[s] : ROLE_MIN_ROWS;
				double one = s == ROLE_SCRIPT ? 20.0 / rows : 1.0 / rows;
				/* shares are written in binary32: 1e-6 */
				tol[k * ROLE_NKINDS + s] = unsure * one + 1e-6;
			}
		}
	return tol;
}

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
	cp_buf_finish(&cps);
	for (int i = 0; i < f->n; i++)
		CHECKF(f->tok[i].id == f->ids[i], "token %d: id %d, golden %d", i, f->tok[i].id,
		       f->ids[i]);
	CHECK(activations_init(&f->ws, &f->m->cfg, 1, f->n, f->n, &err));
	CHECKF(model_attend(f->m, &f->ws, f->tok, f->n, 0, &f->r, &err), "%s", err.msg);
	set_tolerances(f);
	return true;
}

static void teardown(fixture *f)
{
	fwd_bound_finish(&f->b);
	attn_result_finish(&f->r);
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

/* got against want, each element within tol[i] (or tol0 where tol is NULL). */
static void check_each(const char *what, const float *got, const float *want, const double *tol,
		       double tol0, size_t n)
{
	double worst = 0;
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		double t = tol ? tol[i] : tol0;
		double d = fabs((double)got[i] - want[i]), r = d == 0 ? 0 : d / t;
		if (r > worst || isnan(d)) {
			worst = isnan(d) ? INFINITY : r;
			at = i;
		}
	}
	printf("%s: %zu values, largest difference %.3f of its tolerance\n", what, n, worst);
	CHECKF(worst <= 1, "%s [%zu]: %g against %g, %.2f times the tolerance %.2e", what, at,
	       got[at], want[at], worst, tol ? tol[at] : tol0);
}

/* Twice the bounds of q at query qi and k at key kj, per head, laid out as
 * the golden "q" and "k"; twice the bound of |v_j W_O^h| for every j. */
static void qkv_tolerances(const fixture *f, int qi, int kj, double *tq, double *tk, double *tv)
{
	const int d = f->L ? (int)f->m->cfg.dim : 0, hs = f->hs, n = f->n;
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++) {
			const double *e = f->b.qkv_err + (size_t)l * n * 3 * d;
			const double *v = f->b.qkv + (size_t)l * n * 3 * d;
			const float *wo = f->m->p.layer[l].proj_w;
			double wf = 0; /* |W_O^h|_F: the head's columns of proj_w (d, d) */
			for (int r = 0; r < d; r++)
				for (int c = h * hs; c < (h + 1) * hs; c++)
					wf += (double)wo[(size_t)r * d + c] * wo[(size_t)r * d + c];
			wf = sqrt(wf);
			for (int t = 0; t < hs; t++) {
				size_t o = (size_t)(l * f->H + h) * hs + t;
				tq[o] = 2 * e[(size_t)qi * 3 * d + h * hs + t];
				tk[o] = 2 * e[(size_t)kj * 3 * d + d + h * hs + t];
			}
			for (int j = 0; j < n; j++) {
				double ev = 0, vv = 0;
				for (int t = 0; t < hs; t++) {
					size_t o = (size_t)j * 3 * d + 2 * d + h * hs + t;
					ev += 4 * e[o] * e[o];
					vv += v[o] * v[o];
				}
				/* and the product's and the norm's own rounding */
				tv[(size_t)(l * f->H + h) * n + j] =
				    sqrt(ev) * wf + 8 * sqrt(hs + d) * 0x1p-24 * sqrt(vv) * wf;
			}
		}
}

static void core_checks(fixture *f, const char *name)
{
	char what[128];
	const size_t nn = (size_t)f->n * f->n, L = (size_t)f->L, H = (size_t)f->H;
	snprintf(what, sizeof what, "%s: attention", name);
	double *two = malloc(L * H * nn * sizeof *two);
	for (size_t i = 0; i < L * H * nn; i++)
		two[i] = 2 * f->b.att_err[i];
	float *da = malloc(L * H * nn * sizeof *da);
	attn_result_dense(&f->r, da, NULL);
	check_each(what, da, gt(f, "att"), two, 0, L * H * nn);
	free(da);
	free(two);

	/* q and k of every head at the breakdown's cell, from the view's pass. */
	const float *cell = gt(f, "cell");
	int qi = (int)cell[0], kj = (int)cell[1];
	float *q = malloc(L * H * f->hs * sizeof *q), *k = malloc(L * H * f->hs * sizeof *k);
	double *tq = malloc(L * H * f->hs * sizeof *tq), *tk = malloc(L * H * f->hs * sizeof *tk);
	double *tv = malloc(L * H * f->n * sizeof *tv);
	qkv_tolerances(f, qi, kj, tq, tk, tv);
	av_error err;
	CHECK(infer_forward(f->m, &f->ws, NULL, f->ids, f->n, NULL, NULL, NULL, NULL, &err));
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++)
			qk_from_forward(f->m, &f->ws, l, h, qi, kj, q + (l * f->H + h) * f->hs,
					k + (l * f->H + h) * f->hs);
	snprintf(what, sizeof what, "%s: q at query %d", name, qi);
	check_each(what, q, gt(f, "q"), tq, 0, L * H * f->hs);
	snprintf(what, sizeof what, "%s: k at key %d", name, kj);
	check_each(what, k, gt(f, "k"), tk, 0, L * H * f->hs);
	free(q);
	free(k);

	float *vn = malloc(L * H * f->n * sizeof *vn);
	CHECK(value_norms(f->m, &f->ws, f->n, vn, &err));
	snprintf(what, sizeof what, "%s: value norms", name);
	check_each(what, vn, gt(f, "value_norms"), tv, 0, L * H * f->n);
	free(vn);
	free(tq);
	free(tk);
	free(tv);

	float roles[ROLE_NKINDS * AV_MAX_HEADS * 4];
	double *trole = role_tolerances(f);
	for (int l = 0; l < f->L; l++)
		for (int h = 0; h < f->H; h++) {
			attn_matrix a = attn_result_head(&f->r, l, h);
			role_scores rs;
			head_roles(&rs, &a, f->tok);
			for (int s = 0; s < ROLE_NKINDS; s++)
				roles[(l * f->H + h) * ROLE_NKINDS + s] = (float)rs.s[s];
		}
	snprintf(what, sizeof what, "%s: head role scores", name);
	check_each(what, roles, gt(f, "roles"), trole, 0, L * H * ROLE_NKINDS);
	free(trole);

	float *m = malloc(L * nn * sizeof *m), *work = malloc(nn * sizeof *work);
	for (int l = 0; l < f->L; l++)
		aggregate_heads(m + l * nn, &f->r, l, SEL_MEAN);
	snprintf(what, sizeof what, "%s: mean of each layer's heads", name);
	check_each(what, m, gt(f, "mean"), NULL, f->t, L * nn);
	for (int l = 0; l < f->L; l++)
		aggregate_heads(m + l * nn, &f->r, l, SEL_MAX);
	snprintf(what, sizeof what, "%s: max of each layer's heads", name);
	check_each(what, m, gt(f, "max"), NULL, f->t, L * nn);
	aggregate_heads(m, &f->r, 0, SEL_ALL);
	snprintf(what, sizeof what, "%s: mean of all heads", name);
	check_each(what, m, gt(f, "all"), NULL, f->t, nn);
	attention_rollout(m, work, &f->r);
	snprintf(what, sizeof what, "%s: rollout", name);
	check_each(what, m, gt(f, "rollout"), NULL, (double)L * f->n * f->t / 2, L * nn);

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
	check_each(what, wa, gt(f, "word_att"), NULL, f->t_words, L * H * (size_t)nw * nw);
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
	fwd_bound b;
	const size_t cells = (size_t)f->L * f->H * f->n * f->n;
	CHECK(fwd_bound_compute(&b, f->m, f->ids, f->n, mask));
	for (size_t i = 0; i < cells; i++)
		b.att_err[i] *= 2;
	float *da = malloc(cells * sizeof *da);
	attn_result_dense(&r, da, NULL);
	check_each(what, da, gt(f, "att_ablated"), b.att_err, 0, cells);
	free(da);
	fwd_bound_finish(&b);
	const float *loss = gt(f, "loss");
	float got[3] = {(float)before, (float)after, (float)count};
	snprintf(what, sizeof what, "%s: loss before, after, positions", name);
	check_each(what, got, loss, NULL, f->t_loss, 3);
	CHECK(count == count2);
	/* The ablation changes something: a test of it that cannot fail is none. */
	CHECKF(fabs(after - before) > 1e-4, "%s: ablation left the loss at %g", name, before);
	attn_result_finish(&r);

	/* Mean-ablation against PyTorch's (a forward hook there). Each of the
	 * heads' rows is a mean of rows whose error the bound covers, so the
	 * loss's bound holds for it as for zeroing. */
	double mean, at_loss;
	int mcount, at_count;
	CHECK(model_text_loss_mean(f->m, &f->ws, f->tok, f->n, mask, NULL, &mean, &mcount, &at_loss,
				   &at_count, NULL, NULL, &err));
	CHECKF(mcount == count && at_count == 0 && isnan(at_loss),
	       "%s: mean-ablated loss over %d positions (%d at), zeroed over %d", name, mcount,
	       at_count, count);
	const float *gm = gt(f, "loss_mean");
	CHECKF(gm && fabs(mean - gm[0]) <= f->t_loss,
	       "%s: mean-ablated loss %.6f, golden %.6f (±%.1e)", name, mean, gm ? gm[0] : NAN,
	       f->t_loss);
	CHECKF(fabs(mean - after) > 1e-3 && fabs(mean - before) > 1e-3,
	       "%s: mean-ablated %.6f, zeroed %.6f, every head %.6f: not three numbers", name, mean,
	       after, before);
	/* What the work space held before comes back, whatever it was. */
	uint8_t other[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	const int32_t *toks_before = f->ws.tokens;
	f->ws.ablate = other;
	CHECK(model_text_loss_mean(f->m, &f->ws, f->tok, f->n, mask, NULL, &mean, &mcount, &at_loss,
				   &at_count, NULL, NULL, &err));
	CHECK(f->ws.ablate == other && !f->ws.ablate_mean && f->ws.pattern == NULL &&
	      f->ws.tokens == toks_before);
	f->ws.ablate = NULL;
}

/* The mean-ablated rows themselves: head (l, h)'s rows in a pass with it
 * mean-ablated are, to the bit, the average (in double, rows in order) of
 * its own rows in a pass without (the layers under it are the same): over
 * every row of its sequence (masked), over rows 0..i (causal); for two
 * sequences of one pass, each its own. An average over other rows (one
 * fewer, one later) fails. */
static void mean_rows_checks(fixture *f, const char *name)
{
	const model_config *c = &f->m->cfg;
	const int n = f->n, d = (int)c->dim, hs = f->hs, l = f->L - 1, h = f->H - 1;
	const bool causal = c->objective == OBJ_CAUSAL;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, c, 2, n, n, &err));
	int32_t *ids = malloc(2 * (size_t)n * sizeof *ids);
	float *own = malloc(2 * (size_t)n * hs * sizeof *own);
	for (int i = 0; i < n; i++) {
		ids[i] = f->ids[i];
		ids[n + i] = f->ids[n - 1 - i]; /* the text backwards */
	}
	model_forward(f->m, &ws, ids, 2, n);
	for (int r = 0; r < 2 * n; r++)
		memcpy(own + (size_t)r * hs, ws.layer[l].atty + (size_t)r * d + (size_t)h * hs,
		       (size_t)hs * sizeof *own);
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	off[l * f->H + h] = 1;
	ws.ablate = off;
	ws.ablate_mean = true;
	model_forward(f->m, &ws, ids, 2, n);
	int wrong = 0;
	for (int b = 0; b < 2; b++)
		for (int k = 0; k < hs; k++) {
			double all = 0, run = 0;
			for (int r = 0; r < n; r++)
				all += own[((size_t)b * n + r) * hs + k];
			for (int r = 0; r < n; r++) {
				run += own[((size_t)b * n + r) * hs + k];
				float want = (float)(causal ? run / (r + 1) : all / n);
				float got =
				    ws.layer[l].atty[((size_t)b * n + r) * d + (size_t)h * hs + k];
				wrong += got != want;
			}
		}
	CHECKF(wrong == 0,
	       "%s: head %d.%d mean-ablated: %d of %d values are not the average of its "
	       "rows",
	       name, l, h, wrong, 2 * n * hs);
	activations_finish(&ws);
	free(ids);
	free(own);
}

/* A newer text: the masked passes give up between positions. */
static bool stop_now(void *ctx)
{
	(*(int *)ctx)++;
	return true;
}

static void mean_stop_checks(fixture *f, const char *name)
{
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {1};
	double loss, at_loss;
	int count, at_count, asked = 0;
	av_error err = {0};
	bool ok = model_text_loss_mean(f->m, &f->ws, f->tok, f->n, off, NULL, &loss, &count,
				       &at_loss, &at_count, stop_now, &asked, &err);
	if (f->m->cfg.objective == OBJ_CAUSAL)
		CHECKF(ok && asked == 0, "%s: one causal pass, asked %d times", name, asked);
	else
		CHECKF(!ok && asked == 1 && strstr(err.msg, "newer"),
		       "%s: asked to stop: %s after %d questions (%s)", name,
		       ok ? "went on" : "gave up", asked, err.msg);
	CHECK(f->ws.ablate == NULL && !f->ws.ablate_mean);
}

/* When the mean takes back what zeroing cost (ablation_mean_suffices), on
 * the panel's numbers: the duplicate task's head whose output is all it
 * gives (0.000 -> 4.152, its mean 0.000), the built-in model's heads of the
 * man page (lower without; the mean worse than zero), a rise too small to
 * say anything, and a mean that takes back under nine tenths. */
static void mean_suffices_checks(void)
{
	CHECK(ablation_mean_suffices(0.0, 4.152, 0.0));
	CHECK(ablation_mean_suffices(1.0, 2.0, 1.05));
	CHECK(!ablation_mean_suffices(1.0, 2.0, 1.15));
	CHECK(!ablation_mean_suffices(1.755, 1.453, 1.790));
	CHECK(!ablation_mean_suffices(1.665, 2.733, 3.709));
	CHECK(!ablation_mean_suffices(1.0, 1.04, 1.0));
	CHECK(!ablation_mean_suffices(1.0, NAN, 1.0) && !ablation_mean_suffices(1.0, 2.0, NAN));
}

/* A head whose output is a constant (its value rows zero, its value bias
 * not): zeroing it changes the loss, its mean in its place gives the loss
 * with every head (the model needs what it writes, not where it looks).
 * And a causal model's mean-ablated row sees no later character: the loss
 * of the text's first k - 1 predictions is the loss of its first k
 * characters alone. */
static void mean_ablation_checks(fixture *f, const char *name)
{
	const int d = (int)f->m->cfg.dim, hs = f->hs;
	layer_params *lp = &f->m->p.layer[0];
	float *vw = lp->qkv_w + (size_t)2 * d * d, *vb = lp->qkv_b + 2 * d; /* head 0's rows */
	float *keep = malloc((size_t)hs * (d + 1) * sizeof *keep);
	memcpy(keep, vw, (size_t)hs * d * sizeof *keep);
	memcpy(keep + (size_t)hs * d, vb, (size_t)hs * sizeof *keep);
	memset(vw, 0, (size_t)hs * d * sizeof *vw);
	for (int c = 0; c < hs; c++)
		vb[c] = c % 2 ? 1.5f : -1.0f;
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	off[0] = 1;
	av_error err;
	double before, zeroed, mean, at_loss;
	int count, count2, at_count;
	f->ws.ablate = NULL;
	CHECK(model_text_loss(f->m, &f->ws, f->tok, f->n, &before, &count, &err));
	f->ws.ablate = off;
	CHECK(model_text_loss(f->m, &f->ws, f->tok, f->n, &zeroed, &count2, &err));
	f->ws.ablate = NULL;
	CHECK(model_text_loss_mean(f->m, &f->ws, f->tok, f->n, off, NULL, &mean, &count2, &at_loss,
				   &at_count, NULL, NULL, &err));
	CHECKF(fabs(zeroed - before) > 1e-3 && fabs(mean - before) <= f->t_loss,
	       "%s: a constant head: every head %.6f, zeroed %.6f, its mean %.6f (±%.1e)", name,
	       before, zeroed, mean, f->t_loss);
	memcpy(vw, keep, (size_t)hs * d * sizeof *keep);
	memcpy(vb, keep + (size_t)hs * d, (size_t)hs * sizeof *keep);
	free(keep);
	if (f->m->cfg.objective != OBJ_CAUSAL)
		return;
	/* Head (0, 0) mean-ablated (its real weights): predictions 0..k-2 of
	 * the whole text against the text cut after k characters. */
	const int k = f->n / 2;
	uint8_t at[AV_MAX_CONTEXT] = {0};
	for (int p = 0; p + 1 < k; p++)
		at[p] = 1;
	double whole, cut, cut_at;
	int nwhole, ncut, ncut_at;
	CHECK(model_text_loss_mean(f->m, &f->ws, f->tok, f->n, off, at, &whole, &nwhole, &at_loss,
				   &at_count, NULL, NULL, &err));
	CHECK(model_text_loss_mean(f->m, &f->ws, f->tok, k, off, NULL, &cut, &ncut, &cut_at,
				   &ncut_at, NULL, NULL, &err));
	/* Both from this program's passes: apart only by their rounding over
	 * a text twice as long (a full-text average is 0.05 off here). */
	CHECKF(at_count == ncut && fabs(at_loss - cut) <= 1e-4,
	       "%s: the first %d predictions mean-ablated: %.6f in the whole text, %.6f in its "
	       "first %d characters (a later character leaked in)",
	       name, ncut, at_loss, cut, k);
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

/* As check_each, on a JSON array of the dump. */
static void check_json_array(const char *what, const json *a, const float *want, size_t n,
			     const double *tol, double tol0)
{
	float *got = calloc(n + 1, sizeof *got);
	size_t have = flatten(a, got, n);
	CHECKF(have == n, "%s: %zu numbers in the dump, golden %zu", what, have, n);
	if (have == n)
		check_each(what, got, want, tol, tol0, n);
	free(got);
}

static void dump_checks(fixture *f, const explain_case *c)
{
	const float *cell = gt(f, "cell");
	char model_path[512], qs[16], ks[16];
	snprintf(model_path, sizeof model_path, "%s", test_path(c->model));
	snprintf(qs, sizeof qs, "%d", (int)cell[0]);
	snprintf(ks, sizeof ks, "%d", (int)cell[1]);
	const char *args[] = {
	    "--model",	 model_path, "--text", c->text, "--top",	   "0",
	    "--query",	 qs,	     "--key",  ks,	"--contributions", "--aggregates",
	    "--rollout", "--words",  NULL};
	json *j = test_dump_json(args);
	if (!j)
		return;
	const size_t L = (size_t)f->L, H = (size_t)f->H, n = (size_t)f->n, hs = (size_t)f->hs;
	const json *bd = json_get(j, "breakdown");
	CHECKF(bd && bd->n == L * H, "%s: breakdown of %zu heads", c->name, bd ? bd->n : 0);
	float *buf = malloc(L * H * n * n * sizeof *buf);
	double *tq = malloc(L * H * hs * sizeof *tq), *tk = malloc(L * H * hs * sizeof *tk);
	double *tv = malloc(L * H * n * sizeof *tv);
	qkv_tolerances(f, (int)cell[0], (int)cell[1], tq, tk, tv);
	char what[128];
	for (size_t i = 0; bd && i < bd->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump breakdown %zu q", c->name, i);
		check_json_array(what, json_get(json_at(bd, i), "q"), gt(f, "q") + i * hs, hs,
				 tq + i * hs, 0);
		snprintf(what, sizeof what, "%s: dump breakdown %zu k", c->name, i);
		check_json_array(what, json_get(json_at(bd, i), "k"), gt(f, "k") + i * hs, hs,
				 tk + i * hs, 0);
	}
	const json *ct = json_get(j, "contributions");
	for (size_t i = 0; ct && i < ct->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump value norms %zu", c->name, i);
		check_json_array(what, json_get(json_at(ct, i), "value_norms"),
				 gt(f, "value_norms") + i * n, n, tv + i * n, 0);
	}
	free(tq);
	free(tk);
	free(tv);
	const json *heads = json_get(j, "heads");
	static const char *const keys[ROLE_NKINDS] = {
	    "previous",	 "next",      "self",	"first",  "delimiter",
	    "duplicate", "induction", "local",	"offset", "keyword",
	    "script",	 "parallel",  "mirror", "broad",  "word_start"};
	for (size_t i = 0; heads && i < heads->n && i < L * H; i++) {
		const json *sc = json_get(json_at(heads, i), "scores");
		for (int s = 0; s < ROLE_NKINDS; s++) {
			const json *v = json_get(sc, keys[s]);
			buf[i * ROLE_NKINDS + (size_t)s] = v ? (float)v->num : NAN;
		}
	}
	snprintf(what, sizeof what, "%s: dump head role scores", c->name);
	CHECK(heads && heads->n == L * H);
	double *trole = role_tolerances(f);
	check_each(what, buf, gt(f, "roles"), trole, 0, L * H * ROLE_NKINDS);
	free(trole);
	const json *agg = json_get(j, "aggregates");
	CHECKF(agg && agg->n == 2 * L + 1, "%s: %zu aggregates", c->name, agg ? agg->n : 0);
	for (size_t l = 0; agg && l < L && 2 * l + 1 < agg->n; l++) {
		snprintf(what, sizeof what, "%s: dump mean of layer %zu", c->name, l);
		check_json_array(what, json_get(json_at(agg, 2 * l), "weights"),
				 gt(f, "mean") + l * n * n, n * n, NULL, f->t);
		snprintf(what, sizeof what, "%s: dump max of layer %zu", c->name, l);
		check_json_array(what, json_get(json_at(agg, 2 * l + 1), "weights"),
				 gt(f, "max") + l * n * n, n * n, NULL, f->t);
	}
	const json *ro = json_get(j, "rollout");
	for (size_t l = 0; ro && l < L && l < ro->n; l++) {
		snprintf(what, sizeof what, "%s: dump rollout %zu", c->name, l);
		check_json_array(what, json_get(json_at(ro, l), "weights"),
				 gt(f, "rollout") + l * n * n, n * n, NULL,
				 (double)L * n * f->t / 2);
	}
	const golden_tensor *wg = golden_get(&f->g, "word_att");
	const json *wa = json_get(json_get(j, "words"), "attention");
	size_t nw = wg ? wg->dims[2] : 0;
	for (size_t i = 0; wa && i < wa->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump word attention %zu", c->name, i);
		check_json_array(what, json_get(json_at(wa, i), "weights"), wg->v + i * nw * nw,
				 nw * nw, NULL, f->t_words);
	}
	json_free(j);

	/* With the heads off: the ablated attention and the losses. */
	const golden_tensor *off = golden_get(&f->g, "ablate");
	char spec[256] = "";
	for (size_t i = 0; off && i < off->dims[0]; i++)
		snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%s%d.%d", i ? "," : "",
			 (int)off->v[2 * i], (int)off->v[2 * i + 1]);
	const char *args2[] = {"--model", model_path, "--text", c->text, "--top",
			       "0",	  "--ablate", spec,	NULL};
	j = test_dump_json(args2);
	if (!j) {
		free(buf);
		return;
	}
	const json *att = json_get(j, "attention");
	uint8_t mask[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	for (size_t i = 0; off && i < off->dims[0]; i++)
		mask[(int)off->v[2 * i] * f->H + (int)off->v[2 * i + 1]] = 1;
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, f->m, f->ids, f->n, mask));
	for (size_t i = 0; i < L * H * n * n; i++)
		b.att_err[i] *= 2;
	for (size_t i = 0; att && i < att->n && i < L * H; i++) {
		snprintf(what, sizeof what, "%s: dump ablated attention %zu", c->name, i);
		check_json_array(what, json_get(json_at(att, i), "weights"),
				 gt(f, "att_ablated") + i * n * n, n * n, b.att_err + i * n * n, 0);
	}
	fwd_bound_finish(&b);
	const json *ab = json_get(j, "ablation");
	const json *lb = json_get(ab, "loss_before"), *la = json_get(ab, "loss_after");
	const float *loss = gt(f, "loss");
	CHECKF(lb && la && fabs(lb->num - loss[0]) <= f->t_loss &&
		   fabs(la->num - loss[1]) <= f->t_loss,
	       "%s: dump loss %g -> %g, golden %g -> %g", c->name, lb ? lb->num : NAN,
	       la ? la->num : NAN, loss[0], loss[1]);
	const json *lm = json_get(ab, "loss_mean");
	CHECKF(lm && fabs(lm->num - gt(f, "loss_mean")[0]) <= f->t_loss,
	       "%s: dump loss_mean %g, golden %g", c->name, lm ? lm->num : NAN,
	       gt(f, "loss_mean")[0]);
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
			mean_ablation_checks(&f, cases[i].name);
			mean_rows_checks(&f, cases[i].name);
			mean_stop_checks(&f, cases[i].name);
		}
		teardown(&f);
	}
	mean_suffices_checks();
	return test_summary("explain");
}
