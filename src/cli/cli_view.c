/* attnview [--model FILE] [--text TEXT] [--layer L] [--head H] [--scale S]
 * [--colormap R] [--cells C] [--no-panel]: the interactive view. */
#include "attnview/blas.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"
#include "cli.h"
#include "heatmap.h"
#include "view.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int bad_value(const char *opt, const char *val, const char *choices)
{
	return cli_usage_error("attnview --help", _("%s '%s' is not one of: %s"), opt, AV_Q(val),
			       choices);
}

/* --figure-dir and --figure-format: where the figure key writes, and how;
 * -1, or the exit status of a usage error. */
static int figure_option(cli_opt_id id, const char *arg, view_options *vo)
{
	struct stat st;
	if (id == OPT_FIGURE_DIR) {
		if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode))
			return cli_usage_error(
			    "attnview --help", _("--figure-dir %s: %s"), AV_Q(arg),
			    errno == ENOENT ? _("no such folder") : _("not a folder"));
		vo->figure_dir = arg;
		return -1;
	}
	char name[16];
	fig_format fmt;
	av_error err;
	snprintf(name, sizeof name, "x.%.8s", arg);
	if (strlen(arg) > 8 || !fig_format_of(name, &fmt, &err))
		return bad_value("--figure-format", arg, "svg, png, pdf");
	if (!fig_format_available(fmt))
		return cli_usage_error("attnview --help",
				       _("--figure-format %s: attnview was built without cairo and "
					 "pango, which PNG and PDF need; svg works"),
				       AV_Q(arg));
	vo->figure_format = (int)fmt;
	return -1;
}

/* One option of the view (the shared ones are in cli_common); -1, or the
 * exit status of a usage error. */
static int view_option(cli_opt_id id, const char *arg, void *ctx)
{
	view_options *vo = ctx;
	switch (id) {
	case OPT_CELLS:
		for (int i = 0; i < CELLS_NMODES; i++)
			if (strcmp(arg, heat_cells_name((heat_cells)i)) == 0) {
				vo->cells = i;
				return -1;
			}
		return bad_value("--cells", arg, "fit, scroll, compact");
	case OPT_NO_PANEL:
		vo->no_panel = true;
		return -1;
	case OPT_SHOW: {
		sel_kind k;
		if (!sel_parse(arg, &k))
			return cli_show_error(arg);
		vo->show = (int)k;
		return -1;
	}
	case OPT_FIGURE_DIR:
	case OPT_FIGURE_FORMAT:
		return figure_option(id, arg, vo);
	default: /* --help, --version: main.c took them */
		return -1;
	}
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
	view_options vo = VIEW_OPTIONS_INIT;
	cli_common c = CLI_COMMON_INIT;
	c.gen.temperature = vo.temperature;
	c.gen.top_k = vo.top_k;
	c.gen.seed = vo.seed;
	int status = cli_parse(argc, argv, MODE_VIEW, &c, view_option, &vo);
	if (status >= 0)
		return status;
	if (optind < argc) {
		return cli_usage_error("attnview --help",
				       _("unexpected argument '%s' (text goes after --text)"),
				       AV_Q(argv[optind]));
	}
	const char *model_path = c.model_path;
	vo.text = c.text;
	vo.compare = c.compare;
	vo.has_targets = c.has_targets;
	vo.targets[0] = c.targets[0];
	vo.targets[1] = c.targets[1];
	vo.layer = c.layer;
	vo.head = c.head;
	vo.scale = c.scale;
	vo.ramp = c.ramp;
	vo.temperature = c.gen.temperature;
	vo.top_k = c.gen.top_k;
	vo.seed = c.gen.seed;
	/* Hidden: the latency benchmark (tests/bench/bench_latency) reads these records. */
	vo.bench_log = getenv("ATTNVIEW_BENCH_LOG");
	/* For the test suite: keys from a script, the screen saved as text
	 * (src/view/script.h; tests/screens/screens.sh). */
	const char *script = getenv("ATTNVIEW_SCRIPT");
	vo.script = script && script[0] ? script : NULL;
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
	if ((status = cli_check_layer_head(&c, m)) >= 0) {
		model_destroy(m);
		return status;
	}
	if (!view_check_terminal(vo.script != NULL, &err)) {
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
