/* attnview --train --task NAME: the lab (lab.h). A tiny model trained on
 * generated text whose mechanism is known, its task accuracy with every head
 * and with each head switched off, and what its heads do. */
#include "attnview/i18n.h"
#include "attnview/lab.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"
#include "attnview/blas.h"
#include "attnview/train.h"
#include "cli.h"
#include "options.h"
#include "train_progress.h"

#include <math.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define lab_usage(...) cli_usage_error("attnview --train --task --help", __VA_ARGS__)

static const char *const lab_help =
    N_("Usage: attnview --train --task NAME [-o OUT] [--seed S] [--steps N] [--dim D]\n"
       "                [--heads N] [--layers L] [--lr X] [--threads N]\n"
       "                [--timeline-every K] [--keep-steps N]\n"
       "       attnview --train --task list\n"
       "\n"
       "Train a tiny model on generated text whose mechanism is known (the lab), then\n"
       "measure it: task accuracy at the positions the mechanism decides, the same with\n"
       "each head switched off (a head carries the mechanism when losing it costs at\n"
       "least half of what the model gained over chance, or when it alone keeps half\n"
       "with the other heads of its layer off), the same with a carrying head's\n"
       "attention replaced by the pattern the task was made for (every task's but\n"
       "band's: under half the gain kept, the head carries the mechanism another\n"
       "way), the same with an idle head's attention in a carrying head's place of\n"
       "its layer (nine tenths kept: a copy of the mechanism the model does not\n"
       "read), and what each head does. The model goes to OUT (default NAME.attn).\n"
       "Everything follows from --seed (1).\n"
       "--task list names the tasks and their mechanisms (attnview(1), THE LAB).\n");

typedef struct lab_request {
	const char *task, *out;
	lab_options o;
	char out_buf[256];
} lab_request;

static void list_tasks(void)
{
	for (int i = 0; i < lab_ntasks(); i++) {
		const lab_task *t = lab_task_at(i);
		cli_printf(_("%-10s %s, %u layer(s) x %u head(s), d=%u, %u steps; e.g. %s\n"), t->name,
		       objective_name(t->obj), t->layers, t->heads, t->dim, t->steps, t->example);
		cli_printf("           %s\n", _(t->mechanism));
	}
}

/* A whole number of option c in [lo, hi], the lab's range (narrower than
 * --train's: the lab's models are tiny). */
static bool lab_whole(int c, const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	cli_value v;
	if (!cli_option_value_in((cli_opt_id)c, s, lo, hi, &v))
		return false;
	*out = (uint32_t)v.u;
	return true;
}

/* One option into q; -1, or the exit status. */
static int take(int c, const char *name, lab_request *q)
{
	bool ok = true;
	uint32_t u = 0, lo = 0, hi = 0; /* hi > 0: the range of a whole number */
	cli_value v;
	switch (c) {
	case OPT_TRAIN:
		break;
	case OPT_TASK:
		q->task = optarg;
		break;
	case 'o':
	case OPT_OUTPUT:
		q->out = optarg;
		break;
	case OPT_SEED:
		if ((ok = cli_option_value(OPT_SEED, optarg, &v)))
			q->o.seed = v.u;
		break;
	case OPT_STEPS:
		lo = 1, hi = 1000000;
		ok = lab_whole(c, optarg, lo, hi, &q->o.steps);
		break;
	case OPT_DIM:
		lo = 1, hi = 512;
		ok = lab_whole(c, optarg, lo, hi, &q->o.dim);
		break;
	case OPT_HEADS:
		lo = 1, hi = 16;
		ok = lab_whole(c, optarg, lo, hi, &q->o.heads);
		break;
	case OPT_LAYERS:
		lo = 1, hi = 4;
		ok = lab_whole(c, optarg, lo, hi, &q->o.layers);
		break;
	case OPT_LR:
		ok = cli_option_value_in(OPT_LR, optarg, 0, 1, &v) && (float)v.x > 0 &&
		     (float)v.x < 1;
		if (ok)
			q->o.lr = (float)v.x;
		break;
	case OPT_THREADS:
		lo = 1, hi = 256;
		ok = lab_whole(c, optarg, lo, hi, &u);
		q->o.threads = u; /* the training step's, and BLAS's */
		break;
	case OPT_TIMELINE_EVERY:
		if ((ok = cli_option_value(OPT_TIMELINE_EVERY, optarg, &v)))
			q->o.timeline_every = v.u;
		if (q->o.timeline_every == 0)
			q->o.timeline_every = LAB_NO_TIMELINE;
		break;
	case OPT_KEEP_STEPS:
		if ((ok = cli_option_value(OPT_KEEP_STEPS, optarg, &v)))
			q->o.keep_every = v.u;
		break;
	case 'h':
	case OPT_HELP:
		cli_printf("%s", _(lab_help));
		return EXIT_OK;
	case ':':
		return lab_usage(_("%s needs a value"), name);
	case '?':
		return lab_usage(_("unknown option %s for --train --task"), name);
	default:
		return lab_usage(_("%s is an option of --train on a corpus, not of --train --task"),
				 name);
	}
	if (!ok && hi > 0)
		return lab_usage(_("%s takes a whole number from %u to %u in the lab, not '%s'"),
				 name, lo, hi, AV_Q(optarg));
	if (!ok && c == OPT_LR)
		return lab_usage(_("--lr takes a number above 0 and below 1 in the lab, not '%s'"),
				 AV_Q(optarg));
	if (!ok)
		return lab_usage(_("%s takes a whole number of decimal digits, not '%s'"), name,
				 AV_Q(optarg));
	return -1;
}

static int parse_lab(int argc, char **argv, lab_request *q)
{
	memset(q, 0, sizeof *q);
	q->o.seed = 1;
	/* --help anywhere, even where getopt would take it as --task's value. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_printf("%s", _(lab_help));
			return EXIT_OK;
		}
	optind = 1;
	opterr = 0;
	/* --train's options from the one table (options.h), --train itself
	 * taking no corpus here. */
	struct option opts[CLI_NOPTS + 1];
	char shorts[16];
	cli_getopt_table(MODE_TRAIN, opts, shorts);
	for (struct option *o = opts; o->name; o++)
		if (o->val == OPT_TRAIN)
			o->has_arg = no_argument;
	int c, st, li = -1;
	while ((c = getopt_long(argc, argv, shorts, opts, &li)) != -1) {
		char name[64];
		const char *part =
		    li >= 0 ? cli_shortened(argv, optind, optarg, opts[li].name) : NULL;
		if (part)
			return lab_usage(_("'%s' is short for --%s: write options in full"),
					 AV_Q(part), opts[li].name);
		if (li >= 0)
			snprintf(name, sizeof name, "--%s", opts[li].name);
		else
			snprintf(name, sizeof name, "%.60s", argv[optind - 1]);
		li = -1;
		if ((st = take(c, name, q)) >= 0)
			return st;
	}
	if (optind < argc)
		return lab_usage(_("--train --task trains on generated text: %s is not needed "
				   "(give either corpus files or --task)"),
				 AV_Q(argv[optind]));
	if (!q->task)
		return lab_usage(_("--task needs a task name"));
	if (strcmp(q->task, "list") == 0) {
		list_tasks();
		return EXIT_OK;
	}
	if (!lab_find(q->task)) {
		char names[256] = "";
		for (int i = 0; i < lab_ntasks(); i++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
				 i ? ", " : "", lab_task_at(i)->name);
		return lab_usage(_("no task '%s': the tasks are %s"), AV_Q(q->task), names);
	}
	if (!q->out) {
		snprintf(q->out_buf, sizeof q->out_buf, "%s.attn", q->task);
		q->out = q->out_buf;
	}
	q->o.out = q->out;
	if (q->o.keep_every && q->o.timeline_every == LAB_NO_TIMELINE)
		return lab_usage(_("--keep-steps keeps the models of the steps the timeline "
				   "records, and --timeline-every 0 records none: choose one"));
	return -1;
}

/* A line every tenth of the run. */
static void lab_step(const lab_progress *p, void *ctx)
{
	(void)ctx;
	uint64_t every = p->total >= 10 ? p->total / 10 : 1;
	if (p->step % every == 0 || p->step == p->total) {
		cli_printf(_("step %llu/%llu: task loss %.4f\n"), (unsigned long long)p->step,
			   (unsigned long long)p->total, (double)p->loss);
		fflush(stdout);
	}
}

/* For each head that carries the mechanism: the task accuracy with the
 * pattern of its layer's role (lab_pattern) in place of its own attention,
 * and what it says; then the control, every key alike (lab_judge_picture). */
static bool report_patterns(const model *m, const lab_task *t, uint64_t seed, double acc_all,
			    const double *acc_without, const lab_part *part, av_error *err)
{
	int H = (int)m->cfg.heads, nh = (int)m->cfg.layers * H;
	bool title = false;
	for (int k = 0; k < nh; k++) {
		lab_picture pic;
		if (part[k] != LAB_CARRIES)
			continue;
		if (!lab_judge_picture(m, t, seed, k, acc_all, acc_without[k], &pic, err))
			return false;
		if (pic.fit == LAB_FIT_NONE && !pic.output_only)
			continue;
		if (!title)
			cli_printf(_("task accuracy with a carrying head's attention replaced by "
				     "the pattern the task was made for:\n"));
		title = true;
		role_kind r = t->roles[k / H];
		char as[48];
		if (r == ROLE_OFFSET)
			snprintf(as, sizeof as, _("%d left"), (int)t->param);
		else
			snprintf(as, sizeof as, "%s", _(role_name(r)));
		/* Where every key alike keeps the gain too, a pattern held
		 * because another head does the work, and the model needs what
		 * this head writes, not where it looks. */
		if (pic.output_only && pic.fit == LAB_FIT_NONE)
			cli_printf(
			    _("  layer %d head %d (its role has no pattern): %.1f%% with every "
			      "key alike: the model needs what the head writes, not where it "
			      "looks\n"),
			    k / H, k % H, 100 * pic.acc_even);
		else if (pic.output_only)
			cli_printf(_("  layer %d head %d as %s: %.1f%%, and %.1f%% with every key "
				     "alike: the model needs what the head writes, not where it "
				     "looks\n"),
				   k / H, k % H, as, 100 * pic.acc_pattern, 100 * pic.acc_even);
		else
			cli_printf(_("  layer %d head %d as %s: %.1f%%  %s\n"), k / H, k % H, as,
				   100 * pic.acc_pattern,
				   pic.fit == LAB_FIT_HOLDS ? _("the pattern does its work")
				   : pic.fit == LAB_FIT_PARTLY
				       ? _("the pattern does part of its work")
				       : _("the head carries the mechanism another way"));
	}
	return true;
}

/* For each idle head in a layer with a carrying head: the task accuracy
 * with the idle head's attention in place of the carrier's. Two heads may
 * draw the same picture while the model reads only one: this tells the
 * copy the model does not read from a head that looks elsewhere. */
static bool report_copies(const model *m, const lab_task *t, uint64_t seed, double acc_all,
			  const lab_part *part, av_error *err)
{
	int H = (int)m->cfg.heads, nh = (int)m->cfg.layers * H;
	bool title = false;
	for (int k = 0; k < nh; k++)
		for (int c = k / H * H; part[k] == LAB_IDLE && c < (k / H + 1) * H; c++) {
			double acc;
			if (part[c] != LAB_CARRIES)
				continue;
			if (!lab_copy_accuracy(m, t, seed, c, k, &acc, err))
				return false;
			lab_fit fit = lab_pattern_fit(acc_all, acc, 1.0 / t->answers);
			if (!title)
				cli_printf(
				    _("task accuracy with an idle head's attention in place of "
				      "a carrying head's of its layer:\n"));
			title = true;
			cli_printf(_("  layer %d head %d in place of head %d: %.1f%%  %s\n"), k / H,
				   k % H, c % H, 100 * acc,
				   fit == LAB_FIT_HOLDS
				       ? _("a copy of the mechanism that the model does not read")
				   : fit == LAB_FIT_PARTLY ? _("part of the mechanism")
							   : _("not the mechanism"));
		}
	return true;
}

/* Task accuracy with every head, then without each: which carry it. */
static bool report_ablation(const model *m, const lab_task *t, uint64_t seed, lab_score *all,
			    av_error *err)
{
	double chance = 1.0 / t->answers;
	if (!lab_evaluate(m, t, seed, NULL, all, err))
		return false;
	cli_printf(_("task accuracy: %.1f%% of %d positions the mechanism decides (chance %.1f%%); "
		     "loss %.3f nats/char there (the task loss: the lab trains and scores these "
		     "positions only; the rest of its texts is random letters, where the model "
		     "may be sure of a wrong one, so a loss over every position, as the view's "
		     "Alt-A gives beside this one, means nothing for the task)\n"),
		   100 * all->acc, all->count, 100 * chance, all->loss);
	if (all->acc < LAB_LEARNED)
		cli_printf(
		    _("the model has not learned the task (%.1f%%, under the %.0f%% the lab's "
		      "tests ask of each task): what follows says what this model does, not "
		      "yet the mechanism the task was made for; train longer (--steps), with "
		      "another --seed, or a wider model (--dim)\n"),
		    100 * all->acc, 100 * LAB_LEARNED);
	int H = (int)m->cfg.heads, nh = (int)m->cfg.layers * H;
	double acc[AV_MAX_HEADS * 4];
	if (!lab_ablate_each(m, t, seed, acc, err))
		return false;
	lab_part part[AV_MAX_HEADS * 4];
	if (!lab_head_parts(m, t, seed, all->acc, acc, part, err))
		return false;
	cli_printf(_("task accuracy with one head switched off:\n"));
	for (int k = 0; k < nh; k++)
		cli_printf(_("  layer %d head %d off: %.1f%%%s\n"), k / H, k % H, 100 * acc[k],
			   part[k] == LAB_CARRIES  ? _("  carries the mechanism")
			   : part[k] == LAB_PARTLY ? _("  carries part of it")
						   : "");
	return report_patterns(m, t, seed, all->acc, acc, part, err) &&
	       report_copies(m, t, seed, all->acc, part, err);
}

static bool write_model(const model *m, const char *path, av_error *err)
{
	byte_buf b = {0};
	if (!model_serialize(m, AV_KIND_MODEL, NULL, &b, err))
		return false;
	bool ok = write_file_atomic(path, &b, true, err);
	bb_finish(&b);
	return ok;
}

/* A sample's n codepoints in UTF-8, the mask as AV_MASK_GLYPH (which
 * vocab_tokenize reads back as the mask); out has 4 n + 1 bytes. */
static void sample_utf8(const uint32_t *cps, int n, char *out)
{
	size_t k = 0;
	for (int i = 0; i < n; i++)
		k += cp_to_utf8(cps[i] == AV_SPECIAL_CP + TOK_MASK ? AV_MASK_GLYPH : cps[i],
				out + k);
	out[k] = '\0';
}

static int run_lab(const lab_request *q)
{
	const lab_task *t = lab_find(q->task);
	av_error err;
	if (q->o.threads)
		blas_set_threads((int)q->o.threads);
	if (!train_check_output(q->out, &err)) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	model *m = lab_model_create(t, &q->o, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_USAGE;
	}
	uint64_t steps = q->o.steps ? q->o.steps : t->steps;
	cli_printf(_("task %s: %s\n"), t->name, _(t->mechanism));
	cli_printf(_("model: %s, d=%u h=%u L=%u T=%u, %u vocabulary ids, %zu parameters; batch %u, "
		 "%llu steps, seed %llu, %d threads\n"),
	       objective_name((objective)m->cfg.objective), m->cfg.dim, m->cfg.heads,
	       m->cfg.layers, m->cfg.context, m->cfg.vocab_size, m->nparams, t->batch,
	       (unsigned long long)steps, (unsigned long long)q->o.seed,
	       q->o.threads ? (int)q->o.threads : LAB_THREADS);
	double t0 = av_now_ms() / 1e3;
	lab_score all;
	uint32_t cps[LAB_MAX_CONTEXT]; /* the text the heads are named on */
	bool ok = lab_train(m, t, &q->o, lab_step, NULL, &err) &&
		  report_ablation(m, t, q->o.seed, &all, &err);
	if (ok) {
		m->meta.val_loss = (float)all.loss;
		m->meta.val_acc = (float)all.acc;
		m->meta.base_acc = 1.0f / (float)t->answers;
		m->meta.base_loss = (float)log((double)t->answers);
		lab_sample(t, q->o.seed, 0, (int)t->context, cps);
		cli_print_roles(m, cps, t->context, _("a text of the task"));
		ok = write_model(m, q->out, &err);
	}
	if (ok) {
		char took[32], qo[600], text[4 * LAB_MAX_CONTEXT + 1], qt[8 * LAB_MAX_CONTEXT];
		format_duration(av_now_ms() / 1e3 - t0, took, sizeof took);
		av_shell_quote(q->out, qo, sizeof qo);
		sample_utf8(cps, (int)t->context, text);
		av_shell_quote(text, qt, sizeof qt);
		/* (a causal task's text hides nothing) */
		if (strstr(text, "▒"))
			cli_printf(_("wrote %s (%llu steps, %s); look at it on the text its heads "
				     "were named on (▒: a hidden letter): attnview --model %s "
				     "--text %s\n"),
				   AV_Q(q->out), (unsigned long long)steps, took, qo, qt);
		else
			cli_printf(_("wrote %s (%llu steps, %s); look at it on the text its heads "
				     "were named on: attnview --model %s --text %s\n"),
				   AV_Q(q->out), (unsigned long long)steps, took, qo, qt);
	} else {
		cli_error(err.msg);
	}
	model_destroy(m);
	return ok ? EXIT_OK : EXIT_RUNTIME;
}

int cli_lab(int argc, char **argv)
{
	lab_request q;
	int st = parse_lab(argc, argv, &q);
	return st >= 0 ? st : run_lab(&q);
}
