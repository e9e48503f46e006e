/* Guessing the encoding of text that is not UTF-8 (encoding.h). */
#include "attnview/encoding.h"
#include "attnview/i18n.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* UTF-32 or UTF-16 by their zero bytes: ASCII and Latin text in UTF-32LE has
 * three zero bytes after every character, in UTF-16LE one. */
static text_encoding wide_by_zeros(const uint8_t *s, size_t n)
{
	size_t z[4] = {0}, q = n / 4;
	for (size_t i = 0; i < q * 4; i++)
		z[i % 4] += s[i] == 0;
	if (q >= 4) {
		if (z[1] * 10 >= q * 9 && z[2] * 10 >= q * 9 && z[3] * 10 >= q * 9 &&
		    z[0] * 10 <= q)
			return ENC_UTF32LE;
		if (z[0] * 10 >= q * 9 && z[1] * 10 >= q * 9 && z[2] * 10 >= q * 9 &&
		    z[3] * 10 <= q)
			return ENC_UTF32BE;
	}
	size_t units = n / 2, even = z[0] + z[2], odd = z[1] + z[3];
	if (units < 4)
		return ENC_UTF8;
	if (odd * 10 >= units * 3 && even * 20 <= units)
		return ENC_UTF16LE;
	if (even * 10 >= units * 3 && odd * 20 <= units)
		return ENC_UTF16BE;
	return ENC_UTF8;
}

/* UTF-16 Chinese has no zero bytes, but the high byte of nearly every code
 * unit is that of a CJK ideograph (0x4E-0x9F), CJK punctuation (0x30),
 * fullwidth forms (0xFF) or ASCII (0x00). */
static bool cjk_unit(uint8_t hi)
{
	return (hi >= 0x4E && hi <= 0x9F) || hi == 0x30 || hi == 0xFF || hi == 0x00;
}

static text_encoding wide_by_units(const uint8_t *s, size_t n)
{
	size_t units = n / 2, le = 0, be = 0;
	if (units < 8)
		return ENC_UTF8;
	for (size_t i = 0; i < units; i++) {
		le += cjk_unit(s[2 * i + 1]);
		be += cjk_unit(s[2 * i]);
	}
	if (le * 10 >= units * 9 && be * 10 < units * 5)
		return ENC_UTF16LE;
	if (be * 10 >= units * 9 && le * 10 < units * 5)
		return ENC_UTF16BE;
	return ENC_UTF8;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid, -1
 * if it is cut off by the end of the sample. */
static int utf8_len(const uint8_t *s, size_t n)
{
	uint8_t c = s[0];
	int len = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
	if (!len)
		return 0;
	for (int k = 1; k < len; k++) {
		if ((size_t)k >= n)
			return -1;
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	}
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
	    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
		return 0;
	return len;
}

text_encoding encoding_guess(const uint8_t *s, size_t n)
{
	if (n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
		return ENC_UTF8;
	if (n >= 4 && s[0] == 0xFF && s[1] == 0xFE && s[2] == 0 && s[3] == 0)
		return ENC_UTF32LE;
	if (n >= 4 && s[0] == 0 && s[1] == 0 && s[2] == 0xFE && s[3] == 0xFF)
		return ENC_UTF32BE;
	if (n >= 2 && s[0] == 0xFF && s[1] == 0xFE)
		return ENC_UTF16LE;
	if (n >= 2 && s[0] == 0xFE && s[1] == 0xFF)
		return ENC_UTF16BE;
	text_encoding e = wide_by_zeros(s, n);
	if (e != ENC_UTF8)
		return e;

	/* Valid UTF-8, give or take a few damaged bytes, is UTF-8. */
	size_t ok = 0, bad = 0;
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		int len = utf8_len(s + i, n - i);
		if (len < 0)
			break;
		if (len == 0) {
			bad++;
			i++;
		} else {
			ok++;
			i += (size_t)len;
		}
	}
	if (bad == 0 || bad * 20 < ok)
		return ENC_UTF8;
	if ((e = wide_by_units(s, n)) != ENC_UTF8)
		return e;

	/* The GB18030 grammar: ASCII, a lead byte 0x81-0xFE with a trail
	 * 0x40-0x7E or 0x80-0xFE, or four bytes lead, 0x30-0x39, lead, 0x30-0x39.
	 * Big5's pairs are a subset (lead 0xA1-0xF9, trail 0x40-0x7E or
	 * 0xA1-0xFE). Isolated high bytes between ASCII ones are single-byte
	 * text. */
	size_t pairs = 0, quads = 0, wrong = 0, big5 = 0, low_trail = 0, high = 0, single = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < 0x80)
			continue;
		high++;
		if ((i == 0 || s[i - 1] < 0x80) && (i + 1 == n || s[i + 1] < 0x80))
			single++;
	}
	for (size_t i = 0; i < n;) {
		uint8_t c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		if (i + 1 >= n)
			break;
		uint8_t t = s[i + 1];
		if (c == 0x80 || c == 0xFF) {
			wrong++;
			i++;
		} else if (t >= 0x30 && t <= 0x39) {
			if (i + 3 < n && s[i + 2] >= 0x81 && s[i + 2] <= 0xFE && s[i + 3] >= 0x30 &&
			    s[i + 3] <= 0x39) {
				quads++;
				i += 4;
			} else {
				wrong++;
				i++;
			}
		} else if ((t >= 0x40 && t <= 0x7E) || (t >= 0x80 && t <= 0xFE)) {
			pairs++;
			low_trail += t < 0x80;
			big5 += c >= 0xA1 && c <= 0xF9 && (t <= 0x7E || t >= 0xA1);
			i += 2;
		} else {
			wrong++;
			i++;
		}
	}
	size_t mb = pairs + quads;
	if (mb >= 8 && wrong * 10 <= mb && single * 4 < high) {
		if (quads == 0 && big5 * 20 >= pairs * 19 && low_trail * 10 >= pairs)
			return ENC_BIG5;
		return ENC_GB18030;
	}
	if (high >= 8 && single * 2 >= high)
		return ENC_LATIN1;
	return ENC_UTF8;
}

const char *encoding_name(text_encoding e)
{
	switch (e) {
	case ENC_UTF16LE:
		return "UTF-16LE";
	case ENC_UTF16BE:
		return "UTF-16BE";
	case ENC_UTF32LE:
		return "UTF-32LE";
	case ENC_UTF32BE:
		return "UTF-32BE";
	case ENC_GB18030:
		return "GB18030";
	case ENC_BIG5:
		return "BIG5";
	case ENC_LATIN1:
		return "WINDOWS-1252";
	case ENC_UTF8:
	default:
		return "UTF-8";
	}
}

static const char *encoding_what(text_encoding e)
{
	switch (e) {
	case ENC_GB18030:
		return _("GB18030 (GBK, GB2312: simplified Chinese)");
	case ENC_BIG5:
		return _("Big5 (traditional Chinese)");
	case ENC_LATIN1:
		return _("Latin-1 or Windows-1252 (Western European)");
	default:
		return encoding_name(e);
	}
}


/* "dir/poems.txt" -> "dir/poems.utf8.txt"; "poems" -> "poems.utf8.txt". */
static void converted_name(const char *path, char *out, size_t n)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	if (dot && dot != base)
		snprintf(out, n, "%.*s.utf8%s", (int)(dot - path), path, dot);
	else
		snprintf(out, n, "%s.utf8.txt", path);
}

bool encoding_hint(text_encoding guess, const clean_stats *st, const char *name, char *buf,
		   size_t n)
{
	if (n)
		buf[0] = '\0';
	bool wide = guess >= ENC_UTF16LE && guess <= ENC_UTF32BE;
	bool invalid = st->codepoints > 0 && st->invalid * 100 > st->codepoints;
	if (!wide && !invalid)
		return false;
	if (guess == ENC_UTF8) {
		/* Nothing recognised: the general advice. */
		snprintf(buf, n,
			 _("%.0f%% of the characters of %s were invalid UTF-8: if it is in another "
			   "encoding, convert it first (iconv -f LATIN1 -t UTF-8, or GB18030 for "
			   "Chinese)"),
			 100.0 * (double)st->invalid / (double)st->codepoints, AV_Q(name));
		return true;
	}
	char why[96];
	if (invalid)
		snprintf(why, sizeof why, _("%.0f%% of its characters were invalid UTF-8"),
			 100.0 * (double)st->invalid / (double)st->codepoints);
	else
		snprintf(why, sizeof why, _("its zero bytes were removed as control characters"));
	char cmd[1800];
	if (strcmp(name, "standard input") == 0) {
		snprintf(cmd, sizeof cmd, _("put iconv -f %s -t UTF-8 in the pipe"),
			 encoding_name(guess));
	} else {
		char q[520], conv[520], qc[540];
		av_shell_quote(name, q, sizeof q);
		converted_name(name, conv, sizeof conv);
		av_shell_quote(conv, qc, sizeof qc);
		snprintf(cmd, sizeof cmd, _("iconv -f %s -t UTF-8 %s > %s, and use %s"),
			 encoding_name(guess), q, qc, qc);
	}
	snprintf(buf, n, _("%s looks like %s text, not UTF-8 (%s): convert it first: %s"),
		 AV_Q(name), encoding_what(guess), why, cmd);
	return true;
}

bool encoding_not_text(const clean_stats *st)
{
	uint64_t bad = st->invalid + st->controls, seen = st->codepoints + st->controls;
	return seen > 0 && bad * 100 > seen * ENCODING_NOT_TEXT_PERCENT;
}

bool encoding_check_text(const clean_stats *st, text_encoding guess, const char *name,
			 const char *anyway, av_error *err)
{
	if (!encoding_not_text(st))
		return true;
	uint64_t seen = st->codepoints + st->controls;
	char found[256], hint[2400];
	snprintf(found, sizeof found,
		 _("%.0f%% of it is invalid UTF-8 or control characters (%" PRIu64
		   " invalid sequences and %" PRIu64 " control characters in %" PRIu64 " bytes)"),
		 100.0 * (double)(st->invalid + st->controls) / (double)seen, st->invalid,
		 st->controls, st->bytes);
	bool wide = guess >= ENC_UTF16LE && guess <= ENC_UTF32BE;
	/* Text in any 8-bit encoding has few control characters; a binary file
	 * (an ELF, an image) has many, whatever its high bytes look like. */
	if (!wide && st->controls * 10 > seen)
		snprintf(hint, sizeof hint,
			 _("it looks like a binary file, not text: give a text file"));
	else if (!encoding_hint(guess, st, name, hint, sizeof hint))
		snprintf(hint, sizeof hint, _("give a UTF-8 text file"));
	return av_fail(err, _("%s is mostly not text: %s; %s (%s)"), AV_Q(name), found, hint,
		       anyway);
}
