/* The input line: editing anywhere, CJK-width-aware cursor and scrolling,
 * what pasted text becomes, and the length limit. */
#include "lineedit.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static bool line_is(const lineedit *le, const char *want)
{
	char *s = lineedit_utf8(le, NULL);
	bool ok = s && strcmp(s, want) == 0;
	if (!ok)
		fprintf(stderr, "line is \"%s\", want \"%s\"\n", s ? s : "(null)", want);
	free(s);
	return ok;
}

static void insert_str(lineedit *le, const char *ascii)
{
	uint32_t cps[256];
	size_t n = 0;
	for (; ascii[n] && n < 256; n++)
		cps[n] = (unsigned char)ascii[n];
	lineedit_insert(le, cps, n, NULL);
}

static void test_edit(void)
{
	lineedit le;
	CHECK(lineedit_init(&le, 100));
	uint32_t t[] = {'a', 'b', 0x4e2d};
	CHECK(lineedit_insert(&le, t, 3, NULL) == 3);
	CHECK(le.n == 3 && le.cur == 3);
	CHECK(line_is(&le, "ab中"));
	CHECK(lineedit_width(&le, 0, le.n) == 4);
	CHECK(lineedit_left(&le));
	insert_str(&le, "x");
	CHECK(line_is(&le, "abx中"));
	CHECK(le.cur == 3);
	CHECK(lineedit_home(&le) && le.cur == 0);
	CHECK(!lineedit_home(&le));
	CHECK(!lineedit_left(&le));
	CHECK(!lineedit_backspace(&le));
	CHECK(lineedit_delete(&le));
	CHECK(line_is(&le, "bx中"));
	CHECK(lineedit_end(&le) && le.cur == 3);
	CHECK(!lineedit_right(&le));
	CHECK(!lineedit_delete(&le));
	CHECK(lineedit_backspace(&le));
	CHECK(line_is(&le, "bx"));
	CHECK(lineedit_left(&le) && lineedit_kill_end(&le));
	CHECK(line_is(&le, "b"));
	CHECK(!lineedit_kill_end(&le));
	CHECK(lineedit_clear(&le) && le.n == 0 && le.cur == 0);
	CHECK(!lineedit_clear(&le));
	CHECK(line_is(&le, ""));

	insert_str(&le, "hello world  ");
	CHECK(lineedit_delete_word(&le));
	CHECK(line_is(&le, "hello "));
	CHECK(lineedit_delete_word(&le));
	CHECK(line_is(&le, ""));
	CHECK(!lineedit_delete_word(&le));
	/* Words end at the cursor, not at the end of the line. */
	insert_str(&le, "one two three");
	for (int i = 0; i < 6; i++)
		lineedit_left(&le);
	CHECK(lineedit_delete_word(&le));
	CHECK(line_is(&le, "one  three"));
	CHECK(le.cur == 4);

	uint32_t set[] = {'z', 0x1f600};
	CHECK(lineedit_set(&le, set, 2, NULL) == 2);
	CHECK(line_is(&le, "z😀") && le.cur == 2);
	lineedit_finish(&le);
}

static void test_filter(void)
{
	lineedit le;
	CHECK(lineedit_init(&le, 100));
	/* Pasted text: CR LF and lone CR become one LF each, TAB a space,
	 * other controls and non-characters vanish. */
	uint32_t p[] = {'a',  '\r', '\n',   'b',      '\t', 'c', 0x01,
			0x7f, 0x85, 0xd800, 0x110000, '\r', 'd'};
	CHECK(lineedit_insert(&le, p, sizeof p / sizeof p[0], NULL) == 7);
	CHECK(line_is(&le, "a\nb c\nd"));
	lineedit_finish(&le);
}

static void test_limit(void)
{
	lineedit le;
	CHECK(lineedit_init(&le, 5));
	bool full = false;
	insert_str(&le, "abc");
	lineedit_home(&le);
	uint32_t more[] = {'1', '2', '3', '4'};
	CHECK(lineedit_insert(&le, more, 4, &full) == 2);
	CHECK(full);
	CHECK(line_is(&le, "12abc"));
	CHECK(le.cur == 2);
	CHECK(lineedit_insert(&le, more, 1, &full) == 0 && full);
	CHECK(lineedit_backspace(&le));
	CHECK(lineedit_insert(&le, more + 3, 1, &full) == 1 && !full);
	CHECK(line_is(&le, "14abc"));
	lineedit_finish(&le);
}

static void test_scroll(void)
{
	lineedit le;
	CHECK(lineedit_init(&le, 100));
	uint32_t cjk[20];
	for (int i = 0; i < 20; i++)
		cjk[i] = 0x4e00 + (uint32_t)i;
	lineedit_insert(&le, cjk, 20, NULL);
	/* 40 columns of text in a 10-column field: the cursor at the end stays
	 * visible, inside the field, on a character boundary. */
	int col = lineedit_fit(&le, 10);
	CHECK(col >= 0 && col <= 9);
	CHECK(col == lineedit_width(&le, le.scroll, le.cur));
	CHECK(col % 2 == 0);
	CHECK(le.scroll > 0);
	lineedit_home(&le);
	CHECK(lineedit_fit(&le, 10) == 0 && le.scroll == 0);
	/* Moving right one character at a time never loses the cursor. */
	int bad = 0;
	for (int i = 0; i < 20; i++) {
		lineedit_right(&le);
		int c = lineedit_fit(&le, 10);
		bad += c < 0 || c > 9 || c != lineedit_width(&le, le.scroll, le.cur);
	}
	CHECK(bad == 0);
	lineedit_finish(&le);
}

static void test_click(void)
{
	lineedit le;
	CHECK(lineedit_init(&le, 100));
	uint32_t t[] = {'a', 'b', 0x4e2d, 'c'};
	lineedit_insert(&le, t, 4, NULL);
	lineedit_fit(&le, 80);
	lineedit_click(&le, 2);
	CHECK(le.cur == 2);
	lineedit_click(&le, 3); /* right half of the wide character */
	CHECK(le.cur == 2);
	lineedit_click(&le, 4);
	CHECK(le.cur == 3);
	lineedit_click(&le, 50);
	CHECK(le.cur == 4);
	lineedit_click(&le, 0);
	CHECK(le.cur == 0);
	lineedit_finish(&le);
}

static void test_utf8(void)
{
	lineedit le;
	CHECK(lineedit_init(&le, 100));
	uint32_t t[] = {'a', 0x4e2d, 0x1f600, ' ', 0xe9};
	lineedit_insert(&le, t, 5, NULL);
	size_t len;
	char *s = lineedit_utf8(&le, &len);
	CHECK(s && len == 11);
	CHECK(s && memcmp(s, "a\xe4\xb8\xad\xf0\x9f\x98\x80 \xc3\xa9", 11) == 0);
	free(s);
	CHECK(lineedit_cp_width(' ') == 1);
	CHECK(lineedit_cp_width(0x4e2d) == 2);
	CHECK(lineedit_cp_width('a') == 1);
	lineedit_finish(&le);
}

int main(void)
{
	test_edit();
	test_filter();
	test_limit();
	test_scroll();
	test_click();
	test_utf8();
	return test_summary("lineedit");
}
