/* Files written whole or not at all (atomicfile.h). */
#include "attnview/atomicfile.h"
#include "attnview/i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct atomic_file {
	char *path, *tmp, *dir;
	int fd;
	bool existed;	 /* the target was there at atomic_open */
	size_t written;	 /* bytes so far */
	size_t total;	 /* atomic_expect's, 0 unknown */
	int write_errno; /* the first failed write's errno, 0 none */
};

static void atomic_free(atomic_file *f)
{
	free(f->path);
	free(f->tmp);
	free(f->dir);
	free(f);
}

/* What a failure leaves: the old file, or nothing. */
static const char *kept(const atomic_file *f)
{
	return f->existed ? _("the previous file is unchanged") : _("the file was not created");
}

atomic_file *atomic_open(const char *path, av_error *err)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		av_fail(err, _("%s: is a directory; give a file name"), AV_Q(path));
		return NULL;
	}
	atomic_file *f = calloc(1, sizeof *f);
	size_t tlen = strlen(path) + 32;
	char *dcopy = strdup(path);
	if (f) {
		f->path = strdup(path);
		f->tmp = malloc(tlen);
		f->dir = dcopy ? strdup(dirname(dcopy)) : NULL;
	}
	free(dcopy);
	if (!f || !f->path || !f->tmp || !f->dir) {
		if (f)
			atomic_free(f);
		av_fail(err, _("out of memory"));
		return NULL;
	}
	f->existed = lstat(path, &st) == 0;
	/* Beside the target, so that rename() is atomic. */
	snprintf(f->tmp, tlen, "%s.tmp.XXXXXX", path);
	f->fd = mkstemp(f->tmp);
	if (f->fd < 0) {
		av_fail_errno(err, errno, _("%s: cannot create a temporary file in %s"), AV_Q(path),
			      AV_Q(f->dir));
		atomic_free(f);
		return NULL;
	}
	return f;
}

void atomic_expect(atomic_file *f, size_t total)
{
	f->total = total;
}

bool atomic_write(atomic_file *f, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n && !f->write_errno) {
		ssize_t k = write(f->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			f->write_errno = errno;
			break;
		}
		p += k;
		n -= (size_t)k;
		f->written += (size_t)k;
	}
	return !f->write_errno;
}

size_t atomic_written(const atomic_file *f)
{
	return f->written;
}

bool atomic_ok(const atomic_file *f)
{
	return !f->write_errno;
}

void atomic_abort(atomic_file *f)
{
	if (!f)
		return;
	close(f->fd);
	unlink(f->tmp);
	atomic_free(f);
}

/* The failure of a write, with what was written. */
static bool fail_write(atomic_file *f, av_error *err)
{
	if (f->total)
		av_fail_errno(err, f->write_errno,
			      _("%s: writing failed after %zu of %zu bytes; %s"), AV_Q(f->path),
			      f->written, f->total, kept(f));
	else
		av_fail_errno(err, f->write_errno, _("%s: writing failed after %zu bytes; %s"),
			      AV_Q(f->path), f->written, kept(f));
	atomic_abort(f);
	return false;
}

/* The mode of the file to be: the replaced file's, or what the umask gives
 * a new one (mkstemp made it 0600). */
static mode_t target_mode(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return st.st_mode & 07777;
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* The temporary file becomes the target only if there is none: link() fails
 * with EEXIST when there is, atomically. File systems without hard links
 * fall back to a check and a rename. */
static bool place_new(atomic_file *f, av_error *err)
{
	if (link(f->tmp, f->path) == 0) {
		unlink(f->tmp);
		return true;
	}
	int e = errno;
	struct stat st;
	if (e == EEXIST || lstat(f->path, &st) == 0)
		return av_fail(err,
			       _("%s: exists now (made by something else while this was being "
				 "written); it was left untouched"),
			       AV_Q(f->path));
	if (rename(f->tmp, f->path) != 0)
		return av_fail_errno(err, errno, _("%s: cannot rename %s to it"), AV_Q(f->path),
				     AV_Q(f->tmp));
	return true;
}

bool atomic_commit(atomic_file *f, atomic_mode mode, av_error *err)
{
	if (f->write_errno)
		return fail_write(f, err);
	if (fsync(f->fd) != 0 || fchmod(f->fd, target_mode(f->path)) != 0) {
		av_fail_errno(err, errno, _("%s: cannot flush to disk; %s"), AV_Q(f->path),
			      kept(f));
		atomic_abort(f);
		return false;
	}
	int fd = f->fd;
	f->fd = -1;
	if (close(fd) != 0) {
		av_fail_errno(err, errno, _("%s: closing failed; %s"), AV_Q(f->path), kept(f));
		atomic_abort(f);
		return false;
	}
	if (mode == ATOMIC_KEEP) {
		if (!place_new(f, err)) {
			atomic_abort(f);
			return false;
		}
	} else if (rename(f->tmp, f->path) != 0) {
		av_fail_errno(err, errno, _("%s: cannot rename %s over it"), AV_Q(f->path),
			      AV_Q(f->tmp));
		atomic_abort(f);
		return false;
	}
	/* Make the rename itself durable. */
	int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	atomic_free(f);
	return true;
}

bool atomic_write_file(const char *path, const void *buf, size_t n, atomic_mode mode, av_error *err)
{
	atomic_file *f = atomic_open(path, err);
	if (!f)
		return false;
	atomic_expect(f, n);
	atomic_write(f, buf, n);
	return atomic_commit(f, mode, err);
}
