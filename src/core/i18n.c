/* The locale and the message catalogue (i18n.h). */
#include "attnview/i18n.h"

#include <limits.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOCALEDIR
#define LOCALEDIR "/usr/local/share/locale"
#endif

/* Whether this process is the program in the build tree (not installed). */
static bool running_from_build_tree(void)
{
#ifdef ATTNVIEW_BUILD_EXE
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return false;
	self[n] = '\0';
	return strcmp(self, ATTNVIEW_BUILD_EXE) == 0;
#else
	return false;
#endif
}

void i18n_init(void)
{
	setlocale(LC_ALL, "");
	/* Numbers in --dump, figures and option values always use '.'. */
	setlocale(LC_NUMERIC, "C");
	const char *dir = getenv("ATTNVIEW_LOCALEDIR");
	if (!dir || !dir[0]) {
		dir = LOCALEDIR;
#ifdef ATTNVIEW_BUILD_LOCALEDIR
		if (running_from_build_tree())
			dir = ATTNVIEW_BUILD_LOCALEDIR;
#endif
	}
	bindtextdomain(AV_TEXTDOMAIN, dir);
	textdomain(AV_TEXTDOMAIN);
}

const char *av_pgettext(const char *context, const char *s)
{
	/* The catalogue's key: the context, EOT, the message (as pgettext). */
	char key[256];
	int n = snprintf(key, sizeof key, "%s\004%s", context, s);
	if (n < 0 || (size_t)n >= sizeof key)
		return s;
	const char *t = gettext(key);
	return t == key ? s : t;
}
