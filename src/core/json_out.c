/* JSON output helpers of the dump (json_out.h). */
#include "json_out.h"

#include "attnview/dump.h"
#include "attnview/tokenizer.h"

#include <math.h>

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
			if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
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
