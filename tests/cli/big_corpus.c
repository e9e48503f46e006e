/* A 1 GB corpus (the bad-input matrix): attnview --train streams it
 * (corpus.h: read twice in chunks, never held whole), counts every character,
 * and its peak memory is the 2-byte ids plus bounded tables, not the file.
 *
 * The corpus is tests/data/corpus/mixed.txt (English, Chinese, emoji)
 * repeated to ATTNVIEW_BIG_MB megabytes (default 1024; meson sets less for
 * sanitizer builds). With less than three times that free in TMPDIR the size
 * is cut to a quarter, and the test says so. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnview/tokenizer.h"

static char dir[256];

static bool contains(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, needle, k) == 0)
			return true;
	return false;
}

int main(void)
{
	const char *bin = getenv("ATTNVIEW_BIN");
	if (!bin) {
		fprintf(stderr, "ATTNVIEW_BIN is not set\n");
		return 77;
	}
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/attnview-big.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	uint64_t mb = 1024;
	const char *s = getenv("ATTNVIEW_BIG_MB");
	if (s && *s)
		mb = strtoull(s, NULL, 10);
	struct statvfs vfs;
	if (statvfs(dir, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < 3 * (mb << 20)) {
		mb /= 4;
		printf("note: little free space in %s; a %" PRIu64 " MB corpus instead\n", dir, mb);
	}

	size_t n1;
	uint8_t *one = test_read_file(test_path("data/corpus/mixed.txt"), &n1);
	if (!one || n1 == 0 || one[n1 - 1] != '\n') {
		fprintf(stderr,
			"tests/data/corpus/mixed.txt missing or not ending in a line end\n");
		return 1;
	}
	cp_buf cps = {0};
	av_error err;
	CHECK(clean_text((const char *)one, n1, &cps, NULL, &err));
	uint64_t copies = ((mb << 20) + n1 - 1) / n1;
	uint64_t want_chars = copies * cps.n;
	cp_buf_finish(&cps);

	char corpus[512], model[512], log[512];
	snprintf(corpus, sizeof corpus, "%s/big.txt", dir);
	snprintf(model, sizeof model, "%s/big.attn", dir);
	snprintf(log, sizeof log, "%s/train.log", dir);
	FILE *f = fopen(corpus, "wb");
	if (!f) {
		perror(corpus);
		return 1;
	}
	bool wrote = true;
	for (uint64_t i = 0; i < copies && wrote; i++)
		wrote = fwrite(one, 1, n1, f) == n1;
	wrote = fclose(f) == 0 && wrote;
	free(one);
	CHECKF(wrote, "writing %s: %s", corpus, strerror(errno));
	uint64_t bytes = copies * n1;
	printf("corpus: %" PRIu64 " bytes, %" PRIu64 " characters\n", bytes, want_chars);

	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(bin, bin, "--train", corpus, "--dim", "16", "--heads", "2", "--layers", "1",
		      "--context", "16", "--batch", "4", "--steps", "2", "--warmup", "1",
		      "--threads", "1", "-o", model, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	wait4(pid, &st, 0, &ru);
	size_t nlog;
	char *out = (char *)test_read_file(log, &nlog);
	if (out)
		fwrite(out, 1, nlog, stdout);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "attnview --train exited with %d",
	       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));

	/* Every character counted: "big.txt: B bytes, C characters; clean". */
	char want[128];
	snprintf(want, sizeof want, "%" PRIu64 " bytes, %" PRIu64 " characters", bytes, want_chars);
	CHECKF(out && contains(out, nlog, want), "the summary lacks '%s'", want);
	free(out);

	/* 2 bytes per character (the vocabulary is small) and the tables; the
	 * file itself (more bytes than characters) must never be held. */
	uint64_t peak = (uint64_t)ru.ru_maxrss << 10;
	uint64_t bound = 2 * want_chars + (160u << 20);
	printf("peak memory %" PRIu64 " MB, bound %" PRIu64
	       " MB (2 bytes per character + 160 MB)\n",
	       peak >> 20, bound >> 20);
	const char *san = getenv("ATTNVIEW_SANITIZED");
	if (san && *san)
		printf("note: a sanitizer build: its shadow memory is in the peak; not checked\n");
	else
		CHECKF(peak <= bound, "peak memory %" PRIu64 " MB", peak >> 20);

	unlink(corpus);
	unlink(model);
	unlink(log);
	rmdir(dir);
	return test_summary("big_corpus");
}
