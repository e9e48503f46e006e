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

float adamw_step(adamw *o, float *params, float *grads)
{
	/* The norm in double, serially: the same sum in the same order on every
	 * run, whatever the thread count (determinism of training). */
	double ss = 0.0;
	for (size_t i = 0; i < o->n; i++)
		ss += (double)grads[i] * (double)grads[i];
	float norm = (float)sqrt(ss);
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
	float b1 = o->beta1, b2 = o->beta2;
	float bc1 = (float)(1.0 - pow(b1, (double)t));
	float bc2 = (float)(1.0 - pow(b2, (double)t));
	float wd = lr * o->weight_decay;
	for (size_t i = 0; i < o->n; i++) {
		float g = grads[i];
		float m = b1 * o->m[i] + (1.0f - b1) * g;
		float v = b2 * o->v[i] + (1.0f - b2) * g * g;
		o->m[i] = m;
		o->v[i] = v;
		float p = params[i];
		if (o->decay[i])
			p -= wd * p;
		p -= lr * (m / bc1) / (sqrtf(v / bc2) + o->eps);
		params[i] = p;
	}
	o->step = t;
	return norm;
}
