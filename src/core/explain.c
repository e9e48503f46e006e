/* Breakdowns, value norms and text losses (explain.h). */
#include "attnview/explain.h"
#include "attnview/infer.h"
#include "attnview/i18n.h"

#include "attnview/ops.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool qk_breakdown_init(qk_breakdown *b, int hs, av_error *err)
{
	memset(b, 0, sizeof *b);
	b->hs = hs;
	b->q = malloc((size_t)hs * sizeof *b->q);
	b->k = malloc((size_t)hs * sizeof *b->k);
	b->prod = malloc((size_t)hs * sizeof *b->prod);
	b->order = malloc((size_t)hs * sizeof *b->order);
	if (!b->q || !b->k || !b->prod || !b->order) {
		qk_breakdown_finish(b);
		return av_fail(err, _("out of memory for the q·k breakdown of a head of size %d"),
			       hs);
	}
	return true;
}

void qk_breakdown_finish(qk_breakdown *b)
{
	free(b->q);
	free(b->k);
	free(b->prod);
	free(b->order);
	memset(b, 0, sizeof *b);
}

void qk_from_forward(const model *m, const activations *ws, int layer, int head, int query,
		     int key, float *q, float *k)
{
	const size_t d = m->cfg.dim, hs = d / m->cfg.heads;
	const float *qkv = ws->layer[layer].qkv;
	/* Row t of qkv holds q | k | v, each d wide; head h has columns h*hs.. */
	memcpy(q, qkv + (size_t)query * 3 * d + (size_t)head * hs, hs * sizeof *q);
	memcpy(k, qkv + (size_t)key * 3 * d + d + (size_t)head * hs, hs * sizeof *k);
}

void qk_breakdown_compute(qk_breakdown *b, int layer, int head, int query, int key,
			  const float *q, const float *k, const float *row_scores, int n)
{
	const int hs = b->hs;
	b->layer = layer, b->head = head, b->query = query, b->key = key;
	memcpy(b->q, q, (size_t)hs * sizeof *q);
	memcpy(b->k, k, (size_t)hs * sizeof *k);
	b->dot = 0;
	for (int c = 0; c < hs; c++) {
		b->prod[c] = q[c] * k[c];
		b->dot += (double)b->prod[c];
		b->order[c] = c;
	}
	/* Insertion sort by |product|, largest first (hs is a few dozen). */
	for (int i = 1; i < hs; i++)
		for (int j = i; j > 0 && fabsf(b->prod[b->order[j]]) > fabsf(b->prod[b->order[j - 1]]);
		     j--) {
			int t = b->order[j];
			b->order[j] = b->order[j - 1];
			b->order[j - 1] = t;
		}
	b->scale = 1.0f / sqrtf((float)hs);
	b->score = row_scores[key];
	b->masked = isnan(b->score);
	b->scaled = b->score * b->scale;
	/* The row's softmax, as the model does it: shifted by the row's max. */
	float mx = -INFINITY;
	for (int j = 0; j < n; j++)
		if (!isnan(row_scores[j]) && row_scores[j] * b->scale > mx)
			mx = row_scores[j] * b->scale;
	b->row_max = mx;
	b->sum_exp = 0;
	for (int j = 0; j < n; j++)
		if (!isnan(row_scores[j]))
			b->sum_exp += exp((double)(row_scores[j] * b->scale - mx));
	b->shifted = b->masked ? NAN : (double)(b->scaled - mx);
	b->e = b->masked ? 0 : exp(b->shifted);
	b->weight = b->masked || b->sum_exp <= 0 ? 0.0f : (float)(b->e / b->sum_exp);
}

bool value_norms(const model *m, const activations *ws, int n, float *out, av_error *err)
{
	const int d = (int)m->cfg.dim, H = (int)m->cfg.heads, hs = d / H;
	float *y = malloc((size_t)n * (size_t)d * sizeof *y);
	if (!y)
		return av_fail(err, _("out of memory for the value contributions of %d tokens"), n);
	for (int l = 0; l < (int)m->cfg.layers; l++) {
		const float *qkv = ws->layer[l].qkv, *wo = m->p.layer[l].proj_w;
		for (int h = 0; h < H; h++) {
			/* y (n, d) = V_h (n, hs) W_O^h^T, W_O^h = proj_w[:, h*hs..(h+1)*hs]. */
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, d, hs, 1.0f,
				    qkv + 2 * d + h * hs, 3 * d, wo + h * hs, d, 0.0f, y, d);
			float *o = out + ((size_t)l * (size_t)H + (size_t)h) * (size_t)n;
			for (int j = 0; j < n; j++) {
				double s = 0;
				for (int c = 0; c < d; c++)
					s += (double)y[(size_t)j * d + c] * y[(size_t)j * d + c];
				o[j] = (float)sqrt(s);
			}
		}
	}
	free(y);
	return true;
}

/* -log p(target) of one row of logits, with the softmax summed in double. */
static double row_nll(const float *logits, int V, int target)
{
	return log_sum_exp(logits, V) - (double)logits[target];
}

bool model_text_loss(const model *m, activations *ws, const token *tokens, int n, double *loss,
		     int *count, av_error *err)
{
	double at;
	int nat;
	return model_text_loss_at(m, ws, tokens, n, NULL, loss, count, &at, &nat, NULL, NULL, err);
}

/* The text's ids for the loss passes (the caller frees them), or NULL with
 * err when n tokens do not fit the work space or the model's context. */
static int32_t *loss_ids(const model *m, const activations *ws, const token *tokens, int n,
			 av_error *err)
{
	if (n < 1 || n > ws->T || n > ws->max_rows || n > (int)m->cfg.context || ws->B < 1) {
		av_fail(err, _("%d tokens do not fit the work space of %d"), n, ws->T);
		return NULL;
	}
	int32_t *x = malloc((size_t)n * sizeof *x);
	if (!x) {
		av_fail(err, _("out of memory for the loss over %d tokens"), n);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		x[i] = tokens[i].id;
	return x;
}

bool model_text_loss_at(const model *m, activations *ws, const token *tokens, int n,
			const uint8_t *at, double *loss, int *count, double *loss_at, int *count_at,
			bool (*stop)(void *), void *stop_ctx, av_error *err)
{
	const int V = (int)m->cfg.vocab_size;
	int32_t *x = loss_ids(m, ws, tokens, n, err);
	if (!x)
		return false;
	/* Every row's logits as the view computes them (infer_row_logits): a
	 * causal model's from one pass kept in the cache, a masked model's from
	 * one pass per masked position. */
	infer_cache *c = calloc(1, sizeof *c);
	float *logits = malloc((size_t)V * sizeof *logits);
	if (!c || !logits) {
		free(c);
		free(logits);
		free(x);
		return av_fail(err, _("out of memory for the loss over %d tokens"), n);
	}
	double sum = 0, sum_at = 0;
	int cnt = 0, cnt_at = 0;
	bool ok = true;
	const bool causal = m->cfg.objective == OBJ_CAUSAL;
	for (int p = 0; ok && p < n - causal; p++) {
		const token *t = &tokens[p + causal];
		if (t->unknown || t->id < TOK_NSPECIAL)
			continue;
		if (!causal)
			x[p] = TOK_MASK;
		if (stop && stop(stop_ctx)) {
			ok = av_fail(err, _("a newer text came"));
			break;
		}
		ok = infer_row_logits(m, ws, c, x, n, p, logits, stop, stop_ctx, err);
		if (ok) {
			double nll = row_nll(logits, V, t->id);
			sum += nll;
			cnt++;
			if (at && at[p]) {
				sum_at += nll;
				cnt_at++;
			}
		}
		x[p] = tokens[p].id;
	}
	infer_cache_clear(c);
	free(c);
	free(logits);
	free(x);
	if (!ok)
		return false;
	*count = cnt;
	*loss = cnt ? sum / cnt : NAN;
	*count_at = cnt_at;
	*loss_at = cnt_at ? sum_at / cnt_at : NAN;
	return true;
}

/* Sums of -log p(target) over the positions that take part, and over
 * those the caller marks (at). */
typedef struct nll_sums {
	const uint8_t *at;
	double sum, sum_at;
	int cnt, cnt_at;
} nll_sums;

/* Logits of rows[0..nrows) of the pass just run (nrows <= ws->max_rows),
 * row r's -log p(next[r]) added into s. */
static void add_rows_nll(const model *m, activations *ws, const int32_t *rows, const token *next,
			 int nrows, nll_sums *s)
{
	const int V = (int)m->cfg.vocab_size;
	model_logits(m, ws, rows, nrows);
	for (int r = 0; r < nrows; r++) {
		double nll = row_nll(ws->logits + (size_t)r * V, V, next[r].id);
		s->sum += nll;
		s->cnt++;
		if (s->at && s->at[rows[r]]) {
			s->sum_at += nll;
			s->cnt_at++;
		}
	}
}

/* A causal model's one pass over x: row p predicts character p + 1. */
static bool causal_nll(const model *m, activations *ws, const token *tokens, int32_t *x, int n,
		       nll_sums *s, av_error *err)
{
	int32_t *rows = malloc((size_t)n * sizeof *rows);
	token *next = malloc((size_t)n * sizeof *next);
	if (!rows || !next) {
		free(rows);
		free(next);
		return av_fail(err, _("out of memory for the loss over %d tokens"), n);
	}
	int k = 0;
	for (int p = 0; p + 1 < n; p++)
		if (!tokens[p + 1].unknown && tokens[p + 1].id >= TOK_NSPECIAL) {
			rows[k] = p;
			next[k++] = tokens[p + 1];
		}
	model_forward(m, ws, x, 1, n);
	add_rows_nll(m, ws, rows, next, k, s);
	free(rows);
	free(next);
	return true;
}

/* A masked model's pass per position, that position alone masked in x,
 * asking stop before each. */
static bool masked_nll(const model *m, activations *ws, const token *tokens, int32_t *x, int n,
		       nll_sums *s, bool (*stop)(void *), void *stop_ctx, av_error *err)
{
	for (int p = 0; p < n; p++) {
		if (tokens[p].unknown || tokens[p].id < TOK_NSPECIAL)
			continue;
		if (stop && stop(stop_ctx))
			return av_fail(err, _("a newer text came"));
		x[p] = TOK_MASK;
		model_forward(m, ws, x, 1, n);
		add_rows_nll(m, ws, &p, &tokens[p], 1, s);
		x[p] = tokens[p].id;
	}
	return true;
}

bool ablation_mean_suffices(double before, double zeroed, double mean)
{
	double rise = zeroed - before;
	return rise >= 0.05 && zeroed - mean >= 0.9 * rise;
}

bool model_text_loss_mean(const model *m, activations *ws, const token *tokens, int n,
			  const uint8_t *ablate, const uint8_t *at, double *loss, int *count,
			  double *loss_at, int *count_at, bool (*stop)(void *), void *stop_ctx,
			  av_error *err)
{
	int32_t *x = loss_ids(m, ws, tokens, n, err);
	if (!x)
		return false;
	activations saved = *ws;
	ws->ablate = ablate;
	ws->ablate_mean = true;
	ws->pattern = NULL;
	nll_sums s = {.at = at};
	bool ok = m->cfg.objective == OBJ_CAUSAL
		      ? causal_nll(m, ws, tokens, x, n, &s, err)
		      : masked_nll(m, ws, tokens, x, n, &s, stop, stop_ctx, err);
	ws->ablate = saved.ablate;
	ws->ablate_mean = saved.ablate_mean;
	ws->pattern = saved.pattern;
	ws->tokens = saved.tokens;
	free(x);
	if (!ok)
		return false;
	*count = s.cnt;
	*loss = s.cnt ? s.sum / s.cnt : NAN;
	*count_at = s.cnt_at;
	*loss_at = s.cnt_at ? s.sum_at / s.cnt_at : NAN;
	return true;
}
