/* Names, paths and metadata as messages show them (common.h: av_quote,
 * av_char_shown, av_shell_quote): printable UTF-8, Chinese included, stays
 * as it is; control characters, DEL, C1, bidirectional overrides and
 * invalid bytes are escaped in double quotes; the escaped form never holds
 * such a byte, is cut short only between characters, and reads back to the
 * original bytes. */
#include "harness.h"

#include "attnview/common.h"

#include <stdlib.h>
#include <string.h>

static const char *q(const char *s)
{
	static char buf[AV_QUOTE_SIZE];
	return av_quote(s, buf, sizeof buf);
}

#define SAME(got, want)                                                                    \
	CHECKF(strcmp((got), (want)) == 0, "got [%s], want [%s]", (got), (want))

/* Whether s holds a byte that a terminal could take as a command, or
 * anything that is not valid UTF-8: the quoted form must never. */
static bool clean(const char *s)
{
	for (const char *p = s; *p;) {
		char esc[AV_ESC_SIZE];
		p += av_char_shown(p, esc, NULL);
		if (esc[0])
			return false;
	}
	return true;
}

static void test_plain(void)
{
	SAME(q("model.attn"), "model.attn");
	SAME(q("dir/my poems (2).txt"), "dir/my poems (2).txt");
	SAME(q("诗集/静夜思.txt"), "诗集/静夜思.txt");
	SAME(q("Ærø café 🙂"), "Ærø café 🙂");
	SAME(AV_Q("builtin"), "builtin");
	/* Empty, a quote or a backslash: quoted, so the form is unambiguous. */
	SAME(q(""), "\"\"");
	SAME(q("a\"b"), "\"a\\\"b\"");
	SAME(q("C:\\x1b"), "\"C:\\\\x1b\"");
}

static void test_controls(void)
{
	SAME(q("x\033]0;pwned\a\033[31mRED.txt"), "\"x\\e]0;pwned\\a\\e[31mRED.txt\"");
	SAME(q("a\tb\nc\rd\ve\ff\bg"), "\"a\\tb\\nc\\rd\\ve\\ff\\bg\"");
	SAME(q("\x01\x1f\x7f"), "\"\\x01\\x1f\\x7f\"");
	/* C1 as UTF-8 (U+009B, a CSI for 8-bit terminals), and the byte 0x9B
	 * alone (invalid UTF-8): both visible, and told apart. */
	SAME(q("\xc2\x9b" "2J"), "\"\\xc2\\x9b2J\"");
	SAME(q("\x9b" "2J"), "\"\\x9b2J\"");
	SAME(q("\xc2\x85"), "\"\\xc2\\x85\"");
	SAME(q("\xc2\xa0"), "\xc2\xa0"); /* U+00A0 is printable */
	/* Bidirectional override (U+202E) and isolate (U+2067). */
	SAME(q("evil\xe2\x80\xaetxt.sh"), "\"evil\\xe2\\x80\\xaetxt.sh\"");
	SAME(q("\xe2\x81\xa7"), "\"\\xe2\\x81\\xa7\"");
	/* A right-to-left mark and a paragraph separator, which start a new
	 * direction too. */
	SAME(q("a\xe2\x80\x8f"
	       "b"),
	     "\"a\\xe2\\x80\\x8fb\"");
	SAME(q("a\xe2\x80\xa9"
	       "b"),
	     "\"a\\xe2\\x80\\xa9b\"");
	SAME(q("\xe2\x80\x8b"), "\xe2\x80\x8b"); /* a zero-width space is not */
}

static void test_invalid(void)
{
	SAME(q("\xff"), "\"\\xff\"");
	SAME(q("\xc0\xaf"), "\"\\xc0\\xaf\"");		     /* overlong '/' */
	SAME(q("\xc1\x9b"), "\"\\xc1\\x9b\"");		     /* overlong ESC-ish */
	SAME(q("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");	     /* a surrogate */
	SAME(q("\xf4\x90\x80\x80"), "\"\\xf4\\x90\\x80\\x80\""); /* above U+10FFFF */
	SAME(q("\xe4\xb8"), "\"\\xe4\\xb8\"");		     /* cut short */
	SAME(q("\xe4\xb8" "a"), "\"\\xe4\\xb8a\"");
	SAME(q("中\xe6\x96"), "\"中\\xe6\\x96\"");
}

static void test_char_shown(void)
{
	char esc[AV_ESC_SIZE];
	uint32_t cp = 0;
	CHECK(av_char_shown("中x", esc, &cp) == 3 && !esc[0] && cp == 0x4E2D);
	CHECK(av_char_shown("\033[", esc, &cp) == 1 && strcmp(esc, "\\e") == 0 && cp == 27);
	CHECK(av_char_shown("\xc2\x9b", esc, &cp) == 2 && strcmp(esc, "\\xc2\\x9b") == 0 &&
	      cp == 0x9B);
	CHECK(av_char_shown("\x9b", esc, &cp) == 1 && strcmp(esc, "\\x9b") == 0 && cp == 0x9B);
	CHECK(av_char_shown("\xe2\x80\xae", esc, NULL) == 3 && strlen(esc) == 12);
	CHECK(av_char_shown("\xf0\x9f\x99\x82", esc, &cp) == 4 && !esc[0] && cp == 0x1F642);
}

/* Cut short: quoted, "..." after the close, never inside a character or an
 * escape, and within the buffer. */
static void test_cut(void)
{
	char buf[16];
	SAME(av_quote("abcdefghijklmnopqrstuvwxyz", buf, sizeof buf), "\"abcdefghij\"...");
	SAME(av_quote("静夜思静夜思静夜思", buf, sizeof buf), "\"静夜思\"...");
	SAME(av_quote("ab\033\033\033\033", buf, sizeof buf), "\"ab\\e\\e\\e\\e\"");
	SAME(av_quote("ab\033\033\033\033\033\033", buf, sizeof buf), "\"ab\\e\\e\\e\\e\"...");
	SAME(av_quote("0123456789abcd", buf, sizeof buf), "0123456789abcd");
	SAME(av_quote("0123456789abcdef", buf, sizeof buf), "\"0123456789\"...");
	char big[3 * AV_QUOTE_SIZE];
	memset(big, '\x1b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	const char *r = AV_Q(big);
	CHECK(strlen(r) < AV_QUOTE_SIZE && strcmp(r + strlen(r) - 6, "\\e\"...") == 0);
}

/* The bytes an escaped (quoted) string stands for: the reader a user would
 * apply (printf %b). Returns the length, -1 if the form is not one av_quote
 * writes. */
static int unquote(const char *s, char *out)
{
	size_t n = strlen(s), k = 0;
	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		return -1;
	for (size_t i = 1; i + 1 < n; i++) {
		if (s[i] != '\\') {
			if (s[i] == '"')
				return -1;
			out[k++] = s[i];
			continue;
		}
		char c = s[++i];
		const char *named = strchr("abtnvfr", c);
		if (named && c)
			out[k++] = (char)(7 + (named - "abtnvfr"));
		else if (c == 'e')
			out[k++] = 27;
		else if (c == '"' || c == '\\')
			out[k++] = c;
		else if (c == 'x' && i + 2 < n - 1) {
			char hex[3] = {s[i + 1], s[i + 2], 0};
			out[k++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else
			return -1;
	}
	return (int)k;
}

/* Random bytes, biased towards the interesting ones: the quoted form is
 * clean, unambiguous (reads back), and a string shown as it is was clean. */
static void test_random(void)
{
	static const unsigned char pool[] = {0x00, 0x07, 0x09, 0x0a, 0x1b, 0x22, 0x5c, 0x7f,
					     0x80, 0x9b, 0xc2, 0xc0, 0xe2, 0x80, 0xae, 0xe4,
					     0xb8, 0xad, 0xed, 0xa0, 0xf0, 0x9f, 0x99, 0x82,
					     0xf4, 0x90, 0xff, 'a', '[', ']', ';', ' '};
	uint64_t x = 88172645463325252ull;
	int bad = 0;
	for (int t = 0; t < 20000; t++) {
		char s[24], back[24];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int len = 1 + (int)(x % 20);
		for (int i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s[i] = (char)pool[x % sizeof pool];
			if (!s[i])
				s[i] = 'z';
		}
		s[len] = '\0';
		const char *r = q(s);
		bool ok = clean(r);
		if (r[0] == '"')
			ok = ok && unquote(r, back) == len && memcmp(back, s, (size_t)len) == 0;
		else
			ok = ok && strcmp(r, s) == 0;
		if (!ok && bad++ < 5)
			CHECKF(ok, "av_quote of %d random bytes gave [%s]", len, r);
	}
	CHECKF(bad == 0, "%d random strings quoted wrongly", bad);
}

static void test_shell(void)
{
	char buf[128];
	av_shell_quote("model.attn", buf, sizeof buf);
	SAME(buf, "model.attn");
	av_shell_quote("my poems.txt", buf, sizeof buf);
	SAME(buf, "'my poems.txt'");
	av_shell_quote("it's", buf, sizeof buf);
	SAME(buf, "'it'\\''s'");
	av_shell_quote("诗.txt", buf, sizeof buf);
	SAME(buf, "'诗.txt'");
	av_shell_quote("x\033]0;t\a'\\.txt", buf, sizeof buf);
	SAME(buf, "$'x\\e]0;t\\a\\'\\\\.txt'");
	av_shell_quote("\x9b", buf, sizeof buf);
	SAME(buf, "$'\\x9b'");
}

int main(void)
{
	test_plain();
	test_controls();
	test_invalid();
	test_char_shown();
	test_cut();
	test_random();
	test_shell();
	return test_summary("quote");
}
