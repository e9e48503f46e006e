#include "harness.h"

#include "attnview/blas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int test_failures;
int test_checks;

char *openblas_get_corename(void);

/* Before main, as the program does first thing: where OpenBLAS does not
 * know the CPU (an Intel Xeon it takes for a Prescott), start again on the
 * kernel the CPU can run. A test that names a kernel (tests/ci/kernel.sh,
 * valgrind.sh) sets OPENBLAS_CORETYPE and keeps it. glibc passes main's
 * arguments to the constructors of the executable. */
__attribute__((constructor)) static void harness_fast_kernel(int argc, char **argv)
{
	(void)argc;
	blas_ensure_fast_kernel(argv);
}

int test_summary(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
	/* tests/ci/kernel.sh asked for a kernel: the checks mean nothing unless
	 * OpenBLAS ran it. */
	const char *want = getenv("ATTNVIEW_EXPECT_CORE");
	if (want && *want) {
		const char *got = openblas_get_corename();
		if (!got || strcasecmp(got, want) != 0) {
			printf("%s: OpenBLAS ran its %s kernel, not %s\n", name, got ? got : "?",
			       want);
			return 1;
		}
		printf("%s: on OpenBLAS's %s kernel\n", name, got);
	}
	return test_failures ? 1 : 0;
}

const char *test_path(const char *rel)
{
	static char buf[4096];
	const char *dir = getenv("ATTNVIEW_TEST_DATA");
	snprintf(buf, sizeof buf, "%s/%s", dir ? dir : ".", rel);
	return buf;
}

static bool compare(const char *what, const float *got, const float *want, size_t n, float tol,
		    bool relative)
{
	size_t worst = 0;
	double wdiff = 0;
	bool nan_mismatch = false;
	for (size_t i = 0; i < n; i++) {
		bool gn = isnan(got[i]), wn = isnan(want[i]);
		if (gn || wn) {
			if (gn != wn && !nan_mismatch) {
				nan_mismatch = true;
				worst = i;
			}
			continue;
		}
		double d = fabs((double)got[i] - (double)want[i]);
		if (relative && fabs(want[i]) > 1.0)
			d /= fabs(want[i]);
		if (d > wdiff && !nan_mismatch) {
			wdiff = d;
			worst = i;
		}
	}
	test_checks++;
	bool ok = !nan_mismatch && wdiff <= tol;
	if (!ok) {
		test_failures++;
		fprintf(stderr, "MISMATCH %s: worst element %zu of %zu: got %.9g want %.9g (%s %.3g > %.3g)\n",
			what, worst, n, n ? got[worst] : 0.0f, n ? want[worst] : 0.0f, relative ? "rel diff" : "|diff|",
			wdiff, tol);
	} else {
		printf("ok %s: %zu values, max %s %.3g (tol %.3g)\n", what, n,
		       relative ? "rel diff" : "|diff|", wdiff, tol);
	}
	return ok;
}

bool check_close(const char *what, const float *got, const float *want, size_t n, float tol)
{
	return compare(what, got, want, n, tol, false);
}

bool check_close_rel(const char *what, const float *got, const float *want, size_t n, float tol)
{
	return compare(what, got, want, n, tol, true);
}

uint8_t *test_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			} else {
				buf = nb;
			}
		}
	}
	fclose(f);
	*n = len;
	return buf;
}

bool golden_load(golden *g, const char *path)
{
	memset(g, 0, sizeof *g);
	size_t n;
	char *text = (char *)test_read_file(path, &n);
	if (!text) {
		fprintf(stderr, "cannot read golden file %s\n", path);
		return false;
	}
	char *s = realloc(text, n + 1);
	if (!s) {
		free(text);
		return false;
	}
	s[n] = '\0';
	char *p = s;
	size_t cap = 0;
	while (*p) {
		while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (strncmp(p, "tensor ", 7) != 0) {
			fprintf(stderr, "%s: expected 'tensor' at byte %td\n", path, p - s);
			goto fail;
		}
		p += 7;
		if (g->n == cap) {
			cap = cap ? 2 * cap : 16;
			golden_tensor *nt = realloc(g->t, cap * sizeof *nt);
			if (!nt)
				goto fail;
			g->t = nt;
		}
		golden_tensor *t = &g->t[g->n];
		memset(t, 0, sizeof *t);
		size_t len = strcspn(p, " \n");
		if (len >= sizeof t->name)
			goto fail;
		memcpy(t->name, p, len);
		p += len;
		t->size = 1;
		while (*p == ' ') {
			char *end;
			unsigned long long d = strtoull(p, &end, 10);
			if (end == p)
				break;
			if (t->ndim == 8)
				goto fail;
			t->dims[t->ndim++] = (size_t)d;
			t->size *= (size_t)d;
			p = end;
		}
		g->n++;
		t->v = malloc((t->size ? t->size : 1) * sizeof(float));
		if (!t->v)
			goto fail;
		for (size_t i = 0; i < t->size; i++) {
			char *end;
			t->v[i] = strtof(p, &end);
			if (end == p) {
				fprintf(stderr, "%s: tensor %s: value %zu unreadable\n", path, t->name, i);
				goto fail;
			}
			p = end;
		}
	}
	free(s);
	return true;
fail:
	free(s);
	golden_free(g);
	return false;
}

const golden_tensor *golden_get(const golden *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->t[i].name, name) == 0)
			return &g->t[i];
	fprintf(stderr, "golden tensor %s missing\n", name);
	return NULL;
}

int32_t *golden_ids(const golden_tensor *t)
{
	int32_t *ids = malloc((t->size ? t->size : 1) * sizeof *ids);
	for (size_t i = 0; ids && i < t->size; i++)
		ids[i] = (int32_t)t->v[i];
	return ids;
}

void golden_free(golden *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->t[i].v);
	free(g->t);
	memset(g, 0, sizeof *g);
}
