/* A small test harness: CHECK records a failure and carries on, so one run
 * reports every broken assertion; main returns test_summary(). */
#ifndef ATTNVIEW_TESTS_HARNESS_H
#define ATTNVIEW_TESTS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern int test_failures;
extern int test_checks;

#define CHECK(cond)                                                                     \
	do {                                                                            \
		test_checks++;                                                          \
		if (!(cond)) {                                                          \
			test_failures++;                                                \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                       \
	} while (0)

#define CHECKF(cond, ...)                                                               \
	do {                                                                            \
		test_checks++;                                                          \
		if (!(cond)) {                                                          \
			test_failures++;                                                \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                   \
			fputc('\n', stderr);                                            \
		}                                                                       \
	} while (0)

/* Print "N checks, M failed" and return the exit status for main. */
int test_summary(const char *name);

/* Path of a file under tests/ (ATTNVIEW_TEST_DATA), in a static buffer. */
const char *test_path(const char *rel);

/* Compare n floats; report the worst element (index, got, want, |diff|) and
 * fail if it exceeds tol. NaN must match NaN. Returns true when within tol. */
bool check_close(const char *what, const float *got, const float *want, size_t n, float tol);
/* The same with a relative tolerance for large values:
 * |got - want| <= tol * max(1, |want|). */
bool check_close_rel(const char *what, const float *got, const float *want, size_t n, float tol);

/* Golden files written by tests/reference: text, one tensor after another:
 *   tensor NAME DIM0 [DIM1 ...]
 *   v v v ...            (%.9e, NaN as "nan")
 * A golden set is loaded whole; golden_get finds a tensor by name. */
typedef struct golden_tensor {
	char name[128];
	int ndim;
	size_t dims[8];
	size_t size;
	float *v;
} golden_tensor;

typedef struct golden {
	golden_tensor *t;
	size_t n;
} golden;

bool golden_load(golden *g, const char *path);
const golden_tensor *golden_get(const golden *g, const char *name);
void golden_free(golden *g);
/* A golden tensor of ids (stored as floats) as a new int32 array. */
int32_t *golden_ids(const golden_tensor *t);

/* Read a whole file; NULL on failure. *n gets the size. */
uint8_t *test_read_file(const char *path, size_t *n);

#endif
