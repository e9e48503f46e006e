/* JSON output helpers shared by the dump's writers (render-private). Floats are
 * printed with %.9g, enough digits to give back the exact float; NaN and
 * infinities (which JSON lacks) as null. */
#ifndef ATTNVIEW_RENDER_JSON_OUT_H
#define ATTNVIEW_RENDER_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

/* A string's characters escaped, without the quotes around them. */
void json_string_body(FILE *out, const char *s, size_t n);
void json_cp(FILE *out, uint32_t cp);		       /* one codepoint as a string */
void json_float(FILE *out, float x);		       /* a number or null */
void json_double(FILE *out, double x);		       /* a number or null */
void json_floats(FILE *out, const float *x, int n); /* [a, b, ...] */
/* An n x n matrix, a row per line, indented by indent. */
void json_matrix(FILE *out, const float *x, int n, const char *indent);

#endif
