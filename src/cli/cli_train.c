/* attnview --train: a checkpoint's options, loading the corpus, and what to
 * say when training stops. The work itself is in src/train (corpus.c,
 * train.c); the live progress display in train_progress.c; the options are
 * parsed in cli_train_options.c. */
#include "cli_train.h"
#include "attnview/blas.h"
#include "attnview/checkpoint.h"
#include "attnview/corpus.h"
#include "attnview/i18n.h"
#include "attnview/timeline.h"
#include "attnview/train.h"
#include "attnview/verdict.h"
#include "cli.h"
#include "train_progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A text that gives a model something to learn has this many characters for
 * each distinct one at least (measured: doc/training.md, "Did it learn
 * anything?"). */
#define CLI_TEXT_PER_CHAR 20

/* "dir/name.attn" -> "name" */
static void base_name(const char *path, char *out, size_t n, bool strip_ext)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	snprintf(out, n, "%s", b);
	char *dot = strip_ext ? strrchr(out, '.') : NULL;
	if (dot && dot != out)
		*dot = '\0';
}

/* The model goes to -o, else beside the checkpoint resumed (OUT.ckpt ->
 * OUT), else model.attn; checkpoints to the one resumed, else OUT.ckpt. */
static void choose_paths(train_request *q)
{
	if (!q->out) {
		size_t l = q->resume ? strlen(q->resume) : 0;
		if (q->resume && l > 5 && strcmp(q->resume + l - 5, ".ckpt") == 0 &&
		    l - 5 < sizeof q->out_buf) {
			memcpy(q->out_buf, q->resume, l - 5);
			q->out_buf[l - 5] = '\0';
			q->out = q->out_buf;
		} else {
			q->out = "model.attn";
		}
	}
	if (q->resume)
		snprintf(q->ckpt, sizeof q->ckpt, "%s", q->resume);
	else
		snprintf(q->ckpt, sizeof q->ckpt, "%s.ckpt", q->out);
}

/* A FIFO or pipe that keeps us waiting: say what for. */
static void say_waiting(const char *name, void *ctx)
{
	(void)ctx;
	cli_note(_("waiting for %s to give text (Ctrl-C to stop)"), AV_Q(name));
}

/* Split the corpus read: where the checkpoint split it, at the validation
 * file, or as the options (fitted to a short text) say; the changes the fit
 * made are told on stderr. Returns -1, or the exit status. */
static int split_corpus(train_request *q, const train_checkpoint *ck, corpus *cor)
{
	av_error err;
	train_fit fit = {0};
	bool ok;
	if (ck) {
		if (!q->val_path && ck->ntrain + ck->nval != cor->n) {
			cli_note(_("the corpus differs from the one %s was trained on (%" PRIu64
				   " characters then, %" PRIu64
				   " now); resume with the same corpus"),
				 AV_Q(q->resume), ck->ntrain + ck->nval, cor->n);
			return EXIT_RUNTIME;
		}
		ok = corpus_split(cor, q->val_path ? 0 : ck->nval, &err);
	} else {
		/* --init: the context is the model's */
		train_given given = {
		    q->given[OPT_CONTEXT - OPT_FIRST] || q->init, q->given[OPT_BATCH - OPT_FIRST],
		    q->given[OPT_VAL_SHARE - OPT_FIRST] || q->given[OPT_NO_VAL - OPT_FIRST],
		    q->given[OPT_LR - OPT_FIRST]};
		if (q->val_path) {
			ok = corpus_split(cor, 0, &err);
			if (ok)
				train_fit_corpus(&q->o, &given, cor->ntrain, cor->nval, &fit);
		} else {
			train_fit_corpus(&q->o, &given, cor->n, 0, &fit);
			ok = fit.shrunk ? corpus_split(cor, fit.nval, &err)
					: corpus_split_percent(cor, q->o.val_percent, &err);
		}
	}
	if (!ok) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	char summary[16384];
	corpus_summary(cor, summary, sizeof summary);
	cli_write(stdout, summary);
	for (int i = 0; i < fit.nnotes; i++)
		cli_note("%s", fit.notes[i]);
	return -1;
}

/* Read the corpus and say what was found; returns -1, or the exit status. */
static int load_corpus(train_request *q, const train_checkpoint *ck, corpus *cor)
{
	av_error err;
	corpus_options co = {.val_path = q->val_path,
			     .min_count = q->o.min_count,
			     .max_vocab = q->o.max_vocab,
			     .any_encoding = q->given[OPT_ANY_ENCODING - OPT_FIRST],
			     .waiting = say_waiting};
	/* A checkpoint's model or --init's reads the text with its vocabulary
	 * (a resumed run's: the one it was built from the same text). */
	if (ck)
		co.fixed_vocab = &ck->model->vocab;
	else if (q->init_model) {
		co.fixed_vocab = &q->init_model->vocab;
		co.fixed_vocab_from = q->init;
	}
	bool from_stdin = q->val_path && strcmp(q->val_path, "-") == 0;
	for (size_t i = 0; i < q->ncorpus; i++)
		from_stdin |= strcmp(q->corpus[i], "-") == 0;
	if (from_stdin && isatty(STDIN_FILENO))
		cli_note(_("reading standard input from the terminal: end it with Ctrl-D"));
	if (!corpus_read(cor, q->corpus, q->ncorpus, &co, &err)) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	int st = split_corpus(q, ck, cor);
	if (st >= 0)
		return st;
	char what[4200];
	if (q->ncorpus == 1)
		snprintf(what, sizeof what, "%s", input_name(q->corpus[0]));
	else
		snprintf(what, sizeof what, _("the corpus"));
	if (!train_check_data(&q->o, cor, what, &err)) {
		cli_error(err.msg);
		if (q->init) /* the context is not the user's to change here */
			cli_note(_("with --init the context is %s's, %u characters: give a longer "
				   "text, or train a new model without --init"),
				 AV_Q(q->init), q->o.context);
		/* A text too short for any window is bad input; the rest asks
		 * the options to change. */
		return cor->ntrain < (uint64_t)train_window(&q->o) && q->o.context <= 2
			   ? EXIT_RUNTIME
			   : EXIT_USAGE;
	}
	if (q->init && cor->unk_train == cor->ntrain) {
		cli_note(_("none of the characters of %s is in %s's vocabulary: there is nothing "
			   "for it to learn; train a new model without --init"),
			 AV_Q(what), AV_Q(q->init));
		return EXIT_RUNTIME;
	}
	return -1;
}

/* The corpus as the model's metadata names it (never translated: the file
 * is the same in every language): "poems.txt (1234 characters)",
 * "a.txt + b.txt (...)", "standard input (...)". */
static void describe_corpus(const train_request *q, const corpus *cor, char *out, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < q->ncorpus && k + 1 < n; i++) {
		char b[256];
		if (strcmp(q->corpus[i], "-") == 0)
			snprintf(b, sizeof b, "standard input");
		else
			base_name(q->corpus[i], b, sizeof b, false);
		if (k > 200 && i + 1 < q->ncorpus) {
			k +=
			    (size_t)snprintf(out + k, n - k, " and %zu more files", q->ncorpus - i);
			break;
		}
		int r = snprintf(out + k, n - k, "%s%s", i ? " + " : "", b);
		k += r > 0 ? (size_t)r : 0;
	}
	if (k < n)
		snprintf(out + k, n - k, " (%" PRIu64 " characters)", cor->ntrain + cor->nval);
}

/* Where the run starts, when not from nothing. */
static void say_start(const train_request *q, const trainer *t)
{
	if (q->resume && t->total != q->resumed_total)
		cli_printf(_("continuing %s from step %" PRIu64 " to step %" PRIu64
			     " (it was to end at step %" PRIu64 "): the model and AdamW's moments "
			     "go on; the learning rate follows the schedule of a run of %" PRIu64
			     " steps (warmup %" PRIu64 "): %g at step %" PRIu64 "\n"),
			   AV_Q(q->resume), t->step, t->total, q->resumed_total, t->total,
			   t->opt.warmup, (double)adamw_lr(&t->adam, t->adam.step), t->step + 1);
	else if (q->resume)
		cli_printf(_("resuming %s at step %" PRIu64 "\n"), AV_Q(q->resume), t->step);
	else if (q->init)
		cli_printf(_("starting from %s's weights, with its objective, sizes and vocabulary "
			     "(it had %" PRIu64 " steps; the new model's step count goes on from "
			     "there); AdamW starts afresh\n"),
			   AV_Q(q->init), t->base_steps);
}

/* The trainer, named after the output file, and a line saying what it will
 * do. load_start: when reading the corpus began. */
/* A run too short for the default timeline to cost under TL_MAX_SHARE of
 * its training time (its first and last records alone): say what it costs. */
static void say_timeline_cost(const train_request *q, const trainer *t)
{
	uint64_t k = t->opt.timeline_every;
	double share = timeline_auto_share(t->total, t->opt.batch, t->opt.context, k);
	if (!t->model->timeline || q->resume || q->given[OPT_TIMELINE_EVERY - OPT_FIRST] ||
	    share <= TL_MAX_SHARE)
		return;
	cli_note(_("the training timeline's first and last records cost about %.0f%% of this "
		   "short run's training time (--timeline-every 0 records none)"),
		 100 * share);
}

static trainer *start_trainer(train_request *q, const corpus *cor, train_checkpoint *ck,
			      double load_start, av_error *err)
{
	char name[256], desc[1024];
	base_name(q->out, name, sizeof name, true);
	describe_corpus(q, cor, desc, sizeof desc);
	model *init = q->init_model;
	q->init_model = NULL; /* the trainer's now */
	trainer *t =
	    trainer_create(&q->o, cor, ck, init, name, desc, q->val_path, q->out, q->ckpt, err);
	if (!t)
		return NULL;
	t->keep_every = t->model->timeline ? q->keep_every : 0;
	cli_printf(_("model: %s, d=%u h=%u L=%u T=%u, %u vocabulary ids, %zu parameters; "
		     "batch %u, %" PRIu64 " steps, lr %g, warmup %" PRIu64 ", %d BLAS threads "
		     "(%s), corpus read in %.1fs\n"),
		   objective_name((objective)t->opt.objective), t->opt.dim, t->opt.heads,
		   t->opt.layers, t->opt.context, cor->vocab.size, t->model->nparams, t->opt.batch,
		   t->total, (double)t->opt.lr, t->opt.warmup, blas_threads(), blas_corename(),
		   av_now_ms() / 1e3 - load_start);
	say_start(q, t);
	say_timeline_cost(q, t);
	fflush(stdout);
	return t;
}

/* The corpus files as a command line gives them again, quoted. */
static void corpus_args(const train_request *q, char *out, size_t n)
{
	size_t k = 0;
	out[0] = '\0';
	for (size_t i = 0; i < q->ncorpus && k + 1 < n; i++) {
		char qc[4200];
		av_shell_quote(q->corpus[i], qc, sizeof qc);
		int r = snprintf(out + k, n - k, "%s%s", i ? " " : "", qc);
		k += r > 0 ? (size_t)r : 0;
	}
}

/* Stopped by a signal with the checkpoint written: how to go on. */
static int report_stopped(const train_request *q, const trainer *t)
{
	int sig = train_stop_requested();
	char qk[4200], qo[4200], files[8192];
	corpus_args(q, files, sizeof files);
	av_shell_quote(q->ckpt, qk, sizeof qk);
	av_shell_quote(q->out, qo, sizeof qo);
	bool from_stdin = false;
	for (size_t i = 0; i < q->ncorpus; i++)
		from_stdin |= strcmp(q->corpus[i], "-") == 0;
	/* --threads always: the result is the same only on as many threads. */
	cli_note(_("stopped at step %" PRIu64 " of %" PRIu64 "; checkpoint written to %s\n"
		   "resume with: attnview --train %s --resume %s -o %s --threads %u%s"),
		 t->step, t->total, AV_Q(q->ckpt), files, qk, qo, t->opt.threads,
		 from_stdin ? _("\n(with the same text on standard input)") : "");
	return 128 + sig;
}

/* The evaluation with the lowest validation loss (the first if tied). */
static const train_eval *best_of(const trainer *t)
{
	const train_eval *b = t->nevals ? &t->evals[0] : NULL;
	for (size_t i = 1; i < t->nevals; i++)
		if (t->evals[i].loss < b->loss)
			b = &t->evals[i];
	return b;
}

/* Some evaluation beat the unigram baseline. */
static bool ever_beat(const trainer *t)
{
	for (size_t i = 0; i < t->nevals; i++)
		if (verdict_of(t->evals[i].loss, t->evals[i].base_loss) == VERDICT_BETTER)
			return true;
	return false;
}

/* No evaluation beat the baseline: neither more steps nor an earlier step
 * helps (never advise keeping a losing one); more text, a smaller model or
 * the lab do. */
static void advise_unlearnt(const trainer *t, const corpus *cor, const train_eval *best)
{
	/* The text's distinct characters, as the split line counts them (not
	 * the vocabulary's, which --init brings from another model). */
	const uint64_t n = cor->ntrain, distinct = cor->distinct ? cor->distinct : 1;
	const uint64_t want = CLI_TEXT_PER_CHAR * distinct;
	char more[256];
	if (want > n)
		snprintf(more, sizeof more,
			 _("this one has %" PRIu64 " training characters for %" PRIu64
			   " distinct ones; about %" PRIu64
			   " or more, %d for each, give this model enough to learn from"),
			 n, distinct, want, CLI_TEXT_PER_CHAR);
	else
		snprintf(more, sizeof more,
			 _("this one has %" PRIu64 " training characters for %" PRIu64
			   " distinct ones, %" PRIu64
			   " for each already; twice that or more may be what this model needs"),
			 n, distinct, n / distinct);
	/* Half the width, whole heads (4 columns each at least). */
	uint32_t heads = t->model->cfg.heads, dim = t->model->cfg.dim / 2 / heads * heads;
	dim = dim >= 4 * heads ? dim : 4 * heads;
	cli_printf(_("what to do: no evaluation beat the unigram baseline (the best, step %" PRIu64
		     ": %.3f against %.3f nats/char): the model learned no more than how often "
		     "each character occurs, and neither more steps nor an earlier step would "
		     "give a better one. What helps: more text (%s), a smaller model (--dim %u "
		     "--layers 1), or, to see heads learn a known job in seconds, the lab "
		     "(attnview --train --task induction)\n"),
		   best->step, (double)best->loss, (double)best->base_loss, more, dim);
}

/* What to do after the verdict: over-fitting, nothing learnt, a better
 * step before the last. */
static void report_advice(const trainer *t, const corpus *cor, verdict_kind vk)
{
	const train_eval *best = best_of(t);
	bool beat = ever_beat(t);
	bool past_best = best && best->step != t->step && !t->opt.patience;
	/* The loss rose after its best even if the warning did not fire (it
	 * needs a best that beat the baseline): more steps would not help. */
	bool rose = past_best && t->evals[t->nevals - 1].loss > 1.02f * best->loss;
	/* Never beaten, and more steps did not help: the loss was lowest
	 * before the end, or patience stopped the run. */
	bool stalled = best && (best->step != t->step || t->stopped_early);
	if (vk == VERDICT_NOT_BETTER && !beat && stalled)
		advise_unlearnt(t, cor, best);
	else if (vk == VERDICT_NOT_BETTER && t->overfit_warned && best)
		cli_printf(
		    _("what to do: the validation loss was lowest at step %" PRIu64 " (%.3f) and "
		      "rose after it while the training loss fell (over-fitting): train fewer "
		      "steps (--steps %" PRIu64 "), add --patience 3 to keep the best model, "
		      "give more text, or train a smaller model (--dim 32 --layers 1)\n"),
		    best->step, (double)best->loss, best->step);
	else if (vk == VERDICT_NOT_BETTER && !rose)
		cli_printf(
		    _("what to do: train longer (more --steps), give more text, or check that "
		      "the text is what you meant to train on\n"));
	/* The model of the best step, only where it beat the baseline. */
	if (past_best && beat && (t->overfit_warned || rose) &&
	    !(vk == VERDICT_NOT_BETTER && t->overfit_warned))
		cli_printf(
		    _("note: the validation loss was lowest at step %" PRIu64 " (%.3f) and rose "
		      "after it (over-fitting); --steps %" PRIu64 " or --patience 3 keeps the "
		      "model of the best step\n"),
		    best->step, (double)best->loss, best->step);
}

/* A finished run's state, kept beside the model: what it is for. */
static void report_state_kept(const train_request *q, const trainer *t)
{
	struct stat st;
	if (t->state_lost || stat(q->ckpt, &st) != 0)
		return;
	char qo[4200], files[8192];
	av_shell_quote(q->out, qo, sizeof qo);
	corpus_args(q, files, sizeof files);
	cli_printf(_("kept %s (%.1f MB) beside it, the run's last state: attnview --train %s "
		     "--resume %s --steps N goes on from it; delete it if you will not\n"),
		   AV_Q(q->ckpt), (double)st.st_size / 1e6, files, qo);
}

/* The end: the final evaluation, the verdict and what to do about it, and
 * which model was written. */
static int report_done(const train_request *q, const trainer *t, const corpus *cor, double t0)
{
	const train_result *r = &t->final;
	char took[32], v[1024], warn[8192];
	format_duration(av_now_ms() / 1e3 - t0, took, sizeof took);
	if (r->count)
		cli_printf(
		    t->opt.objective == OBJ_MASKED
			? _("validation (%" PRIu64 " masked characters): loss %.4f nats/char, "
			    "accuracy %.2f%%\n"
			    "unigram baseline on the same characters: loss %.4f, accuracy %.2f%%\n")
			: _("validation (%" PRIu64 " next characters): loss %.4f nats/char, "
			    "accuracy %.2f%%\n"
			    "unigram baseline on the same characters: loss %.4f, accuracy "
			    "%.2f%%\n"),
		    r->count, (double)r->loss, 100.0 * (double)r->acc, (double)r->base_loss,
		    100.0 * (double)r->base_acc);
	verdict_kind vk =
	    verdict_text(r->loss, r->acc, r->base_loss, r->base_acc, r->count, v, sizeof v);
	cli_printf(_("verdict: %s\n"), v);
	corpus_encoding_warnings(cor, warn, sizeof warn); /* again, beside the verdict */
	cli_printf("%s", warn);
	report_advice(t, cor, vk);
	const train_eval *best = best_of(t);
	if (t->opt.patience && best && t->stopped_early)
		cli_printf(_("patience: stopped at step %" PRIu64 " of %" PRIu64 ", %" PRIu64
			     " evaluations without a new best; the model written is step %" PRIu64
			     "'s, the best (validation loss %.3f)\n"),
			   t->step, t->total, t->opt.patience, best->step, (double)best->loss);
	else if (t->opt.patience && best && best->step != t->step)
		cli_printf(_("patience: the model written is step %" PRIu64 "'s, the best "
			     "(validation loss %.3f)\n"),
			   best->step, (double)best->loss);
	cli_printf(_("wrote %s (%" PRIu64 " steps, %s)\n"), AV_Q(q->out), t->step, took);
	if (t->state_lost)
		cli_note(_("the finished run's state was not kept, so --resume --steps cannot "
			   "continue it (the model is written): %s"),
			 t->state_err.msg);
	report_state_kept(q, t);
	return EXIT_OK;
}

/* What the heads do on the first window of the validation text (of the
 * training text without one). */
static void report_roles(const trainer *t)
{
	const corpus *c = t->data;
	const model *m = t->model;
	bool val = c->nval > 0;
	uint64_t start = val ? c->ntrain : 0, avail = val ? c->nval : c->ntrain;
	size_t n = avail < m->cfg.context ? (size_t)avail : m->cfg.context;
	uint32_t *cps = malloc((n ? n : 1) * sizeof *cps);
	if (!cps)
		return;
	for (size_t i = 0; i < n; i++) {
		int32_t id = corpus_id(c, start + i);
		cps[i] = id >= TOK_NSPECIAL && (uint32_t)id < m->vocab.size ? m->vocab.cps[id]
									 : AV_SPECIAL_CP + TOK_UNK;
	}
	char what[128];
	snprintf(what, sizeof what,
		 val ? _("the first %zu characters of the validation text")
		     : _("the first %zu characters of the training text"),
		 n);
	cli_print_roles(m, cps, n, what);
	free(cps);
}

/* Everything after the options: output paths, corpus, trainer, the run
 * with its signal handlers and progress display, the report. */
static int run_training(train_request *q, train_checkpoint *ck)
{
	int status = EXIT_RUNTIME;
	av_error err;
	corpus cor = {0};
	trainer *t = NULL;
	choose_paths(q);
	if (!train_check_output(q->out, &err) || !train_check_output(q->ckpt, &err)) {
		cli_error(err.msg);
		goto out;
	}
	if (!q->resume && stopped_run_at(q->ckpt)) {
		/* A stopped run's work: a new run would write over it. */
		char files[8192], qk[4200], qo[4200];
		corpus_args(q, files, sizeof files);
		av_shell_quote(q->ckpt, qk, sizeof qk);
		av_shell_quote(q->out, qo, sizeof qo);
		cli_note(_("%s exists: a run writing %s stopped there, and a new run would write "
			   "over it.\nresume with: attnview --train %s --resume %s -o %s\n"
			   "or delete %s to start again."),
			 AV_Q(q->ckpt), AV_Q(q->out), files, qk, qo, qk);
		goto out;
	}
	if (q->threads)
		blas_set_threads(q->threads);
	double load_start = av_now_ms() / 1e3;
	if ((status = load_corpus(q, ck, &cor)) >= 0)
		goto out;
	status = EXIT_RUNTIME;
	if (!(t = start_trainer(q, &cor, ck, load_start, &err)) || !train_install_signals(&err)) {
		cli_error(err.msg);
		goto out;
	}
	progress_ui ui;
	progress_begin(&ui, t->step);
	train_status st = trainer_run(t, progress_report, &ui, &err);
	train_restore_signals();
	progress_end(&ui);
	if (st == TRAIN_FAILED)
		cli_error(err.msg);
	else
		status =
		    st == TRAIN_STOPPED ? report_stopped(q, t) : report_done(q, t, &cor, ui.t0);
	if (st == TRAIN_DONE)
		report_roles(t);
out:
	trainer_destroy(t);
	corpus_finish(&cor);
	return status;
}

/* --task anywhere before "--": the lab, which has options of its own. */
static bool wants_lab(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--task") == 0 || strncmp(argv[i], "--task=", 7) == 0)
			return true;
	return false;
}

int cli_train(int argc, char **argv)
{
	if (wants_lab(argc, argv))
		return cli_lab(argc, argv);
	train_request q;
	train_checkpoint ck = {0};
	av_error err;
	q.corpus = calloc((size_t)argc + 1, sizeof *q.corpus);
	if (!q.corpus) {
		cli_error(_("out of memory"));
		return EXIT_RUNTIME;
	}
	int status = parse_train_options(argc, argv, &q);
	/* A malformed SOURCE_DATE_EPOCH is refused before the corpus is read
	 * (trainer_create reads the variable again for a new run). */
	int64_t created;
	if (status < 0 && !train_creation_time(&created, &err)) {
		cli_error(err.msg);
		status = EXIT_USAGE;
	}
	if (status < 0 && q.resume)
		status = take_checkpoint(&q, &ck);
	else if (status < 0 && q.init)
		status = take_init(&q);
	if (status < 0 && !q.resume && !train_options_check(&q.o, &err))
		status = usage_error("%s", err.msg);
	if (status < 0)
		status = run_training(&q, q.resume ? &ck : NULL);
	train_checkpoint_finish(&ck);
	model_destroy(q.init_model);
	free(q.corpus);
	return status;
}
