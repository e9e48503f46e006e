/* Drawing primitives (draw.h). */
#include "draw.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

void put_wc(int y, int x, const wchar_t *wc, style s)
{
	cchar_t cc;
	if (setcchar(&cc, wc, s.a, 0, &s.pair) == OK)
		mvadd_wch(y, x, &cc);
}

int utf8_next(const char **p)
{
	const unsigned char *s = (const unsigned char *)*p;
	uint32_t c = s[0];
	int len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (len > 1) {
		c &= 0x3fu >> (len - 1);
		for (int i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80) {
				*p += i;
				return 0xfffd;
			}
			c = (c << 6) | (s[i] & 0x3fu);
		}
	}
	*p += len;
	return (int)c;
}

/* The next character of s as put_str draws it: its width, and its escape
 * (common.h) when it is a control character or not UTF-8, which a terminal
 * must never receive: put_str draws the escape instead, as text. */
static size_t next_shown(const char *s, uint32_t *cp, char esc[AV_ESC_SIZE], int *w)
{
	size_t len = av_char_shown(s, esc, cp);
	*w = esc[0] ? (int)strlen(esc) : cp_display_width(*cp, NULL);
	return len;
}

int str_width(const char *s)
{
	int w = 0;
	while (*s) {
		char esc[AV_ESC_SIZE];
		uint32_t cp;
		int cw;
		s += next_shown(s, &cp, esc, &cw);
		w += cw;
	}
	return w;
}

int put_str(int y, int x, int maxw, style s, const char *str)
{
	int end = x + maxw;
	/* Escapes stand out as less(1) shows control characters. */
	style e = st(s.a ^ A_REVERSE, s.pair);
	while (*str) {
		char esc[AV_ESC_SIZE];
		uint32_t cp;
		int w;
		str += next_shown(str, &cp, esc, &w);
		if (x + w > end)
			break;
		for (int i = 0; esc[i]; i++) {
			wchar_t ec[2] = {(wchar_t)esc[i], 0};
			put_wc(y, x + i, ec, e);
		}
		if (!esc[0]) {
			wchar_t wc[2] = {(wchar_t)cp, 0};
			put_wc(y, x, wc, s);
		}
		x += w;
	}
	return x;
}

int put_str_cut(int y, int x, int maxw, style s, const char *str)
{
	if (maxw < 1 || str_width(str) <= maxw)
		return put_str(y, x, maxw, s, str);
	int end = put_str(y, x, maxw - 1, s, str);
	return put_str(y, end, 1, s, "…");
}

static int put_vfmt(int y, int x, int maxw, style s, bool cut, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	return cut ? put_str_cut(y, x, maxw, s, buf) : put_str(y, x, maxw, s, buf);
}

int put_fmt(int y, int x, int maxw, style s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int end = put_vfmt(y, x, maxw, s, false, fmt, ap);
	va_end(ap);
	return end;
}

int put_fmt_cut(int y, int x, int maxw, style s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int end = put_vfmt(y, x, maxw, s, true, fmt, ap);
	va_end(ap);
	return end;
}

void fill(int y, int x, int w, style s)
{
	static const wchar_t sp[2] = {L' ', 0};
	for (int i = 0; i < w; i++)
		put_wc(y, x + i, sp, s);
}

int put_glyph(int y, int x, uint32_t cp, style s)
{
	char g[32];
	cp_glyph(cp, g);
	const char *p = g;
	wchar_t wc[CCHARW_MAX + 1];
	int n = 0;
	while (*p && n < CCHARW_MAX)
		wc[n++] = (wchar_t)utf8_next(&p);
	wc[n] = 0;
	bool ph = false;
	int w = cp_display_width(cp, &ph);
	/* A base and its marks form one cell; anything else (the <unk>-style
	 * names of special tokens) is drawn character by character. */
	bool one = n == 1 || (ph && n == 2);
	if (one) {
		put_wc(y, x, wc, s);
		return w;
	}
	return put_str(y, x, 8, s, g) - x;
}

void fmt_weight(char out[32], float w)
{
	if (w != 0 && fabsf(w) < 0.001f)
		snprintf(out, 32, "%.3e", w);
	else
		snprintf(out, 32, "%.6f", w);
}

void fmt_cell_value(char out[8], float w)
{
	if (w >= 0.9995f)
		snprintf(out, 8, "1.00");
	else
		snprintf(out, 8, ".%03d", (int)lroundf(w * 1000.0f));
}
