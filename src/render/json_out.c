/* JSON output helpers of the dump (json_out.h). */
#include "json_out.h"

#include "attnview/dump.h"
#include "attnview/tokenizer.h"

#include <math.h>
#include <string.h>

/* The character at s (n bytes left, from 0x80): as it is, or escaped where
 * a terminal showing the JSON would take it as a command (C1 controls,
 * bidirectional overrides: common.h) and U+FFFD for a byte that is not
 * UTF-8 (JSON is UTF-8). Returns the bytes it took. */
static size_t json_non_ascii(FILE *out, const char *s, size_t n)
{
	char c[5] = {0}, esc[AV_ESC_SIZE];
	memcpy(c, s, n < 4 ? n : 4);
	uint32_t cp;
	size_t len = av_char_shown(c, esc, &cp);
	if (len > n || (len == 1 && esc[0]))
		fputs("\\ufffd", out);
	else if (esc[0])
		fprintf(out, "\\u%04x", cp);
	else
		fwrite(s, 1, len, out);
	return len > n ? 1 : len;
}

void json_string_body(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(out, "\\u%04x", c);
			} else if (c < 0x80) {
				fputc(c, out);
			} else {
				i += json_non_ascii(out, s + i, n - i) - 1;
			}
		}
	}
}

void json_string(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	json_string_body(out, s, n);
	fputc('"', out);
}

void json_cp(FILE *out, uint32_t cp)
{
	char u[4];
	size_t k = cp_to_utf8(cp, u);
	json_string(out, u, k);
}

void json_float(FILE *out, float x)
{
	/* JSON has no NaN or infinity: masked scores are NaN, and a model with
	 * huge (finite) weights overflows to infinity. */
	if (!isfinite(x))
		fputs("null", out);
	else
		fprintf(out, "%.9g", (double)x);
}

void json_matrix(FILE *out, const float *x, int n, const char *indent)
{
	fputs("[", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%s\n%s  [", i ? "," : "", indent);
		for (int j = 0; j < n; j++) {
			if (j)
				fputs(", ", out);
			json_float(out, x[(size_t)i * n + j]);
		}
		fputs("]", out);
	}
	fprintf(out, "\n%s]", indent);
}

void json_floats(FILE *out, const float *x, int n)
{
	fputc('[', out);
	for (int i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		json_float(out, x[i]);
	}
	fputc(']', out);
}

void json_double(FILE *out, double x)
{
	if (!isfinite(x))
		fputs("null", out);
	else
		fprintf(out, "%.9g", x);
}
