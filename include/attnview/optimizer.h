/* AdamW with linear warmup, cosine decay and global gradient-norm clipping.
 *
 *   lr(s) = lr * (s+1)/warmup                            for s < warmup
 *         = min + (lr-min) * (1 + cos(pi * p)) / 2       after, p = (s-warmup)/(total-warmup)
 *   with min = lr/10 and s the 0-based step.
 *   g *= min(1, clip / (||g||_2 + 1e-6))                  over all parameters at once
 *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr(s) * (wd * p)            for the matrices (the size table's decay column)
 *   p -= lr(s) * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps),  t = s+1
 * Defaults: b1 0.9, b2 0.95, eps 1e-8, wd 0.01, clip 1.0. */
#ifndef ATTNVIEW_OPTIMIZER_H
#define ATTNVIEW_OPTIMIZER_H

#include "attnview/model.h"

typedef struct adamw {
	float lr, beta1, beta2, eps, weight_decay, clip;
	uint64_t warmup, total_steps;
	uint64_t step; /* steps taken */
	size_t n;
	float *m, *v;	/* first and second moments, model layout */
	uint8_t *decay; /* [n] 1 where weight decay applies */
} adamw;

bool adamw_init(adamw *o, const model *m, float lr, uint64_t warmup, uint64_t total_steps,
		av_error *err);
void adamw_finish(adamw *o);
float adamw_lr(const adamw *o, uint64_t step);
/* Clips grads in place, updates params, advances o->step; returns the
 * gradient norm before clipping. */
float adamw_step(adamw *o, float *params, float *grads);

#endif
