/* Checkpoints (checkpoint.h): the training state after the model, written,
 * read back and restored into a trainer. */
#include "attnview/checkpoint.h"
#include "attnview/train.h"
#include "attnview/timeline.h"
#include "attnview/i18n.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(TRAIN_RECENT <= AV_STATE_MAX_RECENT, "a checkpoint keeps every recent loss");

static void put_options(byte_buf *b, const train_options *o, uint64_t total, const char *val_path)
{
	bb_bytes(b, AV_STATE_MAGIC, 4);
	bb_u32(b, AV_STATE_VERSION);
	bb_u32(b, o->objective);
	bb_u32(b, o->dim);
	bb_u32(b, o->heads);
	bb_u32(b, o->layers);
	bb_u32(b, o->context);
	bb_u32(b, o->batch);
	bb_u64(b, total);
	bb_u64(b, o->epochs);
	bb_f32(b, o->lr);
	bb_u64(b, o->warmup);
	bb_u64(b, o->seed);
	bb_u64(b, o->min_count);
	bb_u32(b, o->max_vocab);
	bb_u64(b, o->eval_every);
	bb_u64(b, o->checkpoint_every);
	bb_u32(b, o->threads);
	bb_u64(b, o->patience);
	bb_f32(b, o->sharpen);
	uint32_t n = val_path ? (uint32_t)strlen(val_path) : 0;
	bb_u32(b, n);
	bb_bytes(b, val_path, n);
}

bool trainer_checkpoint(trainer *t, byte_buf *out, av_error *err)
{
	byte_buf s = {0};
	/* A run that patience ended is finished: its total is the steps done. */
	put_options(&s, &t->opt, t->stopped_early ? t->step : t->total, t->val_path);
	bb_u64(&s, t->data->ntrain);
	bb_u64(&s, t->data->nval);
	bb_u64(&s, t->data->hash);
	bb_u64(&s, t->step);
	bb_u64(&s, t->tokens_seen);
	for (int i = 0; i < 4; i++)
		bb_u64(&s, t->data_rng.s[i]);
	bb_u64(&s, t->adam.step);
	bb_f32s(&s, t->adam.m, t->model->nparams);
	bb_f32s(&s, t->adam.v, t->model->nparams);
	uint32_t nr = t->nrecent < TRAIN_RECENT ? (uint32_t)t->nrecent : TRAIN_RECENT;
	bb_u32(&s, nr);
	for (uint32_t i = 0; i < nr; i++)
		bb_f32(&s, t->recent[(t->nrecent - nr + i) % TRAIN_RECENT]);
	bb_u32(&s, (uint32_t)t->nevals);
	for (size_t i = 0; i < t->nevals; i++) {
		const train_eval *e = &t->evals[i];
		bb_u64(&s, e->step);
		bb_f32(&s, e->loss);
		bb_f32(&s, e->acc);
		bb_f32(&s, e->base_loss);
		bb_f32(&s, e->base_acc);
		bb_f32(&s, e->train_loss);
	}
	/* With patience: the best evaluation's parameters, once there is one. */
	uint32_t nb = t->has_best ? (uint32_t)t->model->nparams : 0;
	bb_u32(&s, nb);
	if (nb)
		bb_f32s(&s, t->best_params, nb);
	if (s.failed) {
		bb_finish(&s);
		return av_fail(err, _("out of memory building the checkpoint"));
	}
	t->model->meta.steps = t->base_steps + t->step;
	t->model->meta.tokens = t->base_tokens + t->tokens_seen;
	/* The latest validation figures, for a view showing the checkpoint. */
	if (t->nevals) {
		t->model->meta.val_loss = t->evals[t->nevals - 1].loss;
		t->model->meta.val_acc = t->evals[t->nevals - 1].acc;
	}
	bool ok = model_serialize(t->model, AV_KIND_CHECKPOINT, &s, out, err);
	bb_finish(&s);
	return ok;
}

bool trainer_save_checkpoint(trainer *t, av_error *err)
{
	byte_buf b = {0};
	if (!trainer_checkpoint(t, &b, err))
		return false;
	bool ok = write_file_atomic(t->ckpt_path, &b, false, err);
	bb_finish(&b);
	return ok;
}

/* The options a checkpoint's state was started with (checked by model_parse).
 * The total is stored resolved; as options it reads as --steps. The --epochs
 * given is kept apart, for --resume --epochs to be checked against and for
 * the next checkpoint. */
static bool take_options(train_checkpoint *ck, av_error *err)
{
	const training_state *st = &ck->state;
	train_options *o = &ck->opt;
	memset(o, 0, sizeof *o);
	o->objective = st->objective;
	o->dim = st->dim;
	o->heads = st->heads;
	o->layers = st->layers;
	o->context = st->context;
	o->batch = st->batch;
	o->steps = st->total_steps;
	o->lr = st->lr;
	o->warmup = st->warmup;
	o->seed = st->seed;
	o->min_count = st->min_count;
	o->max_vocab = st->max_vocab;
	o->eval_every = st->eval_every;
	o->checkpoint_every = st->checkpoint_every;
	o->threads = st->threads;
	o->patience = st->patience;
	o->sharpen = st->sharpen;
	/* The timeline goes on with the K it was recorded at (none: none). */
	o->timeline_every = ck->model->timeline ? ck->model->timeline->every : 0;
	ck->epochs = st->epochs;
	if (st->val_path_len) {
		ck->val_path = malloc((size_t)st->val_path_len + 1);
		if (!ck->val_path)
			return av_fail(err, _("out of memory"));
		memcpy(ck->val_path, st->val_path, st->val_path_len);
		ck->val_path[st->val_path_len] = '\0';
	}
	return true;
}

bool train_checkpoint_load(train_checkpoint *ck, const char *path, av_error *err)
{
	memset(ck, 0, sizeof *ck);
	if (!(ck->path = strdup(path)))
		return av_fail(err, _("out of memory"));
	if (!binio_read_file(path, &ck->buf, &ck->n, err))
		goto fail;
	uint32_t kind;
	/* model_parse checks the training state of a checkpoint as it checks
	 * the rest of the file: a state it takes is whole and matches the model. */
	ck->model = model_parse(ck->buf, ck->n, path, &kind, &ck->state_off, &ck->state_len, err);
	if (!ck->model)
		goto fail;
	if (kind != AV_KIND_CHECKPOINT) {
		av_fail(err,
			_("%s is a finished model, not a training checkpoint: --resume takes the "
			  "checkpoint written when training stopped (OUT.ckpt)"),
			AV_Q(path));
		goto fail;
	}
	if (!training_state_parse(ck->buf, ck->state_off, ck->state_len, &ck->model->cfg, path,
				  &ck->state, err) ||
	    !take_options(ck, err))
		goto fail;
	/* A file attnview reads, but not a run this attnview continues. */
	av_error e2;
	if (!train_options_check(&ck->opt, &e2)) {
		av_fail(err,
			_("%s: the checkpoint's options are invalid (%s); start the training "
			  "again"),
			AV_Q(path), e2.msg);
		goto fail;
	}
	ck->ntrain = ck->state.ntrain;
	ck->nval = ck->state.nval;
	/* A run that started from a model (--init) counts on from its steps. */
	const model_meta *mm = &ck->model->meta;
	if (mm->steps > ck->state.steps_done && mm->tokens >= ck->state.tokens) {
		ck->base_steps = mm->steps - ck->state.steps_done;
		ck->base_tokens = mm->tokens - ck->state.tokens;
	}
	return true;
fail:
	train_checkpoint_finish(ck);
	return false;
}

void train_checkpoint_finish(train_checkpoint *ck)
{
	if (!ck)
		return;
	model_destroy(ck->model);
	free(ck->val_path);
	free(ck->path);
	free(ck->buf);
	memset(ck, 0, sizeof *ck);
}

/* Little-endian floats from the file image. */
static void floats_from(float *dst, const uint8_t *p, size_t n)
{
	byte_reader r = {p, 4 * n, 0};
	br_f32s(&r, dst, n);
}

/* The state after the options: everything but the model. */
bool train_checkpoint_restore(trainer *t, const train_checkpoint *ck, av_error *err)
{
	const training_state *st = &ck->state;
	if (st->ntrain != t->data->ntrain || st->nval != t->data->nval || st->hash != t->data->hash)
		return av_fail(
		    err,
		    _("the corpus differs from the one %s was trained on (%" PRIu64 " + %" PRIu64
		      " characters then, %" PRIu64 " + %" PRIu64 " now%s); "
		      "resume with the same corpus%s"),
		    AV_Q(ck->path), st->ntrain, st->nval, t->data->ntrain, t->data->nval,
		    st->hash != t->data->hash && st->ntrain == t->data->ntrain ? _(", other text")
									       : "",
		    ck->val_path ? _(" and --val-file") : "");
	t->step = st->steps_done;
	t->tokens_seen = st->tokens;
	t->base_steps = ck->base_steps;
	t->base_tokens = ck->base_tokens;
	memcpy(t->data_rng.s, st->rng, sizeof st->rng);
	t->adam.step = st->adam_step;
	floats_from(t->adam.m, st->m, t->model->nparams);
	floats_from(t->adam.v, st->v, t->model->nparams);
	floats_from(t->recent, st->recent, st->nrecent);
	t->nrecent = st->nrecent;
	t->evals = st->nevals ? calloc(st->nevals, sizeof *t->evals) : NULL;
	if (st->nevals && !t->evals)
		return av_fail(err, _("out of memory"));
	t->nevals = t->evals_cap = st->nevals;
	byte_reader r = {st->evals, AV_STATE_EVAL_BYTES * (size_t)st->nevals, 0};
	for (size_t i = 0; i < t->nevals; i++) {
		train_eval *e = &t->evals[i];
		br_u64(&r, &e->step);
		br_f32(&r, &e->loss);
		br_f32(&r, &e->acc);
		br_f32(&r, &e->base_loss);
		br_f32(&r, &e->base_acc);
		br_f32(&r, &e->train_loss);
	}
	/* The best parameters (model_parse checked there are P exactly when
	 * the run has patience and an evaluation was made). */
	if (st->nbest) {
		if (!t->best_params)
			return av_fail(err,
				       _("%s: the checkpoint keeps best parameters for a run "
					 "without --patience; start the training again"),
				       AV_Q(ck->path));
		floats_from(t->best_params, st->best, st->nbest);
		t->has_best = true;
	}
	return true;
}
