/* The binary64 pass and its error bound (bound.h).
 *
 * Every value v is carried with the variance s of e = v32 - v, where v32 is
 * what a binary32 implementation computes and v the exact value of the same
 * formula (computed here in binary64, whose own error is some 2^29 times
 * smaller). The model of the rounding (Higham and Mary, "A new approach to
 * probabilistic rounding error analysis", 2019): each rounding multiplies its
 * result by 1 + r with |r| <= u = 2^-24, the r independent and of mean zero,
 * so that errors add up as variances, not as magnitudes. A worst-case bound
 * (gamma(k) = k u for every sum, |W| for every product) is correct too, but
 * compounds through the layers: 1e9 for the built-in model's weights, which
 * agree with binary64 to 3e-6. The rules, first order (products of two
 * errors dropped):
 *   - a sum of k terms, in any order, blocked or not, with or without fused
 *     multiply-adds, makes at most k roundings, each of a partial sum no
 *     larger than A, the sum of the terms' magnitudes: variance k (u A)^2;
 *     this holds for every BLAS kernel;
 *   - exp, sqrt, tanh and erf are within ELEM (2u) of the exact value,
 *     relative (erf: absolute), and either GELU within |x| (ELEM + 3u);
 *   - an error that enters an operation is carried through its derivative
 *     (W^2 s for a product; the Jacobians of LayerNorm, softmax and GELU,
 *     their terms taken as correlated where they share an error: (a + b)^2
 *     <= 2 (a^2 + b^2)), plus what the operation itself rounds.
 * The bound of a number is LAMBDA standard deviations, plus TINY absolute for
 * a weight (binary32's subnormals). man 5 attnview (NOTES, Accuracy) states
 * the same rules. */
#include "bound.h"

#include "attnview/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U    0x1p-24
#define ELEM (2 * U)
/* Standard deviations in a bound: under a normal approximation a number
 * exceeds 8 of them with probability 1e-15, and the suite checks some 1e7
 * numbers; rounding errors, bounded, have lighter tails still. */
#define LAMBDA 8.0
/* Below binary32's normal range the exponential's relative error does not
 * hold: a weight under 2^-126 may come out as 0, a subnormal, or (vec8.h's
 * exp clamps its argument) 1e-38. An absolute 2^-125 covers each. */
#define TINY 0x1p-125

static double sq(double x)
{
	return x * x;
}

/* The variance of a sum of k terms whose magnitudes add up to A. */
static double sum_var(int k, double A)
{
	return k * sq(U * A);
}

/* y (N,M) = x (N,K) W^T + b, W (M,K) stored as in the model file. Most of
 * the tool's time: each of the three sums runs in four interleaved parts
 * (twelve independent chains of additions instead of three; binary64's own
 * rounding, in whatever order, is far below the binary32 bounds). */
static void matmul_b(double *y, double *ys, const double *x, const double *xs, const float *W,
		     const float *bias, int N, int K, int M)
{
	for (int i = 0; i < N; i++) {
		const double *xi = x + (size_t)i * K, *si = xs + (size_t)i * K;
		for (int j = 0; j < M; j++) {
			const float *w = W + (size_t)j * K;
			double s[4] = {0}, mag[4] = {0}, prop[4] = {0};
			int c = 0;
			for (; c + 4 <= K; c += 4)
				for (int k = 0; k < 4; k++) {
					double p = xi[c + k] * w[c + k];
					s[k] += p;
					mag[k] += fabs(p);
					prop[k] += si[c + k] * sq(w[c + k]);
				}
			for (; c < K; c++) {
				double p = xi[c] * w[c];
				s[0] += p;
				mag[0] += fabs(p);
				prop[0] += si[c] * sq(w[c]);
			}
			double b = bias ? bias[j] : 0;
			y[(size_t)i * M + j] = b + ((s[0] + s[1]) + (s[2] + s[3]));
			ys[(size_t)i * M + j] =
			    ((prop[0] + prop[1]) + (prop[2] + prop[3])) +
			    sum_var(K + 1, fabs(b) + ((mag[0] + mag[1]) + (mag[2] + mag[3])));
		}
	}
}

/* LN over rows of C. With x^ = (u - mean) rstd, a change du of the input
 * moves x^_c by rstd (du_c - mean(du)) - x^_c (rstd / C) sum_m x^_m du_m;
 * the rounding: the mean's sum, the variance's (two-pass or Welford: C + 4
 * roundings with the square root and the division), three products and a
 * sum per element. */
static void layernorm_b(double *o, double *os, const double *x, const double *xs, const float *g,
			const float *b, int N, int C)
{
	for (int i = 0; i < N; i++) {
		const double *u = x + (size_t)i * C, *s = xs + (size_t)i * C;
		double mean = 0, amean = 0, smean = 0, var = 0, xsum = 0;
		for (int c = 0; c < C; c++) {
			mean += u[c];
			amean += fabs(u[c]);
			smean += s[c];
		}
		mean /= C;
		amean /= C;
		for (int c = 0; c < C; c++)
			var += sq(u[c] - mean);
		var /= C;
		const double r = 1 / sqrt(var + AV_LN_EPS);
		for (int c = 0; c < C; c++)
			xsum += sq((u[c] - mean) * r) * s[c];
		/* Var(mean(du)) and Var((1/C) sum x^_m du_m), errors independent. */
		const double vmean = smean / ((double)C * C), vx = xsum / ((double)C * C);
		const double rel_r = sqrt(0.25 * sum_var(C + 4, 1) + sq(ELEM) + 2 * sq(U));
		for (int c = 0; c < C; c++) {
			double xh = (u[c] - mean) * r, out = xh * g[c] + b[c];
			double prop = 3 * sq(g[c] * r) * (s[c] + vmean + sq(xh) * vx);
			double rnd = sq(g[c] * r) * (sum_var(C + 1, amean) + sq(U * (u[c] - mean))) +
				     sq(g[c] * xh) * (sq(rel_r) + 2 * sq(U)) + sq(U * out);
			o[(size_t)i * C + c] = out;
			os[(size_t)i * C + c] = prop + 4 * rnd;
		}
	}
}

/* GELU, exact form: gelu(x) = x Phi(x), gelu' = Phi + x phi. The rounding:
 * |x| (ELEM + 3u) covers 1 + erf(x / sqrt 2) with erf within 3u absolute
 * (PyTorch's, Abramowitz and Stegun's 7.1.26: 1.5e-7) and attnview's
 * 2.3u |x| (vec8.h); the rounding of x / sqrt 2 moves it by phi(x) x^2 u. */
static void gelu_erf_b(double *o, double *os, const double *x, const double *xs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v = x[i], a = fabs(v), phi = exp(-v * v / 2) / sqrt(2 * M_PI);
		double Phi = 0.5 * erfc(-v / sqrt(2.0)), der = Phi + v * phi;
		o[i] = v * Phi;
		os[i] = sq(der) * xs[i] + 2 * sq(a * (ELEM + 3 * U)) + 2 * sq(phi * v * v * U);
	}
}

/* GELU, tanh form. The propagated error goes through gelu'; the rounding
 * covers both 1 + tanh(v) and the 2e/(e + 1) form: |x| (ELEM + 3u), plus the
 * rounding of v = S (x + A x^3) through d gelu / dv = x/2 (1 - t^2). */
static void gelu_b(double *o, double *os, const double *x, const double *xs, size_t n, bool erf)
{
	const double S = sqrt(2 / M_PI), A = 0.044715;
	if (erf) {
		gelu_erf_b(o, os, x, xs, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double v = x[i], a = fabs(v), in = S * (v + A * v * v * v), t = tanh(in);
		double dv = S * (1 + 3 * A * v * v);
		double der = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * dv;
		o[i] = 0.5 * v * (1 + t);
		os[i] = sq(der) * xs[i] + 2 * sq(a * (ELEM + 3 * U)) +
			2 * sq(0.5 * a * (1 - t * t) * 5 * U * S * (a + A * a * a * a));
	}
}

/* x += y, elementwise. */
static void residual_b(double *x, double *xs, const double *y, const double *ys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		x[i] += y[i];
		xs[i] += ys[i] + sq(U * x[i]);
	}
}

/* One layer's attention: scores, weights and y (n,d) from qkv (n,3d), with
 * the variances of their errors. With a = z - max(z) the softmax's argument
 * (the error of the maximum is common to the row and cancels), a change da
 * moves a weight by att_m (da_m - sum_j att_j da_j); its rounding: a itself
 * (ELEM + 3u)|a|, the exponential, the row's sum of n and the division. */
static void attention_b(fwd_bound *b, int l, const double *qkv, const double *qs, double *y,
			double *ys, const uint8_t *off, bool causal)
{
	const int n = b->n, d = b->d, H = b->H, hs = d / H, C3 = 3 * d;
	const double rs = 1 / sqrt((double)hs);
	double *z = malloc((size_t)n * sizeof *z), *za = malloc((size_t)n * sizeof *za);
	for (int h = 0; h < H; h++) {
		for (int i = 0; i < n; i++) {
			const size_t row = (((size_t)l * H + h) * n + i) * n;
			const double *q = qkv + (size_t)i * C3 + h * hs, *sqv = qs + (size_t)i * C3 + h * hs;
			const int valid = causal ? i + 1 : n;
			double zmax = -INFINITY;
			for (int m = 0; m < n; m++) {
				if (m >= valid) {
					b->score[row + m] = NAN;
					b->score_err[row + m] = b->att[row + m] = b->att_err[row + m] = 0;
					continue;
				}
				const double *k = qkv + (size_t)m * C3 + d + h * hs;
				const double *sk = qs + (size_t)m * C3 + d + h * hs;
				double sc = 0, mag = 0, prop = 0;
				for (int t = 0; t < hs; t++) {
					sc += q[t] * k[t];
					mag += fabs(q[t] * k[t]);
					prop += sq(q[t]) * sk[t] + sq(k[t]) * sqv[t];
				}
				b->score[row + m] = sc;
				b->score_err[row + m] = prop + sum_var(hs, mag);
				z[m] = sc * rs;
				za[m] = b->score_err[row + m] / hs + sq((ELEM + 2 * U) * z[m]);
				zmax = z[m] > zmax ? z[m] : zmax;
			}
			double sum = 0, mix = 0;
			for (int m = 0; m < valid; m++) {
				za[m] += sq((ELEM + 3 * U) * (z[m] - zmax));
				sum += exp(z[m] - zmax);
			}
			for (int m = 0; m < valid; m++) {
				b->att[row + m] = exp(z[m] - zmax) / sum;
				mix += sq(b->att[row + m]) * za[m];
			}
			const double rnd = sq(2 * ELEM) + sum_var(valid, 1) + sq(U);
			for (int m = 0; m < valid; m++)
				b->att_err[row + m] = sq(b->att[row + m]) * (2 * (za[m] + mix) + rnd);
			double *yo = y + (size_t)i * d + h * hs, *yos = ys + (size_t)i * d + h * hs;
			for (int t = 0; t < hs; t++) {
				double sy = 0, mag = 0, prop = 0;
				for (int m = 0; m < valid; m++) {
					const size_t v = (size_t)m * C3 + 2 * (size_t)d + h * hs + t;
					double w = b->att[row + m];
					sy += w * qkv[v];
					mag += w * fabs(qkv[v]);
					prop += b->att_err[row + m] * sq(qkv[v]) + sq(w) * qs[v];
				}
				bool dead = off && off[h];
				yo[t] = dead ? 0 : sy;
				yos[t] = dead ? 0 : prop + sum_var(valid, mag);
			}
		}
	}
	free(z);
	free(za);
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
	memcpy(b->qkv + (size_t)l * 3 * nd, w->big, 3 * nd * sizeof *w->big);
	memcpy(b->qkv_err + (size_t)l * 3 * nd, w->bige, 3 * nd * sizeof *w->bige);
	attention_b(b, l, w->big, w->bige, w->y, w->ye, off, m->cfg.objective == OBJ_CAUSAL);
	matmul_b(w->a, w->ae, w->y, w->ye, p->proj_w, p->proj_b, n, d, d);
	residual_b(w->x, w->xe, w->a, w->ae, nd);
	layernorm_b(w->a, w->ae, w->x, w->xe, p->ln2_w, p->ln2_b, n, d);
	matmul_b(w->big, w->bige, w->a, w->ae, p->fc_w, p->fc_b, n, d, 4 * d);
	gelu_b(w->g, w->ge, w->big, w->bige, 4 * nd, m->cfg.arch.gelu == GELU_ERF);
	matmul_b(w->a, w->ae, w->g, w->ge, p->fc2_w, p->fc2_b, n, 4 * d, d);
	residual_b(w->x, w->xe, w->a, w->ae, nd);
}

/* Section 2: sqrt(d) rounded to binary32 (or 1), positions computed in
 * binary64 and rounded (section 1; or the learned table); the embedding's
 * product and sum round. */
static void embed_b(const fwd_bound *b, const model *m, const int32_t *ids, work *w)
{
	const int d = b->d;
	const double s = m->cfg.arch.scale == SCALE_ONE ? 1.0 : (float)sqrt((double)d);
	const bool learned = m->cfg.arch.positions == POS_LEARNED;
	for (int t = 0; t < b->n; t++)
		for (int c = 0; c < d; c++) {
			double wi = pow(10000.0, -(double)(c / 2 * 2) / d);
			double pe = learned ? m->p.wpe[(size_t)t * d + c]
					    : (float)(c % 2 ? cos(t * wi) : sin(t * wi));
			double e = s * m->p.wte[(size_t)ids[t] * d + c];
			w->x[(size_t)t * d + c] = e + pe;
			w->xe[(size_t)t * d + c] = sq(U * e) + sq(U * (e + pe));
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
	const size_t nq = (size_t)b->L * 3 * nd;
	double *mem = calloc(4 * cells + 2 * nq + 4 * nd + 2 * nv +
				     2 * (nd + 3 * nd + 4 * nd + 4 * nd + nd),
			     sizeof *mem);
	if (!mem)
		return false;
	double *p = mem;
	b->att = p, p += cells, b->att_err = p, p += cells;
	b->score = p, p += cells, b->score_err = p, p += cells;
	b->qkv = p, p += nq, b->qkv_err = p, p += nq;
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
		 w.ae + r0 * b->d, m->out_w, m->p.out_b, row < 0 ? n : 1, b->d, b->V);
	/* A model without the special tokens has no logit for ids 0..2. */
	for (int r = 0; m->cfg.arch.specials == SPECIALS_NONE && r < n; r++)
		for (int i = 0; i < TOK_NSPECIAL; i++) {
			b->logits[(size_t)r * b->V + i] = -INFINITY;
			b->logits_err[(size_t)r * b->V + i] = 0;
		}
	/* Variances to bounds. */
	for (size_t k = 0; k < cells; k++) {
		b->att_err[k] = LAMBDA * sqrt(b->att_err[k]) + TINY;
		b->score_err[k] = LAMBDA * sqrt(b->score_err[k]);
	}
	for (size_t k = 0; k < nd; k++)
		b->hidden_err[k] = LAMBDA * sqrt(b->hidden_err[k]);
	for (size_t k = 0; k < nq; k++)
		b->qkv_err[k] = LAMBDA * sqrt(b->qkv_err[k]);
	for (size_t k = 0; k < nv; k++)
		b->logits_err[k] = LAMBDA * sqrt(b->logits_err[k]);
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
		if (isnan(want[i]) || isnan(got[i]) || isinf(want[i])) {
			/* NAN where masked; -INFINITY where a model has no logit */
			if (isnan(want[i]) != isnan(got[i]) ||
			    (isinf(want[i]) && want[i] != got[i]))
				worst = INFINITY;
			continue;
		}
		double diff = fabs((double)got[i] - want[i]);
		wabs = diff > wabs ? diff : wabs;
		/* A difference within TINY is binary32's subnormal range, which
		 * every weight's bound allows for: it says nothing of the rest. */
		double r = diff <= TINY ? 0 : err[i] > 0 ? diff / err[i] : INFINITY;
		worst = r > worst ? r : worst;
	}
	if (worst_abs)
		*worst_abs = wabs;
	return worst;
}
