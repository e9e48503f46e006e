/* Checkpoints (checkpoint.h): the training state after the model, written,
 * read back and restored into a trainer. */
#include "attnview/checkpoint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put_options(byte_buf *b, const train_options *o, uint64_t total, const char *val_path)
{
	bb_bytes(b, TRAIN_CKPT_MAGIC, 4);
	bb_u32(b, TRAIN_CKPT_VERSION);
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
	uint32_t n = val_path ? (uint32_t)strlen(val_path) : 0;
	bb_u32(b, n);
	bb_bytes(b, val_path, n);
}

bool trainer_checkpoint(trainer *t, byte_buf *out, av_error *err)
{
	byte_buf s = {0};
	put_options(&s, &t->opt, t->total, t->val_path);
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
		bb_free(&s);
		return av_fail(err, "out of memory building the checkpoint");
	}
	t->model->meta.steps = t->step;
	t->model->meta.tokens = t->tokens_seen;
	/* The latest validation figures, for a view showing the checkpoint. */
	if (t->nevals) {
		t->model->meta.val_loss = t->evals[t->nevals - 1].loss;
		t->model->meta.val_acc = t->evals[t->nevals - 1].acc;
	}
	bool ok = model_serialize(t->model, AV_KIND_CHECKPOINT, &s, out, err);
	bb_free(&s);
	return ok;
}

bool trainer_save_checkpoint(trainer *t, av_error *err)
{
	byte_buf b = {0};
	if (!trainer_checkpoint(t, &b, err))
		return false;
	bool ok = write_file_atomic(t->ckpt_path, b.v, b.n, false, err);
	bb_free(&b);
	return ok;
}

static bool get_options(byte_reader *r, train_options *o, uint64_t *epochs, char **val_path)
{
	char magic[4];
	uint32_t version, n;
	memset(o, 0, sizeof *o);
	*epochs = 0;
	*val_path = NULL;
	if (!br_bytes(r, magic, 4) || memcmp(magic, TRAIN_CKPT_MAGIC, 4) != 0 ||
	    !br_u32(r, &version) || version != TRAIN_CKPT_VERSION)
		return false;
	if (!br_u32(r, &o->objective) || !br_u32(r, &o->dim) || !br_u32(r, &o->heads) ||
	    !br_u32(r, &o->layers) || !br_u32(r, &o->context) || !br_u32(r, &o->batch) ||
	    !br_u64(r, &o->steps) || !br_u64(r, &o->epochs) || !br_f32(r, &o->lr) ||
	    !br_u64(r, &o->warmup) || !br_u64(r, &o->seed) || !br_u64(r, &o->min_count) ||
	    !br_u32(r, &o->max_vocab) || !br_u64(r, &o->eval_every) ||
	    !br_u64(r, &o->checkpoint_every) || !br_u32(r, &o->threads) || !o->threads ||
	    !br_u64(r, &o->patience) || !br_u32(r, &n) || n > AV_MAX_STRING)
		return false;
	if (n) {
		*val_path = malloc(n + 1);
		if (!*val_path || !br_bytes(r, *val_path, n)) {
			free(*val_path);
			*val_path = NULL;
			return false;
		}
		(*val_path)[n] = '\0';
	}
	/* The total is stored resolved; as options it reads as --steps. The
	 * --epochs given is kept apart, for --resume --epochs to be checked
	 * against and for the next checkpoint. */
	*epochs = o->epochs;
	o->epochs = 0;
	return true;
}

bool train_checkpoint_load(train_checkpoint *ck, const char *path, av_error *err)
{
	memset(ck, 0, sizeof *ck);
	if (!read_file(path, &ck->buf, &ck->n, err))
		return false;
	uint32_t kind;
	ck->model = model_parse(ck->buf, ck->n, path, &kind, &ck->state_off, &ck->state_len, err);
	if (!ck->model)
		goto fail;
	if (kind != AV_KIND_CHECKPOINT) {
		av_fail(err,
			"%s is a finished model, not a training checkpoint: --resume takes the "
			"checkpoint written when training stopped (OUT.ckpt)",
			path);
		goto fail;
	}
	byte_reader r = {ck->buf + ck->state_off, ck->state_len, 0};
	if (!get_options(&r, &ck->opt, &ck->epochs, &ck->val_path)) {
		av_fail(err,
			"%s: the training state at byte %zu is damaged or from another "
			"version; start the training again",
			path, ck->state_off);
		goto fail;
	}
	av_error e2;
	if (!train_options_check(&ck->opt, &e2)) {
		av_fail(err,
			"%s: the checkpoint's options are invalid (%s); start the training "
			"again",
			path, e2.msg);
		goto fail;
	}
	model_config *cfg = &ck->model->cfg;
	if (cfg->objective != ck->opt.objective || cfg->dim != ck->opt.dim ||
	    cfg->heads != ck->opt.heads || cfg->layers != ck->opt.layers ||
	    cfg->context != ck->opt.context) {
		av_fail(err,
			"%s: the training state does not match the model in the same file; "
			"the checkpoint is damaged: start the training again",
			path);
		goto fail;
	}
	/* Where the corpus was split (the state after the options); a state too
	 * short for it is refused by train_checkpoint_restore. */
	if (!br_u64(&r, &ck->ntrain) || !br_u64(&r, &ck->nval))
		ck->ntrain = ck->nval = 0;
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
	free(ck->buf);
	memset(ck, 0, sizeof *ck);
}

/* The state after the options: everything but the model. */
bool train_checkpoint_restore(trainer *t, const train_checkpoint *ck, const char *what,
			      av_error *err)
{
	byte_reader r = {ck->buf + ck->state_off, ck->state_len, 0};
	train_options o;
	uint64_t epochs;
	char *vp = NULL;
	get_options(&r, &o, &epochs, &vp);
	free(vp);
	uint64_t ntrain, nval, hash, rs[4], astep;
	uint32_t nr, ne, nb;
	size_t P = t->model->nparams;
	bool ok = br_u64(&r, &ntrain) && br_u64(&r, &nval) && br_u64(&r, &hash);
	if (!ok)
		goto damaged;
	if (ntrain != t->data->ntrain || nval != t->data->nval || hash != t->data->hash)
		return av_fail(err,
			       "the corpus differs from the one %s was trained on (%" PRIu64
			       " + %" PRIu64 " characters then, %" PRIu64 " + %" PRIu64 " now%s); "
			       "resume with the same corpus%s",
			       what, ntrain, nval, t->data->ntrain, t->data->nval,
			       hash != t->data->hash && ntrain == t->data->ntrain ? ", other text"
										  : "",
			       ck->val_path ? " and --val-file" : "");
	ok = br_u64(&r, &t->step) && br_u64(&r, &t->tokens_seen);
	for (int i = 0; i < 4 && ok; i++)
		ok = br_u64(&r, &rs[i]);
	ok = ok && br_u64(&r, &astep) && br_f32s(&r, t->adam.m, P) && br_f32s(&r, t->adam.v, P) &&
	     br_u32(&r, &nr) && nr <= TRAIN_RECENT;
	if (!ok || t->step > t->total || astep != t->step)
		goto damaged;
	memcpy(t->data_rng.s, rs, sizeof rs);
	t->adam.step = astep;
	for (uint32_t i = 0; i < nr && ok; i++)
		ok = br_f32(&r, &t->recent[i]);
	t->nrecent = nr;
	ok = ok && br_u32(&r, &ne) && (uint64_t)ne * TRAIN_CKPT_EVAL_BYTES <= r.n - r.off;
	if (!ok)
		goto damaged;
	t->evals = ne ? calloc(ne, sizeof *t->evals) : NULL;
	if (ne && !t->evals)
		return av_fail(err, "out of memory");
	t->nevals = t->evals_cap = ne;
	for (uint32_t i = 0; i < ne && ok; i++) {
		train_eval *e = &t->evals[i];
		ok = br_u64(&r, &e->step) && br_f32(&r, &e->loss) && br_f32(&r, &e->acc) &&
		     br_f32(&r, &e->base_loss) && br_f32(&r, &e->base_acc) &&
		     br_f32(&r, &e->train_loss);
	}
	/* The best parameters: with patience, all of them once an evaluation
	 * was made (the first is the best so far); otherwise none. */
	ok = ok && br_u32(&r, &nb) && nb == (t->opt.patience && ne ? P : 0) &&
	     (!nb || t->best_params);
	if (ok && nb) {
		ok = br_f32s(&r, t->best_params, P);
		t->has_best = true;
	}
	if (!ok || r.off != r.n)
		goto damaged;
	return true;
damaged:
	return av_fail(err,
		       "%s: the training state is damaged (at byte %zu of the state); start "
		       "the training again",
		       what, ck->state_off + r.off);
}

void train_checkpoint_remove(const char *path)
{
	if (!path)
		return;
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	uint8_t h[16];
	bool ours = fread(h, 1, 16, f) == 16 && memcmp(h, AV_MAGIC, 8) == 0 &&
		    h[12] == AV_KIND_CHECKPOINT && !h[13] && !h[14] && !h[15];
	fclose(f);
	if (ours)
		unlink(path);
}
