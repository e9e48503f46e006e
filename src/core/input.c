/* Text inputs: files, standard input and streams (input.h). */
#include "attnview/input.h"
#include "attnview/i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *input_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "standard input" : path;
}

bool input_open(text_input *in, const char *path, input_wait_fn waiting, void *ctx, av_error *err)
{
	memset(in, 0, sizeof *in);
	in->name = input_name(path);
	in->waiting = waiting;
	in->wait_ctx = ctx;
	in->is_stdin = strcmp(path, "-") == 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (the first
	 * read does, with a notice); it is cleared below. */
	in->fd = in->is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in->fd < 0)
		return av_fail_errno(err, errno, _("cannot open %s"), AV_Q(in->name));
	struct stat st;
	if (fstat(in->fd, &st) != 0) {
		int e = errno;
		input_close(in);
		return av_fail_errno(err, e, _("cannot stat %s"), AV_Q(in->name));
	}
	if (S_ISDIR(st.st_mode)) {
		input_close(in);
		return av_fail(err, _("%s is a directory: give a text file"), AV_Q(in->name));
	}
	in->regular = S_ISREG(st.st_mode);
	in->fifo = S_ISFIFO(st.st_mode);
	if (!in->is_stdin) {
		int fl = fcntl(in->fd, F_GETFL);
		if (fl < 0 || fcntl(in->fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			int e = errno;
			input_close(in);
			return av_fail_errno(err, e, _("cannot read %s"), AV_Q(in->name));
		}
	}
	if (in->regular) {
		in->start = lseek(in->fd, 0, SEEK_CUR);
		if (in->start < 0)
			in->start = 0;
	}
	return true;
}

void input_close(text_input *in)
{
	if (in->fd >= 0 && !in->is_stdin)
		close(in->fd);
	in->fd = -1;
}

/* A FIFO's first read: wait for a writer (or for the writer to close),
 * saying so once if that takes a while. */
static bool wait_for_writer(text_input *in, av_error *err)
{
	struct pollfd p = {in->fd, POLLIN, 0};
	bool told = false;
	for (;;) {
		int r = poll(&p, 1, told ? -1 : INPUT_WAIT_NOTICE_MS);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return av_fail_errno(err, errno, _("cannot read %s"), AV_Q(in->name));
		if (r == 0 && !told) {
			told = true;
			if (in->waiting)
				in->waiting(in->name, in->wait_ctx);
		}
	}
}

ssize_t input_read(text_input *in, void *buf, size_t n, av_error *err)
{
	if (in->fifo && !in->waited) {
		in->waited = true;
		if (!wait_for_writer(in, err))
			return -1;
	}
	for (;;) {
		ssize_t k = read(in->fd, buf, n);
		if (k >= 0)
			return k;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			/* standard input left non-blocking by whoever gave it */
			struct pollfd p = {in->fd, POLLIN, 0};
			if (poll(&p, 1, -1) >= 0 || errno == EINTR)
				continue;
		}
		av_fail_errno(err, errno, _("cannot read %s"), AV_Q(in->name));
		return -1;
	}
}

bool input_rewind(text_input *in, av_error *err)
{
	if (!in->regular)
		return av_fail(err, _("%s cannot be read twice"), AV_Q(in->name));
	if (lseek(in->fd, in->start, SEEK_SET) < 0)
		return av_fail_errno(err, errno, _("cannot read %s again"), AV_Q(in->name));
	return true;
}

bool input_read_all(const char *path, size_t limit, input_wait_fn waiting, void *ctx, uint8_t **buf,
		    size_t *n, av_error *err)
{
	text_input in;
	if (!input_open(&in, path, waiting, ctx, err))
		return false;
	size_t cap = 65536, got = 0;
	uint8_t *b = malloc(cap);
	bool ok = b != NULL;
	if (!ok)
		av_fail(err, _("out of memory reading %s"), AV_Q(in.name));
	while (ok) {
		if (got == cap) {
			if (cap > limit) {
				ok = av_fail(err,
					     _("%s has more than %zu MB: give a shorter text (only "
					       "the model's context is looked at)"),
					     AV_Q(in.name), limit >> 20);
				break;
			}
			uint8_t *p = realloc(b, cap * 2);
			if (!p) {
				ok = av_fail(err, _("out of memory reading %s (%zu bytes)"),
					     AV_Q(in.name), cap * 2);
				break;
			}
			b = p;
			cap *= 2;
		}
		ssize_t k = input_read(&in, b + got, cap - got, err);
		if (k < 0)
			ok = false;
		else if (k == 0)
			break;
		else
			got += (size_t)k;
	}
	if (ok && got > limit)
		ok = av_fail(err,
			     _("%s has more than %zu MB: give a shorter text (only the model's "
			       "context is looked at)"),
			     AV_Q(in.name), limit >> 20);
	input_close(&in);
	if (!ok) {
		free(b);
		return false;
	}
	*buf = b;
	*n = got;
	return true;
}
