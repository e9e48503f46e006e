/* A corpus's passes: each file opened, a stream kept in a temporary file
 * for the second pass, and the text cleaned into a sink (corpus.c has what
 * the passes make). */
#include "attnview/corpus.h"
#include "attnview/i18n.h"
#include "corpus_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tmp_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

/* An unlinked temporary file to keep a stream in for the second pass. */
static int spool_create(const char *name, av_error *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/attnview-spool-XXXXXX", tmp_dir());
	int fd = mkstemp(path);
	if (fd < 0) {
		av_fail_errno(err, errno,
			      _("cannot keep %s for the second pass: no temporary file in %s (set "
				"TMPDIR to a writable directory, or save the text to a file and "
				"give its name)"),
			      AV_Q(name), AV_Q(tmp_dir()));
		return -1;
	}
	unlink(path);
	return fd;
}

static bool spool_write(pass_source *s, const char *name, const char *buf, size_t n, uint64_t limit,
			av_error *err)
{
	if (s->kept + n > limit)
		return av_fail(err,
			       _("%s gave more than %" PRIu64 " MB, the most attnview keeps of a "
				 "stream for its second pass: save the text to a file and give its "
				 "name"),
			       AV_Q(name), limit >> 20);
	for (size_t done = 0; done < n;) {
		ssize_t k = write(s->spool, buf + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return av_fail_errno(
			    err, k < 0 ? errno : ENOSPC,
			    _("cannot keep %s in a temporary file in %s after %" PRIu64
			      " bytes (set TMPDIR to a directory with room, or save "
			      "the text to a file and give its name)"),
			    AV_Q(name), AV_Q(tmp_dir()), s->kept + done);
		done += (size_t)k;
	}
	s->kept += n;
	return true;
}

static ssize_t spool_read(int fd, char *buf, size_t n, const char *name, av_error *err)
{
	for (;;) {
		ssize_t k = read(fd, buf, n);
		if (k >= 0 || errno != EINTR) {
			if (k < 0)
				av_fail_errno(err, errno, _("cannot read back the copy of %s"),
					      AV_Q(name));
			return k;
		}
	}
}

/* Open file f for a pass: pass 1 from its path (a stream gets its spool),
 * pass 2 again from the path, from standard input's start, or from the
 * spool. Sets *in (in->fd < 0 when reading the spool). */
static bool open_source(corpus_file *f, pass_source *s, bool first, pass_io *io, text_input *in,
			av_error *err)
{
	in->fd = -1;
	if (!first && s->spool >= 0) {
		if (lseek(s->spool, 0, SEEK_SET) < 0)
			return av_fail_errno(err, errno, _("cannot read back the copy of %s"),
					     AV_Q(f->name));
		return true;
	}
	if (!input_open(in, f->path, io->waiting, io->wait_ctx, err))
		return false;
	if (first) {
		f->stream = !in->regular;
		if (in->regular)
			s->start = in->start;
		else if ((s->spool = spool_create(in->name, err)) < 0) {
			input_close(in);
			return false;
		}
	} else if (!in->regular) {
		input_close(in);
		return av_fail(err,
			       _("%s changed while it was being read: it is no longer a regular "
				 "file; train on a file that nothing is writing to"),
			       AV_Q(f->name));
	} else if (in->is_stdin && lseek(in->fd, s->start, SEEK_SET) < 0) {
		return av_fail_errno(err, errno, _("cannot read %s again"), AV_Q(f->name));
	}
	return true;
}

/* Stream file f through a fresh cleaner in CORPUS_CHUNK pieces into sink;
 * *last and *count get its last codepoint and how many it gave. Pass 1 keeps
 * a stream's bytes, the file's cleaning and what its first bytes look like. */
bool clean_source(corpus_file *f, pass_source *s, bool first, pass_io *io, cp_sink sink, void *ctx,
		  uint32_t *last, uint64_t *count, av_error *err)
{
	text_input in;
	if (!open_source(f, s, first, io, &in, err))
		return false;
	cleaner *cl = cleaner_create();
	bool ok = cl != NULL;
	if (!ok)
		av_fail(err, _("out of memory reading %s"), AV_Q(f->name));
	io->nsample = 0;
	*count = 0;
	while (ok) {
		ssize_t got = in.fd >= 0
				  ? input_read(&in, io->buf, CORPUS_CHUNK, err)
				  : spool_read(s->spool, io->buf, CORPUS_CHUNK, f->name, err);
		if (got <= 0) {
			ok = got == 0;
			break;
		}
		if (first && f->stream &&
		    !spool_write(s, in.name, io->buf, (size_t)got, io->limit, err)) {
			ok = false;
			break;
		}
		if (first && io->nsample < ENCODING_SAMPLE) {
			size_t k = ENCODING_SAMPLE - io->nsample;
			k = k < (size_t)got ? k : (size_t)got;
			memcpy(io->sample + io->nsample, io->buf, k);
			io->nsample += k;
		}
		io->out.n = 0;
		ok = cleaner_feed(cl, io->buf, (size_t)got, &io->out, err) &&
		     sink(ctx, io->out.v, io->out.n, err);
		if (io->out.n) {
			*last = io->out.v[io->out.n - 1];
			*count += io->out.n;
		}
	}
	if (ok) {
		io->out.n = 0;
		ok = cleaner_finish(cl, &io->out, err) && sink(ctx, io->out.v, io->out.n, err);
		if (io->out.n) {
			*last = io->out.v[io->out.n - 1];
			*count += io->out.n;
		}
	}
	if (ok && first) {
		f->stats = *cleaner_stats(cl);
		f->guess = encoding_guess(io->sample, io->nsample);
	}
	cleaner_destroy(cl);
	if (in.fd >= 0)
		input_close(&in);
	return ok;
}

/* One pass over every file of the corpus, with a line break after a file
 * whose text does not end in one (but not after the last). */
bool read_pass(corpus *c, pass_source *src, bool first, pass_io *io, cp_sink sink, void *ctx,
	       av_error *err)
{
	for (size_t i = 0; i < c->nfiles; i++) {
		uint32_t last = '\n';
		uint64_t count = 0;
		if (!clean_source(&c->files[i], &src[i], first, io, sink, ctx, &last, &count, err))
			return false;
		if (i + 1 < c->nfiles && count > 0 && last != '\n') {
			const uint32_t nl = '\n';
			if (!sink(ctx, &nl, 1, err))
				return false;
			c->separators += first;
		}
	}
	return true;
}

bool pass_io_init(pass_io *io, const corpus_options *o, av_error *err)
{
	memset(io, 0, sizeof *io);
	io->buf = malloc(CORPUS_CHUNK);
	io->sample = malloc(ENCODING_SAMPLE);
	io->limit = o->spool_limit ? o->spool_limit : CORPUS_SPOOL_MAX;
	io->waiting = o->waiting;
	io->wait_ctx = o->wait_ctx;
	if (!io->buf || !io->sample)
		return av_fail(err, _("out of memory"));
	return true;
}

void pass_io_finish(pass_io *io)
{
	free(io->buf);
	free(io->sample);
	cp_buf_finish(&io->out);
}
