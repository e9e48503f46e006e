/* AdamW with linear warmup, cosine decay and global gradient-norm clipping
 * (the formulas are in optimizer.h). Moments live in the model's parameter
 * layout, so tensor i of the gradients, m and v all start at the same offset. */
#include "attnview/optimizer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Weight decay applies to the matrices only: LayerNorm gains and biases are
 * left alone, as in GPT-2 and in the PyTorch reference. */
static bool tensor_decays(const char *name)
{
	static const char *const suffixes[] = {"qkv_w", "proj_w", "fc_w", "fc2_w"};
	if (strcmp(name, "wte") == 0)
		return true;
	const char *dot = strrchr(name, '.');
	if (!dot)
		return false;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strcmp(dot + 1, suffixes[i]) == 0)
			return true;
	return false;
}

bool adamw_init(adamw *o, const model *m, float lr, uint64_t warmup, uint64_t total_steps,
		av_error *err)
{
	memset(o, 0, sizeof(*o));
	o->lr = lr;
	o->beta1 = 0.9f;
	o->beta2 = 0.95f;
	o->eps = 1e-8f;
	o->weight_decay = 0.01f;
	o->clip = 1.0f;
	o->warmup = warmup;
	o->total_steps = total_steps;
	o->n = m->nparams;

	size_t nt = model_tensor_table(&m->cfg, NULL, 0);
	tensor_info *tt = calloc(nt ? nt : 1, sizeof(*tt));
	o->m = calloc(o->n ? o->n : 1, sizeof(float));
	o->v = calloc(o->n ? o->n : 1, sizeof(float));
	o->decay = calloc(o->n ? o->n : 1, 1);
	if (!tt || !o->m || !o->v || !o->decay) {
		free(tt);
		adamw_finish(o);
		return av_fail_errno(err, ENOMEM,
				     "cannot allocate the optimizer state (%zu parameters, %zu MB)",
				     m->nparams, m->nparams * 9 / (1024 * 1024));
	}
	model_tensor_table(&m->cfg, tt, nt);
	for (size_t i = 0; i < nt; i++)
		if (tensor_decays(tt[i].name) && tt[i].offset + tt[i].size <= o->n)
			memset(o->decay + tt[i].offset, 1, tt[i].size);
	free(tt);
	return true;
}

void adamw_finish(adamw *o)
{
	free(o->m);
	free(o->v);
	free(o->decay);
	o->m = o->v = NULL;
	o->decay = NULL;
	o->n = 0;
}

float adamw_lr(const adamw *o, uint64_t step)
{
	double lr = o->lr, min = lr / 10.0;
	if (step < o->warmup)
		return (float)(lr * (double)(step + 1) / (double)o->warmup);
	/* Past the end of the schedule the rate stays at its floor; a schedule
	 * with no decay phase (total <= warmup) drops to it one step later. */
	uint64_t span = o->total_steps > o->warmup + 1 ? o->total_steps - o->warmup : 1;
	double p = (double)(step - o->warmup) / (double)span;
	if (p > 1.0)
		p = 1.0;
	return (float)(min + (lr - min) * (1.0 + cos(M_PI * p)) / 2.0);
}

/* Sum of squares in double, in 8 interleaved partial sums combined in a
 * fixed order: the same bits on every run whatever the thread count
 * (training is deterministic). */
static double sum_squares(const float *g, size_t n)
{
	double acc[8] = {0};
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (int k = 0; k < 8; k++)
			acc[k] += (double)g[i + k] * (double)g[i + k];
	for (; i < n; i++)
		acc[i % 8] += (double)g[i] * (double)g[i];
	double s = 0.0;
	for (int k = 0; k < 8; k++)
		s += acc[k];
	return s;
}

typedef struct adam_consts {
	float b1, b2, c1, c2, bc1, bc2, lr, wd, eps;
} adam_consts;

/* One element of the update, in the order of optimizer.h. */
static inline void adam_one(const adam_consts *k, float *p, float *m, float *v, const float *g,
			    const uint8_t *decay)
{
	float gi = *g;
	float mi = k->b1 * *m + k->c1 * gi;
	float vi = k->b2 * *v + k->c2 * gi * gi;
	*m = mi;
	*v = vi;
	float pi = *p;
	pi -= (float)*decay * (k->wd * pi); /* 0 or 1 times: exact, and no branch */
	pi -= k->lr * (mi / k->bc1) / (sqrtf(vi / k->bc2) + k->eps);
	*p = pi;
}

static void adam_update(const adam_consts *k, float *p, float *m, float *v, const float *g,
			const uint8_t *decay, size_t n)
{
	for (size_t i = 0; i < n; i++)
		adam_one(k, p + i, m + i, v + i, g + i, decay + i);
}

float adamw_step(adamw *o, float *params, float *grads)
{
	float norm = (float)sqrt(sum_squares(grads, o->n));
	if (o->clip > 0.0f) {
		double scale = (double)o->clip / ((double)norm + 1e-6);
		if (scale < 1.0) {
			float s = (float)scale;
			for (size_t i = 0; i < o->n; i++)
				grads[i] *= s;
		}
	}

	uint64_t t = o->step + 1;
	float lr = adamw_lr(o, o->step);
	adam_consts k = {
	    .b1 = o->beta1,
	    .b2 = o->beta2,
	    .c1 = 1.0f - o->beta1,
	    .c2 = 1.0f - o->beta2,
	    .bc1 = (float)(1.0 - pow(o->beta1, (double)t)),
	    .bc2 = (float)(1.0 - pow(o->beta2, (double)t)),
	    .lr = lr,
	    .wd = lr * o->weight_decay,
	    .eps = o->eps,
	};
	adam_update(&k, params, o->m, o->v, grads, o->decay, o->n);
	o->step = t;
	return norm;
}
