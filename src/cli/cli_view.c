/* attnview [--model FILE] [--text TEXT] [--layer L] [--head H] [--scale S]
 * [--colormap R] [--cells C] [--no-panel]: the interactive view. */
#include "attnview/blas.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"
#include "cli.h"
#include "view.h"

#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
	OPT_LAYER = 256,
	OPT_HEAD,
	OPT_SCALE,
	OPT_COLORMAP,
	OPT_CELLS,
	OPT_NO_PANEL,
	OPT_SHOW,
	OPT_FIGURE_DIR,
	OPT_FIGURE_FORMAT,
	OPT_TEMPERATURE,
	OPT_TOP_K,
	OPT_SEED
};

/* A layer or head number: a non-negative integer. */
static bool parse_index(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 1000000)
		return false;
	*out = (int)v;
	return true;
}

static int bad_value(const char *opt, const char *val, const char *choices)
{
	return cli_usage_error("attnview --help", _("%s '%s' is not one of: %s"), opt, AV_Q(val),
			       choices);
}

/* --figure-dir and --figure-format: where the figure key writes, and how. */
static bool figure_option(int c, view_options *vo, int *status)
{
	struct stat st;
	if (c == OPT_FIGURE_DIR) {
		if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode)) {
			*status = cli_usage_error(
			    "attnview --help", _("--figure-dir %s: %s"), AV_Q(optarg),
			    errno == ENOENT ? _("no such folder") : _("not a folder"));
			return false;
		}
		vo->figure_dir = optarg;
		return true;
	}
	char name[16];
	fig_format fmt;
	av_error err;
	snprintf(name, sizeof name, "x.%.8s", optarg);
	if (strlen(optarg) > 8 || !fig_format_of(name, &fmt, &err)) {
		*status = bad_value("--figure-format", optarg, "svg, png, pdf");
		return false;
	}
	if (!fig_format_available(fmt)) {
		*status =
		    cli_usage_error("attnview --help",
				    _("--figure-format %s: attnview was built without cairo and "
				      "pango, which PNG and PDF need; svg works"),
				    AV_Q(optarg));
		return false;
	}
	vo->figure_format = (int)fmt;
	return true;
}

/* --temperature, --top-k, --seed: how the model writes (Ctrl-G). */
static bool writing_option(int c, view_options *vo, int *status)
{
	cli_gen g = {vo->temperature, vo->top_k, vo->seed, false};
	int st = cli_gen_option(c == OPT_TEMPERATURE ? "--temperature"
				: c == OPT_TOP_K     ? "--top-k"
						     : "--seed",
				optarg, &g);
	if (st >= 0) {
		*status = st;
		return false;
	}
	vo->temperature = g.temperature;
	vo->top_k = g.top_k;
	vo->seed = g.seed;
	return true;
}

/* One option of the view; false ends parsing with *status. */
static bool view_option(int c, view_options *vo, const char **model_path, char **argv, int *status)
{
	scale_kind sk;
	cm_ramp rk;
	switch (c) {
	case 'm':
		*model_path = optarg;
		return true;
	case 't':
		vo->text = optarg;
		return true;
	case OPT_LAYER:
	case OPT_HEAD:
		if (!parse_index(optarg, c == OPT_LAYER ? &vo->layer : &vo->head)) {
			*status = cli_usage_error(
			    "attnview --help",
			    _("%s needs a number from 0 (as --dump counts), not '%s'"),
			    c == OPT_LAYER ? "--layer" : "--head", AV_Q(optarg));
			return false;
		}
		return true;
	case OPT_SCALE:
		if (!scale_parse(optarg, &sk)) {
			*status = bad_value("--scale", optarg, "fixed, head, row, log");
			return false;
		}
		vo->scale = (int)sk;
		return true;
	case OPT_COLORMAP:
		if (!colormap_ramp_parse(optarg, &rk)) {
			*status = bad_value("--colormap", optarg, "viridis, cividis");
			return false;
		}
		vo->ramp = (int)rk;
		return true;
	case OPT_CELLS:
		for (int i = 0; i < 3; i++)
			if (strcmp(optarg, (const char *[]){"fit", "scroll", "compact"}[i]) == 0) {
				vo->cells = i;
				return true;
			}
		*status = bad_value("--cells", optarg, "fit, scroll, compact");
		return false;
	case OPT_NO_PANEL:
		vo->no_panel = true;
		return true;
	case OPT_SHOW:
		if ((vo->show = view_show_parse(optarg)) < 0) {
			*status = bad_value("--show", optarg, "head, mean, max, rollout, all");
			return false;
		}
		return true;
	case OPT_FIGURE_DIR:
	case OPT_FIGURE_FORMAT:
		return figure_option(c, vo, status);
	case OPT_TEMPERATURE:
	case OPT_TOP_K:
	case OPT_SEED:
		return writing_option(c, vo, status);
	case ':':
		*status = cli_usage_error("attnview --help", _("%s needs a value"),
					  AV_Q(argv[optind - 1]));
		return false;
	default:
		*status = cli_usage_error("attnview --help", _("unknown option %s"),
					  AV_Q(argv[optind - 1]));
		return false;
	}
}

/* --layer and --head against the model's sizes. */
static int check_head(const view_options *vo, const model *m)
{
	if (vo->layer >= (int)m->cfg.layers)
		return cli_usage_error("attnview --help",
				       _("--layer %d: this model has %u layers, 0 to %u"),
				       vo->layer, m->cfg.layers, m->cfg.layers - 1);
	if (vo->head >= (int)m->cfg.heads)
		return cli_usage_error("attnview --help",
				       _("--head %d: this model has %u heads, 0 to %u"), vo->head,
				       m->cfg.heads, m->cfg.heads - 1);
	return EXIT_OK;
}

/* FILE; or, while a --train run writing FILE has written only its
 * checkpoint so far, FILE.ckpt (the view then watches both: reload.c). */
static model *load_view_model(const char *path, av_error *err)
{
	char ckpt[4200];
	struct stat st;
	if (path && !model_builtin_name(path) && stat(path, &st) != 0 && errno == ENOENT) {
		snprintf(ckpt, sizeof ckpt, "%s.ckpt", path);
		if (stat(ckpt, &st) == 0)
			return model_load(ckpt, err);
		char qs[1024];
		av_shell_quote(path, qs, sizeof qs);
		av_fail(err,
			_("%s: no such file, nor a checkpoint %s of a training run writing it "
			  "(attnview --train CORPUS -o %s writes the checkpoint when it starts)"),
			AV_Q(path), AV_Q(ckpt), qs);
		return NULL;
	}
	return cli_load_model(path, err);
}

int cli_view(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"text", required_argument, NULL, 't'},
	    {"layer", required_argument, NULL, OPT_LAYER},
	    {"head", required_argument, NULL, OPT_HEAD},
	    {"scale", required_argument, NULL, OPT_SCALE},
	    {"colormap", required_argument, NULL, OPT_COLORMAP},
	    {"cells", required_argument, NULL, OPT_CELLS},
	    {"no-panel", no_argument, NULL, OPT_NO_PANEL},
	    {"show", required_argument, NULL, OPT_SHOW},
	    {"figure-dir", required_argument, NULL, OPT_FIGURE_DIR},
	    {"figure-format", required_argument, NULL, OPT_FIGURE_FORMAT},
	    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
	    {"top-k", required_argument, NULL, OPT_TOP_K},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {NULL, 0, NULL, 0},
	};
	const char *model_path = NULL;
	view_options vo = VIEW_OPTIONS_INIT;
	optind = 1;
	opterr = 0;
	int c, status = EXIT_OK;
	while ((c = getopt_long(argc, argv, ":m:t:", opts, NULL)) != -1) {
		if (!view_option(c, &vo, &model_path, argv, &status))
			return status;
	}
	if (optind < argc) {
		return cli_usage_error("attnview --help",
				       _("unexpected argument '%s' (text goes after --text)"),
				       AV_Q(argv[optind]));
	}
	/* Hidden: the latency benchmark (tests/bench_latency) reads these records. */
	vo.bench_log = getenv("ATTNVIEW_BENCH_LOG");
	/* Hidden: a slow model for the screen tests of the "computing" mark. */
	const char *delay = getenv("ATTNVIEW_TEST_DELAY_MS");
	if (delay && delay[0])
		vo.delay_ms = atoi(delay);

	av_error err;
	model *m = load_view_model(model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	if ((status = check_head(&vo, m)) != EXIT_OK) {
		model_destroy(m);
		return status;
	}
	if (!view_check_terminal(&err)) {
		model_destroy(m);
		cli_error(err.msg);
		return EXIT_USAGE;
	}
	/* The forward pass spreads its work over the thread pool, one thread per
	 * core as OpenBLAS counted them (OPENBLAS_NUM_THREADS is respected), each
	 * calling BLAS single-threaded: the pass wakes only as many threads as
	 * its work keeps busy (a small model runs on one), and the pool's
	 * threads sleep between jobs, where OpenBLAS's own spin for a while and
	 * would take the interface thread's CPU (infer.h). */
	parallel_set_threads(blas_threads());
	blas_set_threads(1);
	int sig = 0;
	/* A file is watched with its checkpoint, and reloaded when replaced. */
	vo.model_path = model_builtin_name(model_path) ? NULL : model_path;
	bool ok = view_run(m, &vo, &sig, &err);
	if (sig) {
		/* The terminal is back; let the signal end us as it would have. */
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	if (!ok) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
