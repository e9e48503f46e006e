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
