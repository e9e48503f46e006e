/* Shared by corpus.c and corpus_pass.c; not part of the public API. */
#ifndef ATTNVIEW_CORPUS_INTERNAL_H
#define ATTNVIEW_CORPUS_INTERNAL_H

#include "attnview/corpus.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Called with each run of cleaned codepoints a pass produces. */
typedef bool (*cp_sink)(void *ctx, const uint32_t *cps, size_t n, av_error *err);

/* A file during the two passes: a stream's copy, standard input's start. */
typedef struct pass_source {
	int spool;     /* the temporary file holding a stream, or -1 */
	uint64_t kept; /* bytes in it */
	off_t start;   /* standard input as a regular file: where it began */
} pass_source;

/* What a pass reads a file with: buffers and the running state. */
typedef struct pass_io {
	char *buf;	 /* CORPUS_CHUNK */
	uint8_t *sample; /* ENCODING_SAMPLE: the file's first bytes (pass 1) */
	size_t nsample;
	cleaner *cl;
	cp_buf out;
	uint64_t limit; /* spool limit */
	input_wait_fn waiting;
	void *wait_ctx;
} pass_io;

/* Stream file f through a fresh cleaner in CORPUS_CHUNK pieces into sink;
 * *last and *count get its last codepoint and how many it gave. Pass 1 keeps
 * a stream's bytes, the file's cleaning and what its first bytes look like. */
bool clean_source(corpus_file *f, pass_source *s, bool first, pass_io *io, cp_sink sink, void *ctx,
		  uint32_t *last, uint64_t *count, av_error *err);

/* One pass over every file of the corpus, with a line break after a file
 * whose text does not end in one (but not after the last). */
bool read_pass(corpus *c, pass_source *src, bool first, pass_io *io, cp_sink sink, void *ctx,
	       av_error *err);

bool pass_io_init(pass_io *io, const corpus_options *o, av_error *err);
void pass_io_finish(pass_io *io);

#endif
