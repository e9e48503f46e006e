/* Files written whole or not at all: model files, checkpoints and figures.
 *
 * The bytes go to a temporary file beside the target (PATH.tmp.XXXXXX, so
 * that the final rename stays on one file system), which is flushed to disk,
 * given the mode the target had (a new file: what the umask gives), and then
 * renamed over the target; the directory is flushed last, so the rename
 * survives a crash too. A failed write (a full disk, a file size limit)
 * removes the temporary file and leaves the target as it was. A write killed
 * part way (SIGKILL, a power cut) may leave its temporary file behind:
 * nothing here deletes one it did not make, because a stale one cannot be
 * told from the live temporary file of another write in progress.
 *
 *	atomic_file *f = atomic_open(path, &err);
 *	if (!f)
 *		return false;
 *	atomic_write(f, a, na);       // as often as needed; errors are kept
 *	atomic_write(f, b, nb);
 *	return atomic_commit(f, ATOMIC_REPLACE, &err);   // or atomic_abort(f)
 *
 * Messages name the target and, where a system call failed, end with its
 * reason: "model.attn: writing failed after 684030 of 1368061 bytes; the
 * previous file is unchanged: No space left on device". */
#ifndef ATTNVIEW_ATOMICFILE_H
#define ATTNVIEW_ATOMICFILE_H

#include "attnview/common.h"

typedef struct atomic_file atomic_file;

/* What the commit does when the target exists by then. */
typedef enum atomic_mode {
	ATOMIC_REPLACE, /* replace it (keeping its mode) */
	ATOMIC_KEEP,	/* leave it and fail: "never overwritten without asking". On
			 * file systems with hard links this cannot race with
			 * another program creating the file meanwhile. */
} atomic_mode;

/* Creates the temporary file; NULL with a message when it cannot
 * ("fig.png: cannot create a temporary file in /x: Permission denied"). */
atomic_file *atomic_open(const char *path, av_error *err);

/* Tell the messages how many bytes are coming, so that a failure says
 * "after 4096 of 9000 bytes" (otherwise "after 4096 bytes"). */
void atomic_expect(atomic_file *f, size_t total);

/* Append bytes. After the first failure nothing more is written and every
 * call returns false; the failure is reported by atomic_commit. */
bool atomic_write(atomic_file *f, const void *buf, size_t n);

/* Bytes written so far. */
size_t atomic_written(const atomic_file *f);

/* No write has failed so far. */
bool atomic_ok(const atomic_file *f);

/* Flush, set the mode and rename the temporary file to the target; on any
 * failure (an earlier atomic_write's included) remove it and explain. Frees f
 * either way. */
bool atomic_commit(atomic_file *f, atomic_mode mode, av_error *err);

/* Remove the temporary file and free f (NULL is fine): the writer gave up. */
void atomic_abort(atomic_file *f);

/* The whole of buf to path (atomic_open, atomic_write, atomic_commit). */
bool atomic_write_file(const char *path, const void *buf, size_t n, atomic_mode mode,
		       av_error *err);

#endif
