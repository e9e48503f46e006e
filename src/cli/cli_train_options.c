/* attnview --train: its options (declared in options.c's table, which also
 * prints its help), parsed into a train_request (cli_train.c runs the
 * training). */
#include "attnview/i18n.h"
#include "attnview/train.h"
#include "cli.h"
#include "cli_train.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bad_value(cli_opt_id id, const char *arg)
{
	char name[64];
	snprintf(name, sizeof name, "--%s", cli_option_of(id)->name);
	return usage_error(_("%s: '%s' is not a valid value (see attnview --train --help)"),
			   AV_Q(name), AV_Q(arg));
}

/* Where each option that takes a whole number goes in the request; its
 * row in options.c says which values it accepts (the options check says
 * why a value is refused that parses here: --heads that do not divide
 * --dim, say). */
typedef struct whole_option {
	cli_opt_id id;
	size_t at, size; /* the field in train_request: a uint32_t or uint64_t */
} whole_option;

#define WHOLE(id, field) {id, offsetof(train_request, field), sizeof(((train_request *)0)->field)}
static const whole_option whole_options[] = {
    WHOLE(OPT_DIM, o.dim),
    WHOLE(OPT_HEADS, o.heads),
    WHOLE(OPT_LAYERS, o.layers),
    WHOLE(OPT_CONTEXT, o.context),
    WHOLE(OPT_BATCH, o.batch),
    WHOLE(OPT_MAX_VOCAB, o.max_vocab),
    WHOLE(OPT_VAL_SHARE, o.val_percent),
    WHOLE(OPT_STEPS, o.steps),
    WHOLE(OPT_EPOCHS, o.epochs),
    WHOLE(OPT_WARMUP, o.warmup),
    WHOLE(OPT_SEED, o.seed),
    WHOLE(OPT_MIN_COUNT, o.min_count),
    WHOLE(OPT_PATIENCE, o.patience),
    WHOLE(OPT_EVAL_EVERY, o.eval_every),
    WHOLE(OPT_CKPT_EVERY, o.checkpoint_every),
    WHOLE(OPT_TIMELINE_EVERY, o.timeline_every),
    WHOLE(OPT_KEEP_STEPS, keep_every),
};
#undef WHOLE

/* If id takes a whole number, reads it into q: 1 when it is valid, 0 when
 * not; -1 for the other options. */
static int take_whole(train_request *q, cli_opt_id id, const char *arg)
{
	for (size_t i = 0; i < sizeof whole_options / sizeof whole_options[0]; i++) {
		const whole_option *w = &whole_options[i];
		cli_value v;
		if (w->id != id)
			continue;
		_Static_assert(sizeof v.u == 8, "a whole number is 64 bits");
		if (!cli_option_value(id, arg, &v))
			return 0;
		char *field = (char *)q + w->at;
		if (w->size == 8) {
			memcpy(field, &v.u, 8);
		} else {
			uint32_t v32 = (uint32_t)v.u;
			memcpy(field, &v32, 4);
		}
		return 1;
	}
	return -1;
}

/* One option into q; returns -1, or the exit status (help, usage error). */
static int take_option(cli_opt_id id, const char *optarg, void *ctx)
{
	train_request *q = ctx;
	train_options *o = &q->o;
	cli_value v;
	bool ok = true;
	q->given[id - OPT_FIRST] = true;
	int whole = take_whole(q, id, optarg);
	if (whole >= 0)
		return whole ? -1 : bad_value(id, optarg);
	switch (id) {
	case OPT_TRAIN:
		q->corpus[q->ncorpus++] = optarg;
		break;
	case OPT_OUTPUT:
		q->out = optarg;
		break;
	case OPT_OBJECTIVE:
		for (int k = 0; k < OBJ_NKINDS; k++)
			if (strcmp(optarg, objective_name((objective)k)) == 0) {
				o->objective = (objective)k;
				return -1;
			}
		return usage_error(_("--objective must be masked or causal, not '%s'"),
				   AV_Q(optarg));
	case OPT_LR:
		ok = cli_option_value(id, optarg, &v) && (float)v.x > 0.0f;
		if (ok)
			o->lr = (float)v.x;
		break;
	case OPT_SHARPEN:
		if ((ok = cli_option_value(id, optarg, &v)))
			o->sharpen = (float)v.x;
		break;
	case OPT_THREADS:
		if ((ok = cli_option_value(id, optarg, &v)))
			q->threads = (int)v.u;
		break;
	case OPT_VAL_FILE:
		q->val_path = optarg;
		break;
	case OPT_NO_VAL:
		o->val_percent = 0;
		break;
	case OPT_RESUME:
		q->resume = optarg;
		break;
	case OPT_INIT:
		q->init = optarg;
		break;
	case OPT_HELP:
		cli_print_train_help(stdout);
		return EXIT_OK;
	default:
		break;
	}
	return ok ? -1 : bad_value(id, optarg);
}

/* The command line into q; returns -1, or the exit status (help, usage
 * error). */
int parse_train_options(int argc, char **argv, train_request *q)
{
	const char **files = q->corpus;
	memset(q, 0, sizeof *q);
	q->corpus = files;
	train_options_default(&q->o);
	/* --help anywhere, even where getopt would take it as --train's value. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_print_train_help(stdout);
			return EXIT_OK;
		}
	}
	int st = cli_parse(argc, argv, MODE_TRAIN, NULL, take_option, q);
	if (st >= 0)
		return st;
	/* Arguments that are not options: more corpus files. */
	while (optind < argc)
		q->corpus[q->ncorpus++] = argv[optind++];
	if (!q->ncorpus)
		return usage_error(_("--train needs a corpus file"));
	/* "--train --resume CKPT": getopt took the option for the corpus. */
	const char *first = q->corpus[0];
	for (size_t i = 0; strncmp(first, "--", 2) == 0 && i < CLI_NOPTS; i++) {
		const cli_option *o = &cli_options[i];
		if (!(o->modes & (1u << MODE_TRAIN)) || strcmp(first + 2, o->name) != 0 ||
		    access(first, F_OK) == 0)
			continue;
		if (o->id == OPT_RESUME)
			return usage_error(
			    _("--train takes the corpus first, and a checkpoint does not hold its "
			      "text: attnview --train CORPUS --resume %s, with the files the "
			      "stopped "
			      "run read, in the same order"),
			    q->ncorpus > 1 ? AV_Q(q->corpus[1]) : "CHECKPOINT");
		return usage_error(_("--train takes the corpus first, not the option %s: "
				     "attnview --train CORPUS %s ..."),
				   first, first);
	}
	int stdins = 0;
	for (size_t i = 0; i < q->ncorpus; i++)
		stdins += strcmp(q->corpus[i], "-") == 0;
	stdins += q->val_path && strcmp(q->val_path, "-") == 0;
	if (stdins > 1)
		return usage_error(_("standard input (-) can be read only once: give it as one "
				     "corpus file or as --val-file, not both"));
	if (q->given[OPT_NO_VAL - OPT_FIRST] && q->given[OPT_VAL_SHARE - OPT_FIRST] &&
	    q->o.val_percent)
		return usage_error(
		    _("--no-val and --val-share %u contradict each other: choose one"),
		    q->o.val_percent);
	if (q->val_path &&
	    (q->given[OPT_NO_VAL - OPT_FIRST] || q->given[OPT_VAL_SHARE - OPT_FIRST]))
		return usage_error(_("--val-file validates on that file: --val-share and --no-val "
				     "hold out part of the corpus instead; choose one"));
	if (q->given[OPT_EPOCHS - OPT_FIRST]) {
		if (q->given[OPT_STEPS - OPT_FIRST])
			return usage_error(
			    _("--steps and --epochs cannot both be given: choose one"));
		q->o.steps = 0;
	}
	if (q->keep_every && q->given[OPT_TIMELINE_EVERY - OPT_FIRST] && !q->o.timeline_every)
		return usage_error(_("--keep-steps keeps the models of the steps the timeline "
				     "records, and --timeline-every 0 records none: choose one"));
	return -1;
}
