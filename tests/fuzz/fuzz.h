/* The fuzz targets' entry points. Each takes one input and returns 0; a broken
 * invariant aborts (FUZZ_CHECK), which libFuzzer reports as a crash and the
 * replay test as a failed test. The same functions are linked into the
 * libFuzzer executables (fuzz_main.c, clang) and into the replay test
 * (replay.c, any compiler), so a regression input exercises exactly the code
 * that found it. */
#ifndef ATTNVIEW_TESTS_FUZZ_H
#define ATTNVIEW_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The model file loader: model_parse on the raw bytes and on a copy with the
 * size field and CRC made right (else every mutation dies at the checksum),
 * train_checkpoint_load on checkpoints; accepted files must serialise back to
 * the same bytes; refusals and --info of accepted files must hold no control
 * sequence, whatever the metadata (tests/lib/textcheck.h). */
int fuzz_model(const uint8_t *data, size_t n);

/* The tokenizer: data[0] picks a chunk size; the streaming cleaner in chunks
 * must agree with clean_text, tokenize_text must accept exactly the valid
 * UTF-8 and give the same codepoints, and the output must be NFC and hold no
 * control character. */
int fuzz_text(const uint8_t *data, size_t n);

/* The corpus reader: the input is a corpus file; corpus_load must refuse it
 * with a message naming the file, or hold exactly the cleaned characters. */
int fuzz_corpus(const uint8_t *data, size_t n);

/* The dump formatter: data[0..1] pick the format, layer, head, top-k and a
 * weight scale of a tiny random model; the rest is the text. The JSON must
 * parse with the strict parser and the TSV must have its row count. */
int fuzz_dump(const uint8_t *data, size_t n);

/* The input line: the bytes are a key stream (fuzz_keys.c describes it) with
 * typing, bracketed paste and invalid UTF-8; the line's invariants are checked
 * after every key. */
int fuzz_keys(const uint8_t *data, size_t n);

/* Write data to this process's scratch file (created on first use in $TMPDIR,
 * removed at exit) and return its path; NULL if it cannot be written. */
const char *fuzz_scratch(const void *data, size_t n);

#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz invariant failed: %s: ", __FILE__, __LINE__,  \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
