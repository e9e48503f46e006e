/* What the modes of the command line share. */
#include "cli.h"
#include "attnview/modelfile.h"

#include <stdarg.h>
#include <stdio.h>

void cli_error(const char *msg)
{
	fprintf(stderr, "attnview: %s\n", msg);
}

int cli_usage_error(const char *help, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s'.\n", help);
	return EXIT_USAGE;
}

model *cli_load_model(const char *path, av_error *err)
{
	return path ? model_load(path, err) : model_builtin(err);
}
