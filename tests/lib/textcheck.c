/* Text safe for a terminal (textcheck.h). */
#include "textcheck.h"

/* Length of the valid UTF-8 sequence at s[0..n) and its codepoint; 0 if
 * invalid (overlong, surrogate, above U+10FFFF, cut short): the table of
 * well-formed sequences of Unicode 3.9. */
static size_t decode(const unsigned char *s, size_t n, unsigned long *cp)
{
	static const struct {
		unsigned char lead_lo, lead_hi, lo, hi;
		size_t len;
	} forms[] = {
	    {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3}, {0xE1, 0xEC, 0x80, 0xBF, 3},
	    {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3}, {0xF0, 0xF0, 0x90, 0xBF, 4},
	    {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
	};
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
		if (s[0] < forms[f].lead_lo || s[0] > forms[f].lead_hi)
			continue;
		size_t len = forms[f].len;
		if (n < len || s[1] < forms[f].lo || s[1] > forms[f].hi)
			return 0;
		unsigned long v = s[0] & (0x7Fu >> len);
		for (size_t k = 1; k < len; k++) {
			if (k > 1 && (s[k] < 0x80 || s[k] > 0xBF))
				return 0;
			v = v << 6 | (s[k] & 0x3Fu);
		}
		*cp = v;
		return len;
	}
	return 0;
}

size_t text_check(const char *text, size_t n, bool tabs, const char **what)
{
	const unsigned char *s = (const unsigned char *)text;
	for (size_t i = 0; i < n;) {
		unsigned long cp = 0;
		size_t len = decode(s + i, n - i, &cp);
		const char *bad = !len				  ? "invalid UTF-8"
				  : cp == '\t' && !tabs		  ? "a tab"
				  : cp < 0x20 && cp != '\n' && cp != '\t' ? "a C0 control"
				  : cp == 0x7F			  ? "DEL"
				  : cp >= 0x80 && cp <= 0x9F	  ? "a C1 control"
								  : NULL;
		if (bad) {
			if (what)
				*what = bad;
			return i;
		}
		i += len;
	}
	return n;
}
