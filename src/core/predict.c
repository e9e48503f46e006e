/* The predictions of the view and the dump (infer.h, model.h): a row's logits
 * through the pass of infer.c and its cache, the prediction logits of man 5
 * attnview section 6, the top-k characters, and model_attend, which gives a
 * text's attention and every row's predictions as the view asks for them. */
#include "attnview/i18n.h"
#include "attnview/infer.h"

#include "attnview/ops.h"

#include <stdlib.h>
#include <string.h>

bool infer_row_logits(const model *m, activations *ws, infer_cache *c, const int32_t *ids, int n,
		      int row, float *logits, infer_stale_fn stale, void *stale_ctx, av_error *err)
{
	const int d = (int)m->cfg.dim, L = (int)m->cfg.layers;
	if (row < 0 || row >= n)
		return av_fail(err, _("no row %d in a text of %d tokens"), row, n);
	if (!infer_forward(m, ws, c, ids, n, NULL, NULL, stale, stale_ctx, err))
		return false;
	const size_t r = (size_t)row * (size_t)d;
	layernorm_forward(ws->lnf + r, ws->lnf_mean + row, ws->lnf_rstd + row,
			  ws->layer[L - 1].res3 + r, m->p.lnf_w, m->p.lnf_b, 1, d);
	model_unembed(m, logits, ws->lnf + r, 1); /* as model_logits computes one row */
	return true;
}

/* The k most probable characters in p (V), largest first, ties by lower id.
 * The special tokens (pad, unknown, mask) are never predictions a person can
 * read, so they are left out; the probabilities are those of the full
 * distribution. */
static void top_k(const float *p, int V, int k, int32_t *ids, float *vals)
{
	int n = 0;
	for (int i = TOK_NSPECIAL; i < V; i++) {
		if (n == k && p[i] <= vals[n - 1])
			continue;
		int j = n < k ? n++ : k - 1;
		while (j > 0 && vals[j - 1] < p[i]) {
			vals[j] = vals[j - 1];
			ids[j] = ids[j - 1];
			j--;
		}
		vals[j] = p[i];
		ids[j] = i;
	}
	for (int i = n; i < k; i++) {
		ids[i] = -1;
		vals[i] = 0.0f;
	}
}

bool infer_pred_logits(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
		       int pos, float *logits, infer_stale_fn stale, void *stale_ctx, av_error *err)
{
	if (n < 1 || n > (int)m->cfg.context || n > ws->T || ws->max_rows < 1)
		return av_fail(err, _("%d tokens do not fit the model's context of %u"), n,
			       m->cfg.context);
	int32_t x[AV_MAX_CONTEXT];
	for (int i = 0; i < n; i++)
		x[i] = tokens[i].id;
	if (m->cfg.objective == OBJ_MASKED && pos >= 0 && pos < n)
		x[pos] = TOK_MASK;
	return infer_row_logits(m, ws, c, x, n, pos, logits, stale, stale_ctx, err);
}

bool infer_predict(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
		   int pos, int topk, int32_t *ids, float *probs, infer_stale_fn stale,
		   void *stale_ctx, av_error *err)
{
	const int V = (int)m->cfg.vocab_size;
	if (!infer_pred_logits(m, ws, c, tokens, n, pos, ws->logits, stale, stale_ctx, err))
		return false;
	softmax_rows(ws->logits, 1, V);
	top_k(ws->logits, V, topk, ids, probs);
	return true;
}

void model_predict(const model *m, activations *ws, const token *tokens, int n, int pos, int topk,
		   int32_t *ids, float *probs)
{
	av_error err;
	if (!infer_predict(m, ws, NULL, tokens, n, pos, topk, ids, probs, NULL, NULL, &err))
		top_k(NULL, 0, topk, ids, probs);
}

/* Every row's predictions, each as the view asks for it (infer_predict, one
 * row of logits at a time), so that the two print the same bits: a causal
 * model's rows from the pass in the cache, a masked model's from one pass
 * per position with that position masked. */
static bool predict_all(const model *m, activations *ws, infer_cache *c, const token *tokens, int n,
			attn_result *r, av_error *err)
{
	const int k = r->topk;
	for (int p = 0; p < n; p++)
		if (!infer_predict(m, ws, c, tokens, n, p, k, r->pred_id + (size_t)p * k,
				   r->pred_p + (size_t)p * k, NULL, NULL, err))
			return false;
	return true;
}

bool model_attend(const model *m, activations *ws, const token *tokens, int n, int topk,
		  attn_result *r, av_error *err)
{
	memset(r, 0, sizeof *r);
	infer_cache *c = calloc(1, sizeof *c);
	if (!c)
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	bool ok = infer_attend(m, ws, c, tokens, n, r, NULL, NULL, err);
	r->topk = topk > 0 ? topk : 0;
	if (ok && r->topk) {
		r->pred_id = malloc((size_t)n * r->topk * sizeof *r->pred_id);
		r->pred_p = malloc((size_t)n * r->topk * sizeof *r->pred_p);
		ok = (r->pred_id && r->pred_p) ||
		     av_fail(err, _("out of memory for the attention of %d tokens"), n);
		ok = ok && predict_all(m, ws, c, tokens, n, r, err);
	}
	infer_cache_clear(c);
	free(c);
	if (!ok)
		attn_result_finish(r);
	return ok;
}
