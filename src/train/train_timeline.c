/* The training timeline of a --train run (timeline.h): its probe, taken
 * from the corpus, and a record every K steps. The probe is TL_WINDOWS
 * windows of the context's length (TL_PROBE_LEN at most: the role scores
 * cost n^2 a head) spread evenly over the validation split
 * (over the training split when there is none: then no probe loss is
 * recorded). Recording reads the model and changes nothing the training
 * reads, so a run gives the same parameters with or without it. */
#include "attnview/timeline.h"
#include "attnview/train.h"
#include "train_internal.h"

#include <math.h>

bool train_timeline_keep(const trainer *t, av_error *err)
{
	const timeline *tl = t->model->timeline;
	if (!tl || !tl->count || tl->step[tl->count - 1] != t->step ||
	    !timeline_keep_due(t->keep_every, tl->count - 1, t->step, t->total))
		return true;
	model_meta meta = t->model->meta;
	meta.steps = t->base_steps + t->step;
	meta.tokens = t->base_tokens + t->tokens_seen;
	meta.seed = t->opt.seed;
	return timeline_keep(t->model, &meta, t->out_path, t->step, err);
}

bool train_timeline_start(trainer *t, av_error *err)
{
	/* A model trained from another (--init) brings that run's timeline:
	 * this run's is its own, or none. */
	timeline_destroy(t->model->timeline);
	t->model->timeline = NULL;
	if (!t->opt.timeline_every)
		return true;
	const corpus *c = t->data;
	uint32_t W = TL_WINDOWS, n = t->opt.context;
	if (n > TL_PROBE_LEN)
		n = TL_PROBE_LEN;
	uint64_t first = c->nval >= n ? c->ntrain : 0, len = c->nval >= n ? c->nval : c->ntrain;
	uint32_t probe[TL_WINDOWS * TL_PROBE_LEN];
	for (uint32_t w = 0; w < W; w++) {
		uint64_t start = first + (len - n) * w / (W - 1);
		for (uint32_t i = 0; i < n; i++)
			probe[w * n + i] = c->vocab.cps[corpus_id(c, start + i)];
	}
	model *m = t->model;
	m->timeline = timeline_create(m, probe, W, n, t->opt.timeline_every, t->opt.seed, err);
	return m->timeline && timeline_record(m->timeline, m, 0, NAN, c->nval >= n, err);
}

/* The mean training loss of the steps since the record before (those still
 * in the ring of recent losses). */
static float loss_since(const trainer *t, uint64_t prev)
{
	uint64_t k = t->step - prev;
	uint64_t have = t->nrecent < TRAIN_RECENT ? t->nrecent : TRAIN_RECENT;
	if (k > have)
		k = have;
	if (k == 0)
		return NAN;
	double sum = 0.0;
	for (uint64_t i = t->nrecent - k; i < t->nrecent; i++)
		sum += t->recent[i % TRAIN_RECENT];
	return (float)(sum / (double)k);
}

bool train_timeline_step(trainer *t, av_error *err)
{
	timeline *tl = t->model->timeline;
	if (!tl || !timeline_due(tl, t->step, t->total))
		return true;
	uint64_t prev = tl->count ? tl->step[tl->count - 1] : 0;
	if (prev >= t->step)
		prev = 0;
	return timeline_record(tl, t->model, t->step, loss_since(t, prev), t->data->nval >= tl->n,
			       err) &&
	       train_timeline_keep(t, err);
}
