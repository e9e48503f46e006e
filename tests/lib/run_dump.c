/* The real program's --dump, run and parsed (ATTNVIEW_BIN). */
#include "run_dump.h"

#include "harness.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* The program's --dump with these arguments (argv, NULL-terminated after
 * "--dump"), parsed. */
json *test_dump_json(const char *const *args)
{
	const char *bin = getenv("ATTNVIEW_BIN");
	CHECKF(bin != NULL, "%s", "ATTNVIEW_BIN is not set");
	if (!bin)
		return NULL;
	int fd[2];
	if (pipe(fd) != 0)
		return NULL;
	const char *argv[32] = {bin, "--dump"};
	int argc = 2;
	while (args[argc - 2] && argc < 31) {
		argv[argc] = args[argc - 2];
		argc++;
	}
	argv[argc] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	ssize_t got;
	while (buf && (got = read(fd[0], buf + len, cap - len)) > 0) {
		len += (size_t)got;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	close(fd[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "attnview --dump %s ...: status %d",
	       args[0], st);
	size_t off = 0;
	json *j = buf ? json_parse(buf, len, &off) : NULL;
	CHECKF(j != NULL, "attnview --dump: not JSON (byte %zu)", off);
	free(buf);
	return j;
}

