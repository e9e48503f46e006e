/* The training loop: batches, evaluation, the run and stopping on a signal
 * (train.h has the definitions; the options are checked in train_options.c,
 * checkpoints are in checkpoint.c). */
#include "attnview/train.h"
#include "attnview/i18n.h"

#include "attnview/checkpoint.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"
#include "attnview/timeline.h"
#include "attnview/verdict.h"
#include "train_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- stop requests ---------------------------------------------------- */

static volatile sig_atomic_t stop_signo;

void train_request_stop(int signo)
{
	stop_signo = signo ? signo : SIGINT;
}

int train_stop_requested(void)
{
	return stop_signo;
}

void train_clear_stop(void)
{
	stop_signo = 0;
}

static struct sigaction old_int, old_term;
static bool signals_installed;

static void on_signal(int signo)
{
	train_request_stop(signo);
}

bool train_install_signals(av_error *err)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* One-shot: a second Ctrl-C ends the program at once. */
	sa.sa_flags = SA_RESETHAND;
	if (sigaction(SIGINT, &sa, &old_int) != 0 || sigaction(SIGTERM, &sa, &old_term) != 0)
		return av_fail_errno(err, errno, _("cannot install signal handlers"));
	signals_installed = true;
	return true;
}

void train_restore_signals(void)
{
	if (!signals_installed)
		return;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	signals_installed = false;
}

/* ---- the trainer ------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int32_t most_frequent_id(const corpus *c)
{
	int32_t best = TOK_UNK;
	for (uint32_t i = 0; i < c->vocab.size; i++)
		if (c->id_count[i] > c->id_count[best])
			best = (int32_t)i;
	return best;
}

/* The run's options: the checkpoint's or o, resolved against the corpus
 * (total steps, warmup, thread count) and what follows from them. */
static bool resolve_options(trainer *t, const train_options *o, const train_checkpoint *resume,
			    av_error *err)
{
	t->opt = resume ? resume->opt : *o;
	if (!train_options_check(&t->opt, err) ||
	    !train_check_data(&t->opt, t->data, _("the corpus"), err))
		return false;
	t->total = train_total_steps(&t->opt, t->data);
	t->opt.steps = t->total;
	t->opt.epochs = resume ? resume->epochs : o->epochs;
	if (t->opt.warmup == TRAIN_WARMUP_AUTO)
		t->opt.warmup = train_auto_warmup(t->total);
	if (t->opt.timeline_every == TRAIN_TIMELINE_AUTO)
		t->opt.timeline_every =
		    timeline_auto_every_cost(t->total, t->opt.batch, t->opt.context);
	uint32_t nt = (uint32_t)parallel_threads();
	if (t->opt.threads && t->opt.threads != nt) {
		if (resume)
			return av_fail(
			    err,
			    _("%s was trained on %u threads and this run would use %u: the "
			      "result would differ from an uninterrupted run; resume with "
			      "--threads %u"),
			    AV_Q(resume->path), t->opt.threads, nt, t->opt.threads);
		return av_fail(err,
			       _("%u threads were asked for but the training step would run on %u; "
				 "use --threads %u"),
			       t->opt.threads, nt, nt);
	}
	t->opt.threads = nt;
	t->window = train_window(&t->opt);
	t->nmask = t->opt.objective == OBJ_MASKED
		       ? (int)(((uint64_t)t->opt.context * 15 + 50) / 100)
		       : (int)t->opt.context;
	if (t->nmask < 1)
		t->nmask = 1;
	t->most_frequent = most_frequent_id(t->data);
	return true;
}

static bool keep_paths(trainer *t, const char *out_path, const char *ckpt_path,
		       const char *val_path, av_error *err)
{
	t->out_path = dup_or_null(out_path);
	t->ckpt_path = dup_or_null(ckpt_path);
	t->val_path = dup_or_null(val_path);
	if ((out_path && !t->out_path) || (ckpt_path && !t->ckpt_path) ||
	    (val_path && !t->val_path))
		return av_fail(err, _("out of memory"));
	return true;
}

/* The checkpoint's model, taken over, if it was trained on this vocabulary. */
static bool adopt_model(trainer *t, train_checkpoint *resume, av_error *err)
{
	const vocab *v = &resume->model->vocab, *cv = &t->data->vocab;
	if (v->size != cv->size || memcmp(v->cps, cv->cps, v->size * sizeof *v->cps) != 0)
		return av_fail(err,
			       _("the corpus differs from the one %s was trained on: its "
				 "vocabulary is not the same; resume with the same corpus%s"),
			       AV_Q(resume->path), resume->val_path ? _(" and --val-file") : "");
	t->model = resume->model;
	resume->model = NULL;
	return true;
}

/* A new model, initialised from the seed or taken over from init (whose
 * steps the metadata counts on from), and the batches' generator. */
static bool new_model(trainer *t, model *init, const char *name, const char *corpus_desc,
		      av_error *err)
{
	const corpus *c = t->data;
	model_config cfg = {.objective = t->opt.objective,
			    .vocab_size = c->vocab.size,
			    .dim = t->opt.dim,
			    .heads = t->opt.heads,
			    .layers = t->opt.layers,
			    .context = t->opt.context};
	if (init) {
		const model_config *ic = &init->cfg;
		const vocab *v = &init->vocab;
		t->model = init;
		if (ic->objective != cfg.objective || ic->dim != cfg.dim ||
		    ic->heads != cfg.heads || ic->layers != cfg.layers ||
		    ic->context != cfg.context || v->size != c->vocab.size ||
		    memcmp(v->cps, c->vocab.cps, v->size * sizeof *v->cps) != 0)
			return av_fail(err, _("the model to start from does not fit the run: its "
					      "sizes and vocabulary must be the run's"));
		t->base_steps = init->meta.steps;
		t->base_tokens = init->meta.tokens;
	} else {
		t->model = model_create(&cfg, c->vocab.cps, err);
		if (!t->model)
			return false;
		model_init_random(t->model, t->opt.seed);
	}
	if (!model_set_meta_strings(t->model, name ? name : "", corpus_desc ? corpus_desc : "",
				    err))
		return false;
	t->model->meta.seed = t->opt.seed;
	rng_seed(&t->data_rng, t->opt.seed ^ TRAIN_DATA_SALT);
	return true;
}

/* The creation time of a new run (a resumed one keeps its checkpoint's:
 * train.h, "Determinism"), and no evaluation yet. */
static bool stamp_meta(trainer *t, bool resumed, av_error *err)
{
	model *m = t->model;
	if (!resumed && !train_creation_time(&m->meta.created, err))
		return false;
	m->meta.val_loss = m->meta.val_acc = NAN;
	m->meta.base_loss = m->meta.base_acc = NAN;
	return true;
}

/* AdamW's moments, the activations and their gradients, the batch. */
static bool alloc_buffers(trainer *t, av_error *err)
{
	const model *m = t->model;
	int B = (int)t->opt.batch, T = (int)t->opt.context;
	if (!adamw_init(&t->adam, m, t->opt.lr, t->opt.warmup, t->total, err) ||
	    !activations_init(&t->acts, &m->cfg, B, T, B * t->nmask, err) ||
	    !grad_acts_init(&t->gacts, &m->cfg, B, T, err))
		return false;
	t->gacts.sharpen = t->opt.sharpen;
	t->grads = av_alloc_large(m->nparams * sizeof *t->grads, false);
	t->tokens = malloc((size_t)B * T * sizeof *t->tokens);
	t->targets = malloc((size_t)B * T * sizeof *t->targets);
	t->perm = malloc((size_t)T * sizeof *t->perm);
	if (t->opt.patience && !(t->best_params = malloc(m->nparams * sizeof *t->best_params)))
		return av_fail(err, _("out of memory for the copy of the best parameters"));
	if (!t->grads || !t->tokens || !t->targets || !t->perm)
		return av_fail(err, _("out of memory for the training buffers"));
	return train_eval_buffers_init(t, err);
}

static void restore_eval_state(trainer *t);

trainer *trainer_create(const train_options *o, const corpus *c, train_checkpoint *resume,
			model *init, const char *name, const char *corpus_desc,
			const char *val_path, const char *out_path, const char *ckpt_path,
			av_error *err)
{
	trainer *t = calloc(1, sizeof *t);
	if (!t) {
		model_destroy(init);
		av_fail(err, _("out of memory"));
		return NULL;
	}
	if (resume) {
		model_destroy(init);
		init = NULL;
	}
	t->data = c;
	if (!resolve_options(t, o, resume, err) ||
	    !keep_paths(t, out_path, ckpt_path, resume ? resume->val_path : val_path, err)) {
		model_destroy(init);
		goto fail;
	}
	if (!(resume ? adopt_model(t, resume, err) : new_model(t, init, name, corpus_desc, err)) ||
	    !stamp_meta(t, resume != NULL, err))
		goto fail;
	if (!alloc_buffers(t, err) || (resume && !train_checkpoint_restore(t, resume, err)) ||
	    (!resume && !train_timeline_start(t, err)))
		goto fail;
	restore_eval_state(t);
	return t;
fail:
	trainer_destroy(t);
	return NULL;
}

void trainer_destroy(trainer *t)
{
	if (!t)
		return;
	model_destroy(t->model);
	if (t->adam.m)
		adamw_finish(&t->adam);
	if (t->acts.mem)
		activations_finish(&t->acts);
	if (t->gacts.mem)
		grad_acts_finish(&t->gacts);
	for (int i = 0; i < t->eval_nacts; i++)
		activations_finish(&t->eval_acts[i]);
	free(t->eval_acts);
	free(t->eval_sums);
	free(t->grads);
	free(t->tokens);
	free(t->targets);
	free(t->perm);
	free(t->evals);
	free(t->best_params);
	free(t->out_path);
	free(t->ckpt_path);
	free(t->val_path);
	free(t);
}

/* Choose t->nmask distinct positions of a row of T (partial Fisher-Yates)
 * and set their targets; with `corrupt` apply the 80/10/10 replacement,
 * otherwise put the mask token everywhere (evaluation). */
static void mask_row(trainer *t, rng *r, int32_t *tok, int32_t *tgt, bool corrupt)
{
	int T = (int)t->opt.context;
	uint32_t V = t->model->cfg.vocab_size;
	for (int i = 0; i < T; i++) {
		t->perm[i] = i;
		tgt[i] = -1;
	}
	for (int k = 0; k < t->nmask; k++) {
		int j = k + (int)rng_below(r, (uint64_t)(T - k));
		int32_t p = t->perm[j];
		t->perm[j] = t->perm[k];
		t->perm[k] = p;
		tgt[p] = tok[p];
		if (!corrupt) {
			tok[p] = TOK_MASK;
			continue;
		}
		float u = rng_uniform(r);
		if (u < 0.8f)
			tok[p] = TOK_MASK;
		else if (u < 0.9f)
			tok[p] = TOK_NSPECIAL + (int32_t)rng_below(r, V - TOK_NSPECIAL);
	}
}

/* Row b of the batch from the window starting at corpus index `start`. */
static void fill_row(trainer *t, int b, uint64_t start, rng *r, bool corrupt)
{
	int T = (int)t->opt.context;
	int32_t *tok = t->tokens + (size_t)b * T, *tgt = t->targets + (size_t)b * T;
	for (int i = 0; i < T; i++)
		tok[i] = corpus_id(t->data, start + (uint64_t)i);
	if (t->opt.objective == OBJ_CAUSAL) {
		for (int i = 0; i < T; i++)
			tgt[i] = corpus_id(t->data, start + (uint64_t)i + 1);
	} else {
		mask_row(t, r, tok, tgt, corrupt);
	}
}

/* The rows K of an evaluation (train.h, "Evaluation"); 0 without
 * validation text. */
static uint64_t eval_rows(const trainer *t, bool final)
{
	uint64_t W = (uint64_t)t->window, T = t->opt.context;
	uint64_t maxk = (uint64_t)t->opt.batch * (final ? TRAIN_FINAL_BATCHES : TRAIN_EVAL_BATCHES);
	uint64_t K = t->data->nval / W;
	if (t->opt.objective == OBJ_MASKED)
		K *= (T + (uint64_t)t->nmask - 1) / (uint64_t)t->nmask;
	return K < maxk ? K : maxk;
}

void trainer_evaluate(trainer *t, bool final, train_result *res)
{
	const corpus *c = t->data;
	int B = (int)t->opt.batch, T = (int)t->opt.context;
	uint64_t W = (uint64_t)t->window;
	/* Kw windows; a short validation text is masked again in its windows
	 * (train.h), up to K rows. */
	uint64_t K = eval_rows(t, final), Kw = c->nval / W;
	if (K == 0) { /* no validation text */
		*res = (train_result){NAN, NAN, NAN, NAN, 0};
		return;
	}
	if (Kw > K)
		Kw = K;
	rng r;
	rng_seed(&r, t->opt.seed ^ TRAIN_EVAL_SALT);
	double loss = 0, base = 0;
	uint64_t count = 0, correct = 0, base_correct = 0;
	double denom = (double)c->ntrain + (double)c->vocab.size;
	for (uint64_t k0 = 0; k0 < K; k0 += (uint64_t)B) {
		int nb = (int)(K - k0 < (uint64_t)B ? K - k0 : (uint64_t)B);
		for (int b = 0; b < nb; b++) {
			uint64_t k = (k0 + (uint64_t)b) % Kw;
			uint64_t off = Kw > 1 ? k * (c->nval - W) / (Kw - 1) : 0;
			fill_row(t, b, c->ntrain + off, &r, false);
		}
		train_eval_batch(t, nb, &loss, &count, &correct);
		for (int i = 0; i < nb * T; i++) {
			int32_t y = t->targets[i];
			if (y < 0)
				continue;
			base -= log(((double)c->id_count[y] + 1.0) / denom);
			base_correct += y == t->most_frequent;
		}
	}
	res->count = count;
	res->loss = count ? (float)(loss / (double)count) : NAN;
	res->acc = count ? (float)((double)correct / (double)count) : NAN;
	res->base_loss = count ? (float)(base / (double)count) : NAN;
	res->base_acc = count ? (float)((double)base_correct / (double)count) : NAN;
}

static bool push_eval(trainer *t, const train_result *r, float train_loss)
{
	if (t->nevals == t->evals_cap) {
		size_t cap = t->evals_cap ? t->evals_cap * 2 : 64;
		train_eval *p = realloc(t->evals, cap * sizeof *p);
		if (!p)
			return false;
		t->evals = p;
		t->evals_cap = cap;
	}
	t->evals[t->nevals++] =
	    (train_eval){t->step, r->loss, r->acc, r->base_loss, r->base_acc, train_loss};
	return true;
}

/* The earliest evaluation of the lowest validation loss among the first n. */
static size_t best_eval(const trainer *t, size_t n)
{
	size_t b = 0;
	for (size_t i = 1; i < n; i++)
		if (t->evals[i].loss < t->evals[b].loss)
			b = i;
	return b;
}

/* Does evaluation i show over-fitting (train.h)? */
static bool overfit_at(const trainer *t, size_t i)
{
	size_t b = best_eval(t, i + 1);
	const train_eval *e = &t->evals[i], *best = &t->evals[b];
	uint64_t n = eval_rows(t, false) * (uint64_t)t->nmask;
	double rise = n ? 1.0 / sqrt((double)n) : 1.0;
	if (rise < TRAIN_OVERFIT_RISE)
		rise = TRAIN_OVERFIT_RISE;
	return i - b >= TRAIN_OVERFIT_EVALS &&
	       verdict_of(best->loss, best->base_loss) == VERDICT_BETTER &&
	       (double)e->loss > (1.0 + rise) * (double)best->loss &&
	       e->train_loss < best->train_loss;
}

/* After a resume: whether the evaluations so far have warned already. */
static void restore_eval_state(trainer *t)
{
	t->overfit_warned = false;
	for (size_t i = 0; i < t->nevals && !t->overfit_warned; i++)
		t->overfit_warned = overfit_at(t, i);
}

/* Mean training loss of the steps since the last evaluation (those still in
 * the ring of recent losses). */
static float train_loss_since_eval(const trainer *t)
{
	uint64_t prev = t->nevals ? t->evals[t->nevals - 1].step : 0;
	uint64_t m = t->step - prev;
	uint64_t have = t->nrecent < TRAIN_RECENT ? t->nrecent : TRAIN_RECENT;
	if (m > have)
		m = have;
	if (m == 0)
		return NAN;
	double sum = 0.0;
	for (uint64_t k = t->nrecent - m; k < t->nrecent; k++)
		sum += t->recent[k % TRAIN_RECENT];
	return (float)(sum / (double)m);
}

static void fill_progress(const trainer *t, train_progress *p)
{
	int nr = t->nrecent < TRAIN_RECENT ? (int)t->nrecent : TRAIN_RECENT;
	p->step = t->step;
	p->total = t->total;
	p->tokens = t->tokens_seen;
	p->nrecent = nr;
	for (int i = 0; i < nr; i++)
		p->recent[i] = t->recent[(t->nrecent - (uint64_t)nr + (uint64_t)i) % TRAIN_RECENT];
	const train_eval *e = t->nevals ? &t->evals[t->nevals - 1] : NULL;
	p->val_loss = e ? e->loss : NAN;
	p->val_acc = e ? e->acc : NAN;
	p->base_loss = e ? e->base_loss : NAN;
	p->base_acc = e ? e->base_acc : NAN;
	p->train_loss = e ? e->train_loss : NAN;
	p->val_count = t->eval_count;
	if (t->nevals) {
		size_t b = best_eval(t, t->nevals);
		p->best = t->evals[b];
		p->since_best = (int)(t->nevals - 1 - b);
	} else {
		p->best = (train_eval){0, NAN, NAN, NAN, NAN, NAN};
		p->since_best = 0;
	}
}

/* The step of the model written: with patience the best evaluation's. */
static uint64_t final_step(const trainer *t)
{
	if (!t->opt.patience || !t->has_best)
		return t->step;
	return t->evals[best_eval(t, t->nevals)].step;
}

static bool write_final(trainer *t, av_error *err)
{
	model *m = t->model;
	uint64_t step = final_step(t);
	trainer_evaluate(t, true, &t->final);
	m->meta.steps = t->base_steps + step;
	m->meta.tokens = t->base_tokens + step * t->opt.batch * t->opt.context;
	m->meta.seed = t->opt.seed;
	m->meta.val_loss = t->final.loss;
	m->meta.val_acc = t->final.acc;
	m->meta.base_loss = t->final.base_loss;
	m->meta.base_acc = t->final.base_acc;
	return !t->out_path || model_save(m, t->out_path, err);
}

/* The end: the finished run's state, from the last step's parameters, for
 * --resume --steps (a state that cannot be written is said in state_err:
 * the model stands); then the final model, with patience the best one, last,
 * so that a view watching both ends on it. */
static bool finish_run(trainer *t, av_error *err)
{
	if (t->ckpt_path)
		t->state_lost = !trainer_save_checkpoint(t, &t->state_err);
	uint64_t step = final_step(t);
	if (step != t->step)
		memcpy(t->model->params, t->best_params, t->model->nparams * sizeof(float));
	return write_final(t, err);
}

/* One optimizer step on a fresh batch; p gets its loss, rate and norm. */
static bool train_one_step(trainer *t, train_progress *p, av_error *err)
{
	int B = (int)t->opt.batch, T = (int)t->opt.context;
	uint64_t starts = t->data->ntrain - (uint64_t)t->window + 1;
	for (int b = 0; b < B; b++)
		fill_row(t, b, rng_below(&t->data_rng, starts), &t->data_rng, true);
	memset(t->grads, 0, t->model->nparams * sizeof *t->grads);
	step_stats ss;
	if (!model_train_step_grads(t->model, &t->acts, &t->gacts, t->tokens, t->targets, B, T,
				    t->grads, &ss, err))
		return false;
	p->lr = adamw_lr(&t->adam, t->adam.step);
	p->grad_norm = adamw_step(&t->adam, t->model->params, t->grads);
	p->loss = ss.loss;
	t->step++;
	t->tokens_seen += (uint64_t)B * (uint64_t)T;
	t->recent[t->nrecent++ % TRAIN_RECENT] = ss.loss;
	if (!isfinite(ss.loss))
		return av_fail(err,
			       _("the training loss became %g at step %" PRIu64
				 ": the learning rate "
				 "is probably too high; lower --lr and start again"),
			       (double)ss.loss, t->step);
	return true;
}

/* The validation run every --eval-every steps (and after the last one, with
 * patience): the verdict's figures, the best so far (with patience, its
 * parameters copied), over-fitting, patience running out. */
static bool maybe_evaluate(trainer *t, train_progress *p, av_error *err)
{
	p->evaluated = p->overfitting = p->stopping = false;
	if (!t->opt.eval_every || t->data->nval == 0)
		return true;
	if (t->step % t->opt.eval_every != 0 && !(t->opt.patience && t->step == t->total))
		return true;
	train_result r;
	trainer_evaluate(t, false, &r);
	t->eval_count = r.count;
	if (!push_eval(t, &r, train_loss_since_eval(t)))
		return av_fail(err, _("out of memory"));
	p->evaluated = true;
	size_t i = t->nevals - 1, b = best_eval(t, t->nevals);
	if (b == i && t->opt.patience) {
		memcpy(t->best_params, t->model->params, t->model->nparams * sizeof(float));
		t->has_best = true;
	}
	if (!t->overfit_warned && overfit_at(t, i))
		p->overfitting = t->overfit_warned = true;
	if (t->opt.patience && i - b >= t->opt.patience)
		p->stopping = t->stopped_early = true;
	return true;
}

/* After a step's report: stop on request (with a checkpoint), or write the
 * periodic checkpoint. Returns true when the run ends here, with *st set. */
static bool stop_or_checkpoint(trainer *t, train_status *st, av_error *err)
{
	if (train_stop_requested()) {
		/* Without a checkpoint the steps so far are lost: a failure. */
		if (!t->ckpt_path) {
			av_fail(err,
				_("stopped at step %" PRIu64 " with nowhere to write a checkpoint"),
				t->step);
			*st = TRAIN_FAILED;
		} else {
			*st = trainer_save_checkpoint(t, err) ? TRAIN_STOPPED : TRAIN_FAILED;
		}
		return true;
	}
	if (t->opt.checkpoint_every && t->step % t->opt.checkpoint_every == 0 && t->ckpt_path &&
	    !trainer_save_checkpoint(t, err)) {
		*st = TRAIN_FAILED;
		return true;
	}
	return false;
}

train_status trainer_run(trainer *t, train_progress_fn progress, void *ctx, av_error *err)
{
	train_progress *p = calloc(1, sizeof *p);
	if (!p) {
		av_fail(err, _("out of memory"));
		return TRAIN_FAILED;
	}
	train_status st = TRAIN_DONE;
	/* The untrained model first: a view watching the run (attnview --model
	 * OUT, which reads OUT.ckpt until OUT exists) starts from it; with
	 * --keep-steps it is step 0's kept model too (trainer_create recorded
	 * step 0 before the caller set keep_every). */
	if (t->step == 0 &&
	    ((t->opt.checkpoint_every && t->ckpt_path && !trainer_save_checkpoint(t, err)) ||
	     !train_timeline_keep(t, err))) {
		free(p);
		return TRAIN_FAILED;
	}
	while (t->step < t->total) {
		if (!train_one_step(t, p, err) || !maybe_evaluate(t, p, err) ||
		    !train_timeline_step(t, err)) {
			st = TRAIN_FAILED;
			break;
		}
		fill_progress(t, p);
		if (progress)
			progress(p, ctx);
		if (t->step == t->total || t->stopped_early || stop_or_checkpoint(t, &st, err))
			break;
	}
	free(p);
	if (st != TRAIN_DONE)
		return st;
	return finish_run(t, err) ? TRAIN_DONE : TRAIN_FAILED;
}
