/* Crash-safe saves.
 *
 * SIGKILL at random moments: a child saves two different models to the same
 * path in a loop (model_save: temporary file, fsync, rename), the parent kills
 * it after a random delay, at least 100 times. After every kill the file must
 * be exactly one of the two models, byte for byte, and load. A killed save may
 * leave its temporary file (PATH.tmp.XXXXXX) behind: attnview never deletes
 * it, because it cannot tell a stale one from the live temporary file of
 * another save in progress; the test counts them, checks they are not
 * mistaken for the model, and removes them itself.
 *
 * A full disk: a save that hits RLIMIT_FSIZE (write fails with EFBIG) must fail
 * with a message naming the file and saying the previous one is unchanged,
 * leave the previous model byte for byte, and leave no temporary file.
 *
 * ATTNVIEW_CRASH_SEED=N replays one random schedule. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attnview/modelfile.h"

#define KILLS 120

static char dir[256];
static char path[512];

static model *make_model(uint32_t dim, uint32_t layers, uint64_t seed, const char *name)
{
	uint32_t cps[64];
	for (uint32_t i = 0; i < 64; i++)
		cps[i] = i < TOK_NSPECIAL ? AV_SPECIAL_CP + i : 0x4e00 + i;
	model_config cfg = {OBJ_MASKED, 64, dim, 4, layers, 32, {0}};
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	if (!m) {
		fprintf(stderr, "model_create: %s\n", err.msg);
		exit(1);
	}
	model_init_random(m, seed);
	model_set_meta_strings(m, name, "crash_save", &err);
	return m;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Names of the temporary files beside path. */
static int count_temps(bool remove)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "model.attn.tmp.", 15) != 0)
			continue;
		n++;
		if (remove) {
			char p[768];
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	}
	closedir(d);
	return n;
}

static bool same_file(const byte_buf *want)
{
	size_t n;
	uint8_t *b = test_read_file(path, &n);
	bool same = b && n == want->n && memcmp(b, want->v, n) == 0;
	free(b);
	return same;
}

static void test_sigkill(const model *a, const model *b, const byte_buf *fa, const byte_buf *fb)
{
	av_error err;
	CHECKF(model_save(a, path, &err), "%s", err.msg);

	/* Time a save, so the kills spread over a few of them. */
	double t0 = now();
	for (int i = 0; i < 4; i++)
		model_save(i & 1 ? a : b, path, &err);
	double per_save = (now() - t0) / 4;
	unsigned long span_us = (unsigned long)(3 * per_save * 1e6) + 50;

	unsigned seed = (unsigned)time(NULL);
	const char *s = getenv("ATTNVIEW_CRASH_SEED");
	if (s)
		seed = (unsigned)strtoul(s, NULL, 10);
	srand(seed);
	printf("seed %u (ATTNVIEW_CRASH_SEED), one save takes %.2f ms, kills within %.2f ms\n",
	       seed, per_save * 1e3, span_us / 1e3);

	int seen_a = 0, seen_b = 0, bad = 0, max_temps = 0;
	for (int k = 0; k < KILLS; k++) {
		/* The child says when its first save is done, and the random delay
		 * starts from there: a child slow to start (a sanitizer's fork
		 * copies a large shadow) would otherwise be killed before it saved
		 * anything, every time. */
		int ready[2];
		if (pipe(ready) != 0) {
			CHECKF(false, "pipe: %s", strerror(errno));
			return;
		}
		pid_t pid = fork();
		if (pid < 0) {
			CHECKF(false, "fork: %s", strerror(errno));
			return;
		}
		if (pid == 0) {
			close(ready[0]);
			for (unsigned i = 0;; i++) {
				if (!model_save(i & 1 ? a : b, path, &err))
					_exit(3);
				if (i == 0 &&
				    (write(ready[1], "s", 1) != 1 || close(ready[1]) != 0))
					_exit(4);
			}
		}
		close(ready[1]);
		char c;
		ssize_t got = read(ready[0], &c, 1);
		close(ready[0]);
		CHECKF(got == 1, "kill %d: the child never finished its first save", k);
		usleep((useconds_t)((unsigned long)rand() % span_us));
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "kill %d: the child %s", k,
		       WIFEXITED(st) ? "exited: a save failed" : "died of another signal");

		bool is_a = same_file(fa), is_b = same_file(fb);
		seen_a += is_a;
		seen_b += is_b;
		if (!is_a && !is_b) {
			bad++;
			CHECKF(false, "kill %d: %s is neither model (seed %u)", k, path, seed);
		}
		model *m = model_load(path, &err);
		CHECKF(m, "kill %d: %s", k, err.msg);
		model_destroy(m);
		int temps = count_temps(false);
		if (temps > max_temps)
			max_temps = temps;
		/* Each kill can leave at most one. */
		CHECKF(temps <= k + 1, "%d temporary files after %d kills", temps, k + 1);
	}
	int temps = count_temps(true);
	printf("%d kills: old/new model A %d times, B %d times, torn %d; %d temporary files "
	       "left by killed saves (removed by the test)\n",
	       KILLS, seen_a, seen_b, bad, temps);
	CHECK(bad == 0);
	/* Both outcomes happen: the kills do land before and after renames. */
	CHECKF(seen_a > 0 && seen_b > 0, "A %d, B %d: the kills never interrupted a save", seen_a,
	       seen_b);

	/* A save that completes leaves no temporary file. */
	CHECKF(model_save(b, path, &err), "%s", err.msg);
	CHECK(count_temps(false) == 0);
	CHECK(same_file(fb));
}

static void test_full_disk(const model *a, const model *b, const byte_buf *fa, const byte_buf *fb)
{
	av_error err;
	CHECKF(model_save(a, path, &err), "%s", err.msg);
	int fds[2];
	if (pipe(fds) != 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		/* The file size limit stands in for a full disk: write() fails with
		 * EFBIG part way through the model, as with ENOSPC. */
		close(fds[0]);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {fb->n / 2, fb->n / 2};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(4);
		bool ok = model_save(b, path, &err);
		if (!ok && write(fds[1], err.msg, strlen(err.msg)) < 0)
			_exit(5);
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	char msg[1024] = {0};
	size_t got = 0;
	ssize_t k;
	while (got < sizeof msg - 1 && (k = read(fds[0], msg + got, sizeof msg - 1 - got)) > 0)
		got += (size_t)k;
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "the save under a size limit: status %d",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	printf("full disk: %s\n", msg);
	CHECKF(strstr(msg, path), "message does not name the file: %s", msg);
	CHECKF(strstr(msg, "previous file is unchanged"), "message: %s", msg);
	CHECKF(strstr(msg, strerror(EFBIG)), "message lacks the system's reason: %s", msg);
	CHECK(same_file(fa));
	CHECK(count_temps(false) == 0);
	(void)a;
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/attnview-crash.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof path, "%s/model.attn", dir);

	/* Two models of different sizes, so a mix of the two cannot pass. */
	model *a = make_model(64, 2, 1, "model A");
	model *b = make_model(96, 3, 2, "model B");
	byte_buf fa, fb;
	av_error err;
	if (!model_serialize(a, AV_KIND_MODEL, NULL, &fa, &err) ||
	    !model_serialize(b, AV_KIND_MODEL, NULL, &fb, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	printf("model A %zu bytes, model B %zu bytes\n", fa.n, fb.n);

	test_sigkill(a, b, &fa, &fb);
	test_full_disk(a, b, &fa, &fb);

	count_temps(true);
	unlink(path);
	rmdir(dir);
	bb_finish(&fa);
	bb_finish(&fb);
	model_destroy(a);
	model_destroy(b);
	return test_summary("crash_save");
}
