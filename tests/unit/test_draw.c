/* The view's text primitives (src/view/draw.c) on a curses screen that
 * writes to /dev/null: printable text, Chinese included, is drawn as it is;
 * a control character or a byte that is not UTF-8 is drawn as its escape
 * (\e, \x9b), never as itself, and str_width counts what put_str draws, so
 * the layout around such text stays where it was computed. */
#define NCURSES_WIDECHAR 1
#include "draw.h"
#include "harness.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Columns [x, x + n) of row y as text: each cell's first character, none
 * for the second column of a wide one. */
static void row_text(int y, int x, int n, wchar_t *out)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		cchar_t cc;
		wchar_t wc[CCHARW_MAX + 1] = {0};
		attr_t a;
		short pair;
		if (mvin_wch(y, x + i, &cc) != OK || getcchar(&cc, wc, &a, &pair, NULL) == ERR)
			break;
		if (wc[0] && !(i > 0 && wcwidth(out[k - 1]) == 2 && wc[0] == out[k - 1]))
			out[k++] = wc[0];
	}
	out[k] = 0;
}

/* put_str of s at column 2 ends where str_width says, and the cells hold
 * `want` (with its escapes as text). */
static void check_drawn(const char *s, const wchar_t *want, int width)
{
	erase();
	int end = put_str(1, 2, 60, plain(), s);
	CHECKF(str_width(s) == width, "str_width of %ls: %d, want %d", want, str_width(s), width);
	CHECKF(end == 2 + width, "put_str of %ls ends at %d, want %d", want, end, 2 + width);
	wchar_t got[128];
	row_text(1, 2, width, got);
	CHECKF(wcscmp(got, want) == 0, "drawn [%ls], want [%ls]", got, want);
	for (int i = 0; got[i]; i++)
		CHECKF(got[i] >= 0x20 && got[i] != 0x7F && !(got[i] >= 0x80 && got[i] < 0xA0),
		       "a control character U+%04X reached the screen", (unsigned)got[i]);
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
	if (!scr) {
		printf("no xterm-256color terminfo entry: skipped\n");
		return 77;
	}
	check_drawn("model", L"model", 5);
	check_drawn("静夜思", L"静夜思", 6);
	check_drawn("x\033]0;t\a!", L"x\\e]0;t\\a!", 10);
	check_drawn("a\tb\nc", L"a\\tb\\nc", 7);
	check_drawn("\xc2\x9b" "2J", L"\\xc2\\x9b2J", 10);
	check_drawn("\x9b" "A", L"\\x9bA", 5);
	check_drawn("\x7f", L"\\x7f", 4);
	/* Cut to fit: never half an escape. */
	erase();
	int end = put_str(0, 0, 3, plain(), "ab\033cd");
	CHECKF(end == 2, "a 3-column field took %d columns of 'ab\\ecd'", end);
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	return test_summary("draw");
}
