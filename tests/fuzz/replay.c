/* Replays every seed and every regression input of every fuzz target through
 * the same entry points libFuzzer calls (fuzz.h), in a normal build: a crash
 * or a broken invariant fails the test, naming the input.
 *   replay                   all of tests/fuzz/{seeds,regress}/<target>/
 *   replay TARGET FILE...    the given files through one target */
#include "fuzz.h"

#include <dirent.h>
#include <string.h>

#include "harness.h"

typedef struct target {
	const char *name;
	int (*fn)(const uint8_t *data, size_t n);
} target;

static const target targets[] = {
    {"model", fuzz_model}, {"text", fuzz_text}, {"corpus", fuzz_corpus},
    {"dump", fuzz_dump},   {"keys", fuzz_keys},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static bool run_file(const target *t, const char *path)
{
	size_t n = 0;
	uint8_t *buf = test_read_file(path, &n);
	if (!buf) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		return false;
	}
	/* Named first, so a crash points at its input. */
	fprintf(stderr, "replay %s: %s (%zu bytes)\n", t->name, path, n);
	t->fn(buf, n);
	free(buf);
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order; returns how many ran, -1 if the
 * directory cannot be read. */
static int run_dir(const target *t, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char **names = NULL;
	size_t nn = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (nn == cap) {
			cap = cap ? 2 * cap : 64;
			char **nb = realloc(names, cap * sizeof *names);
			if (!nb)
				break;
			names = nb;
		}
		names[nn++] = strdup(e->d_name);
	}
	closedir(d);
	if (nn)
		qsort(names, nn, sizeof *names, cmp_names);
	int ran = 0;
	for (size_t i = 0; i < nn; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		CHECKF(names[i] && run_file(t, path), "%s", path);
		ran++;
		free(names[i]);
	}
	free(names);
	return ran;
}

int main(int argc, char **argv)
{
	if (argc >= 3) {
		for (size_t k = 0; k < NTARGETS; k++) {
			if (strcmp(argv[1], targets[k].name) != 0)
				continue;
			for (int i = 2; i < argc; i++)
				CHECK(run_file(&targets[k], argv[i]));
			return test_summary("replay");
		}
		fprintf(stderr, "replay: unknown target %s (model, text, corpus, dump, keys)\n",
			argv[1]);
		return 2;
	}
	for (size_t k = 0; k < NTARGETS; k++) {
		char dir[256];
		snprintf(dir, sizeof dir, "fuzz/seeds/%s", targets[k].name);
		int seeds = run_dir(&targets[k], test_path(dir));
		CHECKF(seeds > 0, "no seed inputs in tests/%s", dir);
		snprintf(dir, sizeof dir, "fuzz/regress/%s", targets[k].name);
		int regress = run_dir(&targets[k], test_path(dir));
		fprintf(stderr, "replay %s: %d seeds, %d regression inputs\n", targets[k].name,
			seeds, regress < 0 ? 0 : regress);
	}
	return test_summary("replay");
}
