/* The training state of a kind-1 model file (a checkpoint; modelfile.h and
 * man 5 attnview give the layout): decoded field by field, every length
 * checked against what is left, so a damaged state gets a message saying
 * where, never a crash. The rest of the file is read in modelfile.c. */
#include "attnview/modelfile.h"
#include "attnview/i18n.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct state_reader {
	byte_reader r;	  /* over the state alone */
	size_t base;	  /* its first byte in the file */
	const char *what; /* the file */
	av_error *err;
} state_reader;

static bool state_damaged(const state_reader *s, size_t at, const char *fmt, ...) AV_PRINTF(3, 4);

/* "file: the training state is damaged at byte F of the file (byte S of the
 * state): why; start the training again" */
static bool state_damaged(const state_reader *s, size_t at, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return av_fail(s->err,
		       _("%s: the training state is damaged at byte %zu of the file (byte %zu of "
			 "the state): %s; start the training again"),
		       AV_Q(s->what), s->base + at, at, why);
}

/* n bytes of the named field, or a message saying how far the state falls
 * short. */
static bool state_take(state_reader *s, void *dst, size_t n, const char *field)
{
	size_t at = s->r.off;
	if (br_bytes(&s->r, dst, n))
		return true;
	return state_damaged(s, at, _("%s needs %zu bytes but the state has %zu left"), field, n,
			     s->r.n - at);
}

static bool state_u32(state_reader *s, uint32_t *x, const char *field)
{
	uint8_t b[4];
	if (!state_take(s, b, 4, field))
		return false;
	*x = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return true;
}

static bool state_u64(state_reader *s, uint64_t *x, const char *field)
{
	uint8_t b[8];
	if (!state_take(s, b, 8, field))
		return false;
	*x = 0;
	for (int i = 7; i >= 0; i--)
		*x = *x << 8 | b[i];
	return true;
}

static bool state_f32(state_reader *s, float *x, const char *field)
{
	uint32_t u;
	if (!state_u32(s, &u, field))
		return false;
	memcpy(x, &u, 4);
	return true;
}

/* An array of n records of `size` bytes, left where it is. */
static bool state_array(state_reader *s, const uint8_t **p, uint64_t n, size_t size,
			const char *field)
{
	size_t at = s->r.off, left = s->r.n - at;
	if (n > left / size)
		return state_damaged(s, at, _("%s need %llu bytes but the state has %zu left"),
				     field, (unsigned long long)n * size, left);
	*p = s->r.p + at;
	s->r.off += (size_t)n * size;
	return true;
}

/* Magic, version and the options the run was started with. */
static bool state_options(state_reader *s, training_state *st)
{
	uint8_t magic[4];
	uint32_t version;
	if (s->r.n == 0)
		return state_damaged(s, 0,
				     _("there is none: a checkpoint holds one between its "
				       "parameters and its checksum"));
	if (!state_take(s, magic, 4, _("the magic")))
		return false;
	if (memcmp(magic, AV_STATE_MAGIC, 4) != 0)
		return state_damaged(s, 0, "it does not start with \"" AV_STATE_MAGIC "\"");
	if (!state_u32(s, &version, _("the state version")))
		return false;
	if (version != AV_STATE_VERSION && version != 2)
		return av_fail(s->err,
			       _("%s: training state version %u at byte %zu, but this attnview "
				 "reads version %u: the checkpoint is from another version; start "
				 "the training again"),
			       AV_Q(s->what), version, s->base + 4, AV_STATE_VERSION);
	bool ok =
	    state_u32(s, &st->objective, _("the objective")) &&
	    state_u32(s, &st->dim, _("the dim")) && state_u32(s, &st->heads, _("the heads")) &&
	    state_u32(s, &st->layers, _("the layers")) &&
	    state_u32(s, &st->context, _("the context")) &&
	    state_u32(s, &st->batch, _("the batch size")) &&
	    state_u64(s, &st->total_steps, _("the total steps")) &&
	    state_u64(s, &st->epochs, _("the epochs")) &&
	    state_f32(s, &st->lr, _("the learning rate")) &&
	    state_u64(s, &st->warmup, _("the warmup")) && state_u64(s, &st->seed, _("the seed")) &&
	    state_u64(s, &st->min_count, _("the minimum count")) &&
	    state_u32(s, &st->max_vocab, _("the maximum vocabulary")) &&
	    state_u64(s, &st->eval_every, _("the evaluation interval")) &&
	    state_u64(s, &st->checkpoint_every, _("the checkpoint interval"));
	size_t at = s->r.off;
	if (!ok || !state_u32(s, &st->threads, _("the thread count")))
		return false;
	if (st->threads == 0)
		return state_damaged(s, at, _("the thread count is 0"));
	if (!state_u64(s, &st->patience, _("the patience")))
		return false;
	st->sharpen = 0.0f;
	at = s->r.off;
	if (version >= 3 && !state_f32(s, &st->sharpen, _("the --sharpen weight")))
		return false;
	if (!(st->sharpen >= 0.0f && st->sharpen <= 100.0f))
		return state_damaged(s, at, _("the --sharpen weight is not between 0 and 100"));
	at = s->r.off;
	if (!state_u32(s, &st->val_path_len, _("the --val-file path length")))
		return false;
	if (st->val_path_len > AV_MAX_STRING)
		return state_damaged(s, at, _("the --val-file path is %u bytes long, more than %d"),
				     st->val_path_len, AV_MAX_STRING);
	if (!state_array(s, &st->val_path, st->val_path_len, 1, _("the --val-file path's bytes")))
		return false;
	const uint8_t *nul = st->val_path_len ? memchr(st->val_path, 0, st->val_path_len) : NULL;
	if (nul)
		return state_damaged(s, at + 4 + (size_t)(nul - st->val_path),
				     _("the --val-file path holds a NUL byte"));
	return true;
}

/* The options' model must be the header's. */
static bool state_matches(const state_reader *s, const training_state *st, const model_config *c)
{
	const struct {
		const char *name;
		uint32_t state, header;
		size_t at;
	} f[] = {{"objective", st->objective, c->objective, 8},
		 {"dim", st->dim, c->dim, 12},
		 {"heads", st->heads, c->heads, 16},
		 {"layers", st->layers, c->layers, 20},
		 {"context", st->context, c->context, 24}};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].state != f[i].header)
			return av_fail(
			    s->err,
			    _("%s: the training state does not match the model in the same "
			      "file (its %s is %u at byte %zu, the header's %u): the "
			      "checkpoint is damaged; start the training again"),
			    AV_Q(s->what), f[i].name, f[i].state, s->base + f[i].at, f[i].header);
	return true;
}

bool training_state_parse(const uint8_t *buf, size_t off, size_t len, const model_config *cfg,
			  const char *what, training_state *st, av_error *err)
{
	state_reader s = {{buf + off, len, 0}, off, what, err};
	memset(st, 0, sizeof *st);
	if (!state_options(&s, st) || !state_matches(&s, st, cfg))
		return false;
	const size_t P = model_num_params(cfg);
	bool ok = state_u64(&s, &st->ntrain, _("the training characters")) &&
		  state_u64(&s, &st->nval, _("the validation characters")) &&
		  state_u64(&s, &st->hash, _("the corpus hash"));
	size_t steps_at = s.r.off;
	ok = ok && state_u64(&s, &st->steps_done, _("the steps done")) &&
	     state_u64(&s, &st->tokens, _("the tokens seen"));
	for (int i = 0; i < 4 && ok; i++)
		ok = state_u64(&s, &st->rng[i], _("the random generator state"));
	size_t adam_at = s.r.off;
	ok = ok && state_u64(&s, &st->adam_step, _("the AdamW step count")) &&
	     state_array(&s, &st->m, P, 4, _("the AdamW first moments")) &&
	     state_array(&s, &st->v, P, 4, _("the AdamW second moments"));
	size_t at = s.r.off;
	if (!ok || !state_u32(&s, &st->nrecent, _("the count of recent losses")))
		return false;
	if (st->nrecent > AV_STATE_MAX_RECENT)
		return state_damaged(&s, at, _("it keeps %u recent losses, more than %d"),
				     st->nrecent, AV_STATE_MAX_RECENT);
	if (!state_array(&s, &st->recent, st->nrecent, 4, _("the recent losses")) ||
	    !state_u32(&s, &st->nevals, _("the count of evaluations")) ||
	    !state_array(&s, &st->evals, st->nevals, AV_STATE_EVAL_BYTES, _("the evaluations")))
		return false;
	at = s.r.off;
	if (!state_u32(&s, &st->nbest, _("the count of best parameters")))
		return false;
	uint64_t want = st->patience && st->nevals ? P : 0;
	if (st->nbest != want)
		return state_damaged(&s, at,
				     _("it keeps %u best parameters where the run's patience and "
				       "evaluations call for %llu"),
				     st->nbest, (unsigned long long)want);
	if (!state_array(&s, &st->best, st->nbest, 4, _("the best parameters")))
		return false;
	if (s.r.off != s.r.n)
		return state_damaged(&s, s.r.off, _("%zu bytes follow its last field"),
				     s.r.n - s.r.off);
	if (st->steps_done > st->total_steps)
		return state_damaged(
		    &s, steps_at, _("%llu steps done, more than the %llu of the run"),
		    (unsigned long long)st->steps_done, (unsigned long long)st->total_steps);
	if (st->adam_step != st->steps_done)
		return state_damaged(
		    &s, adam_at, _("the AdamW step count %llu is not the %llu steps done"),
		    (unsigned long long)st->adam_step, (unsigned long long)st->steps_done);
	return true;
}
