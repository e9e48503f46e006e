/* attnview: see multi-head self-attention in a terminal.
 * main() makes sure OpenBLAS runs a fast kernel, then hands argv to the mode
 * the options ask for. */
#include "attnview/blas.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "attnview/ops.h"
#include "cli.h"
#include "completions.h"
#include "options.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>

#ifndef ATTNVIEW_VERSION
#define ATTNVIEW_VERSION "unknown"
#endif

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv);
	/* The locale (LC_NUMERIC stays "C") and the messages' language. */
	i18n_init();

	cli_mode mode = MODE_VIEW;
	const char *mode_opt = NULL;
	bool help = false, version = false, list = false;
	const char *shell = NULL; /* --completions SHELL */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			break;
		if (is_opt(a, "--completions"))
			shell = a[13] == '=' ? a + 14 : i + 1 < argc ? argv[++i] : "";
		/* These take no value: "--help=x" is left to the mode's parser,
		 * which refuses it. */
		help |= strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
		version |= strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0;
		list |= strcmp(a, "--list-options") == 0;
		cli_mode m = is_opt(a, "--train")    ? MODE_TRAIN
			     : is_opt(a, "--export") ? MODE_EXPORT
			     : is_opt(a, "--dump")   ? MODE_DUMP
			     : is_opt(a, "--info")   ? MODE_INFO
						     : MODE_VIEW;
		if (m == MODE_VIEW)
			continue;
		if (mode_opt && (m != mode || !is_opt(a, mode_opt))) {
			return cli_usage_error("attnview --help", _("%s and %s cannot be combined"),
					       mode_opt, AV_Q(a));
		}
		mode = m;
		mode_opt = is_opt(a, "--train")	   ? "--train"
			   : is_opt(a, "--export") ? "--export"
			   : is_opt(a, "--dump")   ? "--dump"
						   : "--info";
	}
	if (version) {
		printf("attnview %s\n", ATTNVIEW_VERSION);
		printf("OpenBLAS: %s\n", blas_config());
		printf("OpenBLAS kernel: %s (%d threads)\n", blas_corename(), blas_threads());
		printf("vector code: %s\n", ops_vector_code());
		printf("subnormal numbers: %s\n",
		       ops_flushes_subnormals() ? "flushed to zero" : "kept");
		printf("utf8proc: %s (Unicode %s)\n", utf8proc_version(), utf8proc_unicode_version());
		printf("figures: %s\n", fig_formats());
		return EXIT_OK;
	}
	/* Training has many options of its own: its mode prints its own help. */
	if (help && mode != MODE_TRAIN) {
		cli_print_help(stdout);
		return EXIT_OK;
	}
	if (list) {
		cli_list_options(stdout);
		return EXIT_OK;
	}
	if (shell)
		return cli_completions(stdout, shell);
	switch (mode) {
	case MODE_TRAIN:
		return cli_train(argc, argv);
	case MODE_DUMP:
	case MODE_INFO:
		return cli_dump(argc, argv, mode);
	case MODE_EXPORT:
		return cli_export(argc, argv);
	case MODE_VIEW:
	case MODE_NMODES:
	default:
		return cli_view(argc, argv);
	}
}
