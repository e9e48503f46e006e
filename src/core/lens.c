/* The logit lens and direct logit attribution (lens.h). */
#include "attnview/lens.h"
#include "attnview/i18n.h"
#include "attnview/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The plain pass of ids[0..n) (every activation of every block kept). */
static bool run_pass(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs,
		     av_error *err)
{
	if (n < 1 || n > ws->T || ws->B < 1)
		return av_fail(err, _("%d tokens do not fit the work space of %d"), n, ws->T);
	if (rs.row0 < 0 || rs.nrows < 1 || rs.row0 + rs.nrows > n)
		return av_fail(err, _("rows %d to %d are not in a text of %d tokens"), rs.row0,
			       rs.row0 + rs.nrows - 1, n);
	model_forward(m, ws, ids, 1, n);
	return true;
}

/* The topk largest of p[0..V) into ids and probs, largest first. */
static void top_of(const double *p, int V, int topk, int32_t *ids, float *probs)
{
	for (int k = 0; k < topk; k++) {
		int best = -1;
		for (int v = 0; v < V; v++) {
			bool taken = false;
			for (int j = 0; j < k && !taken; j++)
				taken = ids[j] == v;
			if (!taken && (best < 0 || p[v] > p[best]))
				best = v;
		}
		ids[k] = best;
		probs[k] = best < 0 ? 0.0f : (float)p[best];
	}
}

/* softmax(lnf(x) wte^T + out_b) of one row x (d) into p (V), in double;
 * ln (d) and logits (V) are work space. */
static void lens_row(const model *m, const float *x, float *ln, float *logits, double *p)
{
	const int d = (int)m->cfg.dim, V = (int)m->cfg.vocab_size;
	float mean, rstd;
	layernorm_forward(ln, &mean, &rstd, x, m->p.lnf_w, m->p.lnf_b, 1, d);
	/* the output projection (wte^T, or the untied out_w^T) */
	model_unembed(m, logits, ln, 1);
	double lse = log_sum_exp(logits, V);
	for (int v = 0; v < V; v++)
		p[v] = exp((double)logits[v] - lse);
}

bool logit_lens(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs, int topk,
		int32_t *top_id, float *top_p, int *commit, av_error *err)
{
	const int d = (int)m->cfg.dim, V = (int)m->cfg.vocab_size, L = (int)m->cfg.layers;
	if (topk < 1 || topk > V)
		return av_fail(err, _("the lens shows 1 to %d characters, not %d"), V, topk);
	float *ln = malloc((size_t)(d + V) * sizeof *ln);
	double *p = malloc((size_t)V * sizeof *p);
	if (!ln || !p) {
		free(ln);
		free(p);
		return av_fail(err, _("out of memory for the logit lens of %d tokens"), n);
	}
	bool ok = run_pass(m, ws, ids, n, rs, err);
	n = rs.nrows;
	for (int l = 0; ok && l < L; l++)
		for (int t = 0; t < n; t++) {
			size_t o = ((size_t)l * (size_t)n + (size_t)t) * (size_t)topk;
			lens_row(m, ws->layer[l].res3 + (size_t)(rs.row0 + t) * d, ln, ln + d, p);
			top_of(p, V, topk, top_id + o, top_p + o);
		}
	/* The commitment: walk down from the last block while the top agrees. */
	for (int t = 0; ok && commit && t < n; t++) {
		const int32_t final = top_id[((size_t)(L - 1) * n + t) * topk];
		int l = L - 1;
		while (l > 0 && top_id[((size_t)(l - 1) * n + t) * topk] == final)
			l--;
		commit[t] = l;
	}
	free(ln);
	free(p);
	return ok;
}

bool logit_lens_p(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs,
		  const int32_t *target, float *p, av_error *err)
{
	const int d = (int)m->cfg.dim, V = (int)m->cfg.vocab_size, L = (int)m->cfg.layers;
	float *ln = malloc((size_t)(d + V) * sizeof *ln);
	double *pv = malloc((size_t)V * sizeof *pv);
	if (!ln || !pv) {
		free(ln);
		free(pv);
		return av_fail(err, _("out of memory for the logit lens of %d tokens"), n);
	}
	bool ok = run_pass(m, ws, ids, n, rs, err);
	for (int t = 0; ok && t < rs.nrows; t++)
		if (target[t] < 0 || target[t] >= V)
			ok = av_fail(err, _("character id %d is not in the vocabulary of %d"),
				     target[t], V);
	for (int l = 0; ok && l < L; l++)
		for (int t = 0; t < rs.nrows; t++) {
			lens_row(m, ws->layer[l].res3 + (size_t)(rs.row0 + t) * d, ln, ln + d, pv);
			p[(size_t)l * rs.nrows + t] = (float)pv[target[t]];
		}
	free(ln);
	free(pv);
	return ok;
}

/* sum_k g[k] (u[k] - mean(u)), G = sum_k g[k]. */
static double centered_dot(const double *u, const double *g, double G, int d)
{
	double s = 0, mean = 0;
	for (int k = 0; k < d; k++) {
		s += g[k] * u[k];
		mean += u[k];
	}
	return s - mean / d * G;
}

/* u = a - b (d floats each) in double. */
static void diff(double *u, const float *a, const float *b, int d)
{
	for (int k = 0; k < d; k++)
		u[k] = (double)a[k] - (b ? (double)b[k] : 0.0);
}

/* The parts of row t for the target whose g = gamma . wte[target]: the
 * heads' c() into heads (L, H), and the rest's c() returned (without the
 * frozen scale and the biases). u (d) and y (d) are work space. */
static double row_parts(const model *m, const activations *ws, int t, const double *g, double G,
			float rstd, float *heads, double *u, double *hu)
{
	const int d = (int)m->cfg.dim, H = (int)m->cfg.heads, L = (int)m->cfg.layers, hs = d / H;
	const size_t r = (size_t)t * (size_t)d;
	diff(u, ws->encoded + r, NULL, d);
	double rest = centered_dot(u, g, G, d);
	for (int l = 0; l < L; l++) {
		const layer_acts *la = &ws->layer[l];
		const float *x = l ? ws->layer[l - 1].res3 + r : ws->encoded + r;
		const float *wo = m->p.layer[l].proj_w, *y = la->atty + r;
		double heads_sum = 0;
		for (int h = 0; h < H; h++) {
			/* hu = W_O^h y_h: the columns h*hs.. of proj_w (d, d). */
			for (int k = 0; k < d; k++) {
				double s = 0;
				for (int c = 0; c < hs; c++)
					s += (double)wo[(size_t)k * d + h * hs + c] * y[h * hs + c];
				hu[k] = s;
			}
			double c = centered_dot(hu, g, G, d);
			heads[l * H + h] = (float)(rstd * c);
			heads_sum += c;
		}
		diff(u, la->res2 + r, x, d); /* the block's attention: heads + proj_b */
		rest += centered_dot(u, g, G, d) - heads_sum;
		diff(u, la->res3 + r, la->res2 + r, d); /* the MLP */
		rest += centered_dot(u, g, G, d);
	}
	return rest;
}

bool logit_attribution(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs,
		       const int32_t *target, int32_t *target_out, float *logit, float *heads,
		       float *rest, av_error *err)
{
	const int d = (int)m->cfg.dim, V = (int)m->cfg.vocab_size;
	const int LH = (int)(m->cfg.layers * m->cfg.heads);
	float *logits = malloc((size_t)V * sizeof *logits);
	double *g = malloc(3 * (size_t)d * sizeof *g);
	if (!logits || !g) {
		free(logits);
		free(g);
		return av_fail(err, _("out of memory for the logit attribution of %d tokens"), n);
	}
	bool ok = run_pass(m, ws, ids, n, rs, err);
	for (int i = 0; ok && i < rs.nrows; i++) {
		const int t = rs.row0 + i;
		model_unembed(m, logits, ws->lnf + (size_t)t * d, 1);
		int32_t v = target ? target[i] : 0;
		for (int u = 1; !target && u < V; u++)
			if (logits[u] > logits[v])
				v = u;
		if (v < 0 || v >= V) {
			ok =
			    av_fail(err, _("character id %d is not in the vocabulary of %d"), v, V);
			break;
		}
		const float *w = m->out_w + (size_t)v * d;
		double G = 0, bias = m->p.out_b[v];
		for (int k = 0; k < d; k++) {
			g[k] = (double)m->p.lnf_w[k] * w[k];
			G += g[k];
			bias += (double)m->p.lnf_b[k] * w[k];
		}
		const float rstd = ws->lnf_rstd[t];
		double c =
		    row_parts(m, ws, t, g, G, rstd, heads + (size_t)i * LH, g + d, g + 2 * d);
		target_out[i] = v;
		logit[i] = logits[v];
		rest[i] = (float)(rstd * c + bias);
	}
	free(logits);
	free(g);
	return ok;
}
