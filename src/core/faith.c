/* The faithfulness meter (faith.h; man 5 attnview, section 10). */
#include "attnview/faith.h"
#include "attnview/i18n.h"
#include "attnview/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ranks of x[0..n) into r, from 1, ties sharing their mean rank. idx (n)
 * is work space. */
static void ranks(const float *x, int n, double *r, int *idx)
{
	for (int i = 0; i < n; i++)
		idx[i] = i;
	/* insertion sort: a row has at most a context's keys */
	for (int i = 1; i < n; i++) {
		int v = idx[i], j = i;
		while (j > 0 && x[idx[j - 1]] > x[v]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && x[idx[j + 1]] == x[idx[i]])
			j++;
		for (int k = i; k <= j; k++)
			r[idx[k]] = (i + j) / 2.0 + 1;
		i = j + 1;
	}
}

double faith_spearman(const float *x, const float *y, int n)
{
	if (n < 2)
		return NAN;
	double *rx = malloc(2 * (size_t)n * sizeof *rx);
	int *idx = malloc((size_t)n * sizeof *idx);
	double c = NAN;
	if (rx && idx) {
		double *ry = rx + n, sxy = 0, sxx = 0, syy = 0, mean = (n + 1) / 2.0;
		ranks(x, n, rx, idx);
		ranks(y, n, ry, idx);
		for (int i = 0; i < n; i++) {
			sxy += (rx[i] - mean) * (ry[i] - mean);
			sxx += (rx[i] - mean) * (rx[i] - mean);
			syy += (ry[i] - mean) * (ry[i] - mean);
		}
		c = sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
	}
	free(rx);
	free(idx);
	return c;
}

/* One run of faith_rows: the model, the text, the work space. */
typedef struct faith_run {
	const model *m;
	const int32_t *ids;
	int n, V, LH;
	bool causal;
	int32_t blank;
	activations ws;
	int32_t *x;    /* (FAITH_BATCH, n) the texts of a pass */
	float *logits; /* (V) */
	float *att;    /* (L H, n): the row's attention in its own pass */
	float *keys;   /* (n) one head's attention at the row's keys */
	float *effs;   /* (n) the effects at them */
	int *keyof;    /* (n + 1) the key each text of a row blanks, -1: none */
} faith_run;

/* The target of row i, or -1 when it has none. */
static int32_t target_of(const faith_run *f, int i)
{
	const int t = i + f->causal;
	if (t >= f->n || f->ids[t] < TOK_NSPECIAL)
		return -1;
	return f->ids[t];
}

/* The loss at row `row` of text b of the last pass. */
static double nll(faith_run *f, int b, int row, int32_t target)
{
	const int32_t r = b * f->n + row;
	model_logits(f->m, &f->ws, &r, 1);
	return log_sum_exp(f->ws.logits, f->V) - (double)f->ws.logits[target];
}

/* Row i's effects: the texts are the row's own (a masked model's with i
 * masked; key -1) and one per key seen with it blanked, FAITH_BATCH to a
 * pass. The row's attention is kept from its own text's pass. */
static bool row_effects(faith_run *f, int i, float *loss, float *effect, bool (*stop)(void *),
			void *sctx)
{
	const int n = f->n, H = (int)f->m->cfg.heads;
	const int32_t target = target_of(f, i);
	for (int j = 0; j < n; j++)
		effect[j] = NAN;
	*loss = NAN;
	if (target < 0)
		return true;
	int nt = 0; /* the texts, by the key they blank */
	for (int k = -1; k < (f->causal ? i + 1 : n); k++)
		if (f->causal || k != i)
			f->keyof[nt++] = k;
	double base = 0;
	for (int t0 = 0; t0 < nt; t0 += FAITH_BATCH) {
		const int B = nt - t0 < FAITH_BATCH ? nt - t0 : FAITH_BATCH;
		for (int b = 0; b < B; b++) {
			int32_t *x = f->x + (size_t)b * n;
			memcpy(x, f->ids, (size_t)n * sizeof *x);
			if (!f->causal)
				x[i] = TOK_MASK;
			if (f->keyof[t0 + b] >= 0)
				x[f->keyof[t0 + b]] = f->blank;
		}
		if (stop && stop(sctx))
			return false;
		model_forward(f->m, &f->ws, f->x, B, n);
		for (int b = 0; b < B; b++) {
			const int k = f->keyof[t0 + b];
			const double l = nll(f, b, i, target);
			if (k >= 0) {
				effect[k] = (float)(l - base);
				continue;
			}
			base = l;
			*loss = (float)l;
			for (int h = 0; h < f->LH; h++)
				memcpy(f->att + (size_t)h * n,
				       f->ws.layer[h / H].att +
					   (((size_t)b * H + h % H) * n + i) * n,
				       (size_t)n * sizeof *f->att);
		}
	}
	return true;
}

/* A causal model's rows row0 .. row0 + nrows - 1 at once: blanking key j
 * changes only the rows from j on, so one pass per key (and the plain one,
 * key -1) gives every row's effect of it. The plain pass's attention at
 * every row goes to all (L H, n, n). */
static bool causal_rows(faith_run *f, int row0, int nrows, float *loss, float *effect, float *all,
			bool (*stop)(void *), void *sctx)
{
	const int n = f->n, H = (int)f->m->cfg.heads, last = row0 + nrows - 1;
	for (size_t j = 0; j < (size_t)nrows * n; j++)
		effect[j] = NAN;
	for (int r = 0; r < nrows; r++)
		loss[r] = NAN;
	for (int t0 = -1; t0 <= last; t0 += FAITH_BATCH) {
		const int B = last + 1 - t0 < FAITH_BATCH ? last + 1 - t0 : FAITH_BATCH;
		for (int b = 0; b < B; b++) {
			int32_t *x = f->x + (size_t)b * n;
			memcpy(x, f->ids, (size_t)n * sizeof *x);
			if (t0 + b >= 0)
				x[t0 + b] = f->blank;
		}
		if (stop && stop(sctx))
			return false;
		model_forward(f->m, &f->ws, f->x, B, n);
		for (int b = 0; b < B; b++) {
			const int k = t0 + b;
			for (int r = k < row0 ? row0 : k; r <= last; r++) {
				const int32_t target = target_of(f, r);
				if (target < 0)
					continue;
				const double l = nll(f, b, r, target);
				if (k >= 0)
					effect[(size_t)(r - row0) * n + k] =
					    (float)(l - loss[r - row0]);
				else
					loss[r - row0] = (float)l;
			}
			for (int h = 0; k < 0 && h < f->LH; h++)
				memcpy(all + (size_t)h * n * n,
				       f->ws.layer[h / H].att + ((size_t)b * H + h % H) * n * n,
				       (size_t)n * n * sizeof *all);
		}
	}
	return true;
}

/* Head k's Spearman at row i over the keys with an effect. */
static float row_spearman(faith_run *f, int k, const float *effect)
{
	int m = 0;
	for (int j = 0; j < f->n; j++)
		if (!isnan(effect[j])) {
			f->keys[m] = f->att[(size_t)k * f->n + j];
			f->effs[m++] = effect[j];
		}
	return (float)faith_spearman(f->keys, f->effs, m);
}

static void run_finish(faith_run *f)
{
	activations_finish(&f->ws);
	free(f->x);
}

bool faith_rows(const model *m, const int32_t *ids, int n, int row0, int nrows, float *loss,
		float *effect, float *spearman, float *att, bool (*stop)(void *ctx), void *stop_ctx,
		av_error *err)
{
	err->msg[0] = '\0';
	if (n < 1 || n > (int)m->cfg.context)
		return av_fail(err, _("%d tokens do not fit the context of %u"), n, m->cfg.context);
	if (row0 < 0 || nrows < 1 || row0 + nrows > n)
		return av_fail(err, _("rows %d to %d are not in a text of %d tokens"), row0,
			       row0 + nrows - 1, n);
	faith_run f = {.m = m, .ids = ids, .n = n, .V = (int)m->cfg.vocab_size};
	f.LH = (int)(m->cfg.layers * m->cfg.heads);
	f.causal = m->cfg.objective == OBJ_CAUSAL;
	f.blank = f.causal ? TOK_UNK : TOK_MASK;
	const size_t N = (size_t)n;
	f.x = malloc((FAITH_BATCH * N + (size_t)f.LH * N + 2 * N + N + 1) * sizeof *f.x);
	if (!f.x || !activations_init(&f.ws, &m->cfg, FAITH_BATCH, n, 1, err)) {
		free(f.x);
		return av_fail(err, _("out of memory for the faithfulness of %d tokens"), n);
	}
	f.att = (float *)(f.x + FAITH_BATCH * N);
	f.keys = f.att + (size_t)f.LH * N;
	f.effs = f.keys + N;
	f.keyof = (int *)(f.effs + N);
	/* a causal model's rows together when there are several */
	float *all = f.causal && nrows > 1 ? malloc((size_t)f.LH * N * N * sizeof *all) : NULL;
	bool ok = !(f.causal && nrows > 1) ||
		  (all && causal_rows(&f, row0, nrows, loss, effect, all, stop, stop_ctx));
	if (f.causal && nrows > 1 && !all)
		ok = av_fail(err, _("out of memory for the faithfulness of %d tokens"), n);
	for (int r = 0; ok && r < nrows; r++) {
		float *e = effect + (size_t)r * N;
		if (all)
			for (int h = 0; h < f.LH; h++)
				memcpy(f.att + (size_t)h * N, all + ((size_t)h * N + row0 + r) * N,
				       N * sizeof *f.att);
		else
			ok = row_effects(&f, row0 + r, &loss[r], e, stop, stop_ctx);
		for (int k = 0; ok && k < f.LH; k++)
			spearman[(size_t)r * f.LH + k] =
			    isnan(loss[r]) ? NAN : row_spearman(&f, k, e);
		float *a = att ? att + (size_t)r * f.LH * N : NULL;
		for (size_t j = 0; ok && a && j < (size_t)f.LH * N; j++)
			a[j] = isnan(loss[r]) ? NAN : f.att[j];
	}
	free(all);
	run_finish(&f);
	return ok;
}
