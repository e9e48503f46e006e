/* The binary64 pass and its error bound (bound.h).
 *
 * Every value v is carried with a bound e of |v32 - v|, where v32 is what a
 * binary32 implementation computes and v the exact value of the same formula
 * (computed here in binary64, whose own error is some 2^29 times smaller).
 * The rules, from the standard model fl(a op b) = (a op b)(1 + r), |r| <= u =
 * 2^-24, keep first-order terms only (products of two errors are dropped:
 * they are below u times a bound that is itself small):
 *   - a sum of k terms, in any order, blocked or not, with or without fused
 *     multiply-adds, is off by at most gamma(k) = k u / (1 - k u) times the
 *     sum of the terms' magnitudes: this is what holds for every BLAS kernel;
 *   - exp, sqrt and tanh are within ELEM (2u) of the exact value, relative,
 *     and a weight below binary32's normal range within TINY, absolute;
 *   - an error that enters an operation is carried through its derivative
 *     (|W| e for a product, the Jacobian's magnitude for LayerNorm, softmax
 *     and GELU), plus what the operation itself rounds.
 * man 5 attnview (NOTES, Accuracy) states the same rules. */
#include "bound.h"

#include "attnview/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U    0x1p-24
#define ELEM (2 * U)
/* Below binary32's normal range the exponential's relative error does not
 * hold: a weight under 2^-126 may come out as 0, a subnormal, or (vec8.h's
 * exp clamps its argument) 1e-38. An absolute 2^-125 covers each. */
#define TINY 0x1p-125

static double gam(int k)
{
	return k * U / (1 - k * U);
}

/* y (N,M) = x (N,K) W^T + b, W (M,K) stored as in the model file. */
static void matmul_b(double *y, double *ye, const double *x, const double *xe, const float *W,
		     const float *bias, int N, int K, int M)
{
	const double g = gam(K + 1);
	for (int i = 0; i < N; i++) {
		const double *xi = x + (size_t)i * K, *ei = xe + (size_t)i * K;
		for (int j = 0; j < M; j++) {
			const float *w = W + (size_t)j * K;
			double s = bias ? bias[j] : 0, mag = bias ? fabs(bias[j]) : 0, prop = 0;
			for (int c = 0; c < K; c++) {
				s += xi[c] * w[c];
				mag += fabs(xi[c] * w[c]);
				prop += ei[c] * fabs(w[c]);
			}
			y[(size_t)i * M + j] = s;
			ye[(size_t)i * M + j] = prop + g * mag;
		}
	}
}

/* LN over rows of C. With x^ = (u - mean) rstd, a change du of the input
 * moves x^_c by rstd (du_c - mean(du)) - x^_c (rstd / C) sum_m x^_m du_m;
 * the rounding: the mean's sum, the variance's (two-pass or Welford: relative
 * gamma(C + 4) with the square root and the division), three products and a
 * sum per element. */
static void layernorm_b(double *o, double *oe, const double *x, const double *xe, const float *g,
			const float *b, int N, int C)
{
	for (int i = 0; i < N; i++) {
		const double *u = x + (size_t)i * C, *e = xe + (size_t)i * C;
		double mean = 0, amean = 0, emean = 0, var = 0;
		for (int c = 0; c < C; c++) {
			mean += u[c];
			amean += fabs(u[c]);
			emean += e[c];
		}
		mean /= C;
		amean /= C;
		emean /= C;
		for (int c = 0; c < C; c++)
			var += (u[c] - mean) * (u[c] - mean);
		var /= C;
		const double r = 1 / sqrt(var + AV_LN_EPS);
		double xs = 0; /* (1/C) sum |x^_m| e_m */
		for (int c = 0; c < C; c++)
			xs += fabs((u[c] - mean) * r) * e[c];
		xs /= C;
		const double rel_r = 0.5 * gam(C + 4) + ELEM + 2 * U;
		for (int c = 0; c < C; c++) {
			double xh = (u[c] - mean) * r, out = xh * g[c] + b[c];
			double prop = fabs(g[c]) * (r * (e[c] + emean) + fabs(xh) * r * xs);
			double rnd = fabs(g[c]) * r * (gam(C + 1) * amean + U * fabs(u[c] - mean)) +
				     fabs(g[c] * xh) * (rel_r + 2 * U) + U * fabs(out);
			o[(size_t)i * C + c] = out;
			oe[(size_t)i * C + c] = prop + rnd;
		}
	}
}

/* GELU, tanh form. The propagated error goes through |gelu'|; the rounding
 * covers both 1 + tanh(v) and the 2e/(e + 1) form: |x| (ELEM + 3u), plus the
 * rounding of v = S (x + A x^3) through d gelu / dv = x/2 (1 - t^2). */
static void gelu_b(double *o, double *oe, const double *x, const double *xe, size_t n)
{
	const double S = sqrt(2 / M_PI), A = 0.044715;
	for (size_t i = 0; i < n; i++) {
		double v = x[i], a = fabs(v), in = S * (v + A * v * v * v), t = tanh(in);
		double dv = S * (1 + 3 * A * v * v);
		double der = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * dv;
		o[i] = 0.5 * v * (1 + t);
		oe[i] = fabs(der) * xe[i] + a * (ELEM + 3 * U) +
			0.5 * a * (1 - t * t) * gam(5) * S * (a + A * a * a * a);
	}
}

/* x += y, elementwise. */
static void residual_b(double *x, double *xe, const double *y, const double *ye, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		x[i] += y[i];
		xe[i] += ye[i] + U * fabs(x[i]);
	}
}

/* One layer's attention: scores, weights and y (n,d) from qkv (n,3d). With
 * a = z - max(z) the softmax's argument, a change da moves a weight by
 * att_m (da_m - sum_j att_j da_j); its rounding: a itself (ELEM + 3u)|a|,
 * the exponential, the row's sum gamma(n) and the division. */
static void attention_b(fwd_bound *b, int l, const double *qkv, const double *qe, double *y,
			double *ye, const uint8_t *off, bool causal)
{
	const int n = b->n, d = b->d, H = b->H, hs = d / H, C3 = 3 * d;
	const double rs = 1 / sqrt((double)hs);
	double *z = malloc((size_t)n * sizeof *z), *ze = malloc((size_t)n * sizeof *ze);
	for (int h = 0; h < H; h++) {
		for (int i = 0; i < n; i++) {
			const size_t row = (((size_t)l * H + h) * n + i) * n;
			const double *q = qkv + (size_t)i * C3 + h * hs, *eq = qe + (size_t)i * C3 + h * hs;
			const int valid = causal ? i + 1 : n;
			double zmax = -INFINITY;
			for (int m = 0; m < n; m++) {
				if (m >= valid) {
					b->score[row + m] = NAN;
					b->score_err[row + m] = b->att[row + m] = b->att_err[row + m] = 0;
					continue;
				}
				const double *k = qkv + (size_t)m * C3 + d + h * hs;
				const double *ek = qe + (size_t)m * C3 + d + h * hs;
				double s = 0, mag = 0, prop = 0;
				for (int t = 0; t < hs; t++) {
					s += q[t] * k[t];
					mag += fabs(q[t] * k[t]);
					prop += fabs(q[t]) * ek[t] + eq[t] * fabs(k[t]);
				}
				b->score[row + m] = s;
				b->score_err[row + m] = prop + gam(hs) * mag;
				z[m] = s * rs;
				ze[m] = b->score_err[row + m] * rs + (ELEM + 2 * U) * fabs(z[m]);
				zmax = z[m] > zmax ? z[m] : zmax;
			}
			double sum = 0, mix = 0;
			for (int m = 0; m < valid; m++) {
				ze[m] += (ELEM + 3 * U) * fabs(z[m] - zmax);
				sum += exp(z[m] - zmax);
			}
			for (int m = 0; m < valid; m++) {
				b->att[row + m] = exp(z[m] - zmax) / sum;
				mix += b->att[row + m] * ze[m];
			}
			for (int m = 0; m < valid; m++)
				b->att_err[row + m] = b->att[row + m] *
						      (ze[m] + mix + 2 * ELEM + gam(valid) + U) +
						      TINY;
			double *yo = y + (size_t)i * d + h * hs, *yoe = ye + (size_t)i * d + h * hs;
			for (int t = 0; t < hs; t++) {
				double s = 0, mag = 0, prop = 0;
				for (int m = 0; m < valid; m++) {
					const size_t v = (size_t)m * C3 + 2 * (size_t)d + h * hs + t;
					double a = b->att[row + m];
					s += a * qkv[v];
					mag += a * fabs(qkv[v]);
					prop += b->att_err[row + m] * fabs(qkv[v]) + a * qe[v];
				}
				bool dead = off && off[h];
				yo[t] = dead ? 0 : s;
				yoe[t] = dead ? 0 : prop + gam(valid) * mag;
			}
		}
	}
	free(z);
	free(ze);
}

typedef struct work {
	double *x, *xe, *a, *ae, *big, *bige, *g, *ge, *y, *ye;
} work;

/* One block on b's hidden state (x, xe), as man 5 attnview section 4. */
static void block_b(fwd_bound *b, const model *m, int l, work *w, const uint8_t *off)
{
	const layer_params *p = &m->p.layer[l];
	const int n = b->n, d = b->d;
	const size_t nd = (size_t)n * d;
	layernorm_b(w->a, w->ae, w->x, w->xe, p->ln1_w, p->ln1_b, n, d);
	matmul_b(w->big, w->bige, w->a, w->ae, p->qkv_w, p->qkv_b, n, d, 3 * d);
	attention_b(b, l, w->big, w->bige, w->y, w->ye, off, m->cfg.objective == OBJ_CAUSAL);
	matmul_b(w->a, w->ae, w->y, w->ye, p->proj_w, p->proj_b, n, d, d);
	residual_b(w->x, w->xe, w->a, w->ae, nd);
	layernorm_b(w->a, w->ae, w->x, w->xe, p->ln2_w, p->ln2_b, n, d);
	matmul_b(w->big, w->bige, w->a, w->ae, p->fc_w, p->fc_b, n, d, 4 * d);
	gelu_b(w->g, w->ge, w->big, w->bige, 4 * nd);
	matmul_b(w->a, w->ae, w->g, w->ge, p->fc2_w, p->fc2_b, n, 4 * d, d);
	residual_b(w->x, w->xe, w->a, w->ae, nd);
}

/* Section 2: sqrt(d) rounded to binary32, positions computed in binary64
 * and rounded (section 1); the embedding's product and sum round. */
static void embed_b(const fwd_bound *b, const model *m, const int32_t *ids, work *w)
{
	const int d = b->d;
	const double s = (float)sqrt((double)d);
	for (int t = 0; t < b->n; t++)
		for (int c = 0; c < d; c++) {
			double wi = pow(10000.0, -(double)(c / 2 * 2) / d);
			double pe = (float)(c % 2 ? cos(t * wi) : sin(t * wi));
			double e = s * m->p.wte[(size_t)ids[t] * d + c];
			w->x[(size_t)t * d + c] = e + pe;
			w->xe[(size_t)t * d + c] = U * fabs(e) + U * fabs(e + pe);
		}
}

bool fwd_bound_compute(fwd_bound *b, const model *m, const int32_t *ids, int n,
		       const uint8_t *ablate)
{
	return fwd_bound_compute_row(b, m, ids, n, ablate, -1);
}

bool fwd_bound_compute_row(fwd_bound *b, const model *m, const int32_t *ids, int n,
			   const uint8_t *ablate, int row)
{
	memset(b, 0, sizeof *b);
	b->L = (int)m->cfg.layers, b->H = (int)m->cfg.heads, b->n = n, b->d = (int)m->cfg.dim;
	b->V = (int)m->cfg.vocab_size;
	const size_t cells = (size_t)b->L * b->H * n * n, nd = (size_t)n * b->d;
	const size_t nv = (size_t)n * b->V;
	double *mem = calloc(4 * cells + 4 * nd + 2 * nv + 2 * (nd + 3 * nd + 4 * nd + 4 * nd + nd),
			     sizeof *mem);
	if (!mem)
		return false;
	double *p = mem;
	b->att = p, p += cells, b->att_err = p, p += cells;
	b->score = p, p += cells, b->score_err = p, p += cells;
	b->hidden = p, p += nd, b->hidden_err = p, p += nd;
	b->logits = p, p += nv, b->logits_err = p, p += nv;
	work w;
	w.x = p, p += nd, w.xe = p, p += nd, w.a = p, p += nd, w.ae = p, p += nd;
	w.big = p, p += 4 * nd, w.bige = p, p += 4 * nd, w.g = p, p += 4 * nd;
	w.ge = p, p += 4 * nd, w.y = p, p += nd, w.ye = p, p += nd;
	embed_b(b, m, ids, &w);
	for (int l = 0; l < b->L; l++)
		block_b(b, m, l, &w, ablate ? ablate + (size_t)l * b->H : NULL);
	memcpy(b->hidden, w.x, nd * sizeof *w.x);
	memcpy(b->hidden_err, w.xe, nd * sizeof *w.xe);
	layernorm_b(w.a, w.ae, w.x, w.xe, m->p.lnf_w, m->p.lnf_b, n, b->d);
	const size_t r0 = row < 0 ? 0 : (size_t)row;
	matmul_b(b->logits + r0 * b->V, b->logits_err + r0 * b->V, w.a + r0 * b->d,
		 w.ae + r0 * b->d, m->p.wte, m->p.out_b, row < 0 ? n : 1, b->d, b->V);
	return true;
}

void fwd_bound_finish(fwd_bound *b)
{
	free(b->att);
	memset(b, 0, sizeof *b);
}

double bound_ratio(const float *got, const double *want, const double *err, size_t n,
		   double *worst_abs)
{
	double worst = 0, wabs = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(want[i]) || isnan(got[i])) {
			if (isnan(want[i]) != isnan(got[i]))
				worst = INFINITY;
			continue;
		}
		double diff = fabs((double)got[i] - want[i]);
		wabs = diff > wabs ? diff : wabs;
		double r = diff == 0 ? 0 : err[i] > 0 ? diff / err[i] : INFINITY;
		worst = r > worst ? r : worst;
	}
	if (worst_abs)
		*worst_abs = wabs;
	return worst;
}
