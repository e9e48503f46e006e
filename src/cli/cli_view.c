/* attnview [--model FILE] [--text TEXT]: the interactive view. */
#include "attnview/blas.h"
#include "cli.h"
#include "view.h"

#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_view(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"text", required_argument, NULL, 't'},
	    {NULL, 0, NULL, 0},
	};
	const char *model_path = NULL;
	view_options vo = {0};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":m:t:", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			model_path = optarg;
			break;
		case 't':
			vo.text = optarg;
			break;
		case ':':
			fprintf(stderr, "attnview: %s needs a value\nTry 'attnview --help'.\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(stderr, "attnview: unknown option %s\nTry 'attnview --help'.\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"attnview: unexpected argument '%s' (text goes after --text)\n"
			"Try 'attnview --help'.\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	/* Hidden: the latency benchmark (tests/bench_latency) reads these records. */
	vo.bench_log = getenv("ATTNVIEW_BENCH_LOG");
	/* Hidden: a slow model for the screen tests of the "computing" mark. */
	const char *delay = getenv("ATTNVIEW_TEST_DELAY_MS");
	if (delay && delay[0])
		vo.delay_ms = atoi(delay);

	setlocale(LC_ALL, "");
	av_error err;
	if (!view_check_terminal(&err)) {
		cli_error(err.msg);
		return EXIT_USAGE;
	}
	model *m = cli_load_model(model_path, &err);
	if (!m) {
		cli_error(err.msg);
		return EXIT_RUNTIME;
	}
	/* One small forward pass at a time: a single BLAS thread is faster for
	 * these sizes, and no spinning BLAS threads compete with the interface. */
	blas_set_threads(1);
	int sig = 0;
	bool ok = view_run(m, &vo, &sig, &err);
	model_destroy(m);
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
