/* What the modes of the command line share. */
#include "cli.h"
#include "attnview/i18n.h"
#include "attnview/modelfile.h"

#include <errno.h>
#include <langinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether bytes from 0x80 are UTF-8 here: in a locale of another character
 * set (GB18030, Latin-1) they are its own characters (gettext converts the
 * translations to it) and pass; ASCII locales translate nothing. */
static bool utf8_output(void)
{
	static int utf8 = -1;
	if (utf8 < 0) {
		const char *cs = nl_langinfo(CODESET);
		utf8 = !cs || strcmp(cs, "UTF-8") == 0 || strcmp(cs, "ANSI_X3.4-1968") == 0;
	}
	return utf8 == 1;
}

void cli_write(FILE *f, const char *s)
{
	bool utf8 = utf8_output();
	while (*s) {
		char esc[AV_ESC_SIZE];
		size_t len = av_char_shown(s, esc, NULL);
		if (!esc[0] || *s == '\n' || *s == '\t' || (!utf8 && (unsigned char)*s >= 0x80))
			fwrite(s, 1, len, f);
		else
			fputs(esc, f);
		s += len;
	}
}

void cli_vprintf(FILE *f, const char *fmt, va_list ap)
{
	char small[2048], *buf = small;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL)
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	va_end(again);
	if (n >= 0)
		cli_write(f, buf ? buf : small);
	if (buf != small)
		free(buf);
}

void cli_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_vprintf(stdout, fmt, ap);
	va_end(ap);
}

/* Whatever stdout holds goes first: with both redirected to one file, the
 * lines stay in the order they were written. */
void cli_error(const char *msg)
{
	fflush(stdout);
	fputs("attnview: ", stderr);
	cli_write(stderr, msg);
	fputc('\n', stderr);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	cli_vprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *help, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	fputs("attnview: ", stderr);
	cli_vprintf(stderr, fmt, ap);
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
			    (double)GEN_MAX_TEMPERATURE, AV_Q(arg));
		g->temperature = (float)t;
		return -1;
	}
	if (strcmp(name, "--top-k") == 0) {
		if (!cli_parse_int(arg, 0, 1000000, &g->top_k))
			return cli_usage_error(
			    "attnview --help",
			    _("--top-k takes a number of characters (0: all), not "
			      "'%s'"),
			    AV_Q(arg));
		return -1;
	}
	errno = 0;
	unsigned long long seed = strtoull(arg, &end, 10);
	if (end == arg || *end || errno || arg[0] == '-')
		return cli_usage_error("attnview --help",
				       _("--seed takes a whole number, not '%s'"), AV_Q(arg));
	g->seed = seed;
	return -1;
}
