/* The next character of a causal model, and the sampler (generate.h). */
#include "attnview/generate.h"
#include "attnview/i18n.h"
#include "attnview/ops.h"

#include "attnview/infer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gen_sampler_init(gen_sampler *s, float temperature, int top_k, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->temperature = temperature > 0 ? temperature : 0;
	s->top_k = top_k > 0 ? top_k : 0;
	s->seed = seed;
	rng_seed(&s->r, seed);
}

void gen_sampler_finish(gen_sampler *s)
{
	free(s->cand);
	free(s->w);
	s->cand = NULL;
	s->w = NULL;
	s->cap = 0;
}

typedef struct gen_cand {
	float logit;
	int32_t id;
} cand;

/* Larger logits first, then lower ids: one order on every machine. */
static int by_logit(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->logit != y->logit)
		return x->logit > y->logit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The model's probability of id: softmax at temperature 1. */
static float model_prob(const float *logits, int V, int32_t id)
{
	return (float)exp((double)logits[id] - log_sum_exp(logits, V));
}

int32_t gen_pick(gen_sampler *s, const float *logits, int V, float *p)
{
	if (V <= TOK_NSPECIAL)
		return -1;
	int32_t pick = TOK_NSPECIAL;
	if (s->temperature <= 0) {
		for (int32_t i = TOK_NSPECIAL + 1; i < V; i++)
			if (logits[i] > logits[pick])
				pick = i;
	} else {
		int n = V - TOK_NSPECIAL;
		if (s->cap < n) {
			cand *c = realloc(s->cand, (size_t)n * sizeof *c);
			if (!c)
				return -1;
			s->cand = c;
			double *w = realloc(s->w, (size_t)n * sizeof *w);
			if (!w)
				return -1;
			s->w = w;
			s->cap = n;
		}
		cand *c = s->cand;
		for (int i = 0; i < n; i++)
			c[i] = (cand){logits[TOK_NSPECIAL + i], TOK_NSPECIAL + i};
		qsort(c, (size_t)n, sizeof *c, by_logit);
		int k = s->top_k && s->top_k < n ? s->top_k : n;
		double total = 0;
		for (int i = 0; i < k; i++) {
			s->w[i] = exp(((double)c[i].logit - c[0].logit) / s->temperature);
			total += s->w[i];
		}
		double u = (double)rng_uniform(&s->r) * total, run = 0;
		pick = c[k - 1].id;
		for (int i = 0; i < k; i++) {
			run += s->w[i];
			if (run > u) {
				pick = c[i].id;
				break;
			}
		}
	}
	if (p)
		*p = model_prob(logits, V, pick);
	return pick;
}

bool model_next_logits(const model *m, activations *ws, const int32_t *ids, int n, float *out,
		       av_error *err)
{
	const model_config *c = &m->cfg;
	if (c->objective != OBJ_CAUSAL)
		return av_fail(err,
			       _("writing text needs a causal (next-character) model; this one "
				 "is masked: try --model builtin-causal, or train one with "
				 "--objective causal"));
	if (n < 1 || (uint32_t)n > c->context || n > ws->T)
		return av_fail(err, _("%d tokens do not fit the model's context of %u"), n,
			       c->context);
	/* The view's pass (infer.h), so that --dump --generate and the view's
	 * writing sample from the same logits. */
	return infer_row_logits(m, ws, NULL, ids, n, n - 1, out, NULL, NULL, err);
}
