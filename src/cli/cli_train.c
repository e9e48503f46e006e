/* attnview --train: options, corpus loading, progress display, and what to
 * say when training stops. The work itself is in corpus.c and train.c. */
#include "attnview/blas.h"
#include "cli.h"
#include "attnview/corpus.h"
#include "attnview/checkpoint.h"
#include "attnview/train.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static const char train_help[] =
    "Usage: attnview --train CORPUS [-o OUT] [options]\n"
    "\n"
    "Train a character-level transformer on a UTF-8 text file and write it to OUT.\n"
    "\n"
    "  -o, --output FILE       the model file (default model.attn); checkpoints go to\n"
    "                          FILE.ckpt\n"
    "  --objective masked|causal  masked-character (default) or next-character\n"
    "  --dim D                 model width (default 64)\n"
    "  --heads N               attention heads; D must be divisible by N (default 4)\n"
    "  --layers L              transformer blocks (default 2)\n"
    "  --context T             characters per sequence, at most 1024 (default 128)\n"
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
    "  --val-file FILE         validation text (default: the last 5% of CORPUS)\n"
    "  --eval-every N          validate every N steps, 0 = only at the end (default 100)\n"
    "  --checkpoint-every N    write OUT.ckpt every N steps, 0 = only on Ctrl-C\n"
    "                          (default 500)\n"
    "  --resume CHECKPOINT     continue a stopped run with the checkpoint's options\n"
    "  -h, --help              show this help\n"
    "\n"
    "Ctrl-C or SIGTERM finishes the current step, writes a checkpoint and prints the\n"
    "command that resumes it; the resumed run ends with the same model, byte for byte,\n"
    "as an uninterrupted one (same seed and --threads). Exit status: 0 done, 1 error,\n"
    "2 usage error, 130/143 stopped by SIGINT/SIGTERM with the checkpoint written.\n";

enum {
	OPT_TRAIN = 256,
	OPT_OBJECTIVE,
	OPT_DIM,
	OPT_HEADS,
	OPT_LAYERS,
	OPT_CONTEXT,
	OPT_BATCH,
	OPT_STEPS,
	OPT_EPOCHS,
	OPT_LR,
	OPT_WARMUP,
	OPT_SEED,
	OPT_THREADS,
	OPT_MIN_COUNT,
	OPT_MAX_VOCAB,
	OPT_VAL_FILE,
	OPT_EVAL_EVERY,
	OPT_CKPT_EVERY,
	OPT_RESUME,
	OPT_LAST
};

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
    {"eval-every", required_argument, NULL, OPT_EVAL_EVERY},
    {"checkpoint-every", required_argument, NULL, OPT_CKPT_EVERY},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

#define usage_error(...) cli_usage_error("attnview --train --help", __VA_ARGS__)

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

/* Quote for a POSIX shell when needed. */
static void shell_quote(const char *s, char *out, size_t n)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_./+=:,@", *p)))
			plain = false;
	if (plain) {
		snprintf(out, n, "%s", s);
		return;
	}
	size_t k = 0;
	if (k + 1 < n)
		out[k++] = '\'';
	for (const char *p = s; *p && k + 5 < n; p++) {
		if (*p == '\'') {
			memcpy(out + k, "'\\''", 4);
			k += 4;
		} else {
			out[k++] = *p;
		}
	}
	if (k + 1 < n)
		out[k++] = '\'';
	out[k < n ? k : n - 1] = '\0';
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void format_duration(double s, char *out, size_t n)
{
	if (!(s >= 0) || s > 1e8) {
		snprintf(out, n, "?");
		return;
	}
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(out, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(out, n, "%lds", t);
}

/* Progress display state. */
typedef struct progress_ui {
	bool tty;
	double t0;
	uint64_t step0;
	bool line_open; /* a live status line is on screen */
} progress_ui;

/* A sparkline of up to `width` buckets of the recent losses. */
static void sparkline(const float *v, int n, int width, char *out, size_t cap)
{
	static const char *bars[8] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	out[0] = '\0';
	if (n < 2)
		return;
	int nb = n < width ? n : width;
	float b[64];
	float lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < nb; i++) {
		int a = i * n / nb, e = (i + 1) * n / nb;
		double s = 0;
		for (int j = a; j < e; j++)
			s += v[j];
		b[i] = (float)(s / (e - a));
		lo = fminf(lo, b[i]);
		hi = fmaxf(hi, b[i]);
	}
	size_t k = 0;
	for (int i = 0; i < nb && k + 4 < cap; i++) {
		int level = hi > lo ? (int)((b[i] - lo) / (hi - lo) * 7.0f + 0.5f) : 3;
		size_t l = strlen(bars[level]);
		memcpy(out + k, bars[level], l);
		k += l;
	}
	out[k] = '\0';
}

static void on_progress(const train_progress *p, void *ctx)
{
	progress_ui *ui = ctx;
	double el = now_seconds() - ui->t0;
	uint64_t done = p->step - ui->step0;
	uint64_t per_step = p->step ? p->tokens / p->step : 0;
	double tps = el > 0 ? (double)(done * per_step) / el : 0;
	char eta[32], vl[32];
	format_duration(done ? el / (double)done * (double)(p->total - p->step) : -1, eta,
			sizeof eta);
	if (isnan(p->val_loss))
		snprintf(vl, sizeof vl, "-");
	else
		snprintf(vl, sizeof vl, "%.3f", (double)p->val_loss);
	if (ui->tty) {
		/* Redraw at most ~10 times a second, and always at evaluations. */
		static double last;
		double t = now_seconds();
		if (!p->evaluated && p->step != p->total && t - last < 0.1)
			return;
		last = t;
		struct winsize ws;
		int cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
		char line[256];
		int len = snprintf(line, sizeof line,
				   "step %" PRIu64 "/%" PRIu64 "  loss %.3f  val %s  %.1fk tok/s  "
				   "ETA %s",
				   p->step, p->total, (double)p->loss, vl, tps / 1000.0, eta);
		if (len >= cols)
			line[cols > 1 ? cols - 1 : 0] = '\0';
		char spark[256];
		int room = cols - 2 - len;
		if (room > 48)
			room = 48;
		if (room >= 8) {
			sparkline(p->recent, p->nrecent, room, spark, sizeof spark);
		} else {
			spark[0] = '\0';
		}
		printf("\r\033[K%s%s%s", line, spark[0] ? "  " : "", spark);
		fflush(stdout);
		ui->line_open = true;
		return;
	}
	if (!p->evaluated)
		return;
	/* Not a terminal: one plain line per evaluation. */
	double mean = 0;
	int n = p->nrecent < 100 ? p->nrecent : 100;
	for (int i = p->nrecent - n; i < p->nrecent; i++)
		mean += p->recent[i];
	mean = n ? mean / n : NAN;
	printf("step %" PRIu64 "/%" PRIu64 ": train loss %.4f, val loss %s, val acc %.2f%%, "
	       "%.0f tok/s, ETA %s\n",
	       p->step, p->total, mean, vl, 100.0 * (double)p->val_acc, tps, eta);
	fflush(stdout);
}

static void end_line(progress_ui *ui)
{
	if (ui->line_open) {
		putchar('\n');
		ui->line_open = false;
	}
}

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
	    {OPT_CKPT_EVERY, "--checkpoint-every", o->checkpoint_every == ck->checkpoint_every},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		if (given[t[i].opt - OPT_TRAIN] && !t[i].same) {
			snprintf(msg, n,
				 "%s differs from the checkpoint's: --resume continues with "
				 "the options it was started with; drop %s",
				 t[i].name, t[i].name);
			return false;
		}
	}
	return true;
}

int cli_train(int argc, char **argv)
{
	train_options o;
	train_options_default(&o);
	const char *corpus_path = NULL, *out = NULL, *val_path = NULL, *resume = NULL;
	int threads = 0;
	bool given[OPT_LAST - OPT_TRAIN] = {false};
	uint64_t u;
	int c;
	optind = 1;
	opterr = 0;
	/* --help anywhere, even where getopt would take it as --train's value. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(train_help, stdout);
			return EXIT_OK;
		}
	}
	int li = -1;
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
			given[c - OPT_TRAIN] = true;
		bool ok = true;
		switch (c) {
		case OPT_TRAIN:
			corpus_path = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_OBJECTIVE:
			if (strcmp(optarg, "masked") == 0)
				o.objective = OBJ_MASKED;
			else if (strcmp(optarg, "causal") == 0)
				o.objective = OBJ_CAUSAL;
			else
				return usage_error("--objective must be masked or causal, not '%s'",
						   optarg);
			break;
		case OPT_DIM:
			ok = parse_u32(optarg, &o.dim);
			break;
		case OPT_HEADS:
			ok = parse_u32(optarg, &o.heads);
			break;
		case OPT_LAYERS:
			ok = parse_u32(optarg, &o.layers);
			break;
		case OPT_CONTEXT:
			ok = parse_u32(optarg, &o.context);
			break;
		case OPT_BATCH:
			ok = parse_u32(optarg, &o.batch);
			break;
		case OPT_STEPS:
			ok = parse_u64(optarg, &o.steps) && o.steps > 0;
			break;
		case OPT_EPOCHS:
			ok = parse_u64(optarg, &o.epochs) && o.epochs > 0;
			break;
		case OPT_LR: {
			char *end;
			errno = 0;
			double v = strtod(optarg, &end);
			ok = !errno && *optarg && !*end && v > 0 && v < 10;
			o.lr = (float)v;
			break;
		}
		case OPT_WARMUP:
			ok = parse_u64(optarg, &o.warmup);
			break;
		case OPT_SEED:
			ok = parse_u64(optarg, &o.seed);
			break;
		case OPT_THREADS:
			ok = parse_u64(optarg, &u) && u >= 1 && u <= 256;
			threads = (int)u;
			break;
		case OPT_MIN_COUNT:
			ok = parse_u64(optarg, &o.min_count) && o.min_count >= 1;
			break;
		case OPT_MAX_VOCAB:
			ok = parse_u32(optarg, &o.max_vocab);
			break;
		case OPT_VAL_FILE:
			val_path = optarg;
			break;
		case OPT_EVAL_EVERY:
			ok = parse_u64(optarg, &o.eval_every);
			break;
		case OPT_CKPT_EVERY:
			ok = parse_u64(optarg, &o.checkpoint_every);
			break;
		case OPT_RESUME:
			resume = optarg;
			break;
		case 'h':
			fputs(train_help, stdout);
			return EXIT_OK;
		case ':':
			return usage_error("%s needs a value", name);
		default:
			return usage_error("unknown option %s for --train", name);
		}
		if (!ok)
			return usage_error("%s: '%s' is not a valid value (see attnview --train "
					   "--help)",
					   name, optarg);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s': the corpus is given as --train "
				   "FILE",
				   argv[optind]);
	if (!corpus_path)
		return usage_error("--train needs a corpus file");
	if (given[OPT_EPOCHS - OPT_TRAIN]) {
		if (given[OPT_STEPS - OPT_TRAIN])
			return usage_error("--steps and --epochs cannot both be given: choose "
					   "one");
		o.steps = 0;
	}

	av_error err;
	train_checkpoint ck = {0};
	train_checkpoint *ckp = NULL;
	if (resume) {
		if (!train_checkpoint_load(&ck, resume, &err)) {
			cli_error(err.msg);
			return EXIT_RUNTIME;
		}
		ckp = &ck;
		char msg[512];
		train_options want = o;
		if (given[OPT_EPOCHS - OPT_TRAIN])
			want.steps = ck.opt.steps;
		if (!check_resume_options(given, &want, &ck.opt, ck.epochs, msg, sizeof msg)) {
			train_checkpoint_finish(&ck);
			return usage_error("%s", msg);
		}
		/* The bits depend on the thread count (train.h): keep the checkpoint's. */
		if (threads && (uint32_t)threads != ck.opt.threads) {
			int was = (int)ck.opt.threads;
			train_checkpoint_finish(&ck);
			return usage_error(
			    "--threads %d differs from the checkpoint's %d: the result "
			    "would differ from an uninterrupted run; drop --threads "
			    "(or give --threads %d)",
			    threads, was, was);
		}
		threads = (int)ck.opt.threads;
		if (val_path && (!ck.val_path || strcmp(val_path, ck.val_path) != 0)) {
			train_checkpoint_finish(&ck);
			return usage_error("--val-file differs from the checkpoint's; drop it");
		}
		val_path = ck.val_path;
		o = ck.opt;
	} else if (!train_options_check(&o, &err)) {
		return usage_error("%s", err.msg);
	}

	/* Output and checkpoint paths. */
	char out_buf[4096], ckpt_buf[4200];
	if (!out) {
		size_t l = resume ? strlen(resume) : 0;
		if (resume && l > 5 && strcmp(resume + l - 5, ".ckpt") == 0 &&
		    l - 5 < sizeof out_buf) {
			memcpy(out_buf, resume, l - 5);
			out_buf[l - 5] = '\0';
			out = out_buf;
		} else {
			out = "model.attn";
		}
	}
	if (resume)
		snprintf(ckpt_buf, sizeof ckpt_buf, "%s", resume);
	else
		snprintf(ckpt_buf, sizeof ckpt_buf, "%s.ckpt", out);
	int status = EXIT_RUNTIME;
	corpus cor = {0};
	trainer *t = NULL;
	if (!train_check_output(out, &err) || !train_check_output(ckpt_buf, &err)) {
		cli_error(err.msg);
		goto out;
	}
	if (threads)
		blas_set_threads(threads);

	corpus_options co = {
	    .val_path = val_path, .min_count = o.min_count, .max_vocab = o.max_vocab};
	double tl = now_seconds();
	if (!corpus_load(&cor, corpus_path, &co, &err)) {
		cli_error(err.msg);
		goto out;
	}
	char summary[4096];
	corpus_summary(&cor, corpus_path, summary, sizeof summary);
	fputs(summary, stdout);
	if (!train_check_data(&o, &cor, corpus_path, &err)) {
		cli_error(err.msg);
		status = EXIT_USAGE;
		goto out;
	}

	char name[256], cbase[256], desc[512];
	base_name(out, name, sizeof name, true);
	base_name(corpus_path, cbase, sizeof cbase, false);
	snprintf(desc, sizeof desc, "%s (%" PRIu64 " characters)", cbase, cor.ntrain + cor.nval);
	t = trainer_create(&o, &cor, ckp, name, desc, val_path, out, ckpt_buf, &err);
	if (!t) {
		cli_error(err.msg);
		goto out;
	}
	printf("model: %s, d=%u h=%u L=%u T=%u, %u vocabulary ids, %zu parameters; batch %u, "
	       "%" PRIu64 " steps, lr %g, warmup %" PRIu64 ", %d BLAS threads (%s), corpus read "
	       "in %.1fs\n",
	       objective_name((objective)t->opt.objective), t->opt.dim, t->opt.heads, t->opt.layers,
	       t->opt.context, cor.vocab.size, t->model->nparams, t->opt.batch, t->total,
	       (double)t->opt.lr, t->opt.warmup, blas_threads(), blas_corename(),
	       now_seconds() - tl);
	if (resume)
		printf("resuming %s at step %" PRIu64 "\n", resume, t->step);
	fflush(stdout);

	if (!train_install_signals(&err)) {
		cli_error(err.msg);
		goto out;
	}
	progress_ui ui = {.tty = isatty(STDOUT_FILENO), .t0 = now_seconds(), .step0 = t->step};
	train_status st = trainer_run(t, on_progress, &ui, &err);
	train_restore_signals();
	end_line(&ui);
	if (st == TRAIN_FAILED) {
		cli_error(err.msg);
		goto out;
	}
	if (st == TRAIN_STOPPED) {
		int sig = train_stop_requested();
		char qc[4200], qk[4200], qo[4200];
		shell_quote(corpus_path, qc, sizeof qc);
		shell_quote(ckpt_buf, qk, sizeof qk);
		shell_quote(out, qo, sizeof qo);
		/* --threads always: the result is the same only on as many threads. */
		fprintf(stderr,
			"attnview: stopped at step %" PRIu64 " of %" PRIu64
			"; checkpoint written to "
			"%s\nresume with: attnview --train %s --resume %s -o %s --threads %u\n",
			t->step, t->total, ckpt_buf, qc, qk, qo, t->opt.threads);
		status = 128 + sig;
		goto out;
	}
	const train_result *r = &t->final;
	char took[32];
	format_duration(now_seconds() - ui.t0, took, sizeof took);
	printf("validation (%" PRIu64 " %s characters): loss %.4f nats/char, accuracy %.2f%%\n"
	       "unigram baseline on the same characters: loss %.4f, accuracy %.2f%%\n"
	       "wrote %s (%" PRIu64 " steps, %s)\n",
	       r->count, t->opt.objective == OBJ_MASKED ? "masked" : "next", (double)r->loss,
	       100.0 * (double)r->acc, (double)r->base_loss, 100.0 * (double)r->base_acc, out,
	       t->step, took);
	status = EXIT_OK;
out:
	trainer_destroy(t);
	corpus_finish(&cor);
	train_checkpoint_finish(&ck);
	return status;
}
