/* attnview --train: how a run starts when it does not start from nothing:
 * a checkpoint's options taken over (--resume), a finished run continued
 * with more --steps, a model's weights as the start (--init). */
#include "attnview/checkpoint.h"
#include "attnview/i18n.h"
#include "attnview/modelfile.h"
#include "cli.h"
#include "cli_train.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Which command-line options conflict with a checkpoint's own. */
static bool check_resume_options(const bool *given, const train_options *o, const train_options *ck,
				 uint64_t ck_epochs, char *msg, size_t n)
{
	struct {
		int opt;
		const char *name;
		bool same;
	} t[] = {
	    {OPT_OBJECTIVE, "--objective", o->objective == ck->objective},
	    {OPT_DIM, "--dim", o->dim == ck->dim},
	    {OPT_HEADS, "--heads", o->heads == ck->heads},
	    {OPT_LAYERS, "--layers", o->layers == ck->layers},
	    {OPT_CONTEXT, "--context", o->context == ck->context},
	    {OPT_BATCH, "--batch", o->batch == ck->batch},
	    {OPT_STEPS, "--steps", o->steps == ck->steps},
	    {OPT_EPOCHS, "--epochs", o->epochs == ck_epochs},
	    {OPT_LR, "--lr", o->lr == ck->lr},
	    {OPT_WARMUP, "--warmup", o->warmup == ck->warmup},
	    {OPT_SEED, "--seed", o->seed == ck->seed},
	    {OPT_MIN_COUNT, "--min-count", o->min_count == ck->min_count},
	    {OPT_MAX_VOCAB, "--max-vocab", o->max_vocab == ck->max_vocab},
	    {OPT_EVAL_EVERY, "--eval-every", o->eval_every == ck->eval_every},
	    {OPT_PATIENCE, "--patience", o->patience == ck->patience},
	    {OPT_SHARPEN, "--sharpen", o->sharpen == ck->sharpen},
	    {OPT_CKPT_EVERY, "--checkpoint-every", o->checkpoint_every == ck->checkpoint_every},
	    {OPT_TIMELINE_EVERY, "--timeline-every", o->timeline_every == ck->timeline_every},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		if (given[t[i].opt - OPT_FIRST] && !t[i].same) {
			snprintf(msg, n,
				 _("%s differs from the checkpoint's: --resume continues with "
				   "the options it was started with; drop %s"),
				 t[i].name, t[i].name);
			return false;
		}
	}
	return true;
}

/* The kind of attnview file at path (AV_KIND_MODEL, AV_KIND_CHECKPOINT), or
 * -1: not one, or not there. */
static int file_kind(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	uint8_t h[16];
	bool ours =
	    fread(h, 1, 16, f) == 16 && memcmp(h, AV_MAGIC, 8) == 0 && !h[13] && !h[14] && !h[15];
	fclose(f);
	return ours ? h[12] : -1;
}

/* --resume MODEL: the run's state is in MODEL.ckpt if that run finished
 * there (same sizes, same creation time). Returns -1, or the exit status. */
static int state_of_model(train_request *q)
{
	av_error err;
	model *m = model_load(q->resume, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	snprintf(q->resume_buf, sizeof q->resume_buf, "%s.ckpt", q->resume);
	train_checkpoint ck;
	bool same = file_kind(q->resume_buf) == AV_KIND_CHECKPOINT &&
		    train_checkpoint_load(&ck, q->resume_buf, &err);
	if (same) {
		same = ck.model->meta.created == m->meta.created &&
		       memcmp(&ck.model->cfg, &m->cfg, sizeof m->cfg) == 0 &&
		       ck.state.steps_done == ck.state.total_steps;
		train_checkpoint_finish(&ck);
	}
	model_destroy(m);
	if (!same) {
		cli_note(_("%s is a finished model, and the state of the run that wrote it (%s, "
			   "kept when a run ends) is not there or is another run's: --init %s "
			   "trains on from its weights, with AdamW starting afresh"),
			 AV_Q(q->resume), AV_Q(q->resume_buf), AV_Q(q->resume));
		return EXIT_RUNTIME;
	}
	q->resume = q->resume_buf;
	return -1;
}

/* --steps with --resume: the run's new total, more than the steps done (a
 * finished run goes on; a stopped one may end later or sooner). Without it a
 * finished run has nothing left to do. Returns -1, or the exit status. */
static int take_steps(train_request *q, train_checkpoint *ck)
{
	uint64_t done = ck->state.steps_done;
	bool finished = done == ck->opt.steps;
	q->resumed_total = ck->opt.steps;
	if (!q->given[OPT_STEPS - OPT_FIRST]) {
		if (finished)
			return usage_error(_("%s holds a run that finished at step %" PRIu64
					     ": give --steps N, more than %" PRIu64
					     ", to continue it (e.g. --steps %" PRIu64 ")"),
					   AV_Q(q->resume), done, done, 2 * done);
		return -1;
	}
	if (q->o.steps <= done)
		return usage_error(
		    finished
			? _("%s holds a run that finished at step %" PRIu64 ": --steps %" PRIu64
			    " is not more than that; give more steps to continue it (e.g. "
			    "--steps %" PRIu64 ")")
			: _("%s stopped at step %" PRIu64 ": --steps %" PRIu64
			    " is not more than that; give more steps (e.g. --steps %" PRIu64
			    "), or drop --steps to finish the run"),
		    AV_Q(q->resume), done, q->o.steps, 2 * done);
	ck->opt.steps = q->o.steps;
	return -1;
}

int take_checkpoint(train_request *q, train_checkpoint *ck)
{
	av_error err;
	int st;
	if (q->init)
		return usage_error(_("--resume and --init cannot both be given: a checkpoint holds "
				     "its model; drop --init"));
	if (file_kind(q->resume) == AV_KIND_MODEL && (st = state_of_model(q)) >= 0)
		return st;
	if (!train_checkpoint_load(ck, q->resume, &err)) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if ((st = take_steps(q, ck)) >= 0)
		return st;
	char msg[512];
	train_options want = q->o;
	if (q->given[OPT_EPOCHS - OPT_FIRST] || q->given[OPT_STEPS - OPT_FIRST])
		want.steps = ck->opt.steps;
	if (!check_resume_options(q->given, &want, &ck->opt, ck->epochs, msg, sizeof msg))
		return usage_error("%s", msg);
	/* The bits depend on the thread count (train.h): keep the checkpoint's. */
	if (q->threads && (uint32_t)q->threads != ck->opt.threads)
		return usage_error(
		    _("--threads %d differs from the checkpoint's %d: the result would "
		      "differ from an uninterrupted run; drop --threads (or give "
		      "--threads %d)"),
		    q->threads, (int)ck->opt.threads, (int)ck->opt.threads);
	q->threads = (int)ck->opt.threads;
	if (q->val_path && (!ck->val_path || strcmp(q->val_path, ck->val_path) != 0))
		return usage_error(_("--val-file differs from the checkpoint's; drop it"));
	if (q->given[OPT_VAL_SHARE - OPT_FIRST] || q->given[OPT_NO_VAL - OPT_FIRST])
		return usage_error(_("%s: --resume holds out the validation text the checkpoint "
				     "held out; drop it"),
				   q->given[OPT_NO_VAL - OPT_FIRST] ? "--no-val" : "--val-share");
	q->val_path = ck->val_path;
	q->o = ck->opt;
	return -1;
}

int take_init(train_request *q)
{
	av_error err;
	for (int id = OPT_MIN_COUNT; id <= OPT_MAX_VOCAB; id++)
		if (q->given[id - OPT_FIRST])
			return usage_error(
			    _("--%s does not apply with --init: the model's vocabulary "
			      "is kept"),
			    cli_option_of((cli_opt_id)id)->name);
	model *m = model_builtin_name(q->init) ? model_builtin_named(q->init, &err)
					       : model_load(q->init, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	q->init_model = m;
	const model_config *c = &m->cfg;
	if (!model_arch_is_own(&c->arch)) {
		av_fail(&err,
			_("%s: this model has %s's architecture (learned positions, its GELU, "
			  "embedding and output), which attnview's trainer does not train: go on "
			  "training it where it was trained and convert it again, or train a new "
			  "model without --init"),
			AV_Q(q->init), model_arch_fields[ARCH_ORIGIN].values[c->arch.origin]);
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	const struct {
		int opt;
		uint32_t mine, model;
	} t[] = {
	    {OPT_OBJECTIVE, q->o.objective, c->objective},
	    {OPT_DIM, q->o.dim, c->dim},
	    {OPT_HEADS, q->o.heads, c->heads},
	    {OPT_LAYERS, q->o.layers, c->layers},
	    {OPT_CONTEXT, q->o.context, c->context},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		const char *name = cli_option_of((cli_opt_id)t[i].opt)->name;
		if (!q->given[t[i].opt - OPT_FIRST] || t[i].mine == t[i].model)
			continue;
		if (t[i].opt == OPT_OBJECTIVE)
			return usage_error(
			    _("--objective %s differs from %s's %s: --init trains the model as it "
			      "is; drop --objective, or train a new model without --init"),
			    objective_name((objective)t[i].mine), AV_Q(q->init),
			    objective_name((objective)t[i].model));
		return usage_error(_("--%s %u differs from %s's %u: --init trains the model as it "
				     "is (its objective, sizes and context); drop --%s, or train a "
				     "new model without --init"),
				   name, t[i].mine, AV_Q(q->init), t[i].model, name);
	}
	q->o.objective = c->objective;
	q->o.dim = c->dim;
	q->o.heads = c->heads;
	q->o.layers = c->layers;
	q->o.context = c->context;
	return -1;
}

bool stopped_run_at(const char *path)
{
	if (access(path, F_OK) != 0)
		return false;
	train_checkpoint ck;
	av_error err;
	if (file_kind(path) != AV_KIND_CHECKPOINT || !train_checkpoint_load(&ck, path, &err))
		return true; /* something else there: not ours to write over silently */
	bool finished = ck.state.steps_done == ck.state.total_steps;
	train_checkpoint_finish(&ck);
	return !finished;
}
