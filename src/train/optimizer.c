/* AdamW with linear warmup, cosine decay and global gradient-norm clipping
 * (the formulas are in optimizer.h). Moments live in the model's parameter
 * layout, so tensor i of the gradients, m and v all start at the same offset. */
#include "attnview/optimizer.h"
#include "attnview/i18n.h"

#include "attnview/parallel.h"
#include "vec8.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

	o->m = av_alloc_large(o->n * sizeof(float), true);
	o->v = av_alloc_large(o->n * sizeof(float), true);
	o->decay = calloc(o->n ? o->n : 1, 1);
	if (!o->m || !o->v || !o->decay) {
		adamw_finish(o);
		return av_fail_errno(
		    err, ENOMEM, _("cannot allocate the optimizer state (%zu parameters, %zu MB)"),
		    m->nparams, m->nparams * 9 / (1024 * 1024));
	}
	/* The size table says which tensors decay. */
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	while (tensor_iter_next(&it, &t))
		if (t.decay && t.offset + t.size <= o->n)
			memset(o->decay + t.offset, 1, t.size);
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

/* The optimizer's passes run over fixed chunks of the parameters, spread
 * over the threads. The chunks do not depend on the thread count, and the
 * norm is summed chunk by chunk in order, so every bit of the result is the
 * same whatever the number of threads (training is deterministic). */
#define CHUNK 16384

static double sum_squares(const float *g, size_t n)
{
	/* 8 interleaved partial sums in double, combined in a fixed order. */
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
	float b1, b2, c1, c2, bc1, bc2, lr, wd, eps, scale;
} adam_consts;

typedef struct adam_job {
	adamw *o;
	float *params, *grads;
	double *partial; /* one per chunk */
	adam_consts k;
} adam_job;

static void norm_range(void *p, int begin, int end)
{
	adam_job *j = p;
	for (int c = begin; c < end; c++) {
		size_t lo = (size_t)c * CHUNK, hi = lo + CHUNK < j->o->n ? lo + CHUNK : j->o->n;
		j->partial[c] = sum_squares(j->grads + lo, hi - lo);
	}
}

/* The update of optimizer.h, element by element: clip, moments, decay (for
 * matrices: 0 or 1 times, exact and without a branch), step. Eight lanes at
 * a time (GCC does not vectorise this loop at -O2), then the rest one by one
 * with the same IEEE operations in the same order, so every element gets the
 * same bits either way and in both clones. */
typedef uint8_t v8u8 __attribute__((vector_size(8)));

AV_CLONES static void update_lanes(float *restrict pa, float *restrict ga, float *restrict m,
				   float *restrict v, const uint8_t *restrict decay, size_t n,
				   adam_consts k)
{
	const bool clip = k.scale < 1.0f;
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		v8f g = load8(ga + i);
		if (clip)
			g = g * k.scale;
		store8(ga + i, g);
		v8f mi = k.b1 * load8(m + i) + k.c1 * g;
		v8f vi = k.b2 * load8(v + i) + k.c2 * g * g;
		store8(m + i, mi);
		store8(v + i, vi);
		v8u8 d8;
		memcpy(&d8, decay + i, sizeof d8);
		v8f pi = load8(pa + i);
		pi -= __builtin_convertvector(d8, v8f) * (k.wd * pi);
		pi -= k.lr * (mi / k.bc1) / (vsqrt8(vi / k.bc2) + (zero + k.eps));
		store8(pa + i, pi);
	}
	for (; i < n; i++) {
		float g = clip ? ga[i] * k.scale : ga[i];
		ga[i] = g;
		float mi = k.b1 * m[i] + k.c1 * g;
		float vi = k.b2 * v[i] + k.c2 * g * g;
		m[i] = mi;
		v[i] = vi;
		float pi = pa[i];
		pi -= (float)decay[i] * (k.wd * pi);
		pi -= k.lr * (mi / k.bc1) / (sqrtf(vi / k.bc2) + k.eps);
		pa[i] = pi;
	}
}

static void update_range(void *p, int begin, int end)
{
	const adam_job *j = p;
	size_t lo = (size_t)begin * CHUNK, hi = (size_t)end * CHUNK;
	if (hi > j->o->n)
		hi = j->o->n;
	update_lanes(j->params + lo, j->grads + lo, j->o->m + lo, j->o->v + lo, j->o->decay + lo,
		     hi - lo, j->k);
}

float adamw_step(adamw *o, float *params, float *grads)
{
	int nchunks = (int)((o->n + CHUNK - 1) / CHUNK);
	double stack[64],
	    *partial = nchunks <= 64 ? stack : malloc((size_t)nchunks * sizeof(double));
	adam_job j = {.o = o, .params = params, .grads = grads, .partial = partial};
	double ss = 0.0;
	if (partial) {
		parallel_for(nchunks, norm_range, &j);
		for (int c = 0; c < nchunks; c++)
			ss += partial[c];
		if (partial != stack)
			free(partial);
	} else {
		/* No memory for the partial sums: the same chunks, one by one. */
		for (int c = 0; c < nchunks; c++) {
			size_t lo = (size_t)c * CHUNK;
			ss += sum_squares(grads + lo, lo + CHUNK < o->n ? CHUNK : o->n - lo);
		}
	}
	float norm = (float)sqrt(ss);

	float scale = 1.0f;
	if (o->clip > 0.0f) {
		double s = (double)o->clip / ((double)norm + 1e-6);
		if (s < 1.0)
			scale = (float)s;
	}
	uint64_t t = o->step + 1;
	float lr = adamw_lr(o, o->step);
	j.k = (adam_consts){
	    .b1 = o->beta1,
	    .b2 = o->beta2,
	    .c1 = 1.0f - o->beta1,
	    .c2 = 1.0f - o->beta2,
	    .bc1 = (float)(1.0 - pow(o->beta1, (double)t)),
	    .bc2 = (float)(1.0 - pow(o->beta2, (double)t)),
	    .lr = lr,
	    .wd = lr * o->weight_decay,
	    .eps = o->eps,
	    .scale = scale,
	};
	parallel_for(nchunks, update_range, &j);
	o->step = t;
	return norm;
}
