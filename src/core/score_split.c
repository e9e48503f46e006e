/* The score split by source (score_split.h). */
#include "attnview/score_split.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const source_names[] = {"token", "position", "head", "proj_b", "mlp", "bias"};
_Static_assert(sizeof source_names / sizeof source_names[0] == SPLIT_NSOURCES,
	       "a name for every split_source");

const char *split_source_name(split_source s)
{
	return (unsigned)s < SPLIT_NSOURCES ? source_names[s] : "?";
}

int split_nparts(const model *m, int layer)
{
	return 3 + layer * ((int)m->cfg.heads + 2);
}

split_part split_part_at(const model *m, int layer, int p)
{
	const int H = (int)m->cfg.heads, per = H + 2;
	if (p == 0)
		return (split_part){SPLIT_TOKEN, -1, -1};
	if (p == 1)
		return (split_part){SPLIT_POSITION, -1, -1};
	if (p >= 2 + layer * per)
		return (split_part){SPLIT_BIAS, -1, -1};
	const int l = (p - 2) / per, k = (p - 2) % per;
	if (k < H)
		return (split_part){SPLIT_HEAD, l, k};
	return (split_part){k == H ? SPLIT_PROJ_B : SPLIT_MLP, l, -1};
}

void split_part_name(const model *m, int layer, int p, char *out, size_t size)
{
	const split_part s = split_part_at(m, layer, p);
	if (s.source == SPLIT_HEAD)
		snprintf(out, size, "L%dH%d", s.layer, s.head);
	else if (s.source == SPLIT_PROJ_B || s.source == SPLIT_MLP)
		snprintf(out, size, "L%d.%s", s.layer, split_source_name(s.source));
	else
		snprintf(out, size, "%s", split_source_name(s.source));
}

/* The parts of row t of block `layer`'s input into u (nparts - 1, d): every
 * one but the bias, in double, adding up to the input. */
static void row_parts(const model *m, const activations *ws, int layer, int t, double *u)
{
	const int d = (int)m->cfg.dim, H = (int)m->cfg.heads, hs = d / H;
	const size_t r = (size_t)t * d;
	const float *pe = m->pe + r, *enc = ws->encoded + r;
	for (int k = 0; k < d; k++) {
		u[k] = (double)enc[k] - pe[k];
		u[d + k] = pe[k];
	}
	u += 2 * (size_t)d;
	for (int l = 0; l < layer; l++) {
		const layer_acts *la = &ws->layer[l];
		const float *x = l ? ws->layer[l - 1].res3 + r : enc, *y = la->atty + r;
		const float *wo = m->p.layer[l].proj_w;
		double *pb = u + (size_t)H * d, *mlp = pb + d;
		for (int k = 0; k < d; k++)
			pb[k] = (double)la->res2[r + k] - x[k];
		for (int h = 0; h < H; h++, u += d)
			for (int k = 0; k < d; k++) {
				double s = 0;
				for (int c = 0; c < hs; c++)
					s += (double)wo[(size_t)k * d + h * hs + c] * y[h * hs + c];
				u[k] = s;
				pb[k] -= s;
			}
		for (int k = 0; k < d; k++)
			mlp[k] = (double)la->res3[r + k] - la->res2[r + k];
		u += 2 * (size_t)d;
	}
}

/* Each part's share of q (side 0) or k (side 1) of the head at row t into
 * out (nparts, hs): W (gamma . (u - mean u) rstd) for the parts, then
 * W beta + b for the bias. u: the parts (row_parts). */
static void project(const model *m, const activations *ws, int layer, int head, int side, int t,
		    const double *u, int P, double *out, double *z)
{
	const int d = (int)m->cfg.dim, hs = d / (int)m->cfg.heads;
	const layer_params *lp = &m->p.layer[layer];
	const double rstd = ws->layer[layer].ln1_rstd[t];
	const float *W = lp->qkv_w + ((size_t)side * d + (size_t)head * hs) * d;
	const float *b = lp->qkv_b + (size_t)side * d + (size_t)head * hs;
	for (int p = 0; p < P; p++, out += hs) {
		const double *up = u + (size_t)p * d;
		double mean = 0;
		for (int k = 0; k < d; k++)
			mean += up[k];
		mean /= d;
		for (int k = 0; k < d; k++)
			z[k] = p < P - 1 ? lp->ln1_w[k] * (up[k] - mean) * rstd : lp->ln1_b[k];
		for (int e = 0; e < hs; e++) {
			double s = p < P - 1 ? 0 : b[e];
			for (int k = 0; k < d; k++)
				s += (double)W[(size_t)e * d + k] * z[k];
			out[e] = s;
		}
	}
}

bool score_split_compute(const model *m, const activations *ws, int n, int layer, int head,
			 int query, int key, score_split *s, av_error *err)
{
	const int d = (int)m->cfg.dim, H = (int)m->cfg.heads, hs = d / H;
	memset(s, 0, sizeof *s);
	if (layer < 0 || layer >= (int)m->cfg.layers || head < 0 || head >= H)
		return av_fail(err, _("no head %d in layer %d"), head, layer);
	if (query < 0 || query >= n || key < 0 || key >= n)
		return av_fail(err, _("--query %d --key %d: the text has %d tokens, 0 to %d"),
			       query, key, n, n - 1);
	const int P = split_nparts(m, layer);
	double *u = malloc((size_t)P * d * sizeof *u), *z = malloc((size_t)d * sizeof *z);
	double *qp = malloc(2 * (size_t)P * hs * sizeof *qp), *kp = qp ? qp + (size_t)P * hs : NULL;
	s->terms = malloc((size_t)P * P * sizeof *s->terms);
	if (!u || !z || !qp || !s->terms) {
		free(u), free(z), free(qp);
		score_split_finish(s);
		return av_fail(err, _("out of memory for the score split"));
	}
	row_parts(m, ws, layer, query, u);
	project(m, ws, layer, head, 0, query, u, P, qp, z);
	row_parts(m, ws, layer, key, u);
	project(m, ws, layer, head, 1, key, u, P, kp, z);
	for (int a = 0; a < P; a++)
		for (int b = 0; b < P; b++) {
			double v = 0;
			for (int e = 0; e < hs; e++)
				v += qp[(size_t)a * hs + e] * kp[(size_t)b * hs + e];
			s->terms[(size_t)a * P + b] = v;
		}
	const float *qkv = ws->layer[layer].qkv;
	double score = 0;
	for (int e = 0; e < hs; e++)
		score += (double)qkv[(size_t)query * 3 * d + head * hs + e] *
			 qkv[(size_t)key * 3 * d + d + head * hs + e];
	*s = (score_split){layer, head, query, key, P, (float)score, s->terms};
	free(u), free(z), free(qp);
	return true;
}

void score_split_finish(score_split *s)
{
	if (!s)
		return;
	free(s->terms);
	s->terms = NULL;
	s->nparts = 0;
}

int score_split_largest(const score_split *s, double *share)
{
	const size_t N = (size_t)s->nparts * s->nparts;
	size_t best = 0;
	double total = 0;
	for (size_t i = 0; i < N; i++) {
		total += fabs(s->terms[i]);
		if (fabs(s->terms[i]) > fabs(s->terms[best]))
			best = i;
	}
	*share = total > 0 ? fabs(s->terms[best]) / total : 0;
	return (int)best;
}
