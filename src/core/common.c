#include "attnview/common.h"
#include "attnview/i18n.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool av_fail(av_error *err, const char *fmt, ...)
{
	if (!err)
		return false;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return false;
}

bool av_fail_errno(av_error *err, int errnum, const char *fmt, ...)
{
	if (!err)
		return false;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof err->msg)
		snprintf(err->msg + n, sizeof err->msg - (size_t)n, _(": %s"), strerror(errnum));
	return false;
}

/* s for a POSIX shell: as it is when it needs no quoting, else in single
 * quotes with each ' written '\''. Cut short (still quoted) when out is too
 * small. */
void av_shell_quote(const char *s, char *out, size_t n)
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
	for (const char *p = s; *p && k + 6 < n; p++) {
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
