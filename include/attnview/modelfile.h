/* The model file: one little-endian binary file, checksummed (man 5 attnview).
 *
 *   offset size
 *   0      8    magic "ATTNVIEW"
 *   8      4    format version (1)
 *   12     4    kind: 0 model, 1 training checkpoint
 *   16     8    file size in bytes, checksum included
 *   24     4    objective: 0 masked, 1 causal
 *   28     4    vocabulary size V (special tokens included)
 *   32     4    dim d
 *   36     4    heads h
 *   40     4    layers L
 *   44     4    context T
 *   48     8    training steps
 *   56     8    training tokens seen
 *   64     8    created, unix seconds (signed)
 *   72     8    seed
 *   80     4    validation loss (f32, nats per predicted character; NaN unknown)
 *   84     4    validation accuracy (f32)
 *   88     4    unigram baseline loss (f32)
 *   92     4    unigram baseline accuracy (f32)
 *   96     4    n1, then n1 bytes: model name (UTF-8, no NUL)
 *          4    n2, then n2 bytes: corpus description (UTF-8, no NUL)
 *          4V   vocabulary: u32 codepoints; entries 0..2 = 0x110000..0x110002
 *          4P   parameters, f32, in model_tensor_table order
 *          ...  kind 1 only: the training state (train.h)
 *   end-4  4    CRC-32 (IEEE, as zlib's crc32) of every byte before it
 */
#ifndef ATTNVIEW_MODELFILE_H
#define ATTNVIEW_MODELFILE_H

#include "attnview/common.h"
#include "attnview/model.h"

#define AV_MAGIC "ATTNVIEW"
#define AV_FORMAT_VERSION 1u
enum { AV_KIND_MODEL = 0, AV_KIND_CHECKPOINT = 1 };
#define AV_HEADER_FIXED 96u

uint32_t av_crc32(uint32_t crc, const void *buf, size_t n);

/* A growable little-endian byte buffer used to build files. */
typedef struct byte_buf {
	uint8_t *v;
	size_t n, cap;
	bool failed; /* an allocation failed; the content is incomplete */
} byte_buf;

void bb_u32(byte_buf *b, uint32_t x);
void bb_u64(byte_buf *b, uint64_t x);
void bb_f32(byte_buf *b, float x);
void bb_bytes(byte_buf *b, const void *p, size_t n);
void bb_f32s(byte_buf *b, const float *x, size_t n);
void bb_free(byte_buf *b);

/* A bounds-checked reader over a byte range; every read past the end fails. */
typedef struct byte_reader {
	const uint8_t *p;
	size_t n, off;
} byte_reader;

bool br_u32(byte_reader *r, uint32_t *x);
bool br_u64(byte_reader *r, uint64_t *x);
bool br_f32(byte_reader *r, float *x);
bool br_bytes(byte_reader *r, void *dst, size_t n);
bool br_f32s(byte_reader *r, float *dst, size_t n);

/* Serialise a model (kind AV_KIND_MODEL), checksum included. `extra` (may be
 * NULL) is appended before the checksum and the kind set to `kind`. */
bool model_serialize(const model *m, uint32_t kind, const byte_buf *extra, byte_buf *out,
		     av_error *err);

/* Parse and validate a whole file image. `what` names it in messages. On
 * success *extra_off/extra_len (may be NULL) locate the kind-specific tail. */
model *model_parse(const uint8_t *buf, size_t n, const char *what, uint32_t *kind,
		   size_t *extra_off, size_t *extra_len, av_error *err);

/* Read a file wholly into memory (regular files only). */
bool read_file(const char *path, uint8_t **buf, size_t *n, av_error *err);

/* Load a model file (kind 0; a checkpoint is accepted too, for --info/--dump). */
model *model_load(const char *path, av_error *err);

/* May a model be written to path? Not if it is a directory, or an existing
 * non-empty file that is not an attnview file (no magic): someone's data.
 * Training asks before it starts, every save asks again. */
bool may_replace_file(const char *path, av_error *err);

/* Write bytes to path atomically (atomicfile.h: a temporary file in the same
 * directory, fsync, rename, fsync of the directory). An existing file that is
 * not an attnview file (no magic) is never replaced unless `force`. */
bool write_file_atomic(const char *path, const void *buf, size_t n, bool force, av_error *err);

bool model_save(const model *m, const char *path, av_error *err);

/* The built-in model compiled into the program (NULL if this build has none). */
model *model_builtin(av_error *err);
/* The built-in models by name: "builtin" (masked, the default) and
 * "builtin-causal" (next character). */
bool model_builtin_name(const char *name);
model *model_builtin_named(const char *name, av_error *err);

#endif
