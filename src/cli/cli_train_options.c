/* attnview --train: its help and its options, parsed into a train_request
 * (cli_train.c runs the training). */
#include "attnview/i18n.h"
#include "attnview/train.h"
#include "cli.h"
#include "cli_train.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The help, a paragraph a message (translated one by one). */
static const char *const train_help[] = {
    N_("Usage: attnview --train CORPUS [CORPUS...] [-o OUT] [options]\n"
       "\n"),
    N_("Train a character-level transformer on UTF-8 text and write it to OUT. Several\n"
       "files are one text, in order (a line break between files); - reads standard\n"
       "input, and pipes work too. A short text needs no options: the context, batch\n"
       "and validation share that do not fit it shrink, and a line says so.\n"
       "\n"),
    /* xgettext:no-c-format */
    N_("  -o, --output FILE       the model file (default model.attn); checkpoints go to\n"
       "                          FILE.ckpt\n"
       "  --objective masked|causal  masked-character (default) or next-character\n"
       "  --dim D                 model width (default 64)\n"
       "  --heads N               attention heads; D must be divisible by N (default 4)\n"
       "  --layers L              transformer blocks (default 2)\n"
       "  --context T             characters per sequence, at most 1024 (default 128;\n"
       "                          a short text gets less, as it does --batch and --lr)\n"
       "  --batch B               sequences per step (default 32)\n"
       "  --steps N               optimizer steps (default 2000)\n"
       "  --epochs N              instead of --steps: N passes' worth of the training text\n"
       "  --lr X                  peak learning rate (default 5e-3)\n"
       "  --warmup N              linear warmup steps, then cosine decay (default\n"
       "                          min(100, steps/10))\n"
       "  --seed S                random seed (default 1)\n"
       "  --threads N             threads (default: all cores; with --resume, the\n"
       "                          checkpoint's, which must not change)\n"
       "  --min-count N           keep characters seen at least N times (default 1)\n"
       "  --max-vocab N           at most N vocabulary ids, 3 specials included (default: all)\n"
       "  --val-share P           hold out the last P% of the corpus for validation,\n"
       "                          0 to 50 (default 5)\n"
       "  --no-val                no validation (the same as --val-share 0)\n"
       "  --val-file FILE         validation text instead of the end of the corpus\n"
       "  --eval-every N          validate every N steps, 0 = only at the end (default 100)\n"
       "  --patience N            stop after N evaluations without a new best validation\n"
       "                          loss, and write the best model (default 0: never)\n"
       "  --checkpoint-every N    write OUT.ckpt at the start and every N steps,\n"
       "                          0 = only on Ctrl-C (default 500)\n"
       "  --resume CHECKPOINT     continue a stopped run with the checkpoint's options\n"
       "  -h, --help              show this help\n"
       "\n"),
    N_("Every evaluation and the end say whether the model beats the unigram baseline\n"
       "(the loss of predicting each character from its frequency alone) and by how\n"
       "much, and a warning says when the validation loss rises while the training\n"
       "loss falls (over-fitting), with what to do.\n"
       "\n"),
    N_("Ctrl-C or SIGTERM finishes the current step, writes a checkpoint and prints the\n"
       "command that resumes it; the resumed run ends with the same model, byte for byte,\n"
       "as an uninterrupted one (same seed and --threads; it keeps the creation time of\n"
       "the run it continues). The model records the clock as its creation time, or\n"
       "SOURCE_DATE_EPOCH (seconds since 1970) when set: set it to get the same bytes\n"
       "from the same corpus, options and seed. Exit status: 0 done, 1 error,\n"
       "2 usage error, 130/143 stopped by SIGINT/SIGTERM with the checkpoint written.\n"),
};

static void print_train_help(void)
{
	for (size_t i = 0; i < sizeof train_help / sizeof train_help[0]; i++)
		fputs(_(train_help[i]), stdout);
}

static const struct option long_opts[] = {
    {"train", required_argument, NULL, OPT_TRAIN},
    {"output", required_argument, NULL, 'o'},
    {"objective", required_argument, NULL, OPT_OBJECTIVE},
    {"dim", required_argument, NULL, OPT_DIM},
    {"heads", required_argument, NULL, OPT_HEADS},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"epochs", required_argument, NULL, OPT_EPOCHS},
    {"lr", required_argument, NULL, OPT_LR},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"seed", required_argument, NULL, OPT_SEED},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"min-count", required_argument, NULL, OPT_MIN_COUNT},
    {"max-vocab", required_argument, NULL, OPT_MAX_VOCAB},
    {"val-file", required_argument, NULL, OPT_VAL_FILE},
    {"val-share", required_argument, NULL, OPT_VAL_SHARE},
    {"no-val", no_argument, NULL, OPT_NO_VAL},
    {"patience", required_argument, NULL, OPT_PATIENCE},
    {"eval-every", required_argument, NULL, OPT_EVAL_EVERY},
    {"checkpoint-every", required_argument, NULL, OPT_CKPT_EVERY},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static bool parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static bool parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	if (!parse_u64(s, &v) || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* One option into q; returns -1, or the exit status (help, usage error). */
static int take_option(int c, const char *name, train_request *q)
{
	train_options *o = &q->o;
	uint64_t u;
	bool ok = true;
	switch (c) {
	case OPT_TRAIN:
		q->corpus[q->ncorpus++] = optarg;
		break;
	case 'o':
		q->out = optarg;
		break;
	case OPT_OBJECTIVE:
		if (strcmp(optarg, "masked") == 0)
			o->objective = OBJ_MASKED;
		else if (strcmp(optarg, "causal") == 0)
			o->objective = OBJ_CAUSAL;
		else
			return usage_error(_("--objective must be masked or causal, not '%s'"),
					   AV_Q(optarg));
		break;
	case OPT_DIM:
		ok = parse_u32(optarg, &o->dim);
		break;
	case OPT_HEADS:
		ok = parse_u32(optarg, &o->heads);
		break;
	case OPT_LAYERS:
		ok = parse_u32(optarg, &o->layers);
		break;
	case OPT_CONTEXT:
		ok = parse_u32(optarg, &o->context);
		break;
	case OPT_BATCH:
		ok = parse_u32(optarg, &o->batch);
		break;
	case OPT_STEPS:
		ok = parse_u64(optarg, &o->steps) && o->steps > 0;
		break;
	case OPT_EPOCHS:
		ok = parse_u64(optarg, &o->epochs) && o->epochs > 0;
		break;
	case OPT_LR: {
		char *end;
		errno = 0;
		double v = strtod(optarg, &end);
		ok = !errno && *optarg && !*end && v > 0 && v < 10;
		o->lr = (float)v;
		break;
	}
	case OPT_WARMUP:
		ok = parse_u64(optarg, &o->warmup);
		break;
	case OPT_SEED:
		ok = parse_u64(optarg, &o->seed);
		break;
	case OPT_THREADS:
		ok = parse_u64(optarg, &u) && u >= 1 && u <= 256;
		q->threads = (int)u;
		break;
	case OPT_MIN_COUNT:
		ok = parse_u64(optarg, &o->min_count) && o->min_count >= 1;
		break;
	case OPT_MAX_VOCAB:
		ok = parse_u32(optarg, &o->max_vocab);
		break;
	case OPT_VAL_FILE:
		q->val_path = optarg;
		break;
	case OPT_VAL_SHARE:
		ok = parse_u32(optarg, &o->val_percent) && o->val_percent <= 50;
		break;
	case OPT_NO_VAL:
		o->val_percent = 0;
		break;
	case OPT_PATIENCE:
		ok = parse_u64(optarg, &o->patience);
		break;
	case OPT_EVAL_EVERY:
		ok = parse_u64(optarg, &o->eval_every);
		break;
	case OPT_CKPT_EVERY:
		ok = parse_u64(optarg, &o->checkpoint_every);
		break;
	case OPT_RESUME:
		q->resume = optarg;
		break;
	case 'h':
		print_train_help();
		return EXIT_OK;
	case ':':
		return usage_error(_("%s needs a value"), AV_Q(name));
	default:
		return usage_error(_("unknown option %s for --train"), AV_Q(name));
	}
	if (!ok)
		return usage_error(_("%s: '%s' is not a valid value (see attnview --train --help)"),
				   AV_Q(name), AV_Q(optarg));
	return -1;
}

/* The command line into q; returns -1, or the exit status (help, usage
 * error). */
int parse_train_options(int argc, char **argv, train_request *q)
{
	const char **files = q->corpus;
	memset(q, 0, sizeof *q);
	q->corpus = files;
	train_options_default(&q->o);
	optind = 1;
	opterr = 0;
	/* --help anywhere, even where getopt would take it as --train's value. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			print_train_help();
			return EXIT_OK;
		}
	}
	int c, li = -1, st;
	while ((c = getopt_long(argc, argv, ":o:h", long_opts, &li)) != -1) {
		char name[64];
		if (li >= 0)
			snprintf(name, sizeof name, "--%s", long_opts[li].name);
		else if (c == 'o' || c == 'h')
			snprintf(name, sizeof name, "-%c", c);
		else if (optopt > 0 && optopt < 128)
			snprintf(name, sizeof name, "-%c", optopt);
		else
			snprintf(name, sizeof name, "%.60s", argv[optind - 1]);
		li = -1;
		if (c >= OPT_TRAIN && c < OPT_LAST)
			q->given[c - OPT_TRAIN] = true;
		if ((st = take_option(c, name, q)) >= 0)
			return st;
	}
	/* Arguments that are not options: more corpus files. */
	while (optind < argc)
		q->corpus[q->ncorpus++] = argv[optind++];
	if (!q->ncorpus)
		return usage_error(_("--train needs a corpus file"));
	int stdins = 0;
	for (size_t i = 0; i < q->ncorpus; i++)
		stdins += strcmp(q->corpus[i], "-") == 0;
	stdins += q->val_path && strcmp(q->val_path, "-") == 0;
	if (stdins > 1)
		return usage_error(_("standard input (-) can be read only once: give it as one "
				     "corpus file or as --val-file, not both"));
	if (q->given[OPT_NO_VAL - OPT_TRAIN] && q->given[OPT_VAL_SHARE - OPT_TRAIN] &&
	    q->o.val_percent)
		return usage_error(
		    _("--no-val and --val-share %u contradict each other: choose one"),
		    q->o.val_percent);
	if (q->val_path &&
	    (q->given[OPT_NO_VAL - OPT_TRAIN] || q->given[OPT_VAL_SHARE - OPT_TRAIN]))
		return usage_error(_("--val-file validates on that file: --val-share and --no-val "
				     "hold out part of the corpus instead; choose one"));
	if (q->given[OPT_EPOCHS - OPT_TRAIN]) {
		if (q->given[OPT_STEPS - OPT_TRAIN])
			return usage_error(
			    _("--steps and --epochs cannot both be given: choose one"));
		q->o.steps = 0;
	}
	return -1;
}
