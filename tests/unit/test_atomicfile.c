/* Files written whole or not at all (src/core/atomicfile.c); crash_save
 * kills and starves model saves, test_figure starves figures. */
#include "attnview/atomicfile.h"
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *at(const char *name)
{
	static char buf[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

static int files_in_dir(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static bool content(const char *path, const char *want)
{
	size_t n;
	uint8_t *b = test_read_file(path, &n);
	bool ok = b && n == strlen(want) && memcmp(b, want, n) == 0;
	free(b);
	return ok;
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/attnview-atomic.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	av_error err;
	mode_t mask = umask(022);

	/* In pieces; a new file gets the umask's mode. */
	atomic_file *f = atomic_open(at("a"), &err);
	CHECKF(f, "%s", err.msg);
	CHECK(atomic_write(f, "hello ", 6) && atomic_write(f, "world", 5) &&
	      atomic_written(f) == 11 && atomic_ok(f));
	CHECK(files_in_dir() == 1); /* the temporary file only */
	CHECKF(atomic_commit(f, ATOMIC_KEEP, &err), "%s", err.msg);
	struct stat st;
	CHECK(content(at("a"), "hello world") && stat(at("a"), &st) == 0 &&
	      (st.st_mode & 0777) == 0644 && files_in_dir() == 1);

	/* KEEP never replaces; REPLACE does, keeping the mode. */
	chmod(at("a"), 0600);
	CHECK(!atomic_write_file(at("a"), "x", 1, ATOMIC_KEEP, &err) &&
	      strstr(err.msg, "left untouched") && content(at("a"), "hello world"));
	CHECKF(atomic_write_file(at("a"), "new", 3, ATOMIC_REPLACE, &err), "%s", err.msg);
	CHECK(content(at("a"), "new") && stat(at("a"), &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(files_in_dir() == 1);

	/* Abort leaves nothing. */
	f = atomic_open(at("b"), &err);
	atomic_write(f, "partial", 7);
	atomic_abort(f);
	atomic_abort(NULL);
	CHECK(access(at("b"), F_OK) != 0 && files_in_dir() == 1);

	/* A failed write is reported at the commit, with the bytes written,
	 * and removes the temporary file: a closed descriptor fails every
	 * write as a full disk would. */
	f = atomic_open(at("c"), &err);
	atomic_write(f, "abc", 3);
	int fd = -1;
	for (int i = 3; i < 64 && fd < 0; i++) {
		struct stat s2;
		if (fstat(i, &s2) == 0 && S_ISREG(s2.st_mode))
			fd = i; /* the temporary file's */
	}
	close(fd);
	CHECK(!atomic_write(f, "def", 3) && !atomic_ok(f));
	CHECK(!atomic_commit(f, ATOMIC_REPLACE, &err));
	CHECKF(strstr(err.msg, "/c: writing failed after 3 bytes; the file was not created: ") &&
		   strstr(err.msg, strerror(EBADF)),
	       "%s", err.msg);
	CHECK(access(at("c"), F_OK) != 0 && files_in_dir() == 1);

	/* Where nothing can be written: the file, the folder and the reason. */
	CHECK(!atomic_open(at("none/d"), &err) &&
	      strstr(err.msg, "cannot create a temporary file in") &&
	      strstr(err.msg, strerror(ENOENT)));
	CHECK(!atomic_open(dir, &err) && strstr(err.msg, "is a directory"));

	umask(mask);
	unlink(at("a"));
	rmdir(dir);
	return test_summary("atomicfile");
}
