/* What the modes of the command line share. */
#include "cli.h"
#include "attnview/i18n.h"
#include "attnview/modelfile.h"

#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whatever stdout holds goes first: with both redirected to one file, the
 * lines stay in the order they were written. */
void cli_error(const char *msg)
{
	fflush(stdout);
	fprintf(stderr, _("attnview: %s\n"), msg);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *help, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, _("\nTry '%s'.\n"), help);
	return EXIT_USAGE;
}

model *cli_load_model(const char *path, av_error *err)
{
	if (!path || model_builtin_name(path))
		return model_builtin_named(path, err);
	return model_load(path, err);
}

int cli_gen_option(const char *name, const char *arg, cli_gen *g)
{
	char *end;
	g->given = true;
	if (strcmp(name, "--temperature") == 0) {
		double t = strtod(arg, &end);
		if (end == arg || *end || !(t >= 0 && t <= GEN_MAX_TEMPERATURE))
			return cli_usage_error(
			    "attnview --help",
			    _("--temperature takes a number from 0 (always the most "
			      "likely character) to %g, not '%s'"),
			    (double)GEN_MAX_TEMPERATURE, arg);
		g->temperature = (float)t;
		return -1;
	}
	if (strcmp(name, "--top-k") == 0) {
		if (!cli_parse_int(arg, 0, 1000000, &g->top_k))
			return cli_usage_error(
			    "attnview --help",
			    _("--top-k takes a number of characters (0: all), not "
			      "'%s'"),
			    arg);
		return -1;
	}
	errno = 0;
	unsigned long long seed = strtoull(arg, &end, 10);
	if (end == arg || *end || errno || arg[0] == '-')
		return cli_usage_error("attnview --help",
				       _("--seed takes a whole number, not '%s'"), arg);
	g->seed = seed;
	return -1;
}
