/* The training timeline of a --train run (timeline.h): its probe, taken
 * from the corpus, and a record every K steps. The probe is TL_WINDOWS
 * windows of the context's length (TL_PROBE_LEN at most: the role scores
 * cost n^2 a head) spread evenly over the validation split
 * (over the training split when there is none: then no probe loss is
 * recorded); a run from a model that has a timeline (--init) goes on with
 * that one's probe and records, numbered by the model's step count.
 * Recording reads the model and changes nothing the training reads, so a
 * run gives the same parameters with or without it. */
#include "attnview/timeline.h"
#include "attnview/train.h"
#include "train_internal.h"

#include <math.h>

/* The step a record of the run's step `step` carries: the model's count,
 * which goes on from the model it started from (--init). */
static uint64_t model_step(const trainer *t, uint64_t step)
{
	return t->base_steps + step;
}

/* How many records this run has made before its last (a model trained from
 * another brings that one's records, of steps before the run's first). */
static size_t run_record(const trainer *t, const timeline *tl)
{
	size_t r = 0;
	while (r < tl->count && tl->step[r] < t->base_steps)
		r++;
	return tl->count - 1 - r;
}

bool train_timeline_keep(const trainer *t, av_error *err)
{
	const timeline *tl = t->model->timeline;
	uint64_t now = model_step(t, t->step);
	if (!tl || !tl->count || tl->step[tl->count - 1] != now ||
	    !timeline_keep_due(t->keep_every, run_record(t, tl), t->step, t->total))
		return true;
	model_meta meta = t->model->meta;
	meta.steps = now;
	meta.tokens = t->base_tokens + t->tokens_seen;
	meta.seed = t->opt.seed;
	return timeline_keep(t->model, &meta, t->out_path, now, t->step == 0, err);
}

/* Is the probe held-out text for this run? It began as the validation
 * text of the run that made the timeline (its first record has a probe
 * loss), and this run holds out text too: a run from that model on its
 * corpus with --no-val may train on the probe. */
static bool probe_held_out(const trainer *t, const timeline *tl)
{
	return tl->count && !isnan(tl->probe_loss[0]) && t->data->nval >= tl->n;
}

/* A timeline of this run's own: the probe from its corpus, and the record
 * of the model's state at the start (step 0, or the step count of the
 * model it started from). */
static bool new_timeline(trainer *t, av_error *err)
{
	const corpus *c = t->data;
	model *m = t->model;
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
	m->timeline = timeline_create(m, probe, W, n, t->opt.timeline_every, t->opt.seed, err);
	return m->timeline &&
	       timeline_record(m->timeline, m, model_step(t, 0), NAN, c->nval >= n, err);
}

/* A run from a model that carries a timeline (--init) goes on with it: the
 * same probe, so that the records compare, the new ones after the old, at
 * this run's K. Records after the model's step count go (a run with
 * --patience keeps an earlier step's weights); the model's state is then
 * its last record when that was taken at the model's step count, otherwise
 * it is recorded now. A timeline that ends before the model's step count
 * with nothing cut (attnview 0.2.0 numbered a --init run's records from 0)
 * or that an older attnview measured otherwise (version 1) cannot go on:
 * the run starts its own. */
static bool continue_timeline(trainer *t, timeline *tl, av_error *err)
{
	uint64_t now = model_step(t, 0);
	size_t had = tl->count;
	timeline_truncate(tl, now);
	/* A timeline measured by an older attnview (version 1: shares of
	 * weight) cannot take records of this one's (shares of rows). */
	if (!tl->count || (tl->count == had && tl->step[tl->count - 1] < now) ||
	    tl->version != TL_VERSION) {
		timeline_destroy(tl);
		t->model->timeline = NULL;
		return new_timeline(t, err);
	}
	tl->every = t->opt.timeline_every;
	if (tl->step[tl->count - 1] == now)
		return true;
	return timeline_record(tl, t->model, now, NAN, probe_held_out(t, tl), err);
}

bool train_timeline_start(trainer *t, av_error *err)
{
	model *m = t->model;
	if (!t->opt.timeline_every) { /* none, even from a model with one */
		timeline_destroy(m->timeline);
		m->timeline = NULL;
		return true;
	}
	return m->timeline ? continue_timeline(t, m->timeline, err) : new_timeline(t, err);
}

/* The mean training loss of the last k steps (those still in the ring of
 * recent losses). */
static float loss_of_last(const trainer *t, uint64_t k)
{
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
	/* The steps since the record before, in this run (none before it: a
	 * resumed run records its checkpoint's step again). */
	uint64_t now = model_step(t, t->step), prev = tl->count ? tl->step[tl->count - 1] : 0;
	uint64_t since = prev < now && prev >= t->base_steps ? now - prev : t->step;
	return timeline_record(tl, t->model, now, loss_of_last(t, since), probe_held_out(t, tl),
			       err) &&
	       train_timeline_keep(t, err);
}
