/* Weight-only circuits (circuits.h; man 5 attnview, section 9). */
#include "attnview/circuits.h"
#include "attnview/i18n.h"
#include "attnview/ops.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's eigenvalues of a general matrix (OpenBLAS carries LAPACK; the
 * two trailing lengths are the Fortran strings'). */
extern void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda,
		   double *wr, double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr,
		   double *work, const int *lwork, int *info, size_t ljobvl, size_t ljobvr);

/* One head's matrices, in double, for the row convention x W:
 *   r[0..2] = P Gamma W_Q, W_K, W_V (d, hs): what the head reads of a
 *             residual row through ln1 (P centres, Gamma its gain)
 *   wv      = W_V (d, hs) without the LayerNorm: the writer's side
 *   o       = W_O (hs, d): columns h hs.. of proj_w
 *   bq, bk  = beta W_Q + b_Q, beta W_K + b_K (hs): the constant parts. */
typedef struct head_mats {
	double *r[3], *wv, *o, *bq, *bk;
} head_mats;

typedef struct circ_work {
	const model *m;
	int d, hs, T, V;
	double s0; /* the frozen ln1 scale of section 9 */
	head_mats *hm;
	double *buf;
	double *xa, *xb, *gp, *ov; /* ov_shared's, and ov_circuit's work space */
} circ_work;

/* Fills the matrices of head h of block l. */
static void head_matrices(const circ_work *w, int l, int h, head_mats *hm)
{
	const layer_params *p = &w->m->p.layer[l];
	const int d = w->d, hs = w->hs;
	for (int part = 0; part < 3; part++) {
		double *r = hm->r[part];
		for (int c = 0; c < hs; c++) {
			const float *row = p->qkv_w + ((size_t)part * d + h * hs + c) * d;
			double mean = 0, bias = p->qkv_b[part * d + h * hs + c];
			for (int k = 0; k < d; k++) {
				mean += (double)p->ln1_w[k] * row[k];
				bias += (double)p->ln1_b[k] * row[k];
			}
			mean /= d;
			for (int k = 0; k < d; k++) {
				r[(size_t)k * hs + c] = (double)p->ln1_w[k] * row[k] - mean;
				if (part == 2)
					hm->wv[(size_t)k * hs + c] = row[k];
			}
			if (part == 0)
				hm->bq[c] = bias;
			else if (part == 1)
				hm->bk[c] = bias;
		}
	}
	for (int c = 0; c < hs; c++)
		for (int k = 0; k < d; k++)
			hm->o[(size_t)c * d + k] = p->proj_w[(size_t)k * d + h * hs + c];
}

/* The embedding's scale in binary64: sqrt(d), or 1 (a converted model). */
static double emb_scale64(const model *m)
{
	return m->cfg.arch.scale == SCALE_ONE ? 1.0 : sqrt((double)m->cfg.dim);
}

/* The frozen scale s0 = 1 / sqrt(var + eps), var the mean over every
 * id v (a model without the special tokens: every character) and position t
 * of the variance of e wte[v] + pe[t], e the embedding scale:
 * mean_v var(a_v) + mean_t var(p_t) + 2 cov(mean_v a_v, mean_t p_t). */
static double frozen_scale(const model *m, double *abar, double *pbar)
{
	const int d = (int)m->cfg.dim, V = (int)m->cfg.vocab_size, T = (int)m->cfg.context;
	const int v0 = m->cfg.arch.specials == SPECIALS_NONE ? TOK_NSPECIAL : 0, NV = V - v0;
	const double sq = emb_scale64(m);
	double va = 0, vp = 0;
	memset(abar, 0, (size_t)d * sizeof *abar);
	memset(pbar, 0, (size_t)d * sizeof *pbar);
	for (int pass = 0; pass < 2; pass++)
		for (int i = pass ? 0 : v0; i < (pass ? T : V); i++) {
			const float *x = pass ? m->pe + (size_t)i * d : m->p.wte + (size_t)i * d;
			const double f = pass ? 1.0 : sq;
			double s = 0, s2 = 0;
			for (int k = 0; k < d; k++) {
				s += f * x[k];
				s2 += f * x[k] * f * x[k];
				(pass ? pbar : abar)[k] += f * x[k] / (pass ? T : NV);
			}
			*(pass ? &vp : &va) += (s2 / d - (s / d) * (s / d)) / (pass ? T : NV);
		}
	double ma = 0, mp = 0, cov = 0;
	for (int k = 0; k < d; k++) {
		ma += abar[k] / d;
		mp += pbar[k] / d;
	}
	for (int k = 0; k < d; k++)
		cov += (abar[k] - ma) * (pbar[k] - mp) / d;
	return 1.0 / sqrt(va + vp + 2 * cov + (double)AV_LN_EPS);
}

/* y (hs) = x (d) M (d, hs) + b. */
static void row_times(double *y, const double *x, const double *M, const double *b, int d, int hs)
{
	for (int c = 0; c < hs; c++)
		y[c] = b ? b[c] : 0.0;
	for (int k = 0; k < d; k++)
		for (int c = 0; c < hs; c++)
			y[c] += x[k] * M[(size_t)k * hs + c];
}

static double dot(const double *a, const double *b, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

/* The positional profile: q_t = s0 pe_t r_Q + bq, k_t = s0 pe_t r_K + bk,
 * each row's scores centred over its keys, then the mean over the rows at
 * each offset; with pattern (T, T) not NULL, also each row's softmax over
 * its keys (0 for the others). q, k (T, hs) and row: T + d + 4 T doubles of
 * work space. */
static void positional(const circ_work *w, const head_mats *hm, float *out, float *pattern,
		       double *q, double *k, double *row)
{
	const int T = w->T, d = w->d, hs = w->hs;
	const bool causal = w->m->cfg.objective == OBJ_CAUSAL;
	const int n = causal ? T : 2 * T - 1, off0 = -(T - 1);
	double *x = row + T, *sum = x + d;
	int *cnt = (int *)(sum + n);
	memset(sum, 0, (size_t)n * sizeof *sum);
	memset(cnt, 0, (size_t)n * sizeof *cnt);
	for (int t = 0; t < T; t++) {
		for (int c = 0; c < d; c++)
			x[c] = w->s0 * w->m->pe[(size_t)t * d + c];
		row_times(q + (size_t)t * hs, x, hm->r[0], hm->bq, d, hs);
		row_times(k + (size_t)t * hs, x, hm->r[1], hm->bk, d, hs);
	}
	for (int i = 0; i < T; i++) {
		const int nk = causal ? i + 1 : T;
		double mean = 0, mx = -INFINITY, z = 0;
		for (int j = 0; j < nk; j++) {
			row[j] = dot(q + (size_t)i * hs, k + (size_t)j * hs, hs) / sqrt((double)hs);
			mean += row[j] / nk;
			mx = fmax(mx, row[j]);
		}
		for (int j = 0; j < nk; j++) {
			sum[j - i - off0] += row[j] - mean;
			cnt[j - i - off0]++;
			z += exp(row[j] - mx);
		}
		for (int j = 0; pattern && j < T; j++)
			pattern[(size_t)i * T + j] = j < nk ? (float)(exp(row[j] - mx) / z) : 0.0f;
	}
	for (int i = 0; out && i < n; i++)
		out[i] = (float)(sum[i] / cnt[i]);
}

/* The QK table of the nqk most frequent characters: the token rows
 * s0 e wte[a] (e the embedding scale) read as in positional(), each row
 * centred. */
static void qk_table(const circ_work *w, const head_mats *hm, circuits *c, circ_head *ch, double *q,
		     double *k, double *x)
{
	const int d = w->d, hs = w->hs, N = c->nqk;
	for (int i = 0; i < N; i++) {
		const float *e = w->m->p.wte + (size_t)c->qk_ids[i] * d;
		for (int j = 0; j < d; j++)
			x[j] = w->s0 * emb_scale64(w->m) * e[j];
		row_times(q + (size_t)i * hs, x, hm->r[0], hm->bq, d, hs);
		row_times(k + (size_t)i * hs, x, hm->r[1], hm->bk, d, hs);
	}
	for (int i = 0; i < N; i++) {
		double s[CIRC_QK_CHARS], mean = 0;
		for (int j = 0; j < N; j++) {
			s[j] = dot(q + (size_t)i * hs, k + (size_t)j * hs, hs) / sqrt((double)hs);
			mean += s[j] / N;
		}
		for (int j = 0; j < N; j++)
			ch->qk[i][j] = (float)(s[j] - mean);
	}
}

/* Inserts (a, b, v) among the largest maps, largest first. */
static void keep_map(circ_head *ch, int32_t a, int32_t b, double v)
{
	int i = ch->nmaps < CIRC_MAPS ? ch->nmaps++ : CIRC_MAPS;
	if (i == CIRC_MAPS && v <= ch->maps[CIRC_MAPS - 1].value)
		return;
	if (i == CIRC_MAPS)
		i--;
	while (i > 0 && ch->maps[i - 1].value < v) {
		ch->maps[i] = ch->maps[i - 1];
		i--;
	}
	ch->maps[i] = (circ_map){a, b, (float)v};
}

/* The OV circuit M = W_E' W_V W_O W_U' (V, V), with W_E' the rows
 * sqrt(d) P(wte[a]) . gamma1 (xa . gamma1) and W_U' the columns
 * P(gammaf . wte[b]) (xb^T). M = a b^T with a = xa gamma1 W_V and
 * b = xb W_O^T (V, hs). The copying score from the eigenvalues of
 * b^T a = W_O (xb^T xa) gamma1 W_V (hs, hs), M's nonzero ones; the largest
 * entries of M with the source among the most frequent. */
static bool ov_circuit(const circ_work *w, const head_mats *hm, const layer_params *p,
		       circ_head *ch)
{
	const int d = w->d, hs = w->hs, V = w->V;
	const int F = TOK_NSPECIAL + CIRC_MAP_FROM < V ? CIRC_MAP_FROM : V - TOK_NSPECIAL;
	double *gw = w->ov, *t1 = gw + (size_t)d * hs, *km = t1 + (size_t)d * hs;
	double *wr = km + hs * hs, *wi = wr + hs, *lwk = wi + hs, *a = lwk + 8 * hs;
	double *b = a + (size_t)F * hs, *mm = b + (size_t)V * hs;
	for (int k = 0; k < d; k++)
		for (int c = 0; c < hs; c++)
			gw[(size_t)k * hs + c] = p->ln1_w[k] * hm->wv[(size_t)k * hs + c];
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, hs, d, 1.0, w->gp, d, gw, hs, 0.0,
		    t1, hs);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hs, hs, d, 1.0, hm->o, d, t1, hs,
		    0.0, km, hs);
	/* LAPACK reads km column-major, as km^T: the same eigenvalues. */
	int n = hs, lwork = 8 * hs, info = 0, one = 1;
	dgeev_("N", "N", &n, km, &n, wr, wi, NULL, &one, NULL, &one, lwk, &lwork, &info, 1, 1);
	if (info != 0)
		return false;
	double sum = 0, abs_sum = 0;
	for (int i = 0; i < hs; i++) {
		sum += wr[i];
		abs_sum += hypot(wr[i], wi[i]);
	}
	ch->ov_copying = abs_sum > 0 ? (float)(sum / abs_sum) : 0.0f;
	ch->nmaps = 0;
	if (F < 1)
		return true;
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, F, hs, d, 1.0,
		    w->xa + (size_t)TOK_NSPECIAL * d, d, gw, hs, 0.0, a, hs);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, V, hs, d, 1.0, w->xb, d, hm->o, d, 0.0,
		    b, hs);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, F, V, hs, 1.0, a, hs, b, hs, 0.0, mm,
		    V);
	for (int f = 0; f < F; f++)
		for (int t = TOK_NSPECIAL; t < V; t++)
			keep_map(ch, TOK_NSPECIAL + f, t, mm[(size_t)f * V + t]);
	return true;
}

/* xa = e P(wte) (e the embedding scale), xb = P(gammaf . out_w) (V, d;
 * out_w is wte when the output is tied) and gp = xb^T xa (d, d). */
static void ov_shared(circ_work *w)
{
	const int d = w->d, V = w->V;
	const float *gf = w->m->p.lnf_w;
	for (int v = 0; v < V; v++) {
		const float *e = w->m->p.wte + (size_t)v * d, *o = w->m->out_w + (size_t)v * d;
		double ma = 0, mb = 0;
		for (int k = 0; k < d; k++) {
			ma += e[k] / (double)d;
			mb += (double)gf[k] * o[k] / d;
		}
		for (int k = 0; k < d; k++) {
			w->xa[(size_t)v * d + k] = emb_scale64(w->m) * (e[k] - ma);
			w->xb[(size_t)v * d + k] = (double)gf[k] * o[k] - mb;
		}
	}
	cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, V, 1.0, w->xb, d, w->xa, d, 0.0,
		    w->gp, d);
}

/* g (hs, hs) = M^T M of M (d, hs), or M M^T of M (hs, d) when wide. */
static void gram(double *g, const double *M, int d, int hs, bool wide)
{
	for (int i = 0; i < hs; i++)
		for (int j = 0; j < hs; j++) {
			double s = 0;
			for (int k = 0; k < d; k++)
				s += wide ? M[(size_t)i * d + k] * M[(size_t)j * d + k]
					  : M[(size_t)k * hs + i] * M[(size_t)k * hs + j];
			g[i * hs + j] = s;
		}
}

/* x (hs, hs) = o (hs, d) r (d, hs). */
static void mul_or(double *x, const double *o, const double *r, int d, int hs)
{
	for (int i = 0; i < hs; i++)
		for (int j = 0; j < hs; j++) {
			double s = 0;
			for (int k = 0; k < d; k++)
				s += o[(size_t)i * d + k] * r[(size_t)k * hs + j];
			x[i * hs + j] = s;
		}
}

/* tr(ga x gb x^T) = |A x B^T|_F^2 for ga = A^T A, gb = B^T B (hs, hs);
 * transposed: x^T in place of x. t (hs, hs) is work space. */
static double frob2(const double *ga, const double *x, const double *gb, int hs, bool transposed,
		    double *t)
{
	/* t = x gb, then sum_ij (ga)_ij (t x^T)_ji */
	for (int i = 0; i < hs; i++)
		for (int j = 0; j < hs; j++) {
			double s = 0;
			for (int k = 0; k < hs; k++)
				s += (transposed ? x[k * hs + i] : x[i * hs + k]) * gb[k * hs + j];
			t[i * hs + j] = s;
		}
	double tr = 0;
	for (int i = 0; i < hs; i++)
		for (int j = 0; j < hs; j++) {
			double s = 0; /* (t x^T)_ji = sum_k t_jk x_ik */
			for (int k = 0; k < hs; k++)
				s += t[j * hs + k] * (transposed ? x[k * hs + i] : x[i * hs + k]);
			tr += ga[i * hs + j] * s;
		}
	return tr;
}

/* tr(ga gb) = |A B^T|_F^2 for ga = A^T A, gb = B^T B (symmetric). */
static double frob2_plain(const double *ga, const double *gb, int hs)
{
	double s = 0;
	for (int i = 0; i < hs * hs; i++)
		s += ga[i] * gb[i];
	return s;
}

/* The grams of a head: [0..2] r_Q, r_K, r_V; [3] W_V; [4] W_O W_O^T. */
#define NGRAMS 5

/* The composition of head (l, h) as a reader with every head of every
 * earlier block as the writer W_OV1 = W_V1 W_O1 (Elhage et al.):
 *   Q: |W_OV1 W_QK| / (|W_OV1| |W_QK|),  W_QK = r_Q r_K^T
 *   K: |W_QK W_OV1^T| / (|W_QK| |W_OV1|)
 *   V: |W_OV1 W_OV| / (|W_OV1| |W_OV|),  W_OV = r_V W_O
 * in the Frobenius norm, from hs x hs products. */
static void composition(const circ_work *w, int l, int h, const double *grams, circ_head *ch,
			double *x, double *t)
{
	const int H = (int)w->m->cfg.heads, hs = w->hs, d = w->d, hh = hs * hs;
	const head_mats *r = &w->hm[l * H + h];
	const double *g2 = grams + (size_t)(l * H + h) * NGRAMS * hh;
	const double qk2 = frob2_plain(g2, g2 + hh, hs);
	const double ov2 = frob2_plain(g2 + 2 * hh, g2 + 4 * hh, hs);
	for (int k = 0; k < l * H; k++) {
		const head_mats *wr = &w->hm[k];
		const double *g1 = grams + (size_t)k * NGRAMS * hh;
		const double n1 = frob2_plain(g1 + 3 * hh, g1 + 4 * hh, hs);
		mul_or(x, wr->o, r->r[0], d, hs);
		ch->comp_q[k] =
		    (float)sqrt(frob2(g1 + 3 * hh, x, g2 + hh, hs, false, t) / (n1 * qk2));
		mul_or(x, wr->o, r->r[1], d, hs);
		ch->comp_k[k] = (float)sqrt(frob2(g2, x, g1 + 3 * hh, hs, true, t) / (n1 * qk2));
		mul_or(x, wr->o, r->r[2], d, hs);
		ch->comp_v[k] =
		    (float)sqrt(frob2(g1 + 3 * hh, x, g2 + 4 * hh, hs, false, t) / (n1 * ov2));
	}
}

void circuits_finish(circuits *c)
{
	if (!c)
		return;
	free(c->head);
	free(c->mem);
	memset(c, 0, sizeof *c);
}

/* Carves c's arrays from c->mem (count only, with mem NULL); returns the
 * floats needed. */
static size_t carve(circuits *c)
{
	size_t off = 0;
	const int H = c->heads;
	for (int i = 0; i < c->layers * H; i++) {
		circ_head *ch = &c->head[i];
		const size_t nc = (size_t)(i / H) * H;
		ch->positional = c->mem ? c->mem + off : NULL;
		off += (size_t)c->noffsets;
		ch->comp_q = c->mem && nc ? c->mem + off : NULL;
		ch->comp_k = c->mem && nc ? c->mem + off + nc : NULL;
		ch->comp_v = c->mem && nc ? c->mem + off + 2 * nc : NULL;
		off += 3 * nc;
	}
	return off;
}

/* Work space: the heads' matrices and grams, then what one head needs. */
static bool work_init(circ_work *w, const model *m, size_t *scratch)
{
	const int L = (int)m->cfg.layers, H = (int)m->cfg.heads;
	w->m = m;
	w->d = (int)m->cfg.dim;
	w->hs = w->d / H;
	w->T = (int)m->cfg.context;
	w->V = (int)m->cfg.vocab_size;
	const size_t d = (size_t)w->d, hs = (size_t)w->hs, T = (size_t)w->T;
	const size_t per = 5 * d * hs + 2 * hs + NGRAMS * hs * hs;
	size_t one = 2 * (size_t)w->V * hs;
	if (one < 2 * T * hs + 4 * T + 2 * d)
		one = 2 * T * hs + 4 * T + 2 * d;
	*scratch = (size_t)L * H * per;
	w->hm = calloc((size_t)L * H, sizeof *w->hm);
	w->buf = malloc((*scratch + one + 3 * d + 2 * hs * hs + 10 * hs) * sizeof *w->buf);
	const size_t V = (size_t)w->V, F = CIRC_MAP_FROM;
	w->xa = malloc((2 * V * d + d * d) * sizeof *w->xa);
	w->ov = malloc((2 * d * hs + hs * hs + 10 * hs + F * hs + V * hs + F * V) * sizeof *w->ov);
	if (!w->hm || !w->buf || !w->xa || !w->ov)
		return false;
	w->xb = w->xa + V * d;
	w->gp = w->xb + V * d;
	double *p = w->buf;
	for (int i = 0; i < L * H; i++) {
		head_mats *hm = &w->hm[i];
		for (int k = 0; k < 3; k++, p += d * hs)
			hm->r[k] = p;
		hm->wv = p;
		hm->o = p + d * hs;
		hm->bq = p + 2 * d * hs;
		hm->bk = hm->bq + hs;
		p += 2 * d * hs + 2 * hs;
	}
	return true;
}

static void work_finish(circ_work *w)
{
	free(w->hm);
	free(w->buf);
	free(w->xa);
	free(w->ov);
}

bool circuits_init(circuits *c, const model *m, av_error *err)
{
	const int L = (int)m->cfg.layers, H = (int)m->cfg.heads, T = (int)m->cfg.context;
	memset(c, 0, sizeof *c);
	c->layers = L;
	c->heads = H;
	c->offset0 = -(T - 1);
	c->noffsets = m->cfg.objective == OBJ_CAUSAL ? T : 2 * T - 1;
	c->baseline = (float)(1.0 / sqrt((double)m->cfg.dim));
	c->nqk = (int)m->cfg.vocab_size - TOK_NSPECIAL;
	if (c->nqk > CIRC_QK_CHARS)
		c->nqk = CIRC_QK_CHARS;
	for (int i = 0; i < c->nqk; i++)
		c->qk_ids[i] = TOK_NSPECIAL + i;
	circ_work w = {0};
	size_t heads_size;
	c->head = calloc((size_t)L * H, sizeof *c->head);
	c->mem = c->head ? malloc(carve(c) * sizeof *c->mem) : NULL;
	if (!c->mem || !work_init(&w, m, &heads_size)) {
		circuits_finish(c);
		work_finish(&w);
		return av_fail(err, _("out of memory for the circuits of %d heads"), L * H);
	}
	carve(c);
	const size_t hh = (size_t)w.hs * w.hs, d = (size_t)w.d;
	double *grams = w.buf + heads_size - (size_t)L * H * NGRAMS * hh;
	double *s = w.buf + heads_size;
	w.s0 = frozen_scale(m, s, s + d);
	ov_shared(&w);
	bool ok = true;
	for (int i = 0; i < L * H; i++) {
		head_mats *hm = &w.hm[i];
		head_matrices(&w, i / H, i % H, hm);
		double *g = grams + (size_t)i * NGRAMS * hh;
		for (int k = 0; k < 4; k++)
			gram(g + k * hh, k < 3 ? hm->r[k] : hm->wv, w.d, w.hs, false);
		gram(g + 4 * hh, hm->o, w.d, w.hs, true);
	}
	for (int i = 0; ok && i < L * H; i++) {
		circ_head *ch = &c->head[i];
		const head_mats *hm = &w.hm[i];
		const size_t Ths = (size_t)T * w.hs;
		positional(&w, hm, ch->positional, NULL, s, s + Ths, s + 2 * Ths);
		const size_t Vhs = (size_t)w.V * w.hs;
		qk_table(&w, hm, c, ch, s, s + Vhs, s + 2 * Vhs);
		ok = ov_circuit(&w, hm, &m->p.layer[i / H], ch);
		if (i >= H)
			composition(&w, i / H, i % H, grams, ch, s, s + hh);
	}
	work_finish(&w);
	if (!ok) {
		circuits_finish(c);
		return av_fail(err, "%s",
			       _("LAPACK did not find the eigenvalues of an OV circuit"));
	}
	return true;
}

int circuits_peak(const circuits *c, int l, int h)
{
	const float *p = c->head[l * c->heads + h].positional;
	int best = 0;
	for (int i = 1; i < c->noffsets; i++)
		if (p[i] > p[best])
			best = i;
	return c->offset0 + best;
}

bool circuits_positional_pattern(const model *m, int l, int h, float *out, av_error *err)
{
	const int H = (int)m->cfg.heads;
	circ_work w = {.m = m, .d = (int)m->cfg.dim, .T = (int)m->cfg.context};
	w.hs = w.d / H;
	w.V = (int)m->cfg.vocab_size;
	const size_t d = (size_t)w.d, hs = (size_t)w.hs, T = (size_t)w.T;
	double *buf = malloc((5 * d * hs + 2 * hs + 2 * T * hs + 5 * T + 2 * d) * sizeof *buf);
	if (!buf)
		return av_fail(err, _("out of memory for the circuits of %d heads"), 1);
	head_mats hm = {{buf, buf + d * hs, buf + 2 * d * hs},
			buf + 3 * d * hs,
			buf + 4 * d * hs,
			buf + 5 * d * hs,
			buf + 5 * d * hs + hs};
	double *q = hm.bk + hs, *k = q + T * hs, *row = k + T * hs;
	w.s0 = frozen_scale(m, row, row + d);
	head_matrices(&w, l, h, &hm);
	positional(&w, &hm, NULL, out, q, k, row);
	free(buf);
	return true;
}
