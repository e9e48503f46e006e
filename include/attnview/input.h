/* Where text comes from: a file named on the command line, standard input
 * ("-"), or anything else that is read as a stream: a pipe, a FIFO,
 * /dev/stdin, a shell's <(...), a terminal.
 *
 * A regular file can be read again from where it started (the corpus reader
 * makes two passes); a stream cannot, so whoever needs a second pass keeps
 * what the first one read (corpus_pass.c spools it to a temporary file).
 *
 * Opening never blocks: a FIFO is opened without waiting for a writer, and
 * the first read waits for one (poll), calling the `waiting` callback once if
 * nothing has come after INPUT_WAIT_NOTICE_MS, so that the program can say
 * what it is waiting for instead of seeming to hang. A FIFO whose writer
 * closes without writing reads as empty. */
#ifndef ATTNVIEW_INPUT_H
#define ATTNVIEW_INPUT_H

#include "attnview/common.h"

#include <stdint.h>
#include <sys/types.h>

#define INPUT_WAIT_NOTICE_MS 1000

/* Called (once) when a stream has given nothing for INPUT_WAIT_NOTICE_MS. */
typedef void (*input_wait_fn)(const char *name, void *ctx);

typedef struct text_input {
	int fd;
	bool regular;	  /* a regular file: input_rewind can go back to `start` */
	bool fifo;	  /* a FIFO or pipe: the first read waits for a writer */
	bool is_stdin;	  /* "-": fd 0, not closed by input_close */
	bool waited;	  /* the first read has been through the wait */
	off_t start;	  /* offset the input started at (standard input may be past 0) */
	const char *name; /* for messages: the path, or "standard input" */
	input_wait_fn waiting;
	void *wait_ctx;
} text_input;

/* "standard input" for "-", else the path itself. */
const char *input_name(const char *path);

/* Open path ("-": standard input) for reading; directories are refused. */
bool input_open(text_input *in, const char *path, input_wait_fn waiting, void *ctx, av_error *err);
void input_close(text_input *in);

/* Up to n bytes (0 at the end); -1 with err set on a read error. */
ssize_t input_read(text_input *in, void *buf, size_t n, av_error *err);

/* Back to the start of a regular file. */
bool input_rewind(text_input *in, av_error *err);

/* The whole of path ("-": standard input) into *buf (malloc'd, *n bytes);
 * more than `limit` bytes is refused with a message saying so. */
bool input_read_all(const char *path, size_t limit, input_wait_fn waiting, void *ctx, uint8_t **buf,
		    size_t *n, av_error *err);

#endif
