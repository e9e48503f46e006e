/* Drawing primitives of the view: every character is placed at a column we
 * computed, so the layout never depends on the terminal agreeing with our
 * widths for the characters before it. */
#ifndef ATTNVIEW_VIEW_DRAW_H
#define ATTNVIEW_VIEW_DRAW_H

#include <curses.h>

#include "attnview/common.h"
#include "attnview/tokenizer.h"

typedef struct style {
	attr_t a;
	int pair; /* extended pairs: ncurses takes them beyond 32767 */
} style;

static inline style st(attr_t a, int pair)
{
	style s = {a, pair};
	return s;
}

static inline style plain(void)
{
	return st(A_NORMAL, 0);
}

/* One wide-character cell (a base and its combining marks). */
void put_wc(int y, int x, const wchar_t *wc, style s);
/* Text (UTF-8) from column x, at most maxw columns; returns the end column.
 * A control character or a byte that is not UTF-8 is drawn as its escape
 * (\e, \x9b: common.h), in reverse, never sent to the terminal. */
int put_str(int y, int x, int maxw, style s, const char *str);
/* put_str, but a text wider than maxw ends in "…" at its last column, so
 * that a cut text does not read whole. */
int put_str_cut(int y, int x, int maxw, style s, const char *str);
int put_fmt(int y, int x, int maxw, style s, const char *fmt, ...) AV_PRINTF(5, 6);
/* put_fmt through put_str_cut. */
int put_fmt_cut(int y, int x, int maxw, style s, const char *fmt, ...) AV_PRINTF(5, 6);
/* w blank cells. */
void fill(int y, int x, int w, style s);
/* The glyph of a codepoint as attnview shows tokens (cp_glyph): one cell with
 * its combining marks, or a short ASCII stand-in. Returns its width. */
int put_glyph(int y, int x, uint32_t cp, style s);

/* Decode one UTF-8 sequence of a string we made ourselves (U+FFFD if broken). */
int utf8_next(const char **p);
/* Columns a UTF-8 string takes on the screen (CJK 2, escapes their length,
 * as put_str draws it):
 * what every label, translated or not, is measured with. */
int str_width(const char *s);

/* A weight as the panel prints it: six decimals, or three significant digits
 * in scientific notation when six decimals would show only zeros. */
void fmt_weight(char out[32], float w);
/* A weight as the cells print it: ".123", "1.00". */
void fmt_cell_value(char out[8], float w);


#endif
