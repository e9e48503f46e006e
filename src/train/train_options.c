/* Training options: the defaults and their checks, the total and warmup
 * steps, the data against the options, fitting the options to a small
 * corpus, the output file and the creation time (train_options.h; the loop
 * is in train.c). */
#include "attnview/train_options.h"
#include "attnview/i18n.h"

#include "attnview/modelfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void train_options_default(train_options *o)
{
	memset(o, 0, sizeof *o);
	o->objective = OBJ_MASKED;
	o->dim = 64;
	o->heads = 4;
	o->layers = 2;
	o->context = 128;
	o->batch = 32;
	o->steps = 2000;
	o->lr = 5e-3f;
	o->warmup = TRAIN_WARMUP_AUTO;
	o->seed = 1;
	o->min_count = 1;
	o->max_vocab = 0;
	o->eval_every = 100;
	o->val_percent = TRAIN_VAL_PERCENT;
	o->patience = 0;
	o->checkpoint_every = 500;
	o->timeline_every = TRAIN_TIMELINE_AUTO;
	o->sharpen = 0.0f;
}

bool train_options_check(const train_options *o, av_error *err)
{
	if (o->objective != OBJ_MASKED && o->objective != OBJ_CAUSAL)
		return av_fail(err, _("--objective must be masked or causal"));
	if (o->heads < 1 || o->heads > AV_MAX_HEADS)
		return av_fail(err, _("--heads %u is out of range: use 1 to %d"), o->heads,
			       AV_MAX_HEADS);
	if (o->dim < 2 || o->dim > AV_MAX_DIM)
		return av_fail(err, _("--dim %u is out of range: use 2 to %d"), o->dim, AV_MAX_DIM);
	if (o->dim % o->heads)
		return av_fail(err,
			       _("--dim %u is not divisible by --heads %u: each head gets "
				 "dim/heads channels; use e.g. --dim %u"),
			       o->dim, o->heads, (o->dim + o->heads - 1) / o->heads * o->heads);
	if (o->dim % 2)
		return av_fail(err,
			       _("--dim %u is odd: the sinusoidal positions pair channels; use "
				 "an even --dim"),
			       o->dim);
	if (o->layers < 1 || o->layers > AV_MAX_LAYERS)
		return av_fail(err, _("--layers %u is out of range: use 1 to %d"), o->layers,
			       AV_MAX_LAYERS);
	if (o->context < 2 || o->context > AV_MAX_CONTEXT)
		return av_fail(err, _("--context %u is out of range: use 2 to %d"), o->context,
			       AV_MAX_CONTEXT);
	if (o->batch < 1 || o->batch > 4096)
		return av_fail(err, _("--batch %u is out of range: use 1 to 4096"), o->batch);
	if (o->steps && o->epochs)
		return av_fail(err, _("--steps and --epochs cannot both be given: choose one"));
	if (!o->steps && !o->epochs)
		return av_fail(err, _("--steps (or --epochs) must be at least 1"));
	if (o->steps > 100000000 || o->epochs > 100000)
		return av_fail(err, _("--steps or --epochs is too large"));
	if (!(o->lr > 0.0f) || !(o->lr < 10.0f))
		return av_fail(err, _("--lr must be a number above 0 and below 10 (e.g. 1e-3)"));
	if (!(o->sharpen >= 0.0f) || !(o->sharpen <= 100.0f))
		return av_fail(err, _("--sharpen must be a number from 0 to 100 (e.g. 2)"));
	if (o->steps && o->warmup != TRAIN_WARMUP_AUTO && o->warmup >= o->steps)
		return av_fail(err,
			       _("--warmup %" PRIu64 " is not below --steps %" PRIu64
				 ": use fewer warmup steps (about 3%% of the steps)"),
			       o->warmup, o->steps);
	if (o->min_count < 1)
		return av_fail(err, _("--min-count must be at least 1"));
	if (o->val_percent > 50)
		return av_fail(err,
			       _("--val-share %u is out of range: hold out 0 to 50%% of the corpus "
				 "(default 5)"),
			       o->val_percent);
	if (o->patience && !o->eval_every)
		return av_fail(err,
			       _("--patience counts evaluations, and --eval-every 0 makes none "
				 "before the end: give --eval-every N"));
	if (o->threads > 256)
		return av_fail(err, _("--threads %u is out of range: use 1 to 256"), o->threads);
	if (o->max_vocab && o->max_vocab < TOK_NSPECIAL + 1)
		return av_fail(err,
			       _("--max-vocab %u leaves no room for characters: the 3 special "
				 "tokens count; use at least 4 (or 0 for no limit)"),
			       o->max_vocab);
	if (o->max_vocab > AV_MAX_VOCAB)
		return av_fail(err, _("--max-vocab %u is above the limit of %d"), o->max_vocab,
			       AV_MAX_VOCAB);
	/* The biggest buffer: attention weights and scores, L*B*h*T*T floats each,
	 * kept for the backward pass. */
	double att = 2.0 * o->layers * o->batch * o->heads * (double)o->context * o->context * 4;
	if (att > 8e9)
		return av_fail(err,
			       _("--batch %u with --context %u, --heads %u and --layers %u needs "
				 "%.1f GB for attention weights alone: use a smaller --batch or "
				 "--context"),
			       o->batch, o->context, o->heads, o->layers, att / 1e9);
	model_config cfg = {.objective = o->objective,
			    .vocab_size = AV_MAX_VOCAB,
			    .dim = o->dim,
			    .heads = o->heads,
			    .layers = o->layers,
			    .context = o->context};
	cfg.vocab_size = o->max_vocab ? o->max_vocab : 1000;
	return model_config_check(&cfg, err);
}

uint64_t train_total_steps(const train_options *o, const corpus *c)
{
	if (o->steps)
		return o->steps;
	uint64_t per = (uint64_t)o->batch * o->context;
	uint64_t s = (o->epochs * c->ntrain + per - 1) / per;
	return s ? s : 1;
}

uint64_t train_auto_warmup(uint64_t total)
{
	return total / 10 < 100 ? total / 10 : 100;
}

bool train_check_data(const train_options *o, const corpus *c, const char *path, av_error *err)
{
	uint64_t w = (uint64_t)train_window(o);
	/* Not one window: no --batch helps, and the smallest context is 2; a
	 * held-out share may be what took the text. */
	if (c->ntrain < w && o->context <= 2)
		return av_fail(
		    err,
		    ngettext("%s: the training split has %" PRIu64 " character, fewer "
			     "than the smallest window (%" PRIu64 " characters): %s",
			     "%s: the training split has %" PRIu64 " characters, fewer "
			     "than the smallest window (%" PRIu64 " characters): %s",
			     (unsigned long)c->ntrain),
		    AV_Q(path), c->ntrain, w,
		    c->nval && !c->val_file
			? _("give a longer text, or hold out less of it (--val-share, --no-val)")
			: _("there is nothing to train on; give a longer text"));
	if (c->ntrain < w)
		return av_fail(err,
			       _("%s: the training split has %" PRIu64 " characters, fewer than "
				 "one window of %" PRIu64 ": give a smaller --context or a longer "
				 "text"),
			       AV_Q(path), c->ntrain, w);
	if (c->ntrain < w * o->batch)
		return av_fail(err,
			       _("%s: the training split has %" PRIu64 " characters, fewer than "
				 "one batch (--batch %u x %" PRIu64 " characters per window): use "
				 "a larger corpus or a smaller --batch or --context"),
			       AV_Q(path), c->ntrain, o->batch, w);
	if ((c->nval || c->val_file) && c->nval < w)
		return av_fail(err,
			       _("%s: the validation split (%s) has %" PRIu64 " characters, "
				 "fewer than one window of %" PRIu64 ": use a larger corpus, a "
				 "smaller --context, a larger --val-share, --val-file FILE, or "
				 "--no-val"),
			       AV_Q(path),
			       c->val_file ? _("the --val-file") : _("the end of the corpus"),
			       c->nval, w);
	if (!c->nval && o->patience)
		return av_fail(err,
			       _("--patience stops at the best validation loss, and there is no "
				 "validation text (--no-val, or a text too short to hold one out): "
				 "drop --patience, or give --val-file FILE"));
	uint64_t total = train_total_steps(o, c);
	if (o->epochs && o->warmup != TRAIN_WARMUP_AUTO && o->warmup >= total)
		return av_fail(err,
			       _("--epochs %" PRIu64 " makes %" PRIu64 " steps, not more than "
				 "--warmup %" PRIu64 ": use more epochs or fewer warmup steps"),
			       o->epochs, total, o->warmup);
	return true;
}

/* n / 8 characters of context, a multiple of 8 from 16 up, at least 2, at
 * most cap. */
static uint32_t fit_context(uint64_t n, uint32_t cap)
{
	uint64_t t = n / 8;
	if (t >= 16)
		t -= t % 8;
	if (t < 2)
		t = 2;
	return t < cap ? (uint32_t)t : cap;
}

static void fit_note(train_fit *f, const char *fmt, ...) AV_PRINTF(2, 3);
static void fit_note(train_fit *f, const char *fmt, ...)
{
	if (f->nnotes >= TRAIN_FIT_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->notes[f->nnotes++], sizeof f->notes[0], fmt, ap);
	va_end(ap);
}

void train_fit_corpus(train_options *o, const train_given *given, uint64_t n,
		      uint64_t val_file_chars, train_fit *fit)
{
	memset(fit, 0, sizeof *fit);
	const uint64_t causal = o->objective == OBJ_CAUSAL;
	const uint32_t T0 = o->context, B0 = o->batch;
	const float lr0 = o->lr;
	const bool val_file = val_file_chars > 0;
	enum { VAL_AS_ASKED, VAL_ONE_WINDOW, VAL_NONE } val = VAL_AS_ASKED;

	/* Context: a batch and a validation window out of n/8 characters, and
	 * within the validation file. */
	if (!given->context) {
		o->context = fit_context(n, o->context);
		if (val_file && val_file_chars < o->context + causal)
			o->context = val_file_chars >= 2 + causal
					 ? fit_context(8 * (val_file_chars - causal), o->context)
					 : 2;
	}
	/* Validation: the share; if a window does not fit in it, a share that
	 * was asked for shrinks the context, the default one grows to a window
	 * where a quarter of the text allows it, else there is none. */
	uint64_t nval = val_file ? 0 : corpus_val_chars(n, o->val_percent);
	if (!val_file && o->val_percent && nval < o->context + causal) {
		if (given->val_percent) {
			if (!given->context && nval >= 2 + causal)
				o->context = fit_context(8 * (nval - causal), o->context);
		} else if (o->context + causal <= n / 4) {
			nval = o->context + causal;
			val = VAL_ONE_WINDOW;
		} else {
			nval = 0;
			val = VAL_NONE;
		}
	}
	const uint64_t w = o->context + causal, ntrain = n - nval;
	if (ntrain < w) { /* nothing fits: train_check_data says so, no more */
		fit->nval = nval;
		fit->shrunk = val != VAL_AS_ASKED;
		return;
	}
	/* Batch: the windows the training split holds. */
	if (!given->batch && ntrain < w * o->batch)
		o->batch = ntrain / w >= 1 ? (uint32_t)(ntrain / w) : 1;
	/* Learning rate: fewer characters a step make noisier gradients; the
	 * rate follows the square root of the step's size (the rule for Adam). */
	const double step0 = (double)T0 * B0, step1 = (double)o->context * o->batch;
	if (!given->lr && step1 < step0)
		o->lr = (float)((double)lr0 * sqrt(step1 / step0));

	if (o->context != T0)
		fit_note(fit,
			 _("the text is short (%" PRIu64
			   " characters): --context %u instead of %u; "
			   "give --context to choose"),
			 n, o->context, T0);
	if (o->batch != B0)
		fit_note(fit,
			 _("--batch %u instead of %u: %u windows of %" PRIu64
			   " characters fill the "
			   "%" PRIu64 " training characters; give --batch to choose"),
			 o->batch, B0, o->batch, w, ntrain);
	if (o->lr != lr0)
		fit_note(
		    fit,
		    _("--lr %.3g instead of %.3g: a step of %u x %u characters is %.3g times "
		      "smaller than %u x %u, and the rate goes with the square root (%.3g times "
		      "smaller); give --lr to choose"),
		    (double)o->lr, (double)lr0, o->batch, o->context, step0 / step1, B0, T0,
		    sqrt(step0 / step1));
	if (val == VAL_ONE_WINDOW && corpus_val_pieces(nval) > 1)
		fit_note(fit,
			 _("validation: %" PRIu64 " characters in %" PRIu64
			   " pieces spread evenly over the text (%.1f%% instead of %u%%), one "
			   "window of the context; --val-share P holds out P%%, --val-file FILE "
			   "validates on another text, --no-val on none"),
			 nval, corpus_val_pieces(nval), 100.0 * (double)nval / (double)n,
			 o->val_percent);
	else if (val == VAL_ONE_WINDOW)
		fit_note(fit,
			 _("validation: the last %" PRIu64
			   " characters (%.1f%% instead of %u%%), one "
			   "window of the context; --val-share P holds out P%%, --val-file FILE "
			   "validates on another text, --no-val on none"),
			 nval, 100.0 * (double)nval / (double)n, o->val_percent);
	if (val == VAL_NONE)
		fit_note(
		    fit,
		    _("validation: none: the text is too short to hold out a window of %" PRIu64
		      " characters and keep enough to train on, so there will be no verdict; "
		      "give --val-file FILE, or a longer text"),
		    w);
	fit->nval = nval;
	fit->shrunk = val != VAL_AS_ASKED;
}

bool train_check_output(const char *path, av_error *err)
{
	if (!may_replace_file(path, err))
		return false;
	char *copy = strdup(path);
	if (!copy)
		return av_fail(err, _("out of memory"));
	char *slash = strrchr(copy, '/');
	const char *dir = ".";
	if (slash) {
		*slash = '\0';
		dir = slash == copy ? "/" : copy;
	}
	/* Missing, not a directory, or not writable: say which. */
	struct stat st;
	bool ok = false;
	if (stat(dir, &st) != 0) {
		if (errno == ENOENT)
			av_fail(err,
				_("cannot write %s: directory %s does not exist; create it or "
				  "choose another output file"),
				AV_Q(path), AV_Q(dir));
		else
			av_fail_errno(err, errno, _("cannot write %s: cannot reach directory %s"),
				      AV_Q(path), AV_Q(dir));
	} else if (!S_ISDIR(st.st_mode)) {
		av_fail(err, _("cannot write %s: %s is not a directory"), AV_Q(path), AV_Q(dir));
	} else if (access(dir, W_OK) != 0) {
		av_fail_errno(err, errno, _("cannot write %s: directory %s is not writable"),
			      AV_Q(path), AV_Q(dir));
	} else {
		ok = true;
	}
	free(copy);
	return ok;
}

bool train_creation_time(int64_t *created, av_error *err)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	if (!s || !*s) {
		*created = (int64_t)time(NULL);
		return true;
	}
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno)
		return av_fail(
		    err,
		    _("SOURCE_DATE_EPOCH is \"%.40s\", not a number of seconds since "
		      "1970-01-01 UTC (digits only, as date +%%s prints it): set it to one "
		      "or unset it"),
		    AV_Q(s));
	*created = (int64_t)v;
	return true;
}
