/* Compares a saved screen with the one kept in tests/screens/ the way a
 * person reads it: the text exactly, the numbers within the bound of the
 * forward pass that computed them (tests/screens/screens.sh).
 *
 * OpenBLAS picks its kernel at run time (Haswell, Zen, SkylakeX, Prescott),
 * and the kernels sum a dot product in different orders, so a weight printed
 * with six decimals may differ in its last digit from one CPU to the next.
 * bound.h derives, in binary64, how far any binary32 implementation of the
 * pass may be from the exact result; the largest of those bounds over the
 * screen's text (weights, raw scores and the logits of the pass) is the
 * tolerance T. A number with a decimal point or an exponent agrees when
 *	|got - want| <= T * max(1, |want|) + one unit of its last printed digit,
 * the second term for a value whose rounding lands either side of a printed
 * digit. Whole numbers (indices, counts, steps) are compared exactly, and so
 * is every other character, but that a number printed one character shorter
 * or longer may shift the spaces beside it by as much.
 *
 *	screen_compare [--model MODEL] [--text TEXT]... WANT GOT
 * MODEL is a file or a built-in model's name (default: the built-in one);
 * each --text adds a text whose pass bounds the numbers (none: T = 0, only
 * the last digit may differ). The time of the result on the status line
 * ("| 12.3 ms |") is left out of both. Prints each difference and, last,
 * the largest number difference as a share of its tolerance; exits 1 when
 * the screens differ, 2 on bad usage. */
#include "bound.h"

#include "attnview/modelfile.h"
#include "attnview/tokenizer.h"
#include "attnview/vocab.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 8192
#define MAX_TOKS 1024

/* The largest bound of the pass over text (binary64, bound.h). */
static bool text_bound(const model *m, const char *text, double *out, av_error *err)
{
	cp_buf cps = {0};
	if (!tokenize_text(text, strlen(text), "--text", &cps, NULL, err))
		return false;
	int n = (int)cps.n < (int)m->cfg.context ? (int)cps.n : (int)m->cfg.context;
	if (n == 0) {
		cp_buf_finish(&cps);
		return true;
	}
	token *t = malloc((size_t)n * sizeof *t);
	int32_t *ids = malloc((size_t)n * sizeof *ids);
	fwd_bound b;
	bool ok = t && ids;
	if (ok) {
		vocab_tokenize(&m->vocab, cps.v, (size_t)n, t);
		for (int i = 0; i < n; i++)
			ids[i] = t[i].id;
		ok = fwd_bound_compute(&b, m, ids, n, NULL);
	}
	if (ok) {
		size_t cells = (size_t)b.L * b.H * n * n, V = (size_t)n * b.V;
		for (size_t i = 0; i < cells; i++) {
			*out = fmax(*out, b.att_err[i]);
			if (!isnan(b.score_err[i]))
				*out = fmax(*out, b.score_err[i]);
		}
		for (size_t i = 0; i < V; i++)
			*out = fmax(*out, b.logits_err[i]);
		fwd_bound_finish(&b);
	} else {
		av_fail(err, "out of memory for the bound of %d tokens", n);
	}
	free(t);
	free(ids);
	cp_buf_finish(&cps);
	return ok;
}

typedef struct piece {
	const char *s;
	int len;
	bool num;      /* a number: with a point or an exponent, or whole */
	bool whole;    /* no point, no exponent: compared exactly */
	double v, ulp; /* its value and one unit of its last digit */
} piece;

/* A number starts at s[i]: a digit, or a sign or a point before one, not
 * inside a word ("L0", "x2" are text). */
static int number_at(const char *s, int i, piece *p)
{
	if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_' || s[i - 1] == '.'))
		return 0;
	int j = i;
	if (s[j] == '-' || s[j] == '+')
		j++;
	int digits = 0, frac = 0;
	while (isdigit((unsigned char)s[j]))
		j++, digits++;
	bool point = false;
	if (s[j] == '.' && isdigit((unsigned char)s[j + 1])) {
		point = true;
		j++;
		while (isdigit((unsigned char)s[j]))
			j++, frac++;
	}
	if (digits + frac == 0)
		return 0;
	int e = 0;
	if ((s[j] == 'e' || s[j] == 'E') &&
	    (isdigit((unsigned char)s[j + 1]) ||
	     ((s[j + 1] == '-' || s[j + 1] == '+') && isdigit((unsigned char)s[j + 2])))) {
		char *end;
		e = (int)strtol(s + j + 1, &end, 10);
		j = (int)(end - s);
		point = true;
	}
	/* a number runs into a letter: a word such as "3rd" stays text */
	if (isalpha((unsigned char)s[j]) || s[j] == '_')
		return 0;
	p->s = s + i;
	p->len = j - i;
	p->num = true;
	p->whole = !point;
	p->v = strtod(s + i, NULL);
	p->ulp = pow(10.0, e - frac);
	return j - i;
}

/* Splits a line into text and numbers, alternating. */
static int split(const char *s, piece *out, int max)
{
	int n = 0, i = 0, start = 0;
	while (s[i] && n < max - 2) {
		piece p;
		int len = number_at(s, i, &p);
		if (!len) {
			i++;
			continue;
		}
		if (i > start)
			out[n++] = (piece){.s = s + start, .len = i - start};
		out[n++] = p;
		i += len;
		start = i;
	}
	if (s[i] && n < max) /* too many pieces: the rest as text */
		i += (int)strlen(s + i);
	if (i > start)
		out[n++] = (piece){.s = s + start, .len = i - start};
	return n;
}

/* Text pieces equal, but for the spaces beside a number printed with a
 * different length (at most that difference, at its ends that touch it). */
static bool text_equal(const piece *a, const piece *b, int shift_front, int shift_back)
{
	const char *as = a->s, *bs = b->s;
	int al = a->len, bl = b->len;
	if (shift_front) {
		int sa = 0, sb = 0;
		while (sa < al && as[sa] == ' ')
			sa++;
		while (sb < bl && bs[sb] == ' ')
			sb++;
		if (abs(sa - sb) > shift_front)
			return false;
		as += sa, al -= sa, bs += sb, bl -= sb;
	}
	if (shift_back) {
		int sa = 0, sb = 0;
		while (sa < al && as[al - 1 - sa] == ' ')
			sa++;
		while (sb < bl && bs[bl - 1 - sb] == ' ')
			sb++;
		if (abs(sa - sb) > shift_back)
			return false;
		al -= sa, bl -= sb;
	}
	return al == bl && memcmp(as, bs, (size_t)al) == 0;
}

/* The result's time on the status line, as tests/screens/screens.sh always left it
 * out: " | 12.3 ms |" becomes " |". */
static void steady(char *s)
{
	for (char *p = strstr(s, " | "); p; p = strstr(p + 1, " | ")) {
		char *q = p + 3;
		if (!isdigit((unsigned char)*q))
			continue;
		while (isdigit((unsigned char)*q))
			q++;
		if (*q != '.' || !isdigit((unsigned char)q[1]) || strncmp(q + 2, " ms |", 5) != 0)
			continue;
		memmove(p + 2, q + 7, strlen(q + 7) + 1);
	}
}

typedef struct compare {
	double tol, worst; /* the bound; the largest difference / its tolerance */
	const char *where;
	int diffs;
} compare;

static bool lines_equal(compare *c, const char *a, const char *b, int lineno)
{
	static piece pa[MAX_TOKS], pb[MAX_TOKS];
	int na = split(a, pa, MAX_TOKS), nb = split(b, pb, MAX_TOKS);
	if (na != nb)
		return false;
	double worst = c->worst;
	for (int i = 0; i < na; i++) {
		if (pa[i].num != pb[i].num)
			return false;
		if (!pa[i].num) {
			int front = i > 0 ? abs(pa[i - 1].len - pb[i - 1].len) : 0;
			int back = i + 1 < na ? abs(pa[i + 1].len - pb[i + 1].len) : 0;
			if (!text_equal(&pa[i], &pb[i], front, back))
				return false;
			continue;
		}
		if (pa[i].whole != pb[i].whole)
			return false;
		if (pa[i].whole) {
			if (pa[i].len != pb[i].len || memcmp(pa[i].s, pb[i].s, (size_t)pa[i].len))
				return false;
			continue;
		}
		double d = fabs(pa[i].v - pb[i].v);
		double tol = c->tol * fmax(1.0, fabs(pa[i].v)) + fmax(pa[i].ulp, pb[i].ulp);
		if (d > tol * (1 + 1e-9)) {
			fprintf(stderr, "%s:%d: %.*s and %.*s differ by %.3g, more than %.3g\n",
				c->where, lineno, pa[i].len, pa[i].s, pb[i].len, pb[i].s, d, tol);
			return false;
		}
		if (d > 0)
			worst = fmax(worst, d / tol);
	}
	c->worst = worst;
	return true;
}

static char **read_lines(const char *path, int *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return NULL;
	}
	char **lines = NULL, buf[MAX_LINE];
	*n = 0;
	while (fgets(buf, sizeof buf, f)) {
		buf[strcspn(buf, "\n")] = '\0';
		size_t len = strlen(buf);
		while (len > 0 && buf[len - 1] == ' ')
			buf[--len] = '\0';
		steady(buf);
		char **grown = realloc(lines, (size_t)(*n + 1) * sizeof *lines);
		if (!grown || !(grown[*n] = strdup(buf))) {
			fprintf(stderr, "%s: out of memory\n", path);
			exit(2);
		}
		lines = grown;
		(*n)++;
	}
	fclose(f);
	return lines;
}

int main(int argc, char **argv)
{
	const char *model_name = "builtin";
	const char *texts[16];
	int ntexts = 0, i = 1;
	for (; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--model") == 0)
			model_name = argv[i + 1];
		else if (strcmp(argv[i], "--text") == 0 && ntexts < 16)
			texts[ntexts++] = argv[i + 1];
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr,
			"usage: screen_compare [--model MODEL] [--text TEXT]... WANT GOT\n");
		return 2;
	}
	compare c = {.where = argv[i + 1]};
	av_error err;
	if (ntexts) {
		model *m = model_builtin_name(model_name) ? model_builtin_named(model_name, &err)
							  : model_load(model_name, &err);
		if (!m) {
			fprintf(stderr, "screen_compare: %s\n", err.msg);
			return 2;
		}
		for (int t = 0; t < ntexts; t++)
			if (!text_bound(m, texts[t], &c.tol, &err)) {
				fprintf(stderr, "screen_compare: %s\n", err.msg);
				return 2;
			}
		model_destroy(m);
	}
	int na, nb;
	char **a = read_lines(argv[i], &na), **b = read_lines(argv[i + 1], &nb);
	if (!a || !b)
		return 2;
	if (na != nb) {
		fprintf(stderr, "%s: %d lines, %s has %d\n", argv[i + 1], nb, argv[i], na);
		c.diffs++;
	}
	for (int k = 0; k < na && k < nb; k++)
		if (!lines_equal(&c, a[k], b[k], k + 1)) {
			fprintf(stderr, "%s:%d differs:\n-%s\n+%s\n", argv[i + 1], k + 1, a[k],
				b[k]);
			c.diffs++;
		}
	printf("largest number difference %.2f of its tolerance (bound %.3g)\n", c.worst, c.tol);
	for (int k = 0; k < na; k++)
		free(a[k]);
	for (int k = 0; k < nb; k++)
		free(b[k]);
	free(a);
	free(b);
	return c.diffs ? 1 : 0;
}
