/* Guessing the encoding of text that is not UTF-8 (encoding.h): each
 * encoding people have Chinese or Western text in is recognised from real
 * bytes, UTF-8 (damaged or not) is not mistaken for another, and the hint
 * names the iconv command. */
#include "harness.h"

#include "attnview/encoding.h"

#include <string.h>

/* 静夜思 and 登鹳雀楼: in GB18030 (GB2312 range) and in Big5 (traditional),
 * as iconv -t GB18030 / -t BIG5 writes them. */
static const char gb[] =
    "\xb4\xb2\xc7\xb0\xc3\xf7\xd4\xc2\xb9\xe2\xa3\xac\xd2\xc9\xca\xc7\xb5\xd8\xc9\xcf\xcb\xaa"
    "\xa1\xa3\xbe\xd9\xcd\xb7\xcd\xfb\xc3\xf7\xd4\xc2\xa3\xac\xb5\xcd\xcd\xb7\xcb\xbc\xb9\xca"
    "\xcf\xe7\xa1\xa3\xb0\xd7\xc8\xd5\xd2\xc0\xc9\xbd\xbe\xa1\xa3\xac\xbb\xc6\xba\xd3\xc8\xeb"
    "\xba\xa3\xc1\xf7\xa1\xa3\xd3\xfb\xc7\xee\xc7\xa7\xc0\xef\xc4\xbf\xa3\xac\xb8\xfc\xc9\xcf"
    "\xd2\xbb\xb2\xe3\xc2\xa5\xa1\xa3";
static const char big5[] =
    "\xa7\xc9\xab\x65\xa9\xfa\xa4\xeb\xa5\xfa\xa1\x41\xba\xc3\xac\x4f\xa6\x61\xa4\x57\xc1\xf7"
    "\xa1\x43\xc1\x7c\xc0\x59\xb1\xe6\xa9\xfa\xa4\xeb\xa1\x41\xa7\x43\xc0\x59\xab\xe4\xac\x47"
    "\xb6\x6d\xa1\x43\xa5\xd5\xa4\xe9\xa8\xcc\xa4\x73\xba\xc9\xa1\x41\xb6\xc0\xaa\x65\xa4\x4a"
    "\xae\xfc\xac\x79\xa1\x43\xb1\xfd\xbd\x61\xa4\x64\xa8\xbd\xa5\xd8\xa1\x41\xa7\xf3\xa4\x57"
    "\xa4\x40\xbc\x68\xbc\xd3\xa1\x43";
/* "Café crème brûlée à la française, déjà vu, naïve façade, garçon..." in Latin-1 */
static const char latin1[] = "Caf\xe9 cr\xe8me br\xfbl\xe9"
			     "e \xe0 la fran\xe7"
			     "aise, d\xe9j\xe0 vu, na\xefve "
			     "fa\xe7"
			     "ade, gar\xe7on, se\xf1or, \xfc"
			     "ber.\n";
static const char zh_utf8[] = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";
static const char en[] = "Time flies like an arrow; fruit flies like a banana.\n";

/* UTF-8 text as UTF-16 (le or be) or UTF-32, with or without a BOM. */
static size_t wide(const char *s, int unit, bool le, bool bom, uint8_t *out)
{
	size_t k = 0;
	uint32_t cps[256];
	size_t n = 0;
	for (const uint8_t *p = (const uint8_t *)s; *p;) {
		uint32_t c = *p++;
		int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
		c &= more == 3 ? 0x07 : more == 2 ? 0x0F : more == 1 ? 0x1F : 0x7F;
		while (more--)
			c = (c << 6) | (*p++ & 0x3F);
		cps[n++] = c;
	}
	for (size_t i = bom ? 0 : 1; i <= n; i++) {
		uint32_t c = i == 0 ? 0xFEFF : cps[i - 1];
		for (int b = 0; b < unit; b++)
			out[k + (size_t)(le ? b : unit - 1 - b)] = (uint8_t)(c >> (8 * b));
		k += (size_t)unit;
	}
	return k;
}

static text_encoding guess(const char *s, size_t n)
{
	return encoding_guess((const uint8_t *)s, n);
}

static void test_guesses(void)
{
	CHECK(guess(zh_utf8, strlen(zh_utf8)) == ENC_UTF8);
	CHECK(guess(en, strlen(en)) == ENC_UTF8);
	CHECK(guess("", 0) == ENC_UTF8);
	/* damaged UTF-8: a few bad bytes in Chinese text are still UTF-8 */
	char damaged[256];
	snprintf(damaged, sizeof damaged, "%s\xff%s\xc3(%s", zh_utf8, zh_utf8, zh_utf8);
	CHECK(guess(damaged, strlen(damaged)) == ENC_UTF8);
	CHECKF(guess(gb, sizeof gb - 1) == ENC_GB18030, "GB18030 seen as %s",
	       encoding_name(guess(gb, sizeof gb - 1)));
	CHECKF(guess(big5, sizeof big5 - 1) == ENC_BIG5, "Big5 seen as %s",
	       encoding_name(guess(big5, sizeof big5 - 1)));
	CHECKF(guess(latin1, sizeof latin1 - 1) == ENC_LATIN1, "Latin-1 seen as %s",
	       encoding_name(guess(latin1, sizeof latin1 - 1)));
	/* a few stray high bytes are too little to name an encoding */
	CHECK(guess("abc\xff"
		    "def\xc3(gh",
		    11) == ENC_UTF8);

	uint8_t w[1024];
	size_t n;
	n = wide(en, 2, true, true, w);
	CHECK(encoding_guess(w, n) == ENC_UTF16LE);
	n = wide(en, 2, true, false, w);
	CHECK(encoding_guess(w, n) == ENC_UTF16LE);
	n = wide(en, 2, false, false, w);
	CHECK(encoding_guess(w, n) == ENC_UTF16BE);
	n = wide(zh_utf8, 2, true, false, w);
	CHECKF(encoding_guess(w, n) == ENC_UTF16LE, "Chinese UTF-16LE seen as %s",
	       encoding_name(encoding_guess(w, n)));
	n = wide(zh_utf8, 2, false, true, w);
	CHECK(encoding_guess(w, n) == ENC_UTF16BE);
	n = wide(en, 4, true, false, w);
	CHECK(encoding_guess(w, n) == ENC_UTF32LE);
	n = wide(en, 4, false, true, w);
	CHECK(encoding_guess(w, n) == ENC_UTF32BE);
}

static void test_hints(void)
{
	char buf[2400];
	clean_stats clean = {.bytes = 100, .codepoints = 100};
	CHECK(!encoding_hint(ENC_UTF8, &clean, "a.txt", buf, sizeof buf) && buf[0] == '\0');
	/* a legacy encoding named only when the text was mostly invalid */
	CHECK(!encoding_hint(ENC_GB18030, &clean, "a.txt", buf, sizeof buf));
	clean_stats bad = {.bytes = 96, .codepoints = 70, .invalid = 60};
	CHECK(encoding_hint(ENC_GB18030, &bad, "poems.txt", buf, sizeof buf));
	CHECKF(strstr(buf, "poems.txt looks like GB18030") &&
		   strstr(buf, "iconv -f GB18030 -t UTF-8 poems.txt > poems.utf8.txt"),
	       "hint: %s", buf);
	CHECK(encoding_hint(ENC_BIG5, &bad, "dir/my poems", buf, sizeof buf));
	CHECKF(strstr(buf, "Big5") &&
		   strstr(buf, "iconv -f BIG5 -t UTF-8 'dir/my poems' > 'dir/my poems.utf8.txt'"),
	       "hint: %s", buf);
	CHECK(encoding_hint(ENC_LATIN1, &bad, "standard input", buf, sizeof buf));
	CHECKF(strstr(buf, "put iconv -f WINDOWS-1252 -t UTF-8 in the pipe"), "hint: %s", buf);
	/* the general advice when nothing is recognised */
	CHECK(encoding_hint(ENC_UTF8, &bad, "x.txt", buf, sizeof buf));
	CHECKF(strstr(buf, "86% of the characters of x.txt were invalid UTF-8") &&
		   strstr(buf, "iconv -f LATIN1 -t UTF-8, or GB18030 for Chinese"),
	       "hint: %s", buf);
	/* UTF-16 needs no invalid sequences: its zero bytes were control characters */
	clean_stats u16 = {.bytes = 106, .codepoints = 52, .controls = 53};
	CHECK(encoding_hint(ENC_UTF16LE, &u16, "notes.txt", buf, sizeof buf));
	CHECKF(strstr(buf, "UTF-16LE") && strstr(buf, "zero bytes") &&
		   strstr(buf, "iconv -f UTF-16LE -t UTF-8 notes.txt > notes.utf8.txt"),
	       "hint: %s", buf);
}

/* The commands the hints (and --train's resume lines) print are pasted into a
 * shell: a name is quoted when it needs it, a ' inside written '\''. */
static void test_shell_quote(void)
{
	char q[64];
	av_shell_quote("notes.txt", q, sizeof q);
	CHECKF(strcmp(q, "notes.txt") == 0, "%s", q);
	av_shell_quote("my notes.txt", q, sizeof q);
	CHECKF(strcmp(q, "'my notes.txt'") == 0, "%s", q);
	av_shell_quote("it's", q, sizeof q);
	CHECKF(strcmp(q, "'it'\\''s'") == 0, "%s", q);
	av_shell_quote("", q, sizeof q);
	CHECKF(strcmp(q, "''") == 0, "empty: %s", q);
	av_shell_quote("诗.txt", q, sizeof q);
	CHECKF(strcmp(q, "'诗.txt'") == 0, "%s", q);
	/* too long for the buffer: cut, still one quoted word, terminated */
	char small[10];
	av_shell_quote("a b c d e f g h", small, sizeof small);
	CHECKF(strlen(small) < sizeof small && small[0] == '\'' &&
		   small[strlen(small) - 1] == '\'',
	       "cut: %s", small);
}

int main(void)
{
	test_guesses();
	test_hints();
	test_shell_quote();
	return test_summary("encoding");
}
