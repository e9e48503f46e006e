/* Cleaning, NFC, widths and glyphs: what a user sees of their text. */
#include "harness.h"

#include "attnview/tokenizer.h"

#include <stdlib.h>
#include <string.h>

#define FFFD 0xFFFDu

/* Clean `s` at once; compare with the expected codepoints (terminated by ~0u). */
static bool cleans_to(const char *s, size_t n, const uint32_t *want, clean_stats *st)
{
	cp_buf out = {0};
	av_error err = {""};
	clean_stats tmp;
	bool ok = clean_text(s, n, &out, st ? st : &tmp, &err);
	CHECKF(ok, "%s", err.msg);
	size_t nw = 0;
	while (want[nw] != ~0u)
		nw++;
	bool same = ok && out.n == nw && (nw == 0 || memcmp(out.v, want, nw * sizeof *want) == 0);
	if (!same) {
		fprintf(stderr, "  got ");
		for (size_t i = 0; i < out.n; i++)
			fprintf(stderr, " U+%04X", out.v[i]);
		fprintf(stderr, "\n  want");
		for (size_t i = 0; i < nw; i++)
			fprintf(stderr, " U+%04X", want[i]);
		fputc('\n', stderr);
	}
	cp_buf_finish(&out);
	return same;
}

#define CLEANS(lit, st, ...)                                                                       \
	CHECKF(cleans_to(lit, sizeof(lit) - 1, (const uint32_t[]){__VA_ARGS__, ~0u}, st), "%s",    \
	       #lit)

static void test_nfc(void)
{
	CLEANS("e\xcc\x81", NULL, 0xE9);			      /* e + U+0301 -> é */
	CLEANS("A\xcc\x8a", NULL, 0xC5);			      /* A + ring -> Å */
	CLEANS("\xe2\x84\xab", NULL, 0xC5);			      /* ANGSTROM SIGN -> Å */
	CLEANS("\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab", NULL, 0xD55C); /* jamo -> 한 */
	CLEANS("\xe1\x84\x92\xe1\x85\xa1", NULL, 0xD558);	      /* L V -> 하 */
	CLEANS("\xed\x95\x98\xe1\x86\xab", NULL, 0xD55C);	      /* LV syllable + T -> 한 */
	/* marks in the wrong canonical order: dot below (220) before acute (230) */
	CLEANS("a\xcc\x81\xcc\xa3", NULL, 0x1EA1, 0x301);
	/* composition exclusion: U+0958 stays decomposed */
	CLEANS("\xe0\xa5\x98", NULL, 0x915, 0x93C);
	/* already NFC text is untouched, including Chinese and emoji */
	CLEANS("\xe4\xbd\xa0\xe5\xa5\xbd, w\xc3\xb6rld \xf0\x9f\x98\x80", NULL, 0x4F60, 0x597D, ',',
	       ' ', 'w', 0xF6, 'r', 'l', 'd', ' ', 0x1F600);
	/* a combining mark with nothing to combine with stays */
	CLEANS("\xcc\x81x", NULL, 0x301, 'x');
}

static void test_widths(void)
{
	bool ph = true;
	CHECK(cp_display_width('a', &ph) == 1 && !ph);
	CHECK(cp_display_width(' ', &ph) == 1 && !ph);
	CHECK(cp_display_width(0x4E2D, &ph) == 2 && !ph);  /* 中 */
	CHECK(cp_display_width(0x3002, &ph) == 2 && !ph);  /* 。 */
	CHECK(cp_display_width(0xFF01, &ph) == 2 && !ph);  /* ！ fullwidth */
	CHECK(cp_display_width(0x1F600, &ph) == 2 && !ph); /* 😀 */
	CHECK(cp_display_width(0x1F44D, &ph) == 2 && !ph); /* 👍 */
	CHECK(cp_display_width(0xE9, &ph) == 1 && !ph);
	CHECK(cp_display_width(0x301, &ph) == 1 && ph); /* combining acute */
	ph = false;
	CHECK(cp_display_width(0x200B, &ph) == 1 && ph); /* zero width space */
	/* Codepoints that make terminals join neighbours get stand-ins without
	 * them (a ZWJ sequence shifted every later column by 2). */
	ph = true;
	CHECK(cp_display_width(0xFE0F, &ph) == 1 && !ph);  /* variation selector: "ᵛ" */
	CHECK(cp_display_width(0x200D, &ph) == 1 && !ph);  /* ZWJ: "⨝" */
	CHECK(cp_display_width(0x1F3FD, &ph) == 2 && !ph); /* skin tone: "ᶠ4" */
	CHECK(cp_display_width(0x1F1E8, &ph) == 2 && !ph); /* regional indicator C: "Ｃ" */
	CHECK(cp_display_width(0xE0067, &ph) == 1 && !ph); /* tag g: "ᵗ" */
	static const struct {
		uint32_t cp;
		const char *glyph;
	} standins[] = {{0x200D, "\u2a1d"},
			{0xFE0F, "\u1d5b"},
			{0xFE0E, "\u1d5b"},
			{0xE0100, "\u1d5b"},
			{0xE0067, "\u1d57"},
			{0x1F3FB, "\u1da0"
				  "2"},
			{0x1F3FF, "\u1da0"
				  "6"},
			{0x1F1E6, "\uff21"},
			{0x1F1FF, "\uff3a"}};
	for (size_t i = 0; i < sizeof standins / sizeof standins[0]; i++) {
		char g[32];
		cp_glyph(standins[i].cp, g);
		CHECKF(strcmp(g, standins[i].glyph) == 0, "glyph of U+%04X: '%s'", standins[i].cp,
		       g);
	}
	CHECK(cp_display_width(0x301, NULL) == 1);
	ph = false;
	CHECK(cp_display_width(0x1161, &ph) == 1 && ph);  /* lone Hangul vowel jamo */
	CHECK(cp_display_width(0x1100, &ph) == 2 && !ph); /* leading consonant: wide */
	CHECK(cp_display_width(0xD55C, &ph) == 2 && !ph); /* 한 */
	for (int i = 0; i < TOK_NSPECIAL; i++) {
		CHECK(cp_display_width(AV_SPECIAL_CP + (uint32_t)i, &ph) == 1 && !ph);
	}
}

static void test_glyphs(void)
{
	char g[32];
	CHECK(cp_glyph('a', g) == 1 && strcmp(g, "a") == 0);
	/* Direction controls never reach the terminal: the placeholder alone
	 * (U+202E raw turns the rest of a line around); a zero-width space
	 * after its placeholder, harmless. */
	static const uint32_t bidi[] = {0x061C, 0x200E, 0x200F, 0x202A, 0x202E,
					0x2066, 0x2069, 0x2028, 0x2029};
	for (size_t i = 0; i < sizeof bidi / sizeof *bidi; i++)
		CHECKF(cp_glyph(bidi[i], g) == 3 && strcmp(g, "\u25CC") == 0, "U+%04X: '%s'",
		       (unsigned)bidi[i], g);
	CHECK(cp_glyph(0x200B, g) == 6 && strcmp(g, "\u25CC\u200B") == 0);
	CHECK(cp_glyph(' ', g) == 3 && strcmp(g, "\xe2\x90\xa3") == 0);	   /* ␣ */
	CHECK(cp_glyph('\n', g) == 3 && strcmp(g, "\xe2\x8f\x8e") == 0);   /* ⏎ */
	CHECK(cp_glyph(0x4E2D, g) == 3 && strcmp(g, "\xe4\xb8\xad") == 0); /* 中 */
	CHECK(cp_glyph(0x1F600, g) == 4 && strcmp(g, "\xf0\x9f\x98\x80") == 0);
	/* placeholder: dotted circle, then the mark */
	CHECK(cp_glyph(0x301, g) == 5 && strcmp(g, "\xe2\x97\x8c\xcc\x81") == 0);
	CHECK(cp_glyph(AV_SPECIAL_CP + TOK_PAD, g) == 3 && strcmp(g, "\xe2\x88\x85") == 0);
	CHECK(cp_glyph(AV_SPECIAL_CP + TOK_UNK, g) == 2 && strcmp(g, "\xc2\xbf") == 0);
	CHECK(cp_glyph(AV_SPECIAL_CP + TOK_MASK, g) == 3 && strcmp(g, "\xe2\x96\x92") == 0);
	/* the three specials differ from each other and from any text glyph */
	char p[32], u[32], m[32];
	cp_glyph(AV_SPECIAL_CP + TOK_PAD, p);
	cp_glyph(AV_SPECIAL_CP + TOK_UNK, u);
	cp_glyph(AV_SPECIAL_CP + TOK_MASK, m);
	CHECK(strcmp(p, u) != 0 && strcmp(u, m) != 0 && strcmp(p, m) != 0);
	/* a control character is never written raw to the terminal */
	CHECK(cp_glyph(0x1B, g) == 3 && strcmp(g, "\xe2\x90\x9b") == 0); /* ␛ */
	CHECK(cp_glyph(0x9B, g) > 0 && (unsigned char)g[0] >= 0xC2 && strchr(g, 0x1B) == NULL);
	CHECK(strcmp((cp_glyph(0xD800, g), g), "\xef\xbf\xbd") == 0);

	char e[4];
	CHECK(cp_to_utf8(0x10FFFF, e) == 4 && memcmp(e, "\xf4\x8f\xbf\xbf", 4) == 0);
	CHECK(cp_to_utf8(0x7FF, e) == 2 && memcmp(e, "\xdf\xbf", 2) == 0);
	CHECK(cp_to_utf8(0xD800, e) == 0);
	CHECK(cp_to_utf8(0x110000, e) == 0);
	CHECK(cp_is_scalar(0) && cp_is_scalar(0xD7FF) && !cp_is_scalar(0xDFFF));
	CHECK(cp_is_scalar(0xE000) && cp_is_scalar(0x10FFFF) && !cp_is_scalar(0x110000));
}

static void test_invalid(void)
{
	clean_stats st;
	CLEANS("\xff"
	       "ab",
	       &st, FFFD, 'a', 'b');
	CHECK(st.invalid == 1 && st.first_invalid == 0);
	CLEANS("ab\xe4\xbd"
	       "cd",
	       &st, 'a', 'b', FFFD, 'c', 'd');
	CHECK(st.invalid == 1 && st.first_invalid == 2);
	CLEANS("abc\xe4\xbd", &st, 'a', 'b', 'c', FFFD); /* truncated at the end */
	CHECK(st.invalid == 1 && st.first_invalid == 3);
	CLEANS("ab\xf0\x9f\x98", &st, 'a', 'b', FFFD);
	CHECK(st.invalid == 1 && st.first_invalid == 2);
	CLEANS("ab\xc3", &st, 'a', 'b', FFFD);
	CHECK(st.invalid == 1 && st.bytes == 3);
	CLEANS("ok", &st, 'o', 'k');
	CHECK(st.invalid == 0 && st.first_invalid == UINT64_MAX && st.codepoints == 2);

	/* maximal subparts: overlong, surrogate and too-large forms are one
	 * U+FFFD per byte, a cut-short valid prefix is one U+FFFD */
	CLEANS("\xc0\xaf", &st, FFFD, FFFD);
	CLEANS("\xe0\x80\xaf", &st, FFFD, FFFD, FFFD);
	CLEANS("\xed\xa0\x80", &st, FFFD, FFFD, FFFD);
	CHECK(st.invalid == 3 && st.first_invalid == 0);
	CLEANS("\xf4\x90\x80\x80", &st, FFFD, FFFD, FFFD, FFFD);
	CLEANS("\xf8\x88\x80\x80\x80", &st, FFFD, FFFD, FFFD, FFFD, FFFD);
	CLEANS("\x80\xbf", &st, FFFD, FFFD);
	/* the example of the Unicode standard, table 3-8 */
	CLEANS("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64", &st, 'a', FFFD, FFFD, FFFD,
	       'b', FFFD, 'c', FFFD, FFFD, 'd');
	CHECK(st.invalid == 6 && st.first_invalid == 1);
	/* the largest and smallest of each length are fine */
	CLEANS("\xf4\x8f\xbf\xbf\xf0\x90\x80\x80\xee\x80\x80\xc2\x80x", &st, 0x10FFFF, 0x10000,
	       0xE000, 'x');
	CHECK(st.invalid == 0 && st.controls == 1); /* U+0080 is a C1 control */
}

/* tokenize_text must refuse, naming the offset and the source. */
static void rejects(const char *s, const char *what, const char *needle1, const char *needle2)
{
	cp_buf cps = {0};
	av_error err = {""};
	bool ok = tokenize_text(s, strlen(s), what, &cps, NULL, &err);
	CHECKF(!ok, "accepted \"%s\"", s);
	CHECKF(strstr(err.msg, needle1) != NULL, "\"%s\" not in \"%s\"", needle1, err.msg);
	CHECKF(strstr(err.msg, needle2) != NULL, "\"%s\" not in \"%s\"", needle2, err.msg);
	CHECK(cps.n == 0);
	cp_buf_finish(&cps);
}

static void test_tokenize_text(void)
{
	rejects("\xff"
		"abc",
		"--text", "invalid UTF-8 at byte 0 of --text",
		"byte 0xff cannot start a character");
	rejects("hello,\xff world", "--text", "at byte 6 of --text", "0xff");
	rejects("\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xbd", "--input notes.txt",
		"at byte 6 of --input notes.txt", "ends inside a character");
	rejects("ab\xe4\xbd"
		"c",
		"the input line", "at byte 2 of the input line", "cut short by byte 0x63");
	rejects("x\xed\xa0\x80", "--text", "at byte 1", "surrogate");
	rejects("x\xc0\xaf", "--text", "at byte 1", "overlong");
	rejects("x\xe0\x80\x80", "--text", "at byte 1", "overlong");
	rejects("x\xf4\x90\x80\x80", "--text", "at byte 1", "U+10FFFF");
	rejects("x\x80", "--text", "at byte 1", "0x80");
	rejects("ok\xff", "--text", "give the text as UTF-8", "byte 2");

	/* valid text: escapes and controls go, counted; the buffer is replaced */
	cp_buf cps = {0};
	av_error err = {""};
	clean_stats st;
	cp_buf_push(&cps, 'z');
	const char *typed = "\x1b[1m\xe4\xbd\xa0\x07 e\xcc\x81";
	bool ok = tokenize_text(typed, strlen(typed), "--text", &cps, &st, &err);
	CHECKF(ok, "%s", err.msg);
	CHECK(cps.n == 3 && cps.v[0] == 0x4F60 && cps.v[1] == ' ' && cps.v[2] == 0xE9);
	CHECK(st.escapes == 1 && st.controls == 1 && st.invalid == 0);
	ok = tokenize_text("", 0, "--text", &cps, NULL, &err);
	CHECK(ok && cps.n == 0);
	cp_buf_finish(&cps);
}

static void test_escapes(void)
{
	clean_stats st;
	/* as in the Debian fortunes-zh files */
	CLEANS("\x1b[32m\xe7\xbb\xbf\x1b[m\n", &st, 0x7EFF, '\n');
	CHECK(st.escapes == 2 && st.controls == 0);
	CLEANS("\x1b[35;1ma\x1b[;mb\x1b[1;32mc", &st, 'a', 'b', 'c');
	CHECK(st.escapes == 3);
	/* OSC ended by BEL, and by ST (a hyperlink) */
	CLEANS("\x1b]0;window title\x07text", &st, 't', 'e', 'x', 't');
	CHECK(st.escapes == 1);
	CLEANS("\x1b]8;;http://x.org/\x1b\\link\x1b]8;;\x1b\\", &st, 'l', 'i', 'n', 'k');
	CHECK(st.escapes == 2);
	/* an unterminated OSC ends at the line end, which stays */
	CLEANS("\x1b]title\nnext", &st, '\n', 'n', 'e', 'x', 't');
	/* two-byte and charset escapes */
	CLEANS("\x1b"
	       "7a\x1b"
	       "8\x1b(Bb\x1b=",
	       &st, 'a', 'b');
	CHECK(st.escapes == 4);
	/* C1 CSI (U+009B in UTF-8) */
	CLEANS("\xc2\x9b"
	       "31mX",
	       &st, 'X');
	CHECK(st.escapes == 1 && st.controls == 0);
	/* a lone ESC is a control character; what follows stays */
	CLEANS("\x1b\xe4\xb8\xad", &st, 0x4E2D);
	CHECK(st.escapes == 0 && st.controls == 1);
	CLEANS("ab\x1b", &st, 'a', 'b');
	CHECK(st.controls == 1);
	/* a CSI broken by a non-ASCII character ends there */
	CLEANS("\x1b[12\xe4\xb8\xad", &st, 0x4E2D);
	CHECK(st.escapes == 1);
}

static void test_controls(void)
{
	clean_stats st;
	CLEANS("a\x01"
	       "b\x7f"
	       "c\xc2\x85"
	       "d\x00"
	       "e",
	       &st, 'a', 'b', 'c', 'd', 'e');
	CHECK(st.controls == 4);
	CLEANS("a\tb", &st, 'a', ' ', 'b');
	CHECK(st.controls == 0);
	CLEANS("a\r\nb\rc\n", &st, 'a', '\n', 'b', '\n', 'c', '\n');
	CHECK(st.crlf == 2);
	CLEANS("\r\r\n\n", &st, '\n', '\n', '\n');
	CHECK(st.crlf == 2);
	/* CR, a colour reset, then LF is still one line end */
	CLEANS("a\r\x1b[m\nb", &st, 'a', '\n', 'b');
	/* U+FEFF: a byte order mark wherever it stands, counted as one and not
	 * as a control character (C0, DEL and C1 only) */
	CLEANS("\xef\xbb\xbf"
	       "ab",
	       &st, 'a', 'b');
	CHECK(st.boms == 1 && st.controls == 0);
	CLEANS("a\xef\xbb\xbf"
	       "b\xef\xbb\xbf",
	       &st, 'a', 'b');
	CHECK(st.boms == 2 && st.controls == 0);
	CLEANS("\xef\xbb\xbf", &st, ~0u);
	CHECK(st.boms == 1 && st.codepoints == 0 && st.bytes == 3);
	/* removed before the other stages: it splits no escape sequence and no
	 * CR LF pair */
	CLEANS("\x1b[3\xef\xbb\xbf"
	       "1mA\r\xef\xbb\xbf\nB",
	       &st, 'A', '\n', 'B');
	CHECK(st.boms == 2 && st.escapes == 1 && st.crlf == 1 && st.controls == 0);
}

/* Everything at once, to be cut at every possible place. */
static const char mixed[] =
    "\xef\xbb\xbf\x1b[32m\xe3\x80\x8a\xe9\x9d\x99\xe5\xa4\x9c\xe6\x80\x9d\xe3\x80\x8b\x1b[m\r\n"
    "cafe\xcc\x81 na\xcc\x88\xcc\x81ve \xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab\xea\xb8\x80\r"
    "bad:\xff\xe4\xbd|\xed\xa0\x80|\xf0\x9f\x98\x80\xf0\x9f|\x1b]0;t\xc3\xa9tle\x1b\\end\t"
    "\x1b(B\x01\xc2\x9b"
    "1m\xe2\x84\xab\x1b"
    "7A\xcc\x8a\xcc\xa3\xe4\xb8\xad\xe6";

static void clean_chunked(const char *s, size_t n, size_t chunk, cp_buf *out, clean_stats *st)
{
	cleaner *c = cleaner_create();
	av_error err = {""};
	bool ok = c != NULL;
	for (size_t i = 0; ok && i < n; i += chunk)
		ok = cleaner_feed(c, s + i, n - i < chunk ? n - i : chunk, out, &err);
	ok = ok && cleaner_finish(c, out, &err);
	CHECKF(ok, "%s", err.msg);
	if (c)
		*st = *cleaner_stats(c);
	cleaner_destroy(c);
}

static bool same_stats(const clean_stats *a, const clean_stats *b)
{
	return a->bytes == b->bytes && a->codepoints == b->codepoints && a->invalid == b->invalid &&
	       a->first_invalid == b->first_invalid && a->escapes == b->escapes &&
	       a->controls == b->controls && a->crlf == b->crlf && a->boms == b->boms;
}

static void check_chunking(const char *s, size_t n, const char *name)
{
	cp_buf whole = {0};
	clean_stats ws;
	clean_chunked(s, n, n ? n : 1, &whole, &ws);
	static const size_t sizes[] = {1, 2, 3, 7, 64, 4096};
	for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
		cp_buf part = {0};
		clean_stats ps;
		clean_chunked(s, n, sizes[k], &part, &ps);
		CHECKF(part.n == whole.n && memcmp(part.v, whole.v, whole.n * 4) == 0,
		       "%s: chunks of %zu give %zu codepoints, at once %zu", name, sizes[k], part.n,
		       whole.n);
		CHECKF(same_stats(&ps, &ws), "%s: chunks of %zu change the counts", name, sizes[k]);
		cp_buf_finish(&part);
	}
	cp_buf_finish(&whole);
}

static void test_chunking(void)
{
	size_t n = sizeof mixed - 1;
	cp_buf out = {0};
	clean_stats st;
	clean_chunked(mixed, n, n, &out, &st);
	/* spot checks of the whole result, so that invariance is not vacuous */
	CHECK(st.boms == 1 && st.escapes == 6 && st.invalid == 7 && st.crlf == 2 &&
	      st.controls == 1);
	CHECK(out.n > 0 && out.v[0] == 0x300A);
	bool has_e_acute = false, has_han = false, has_angstrom = false;
	for (size_t i = 0; i < out.n; i++) {
		has_e_acute |= out.v[i] == 0xE9;
		has_han |= out.v[i] == 0xD55C;
		has_angstrom |= out.v[i] == 0xC5 || out.v[i] == 0x212B;
	}
	CHECK(has_e_acute && has_han && has_angstrom);
	CHECK(out.v[out.n - 1] == FFFD && out.v[out.n - 2] == 0x4E2D);
	cp_buf_finish(&out);
	check_chunking(mixed, n, "mixed");

	/* a base with more combining marks than the cleaner holds back at once */
	size_t len = 1 + 2 * 3000;
	char *marks = malloc(len);
	if (marks) {
		marks[0] = 'a';
		for (size_t i = 1; i < len; i += 2)
			memcpy(marks + i, (i / 2) % 2 ? "\xcc\x81" : "\xcc\xa3", 2);
		check_chunking(marks, len, "marks");
		free(marks);
	}
}

/* A fortune in the style of the Debian fortunes-zh files, with a BOM and CRLF
 * line ends: what a user sees is the text alone. */
static void test_file(void)
{
	size_t n = 0;
	uint8_t *buf = test_read_file(test_path("data/tokenizer/fortune.txt"), &n);
	CHECK(buf != NULL);
	if (!buf)
		return;
	cp_buf out = {0};
	clean_stats st;
	clean_chunked((const char *)buf, n, 5, &out, &st);
	char text[256];
	size_t len = 0;
	for (size_t i = 0; i < out.n && len + 4 < sizeof text; i++)
		len += cp_to_utf8(out.v[i], text + len);
	text[len] = '\0';
	const char *want =
	    "\xe3\x80\x8a\xe6\xb5\x8b\xe8\xaf\x95\xe3\x80\x8b\n" /* 《测试》 */
	    "\xe4\xbd\x9c\xe8\x80\x85\xef\xbc\x9a\xe6\x97\xa0\xe5\x90\x8d\n"
	    "\xe4\xbb\x8a\xe5\xa4\xa9\xe5\xa4\xa9\xe6\xb0\x94\xe5\xbe\x88\xe5\xa5\xbd"
	    "\xef\xbc\x8c caf\xc3\xa9 ok.\n%\n";
	CHECKF(strcmp(text, want) == 0, "got \"%s\"", text);
	CHECK(st.boms == 1 && st.escapes == 4 && st.crlf == 4 && st.controls == 0 &&
	      st.invalid == 0);
	CHECK(st.bytes == n && st.codepoints == out.n);
	check_chunking((const char *)buf, n, "fortune.txt");
	cp_buf_finish(&out);
	free(buf);
}

/* Output comes out while feeding, and what is held back stays small. */
static void test_streaming(void)
{
	cleaner *c = cleaner_create();
	CHECK(c != NULL);
	if (!c)
		return;
	cp_buf out = {0};
	av_error err = {""};
	/* 1 Mi Chinese characters, fed 4096 bytes at a time: every chunk ends
	 * inside a character */
	size_t total = 3u << 20, chunk = 4096;
	char *text = malloc(total);
	if (!text) {
		cleaner_destroy(c);
		return;
	}
	for (size_t i = 0; i < total; i += 3)
		memcpy(text + i, "\xe4\xb8\xad", 3);
	bool ok = true;
	size_t worst = 0, emitted = 0, wrong = 0;
	for (size_t off = 0; ok && off < total; off += chunk) {
		ok = cleaner_feed(c, text + off, chunk, &out, &err);
		for (size_t i = 0; i < out.n; i++)
			wrong += out.v[i] != 0x4E2D;
		emitted += out.n;
		size_t read = (off + chunk) / 3; /* whole characters so far */
		if (emitted > read)
			wrong++;
		else if (read - emitted > worst)
			worst = read - emitted;
		out.n = 0;
	}
	free(text);
	CHECK(wrong == 0);
	CHECKF(ok, "%s", err.msg);
	CHECKF(worst <= 2, "%zu codepoints held back", worst);
	CHECK(cleaner_stats(c)->bytes == total);
	CHECK(cleaner_finish(c, &out, &err));
	/* after finish, a feed starts a new stream: a BOM counts again */
	out.n = 0;
	ok = cleaner_feed(c, "\xef\xbb\xbfhi", 5, &out, &err) && cleaner_finish(c, &out, &err);
	CHECK(ok && out.n == 2 && out.v[0] == 'h');
	CHECK(cleaner_stats(c)->boms == 1 && cleaner_stats(c)->bytes == 5);
	cp_buf_finish(&out);
	cleaner_destroy(c);
	cleaner_destroy(NULL);
}

int main(void)
{
	test_nfc();
	test_widths();
	test_glyphs();
	test_invalid();
	test_tokenize_text();
	test_escapes();
	test_controls();
	test_chunking();
	test_file();
	test_streaming();
	return test_summary("tokenizer");
}
