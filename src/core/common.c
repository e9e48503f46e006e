#include "attnview/common.h"
#include "attnview/i18n.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *av_alloc_large(size_t bytes, bool zero)
{
#ifdef MADV_HUGEPAGE
	if (bytes >= HUGE_PAGE && bytes <= SIZE_MAX - HUGE_PAGE) {
		size_t n = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		void *p = aligned_alloc(HUGE_PAGE, n);
		if (!p) /* the alignment's slack may be what is missing */
			return zero ? calloc(bytes, 1) : malloc(bytes);
		/* Before the first touch, so the pages come huge; advice the
		 * kernel does not take (THP off) changes nothing. */
		(void)madvise(p, n, MADV_HUGEPAGE);
		if (zero)
			memset(p, 0, bytes);
		return p;
	}
#endif
	return zero ? calloc(bytes ? bytes : 1, 1) : malloc(bytes ? bytes : 1);
}

double av_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int av_digits(int n)
{
	int d = 1;
	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

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

/* Length of the valid UTF-8 sequence at s (1..4) and its codepoint; 0 when
 * the byte at s starts none (Unicode 3.9: no overlong forms, surrogates or
 * values above U+10FFFF). A NUL ends any sequence. */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp)
{
	unsigned c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t len = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
	if (!len)
		return 0;
	unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
	unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
	if (s[1] < lo || s[1] > hi)
		return 0;
	uint32_t v = c & (0x7Fu >> len);
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (s[k] & 0x3Fu);
	}
	*cp = v;
	return len;
}

static void hex_bytes(const unsigned char *s, size_t n, char esc[AV_ESC_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		esc[k++] = '\\';
		esc[k++] = 'x';
		esc[k++] = hex[s[i] >> 4];
		esc[k++] = hex[s[i] & 15];
	}
	esc[k] = '\0';
}

bool av_cp_turns_text(uint32_t cp)
{
	return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

size_t av_char_shown(const char *s, char esc[AV_ESC_SIZE], uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c;
	size_t len = utf8_seq(u, &c);
	esc[0] = '\0';
	if (!len) {
		c = u[0];
		len = 1;
		hex_bytes(u, 1, esc);
	} else if (c < 0x20 || c == 0x7F) {
		static const char named[] = "abtnvfr"; /* 7..13 */
		if (c >= 7 && c <= 13)
			snprintf(esc, AV_ESC_SIZE, "\\%c", named[c - 7]);
		else if (c == 27)
			snprintf(esc, AV_ESC_SIZE, "\\e");
		else
			hex_bytes(u, 1, esc);
	} else if ((c >= 0x80 && c <= 0x9F) || av_cp_turns_text(c)) {
		hex_bytes(u, len, esc);
	}
	if (cp)
		*cp = c;
	return len;
}

/* Whether av_quote shows s as it is. */
static bool shown_plain(const char *s)
{
	char esc[AV_ESC_SIZE];
	if (!*s)
		return false;
	while (*s) {
		if (*s == '"' || *s == '\\')
			return false;
		s += av_char_shown(s, esc, NULL);
		if (esc[0])
			return false;
	}
	return true;
}

/* The next piece of a quoted s: an escape in esc, or the character itself
 * (*piece points into s); *used gets the bytes of s it stands for. `quote`
 * is the quote character that must be escaped, with the backslash. */
static size_t quoted_piece(const char *s, char quote, char esc[AV_ESC_SIZE], const char **piece,
			   size_t *used)
{
	*used = av_char_shown(s, esc, NULL);
	if (!esc[0] && (*s == quote || *s == '\\')) {
		esc[0] = '\\';
		esc[1] = *s;
		esc[2] = '\0';
	}
	*piece = esc[0] ? esc : s;
	return esc[0] ? strlen(esc) : *used;
}

/* s between open and close with quoted_piece's escapes: cut short with
 * "..." after the close when it does not fit in n bytes. */
static void quote_into(const char *s, const char *open, char quote, char *out, size_t n)
{
	size_t k = strlen(open);
	memcpy(out, open, k);
	bool cut = false;
	for (const char *p = s; *p;) {
		char esc[AV_ESC_SIZE];
		const char *piece;
		size_t used, len = quoted_piece(p, quote, esc, &piece, &used);
		if (k + len + 5 > n) { /* the close, "..." and the NUL */
			cut = true;
			break;
		}
		memcpy(out + k, piece, len);
		k += len;
		p += used;
	}
	out[k++] = quote;
	if (cut) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

const char *av_quote(const char *s, char *out, size_t n)
{
	size_t len = strlen(s);
	if (len < n && shown_plain(s))
		memcpy(out, s, len + 1);
	else
		quote_into(s, "\"", '"', out, n);
	return out;
}

/* s for a POSIX shell: as it is when it needs no quoting; in $'...' when a
 * character is escaped (av_char_shown); else in single quotes, with each '
 * written '\''. Cut short (still quoted) when out is too small. */
void av_shell_quote(const char *s, char *out, size_t n)
{
	bool plain = *s != '\0', escaped = false;
	for (const char *p = s; *p;) {
		char esc[AV_ESC_SIZE];
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_./+=:,@", *p)))
			plain = false;
		p += av_char_shown(p, esc, NULL);
		escaped |= esc[0] != '\0';
	}
	if (plain) {
		snprintf(out, n, "%s", s);
		return;
	}
	if (escaped) {
		quote_into(s, "$'", '\'', out, n);
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
