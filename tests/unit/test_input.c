/* Text inputs (input.h): files, directories refused, pipes and FIFOs read
 * as streams, a FIFO without a writer waited for with a notice (never a
 * silent hang), the size limit, rewinding a regular file. */
#include "harness.h"

#include "attnview/input.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static int waits;
static void on_wait(const char *name, void *ctx)
{
	(void)name;
	(void)ctx;
	waits++;
}

static void test_files(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/a.txt", dir);
	FILE *f = fopen(path, "w");
	fputs("hello", f);
	fclose(f);
	uint8_t *buf;
	size_t n;
	av_error err = {{0}};
	CHECK(input_read_all(path, 1024, NULL, NULL, &buf, &n, &err));
	CHECK(n == 5 && memcmp(buf, "hello", 5) == 0);
	free(buf);
	/* regular files can be read again */
	text_input in;
	char b[8];
	CHECK(input_open(&in, path, NULL, NULL, &err) && in.regular && !in.fifo);
	CHECK(input_read(&in, b, sizeof b, &err) == 5);
	CHECK(input_rewind(&in, &err) && input_read(&in, b, 2, &err) == 2 && b[0] == 'h');
	input_close(&in);
	CHECK(!input_read_all(dir, 1024, NULL, NULL, &buf, &n, &err));
	CHECKF(strstr(err.msg, "is a directory"), "%s", err.msg);
	snprintf(path, sizeof path, "%s/none.txt", dir);
	CHECK(!input_open(&in, path, NULL, NULL, &err));
	CHECKF(strstr(err.msg, "cannot open") && strstr(err.msg, "none.txt") &&
		   strstr(err.msg, "No such file"),
	       "%s", err.msg);
	CHECK(strcmp(input_name("-"), "standard input") == 0);
}

/* A pipe given by name (/dev/fd/N), as a shell's <(...) gives it. */
static void test_pipe(void)
{
	int p[2];
	if (pipe(p) != 0)
		return;
	const char msg[] = "from a pipe";
	CHECK(write(p[1], msg, sizeof msg - 1) == (ssize_t)(sizeof msg - 1));
	close(p[1]);
	char path[64];
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	uint8_t *buf;
	size_t n;
	av_error err = {{0}};
	bool ok = input_read_all(path, 1024, on_wait, NULL, &buf, &n, &err);
	CHECKF(ok, "%s", err.msg);
	if (ok) {
		CHECK(n == sizeof msg - 1 && memcmp(buf, msg, n) == 0);
		free(buf);
	}
	close(p[0]);

	/* more than the limit: refused, saying so */
	if (pipe(p) != 0)
		return;
	char big[300];
	memset(big, 'x', sizeof big);
	CHECK(write(p[1], big, sizeof big) == (ssize_t)sizeof big);
	close(p[1]);
	snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
	CHECK(!input_read_all(path, 100, NULL, NULL, &buf, &n, &err));
	CHECKF(strstr(err.msg, "more than"), "%s", err.msg);
	close(p[0]);
}

/* A FIFO whose writer comes late: the read waits, and says so once. */
static void test_fifo(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/fifo", dir);
	if (mkfifo(path, 0600) != 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		usleep(1500 * 1000);
		int fd = open(path, O_WRONLY);
		if (fd >= 0 && write(fd, "late", 4) == 4)
			close(fd);
		_exit(0);
	}
	uint8_t *buf = NULL;
	size_t n = 0;
	av_error err = {{0}};
	waits = 0;
	text_input in;
	bool ok = input_open(&in, path, on_wait, NULL, &err); /* never blocks */
	CHECKF(ok && in.fifo, "%s", err.msg);
	if (ok)
		input_close(&in);
	ok = input_read_all(path, 1024, on_wait, NULL, &buf, &n, &err);
	CHECKF(ok, "%s", err.msg);
	CHECK(waits == 1);
	if (ok) {
		CHECK(n == 4 && memcmp(buf, "late", 4) == 0);
		free(buf);
	}
	int st;
	waitpid(pid, &st, 0);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/attnview-input-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_files();
	test_pipe();
	test_fifo();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return test_summary("input");
}
