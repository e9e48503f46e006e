/* Bytes in and out: CRC-32, a growable little-endian byte buffer, a
 * bounds-checked byte reader, and whole files read into memory or written
 * whole (through the atomic writer, atomicfile.h). The model file and its
 * checkpoints (modelfile.c, training_state.c, train/checkpoint.c) and the
 * PNG chunks of an SVG's images (render/figure_svg.c) are built and read
 * with these; nothing here knows a format.
 *
 *	byte_buf b = {0};
 *	bb_bytes(&b, "ATTNVIEW", 8);
 *	bb_u32(&b, 1);                         // little-endian
 *	bb_u32(&b, av_crc32(0, b.v, b.n));     // b.failed: out of memory
 *	ok = binio_write_file("x.bin", &b, ATOMIC_REPLACE, &err);
 *	bb_finish(&b);
 *
 *	byte_reader r = {buf, n, 0};
 *	uint32_t v;
 *	if (!br_u32(&r, &v))                   // past the end: false, r.off kept
 *		... "truncated at byte %zu", r.off ... */
#ifndef ATTNVIEW_BINIO_H
#define ATTNVIEW_BINIO_H

#include "attnview/atomicfile.h"
#include "attnview/common.h"

/* CRC-32 (IEEE 802.3, reflected: zlib's crc32) of n bytes, continuing crc
 * (0 to start). Thread-safe. */
uint32_t av_crc32(uint32_t crc, const void *buf, size_t n);

/* A growable byte buffer; {0} is empty. After a failed allocation `failed`
 * is set, nothing more is appended, and the content is incomplete. */
typedef struct byte_buf {
	uint8_t *v;
	size_t n, cap;
	bool failed;
} byte_buf;

/* Room for `more` bytes past n; false (and failed) when out of memory. */
bool bb_reserve(byte_buf *b, size_t more);
void bb_u32(byte_buf *b, uint32_t x); /* little-endian, as every write below */
void bb_u64(byte_buf *b, uint64_t x);
void bb_f32(byte_buf *b, float x); /* IEEE 754 single, its bits as a u32 */
void bb_bytes(byte_buf *b, const void *p, size_t n);
void bb_f32s(byte_buf *b, const float *x, size_t n);
void bb_finish(byte_buf *b);

/* A reader over the bytes p[0..n) from off; a read past the end fails and
 * leaves off where it was. */
typedef struct byte_reader {
	const uint8_t *p;
	size_t n, off;
} byte_reader;

bool br_u32(byte_reader *r, uint32_t *x);
bool br_u64(byte_reader *r, uint64_t *x);
bool br_f32(byte_reader *r, float *x);
bool br_bytes(byte_reader *r, void *dst, size_t n); /* dst NULL: skip n bytes */
bool br_f32s(byte_reader *r, float *dst, size_t n);

/* A regular file wholly into memory (*buf malloc'ed); a directory, a FIFO
 * or a device is refused without waiting. A file that shrinks while it is
 * read gives what was there. */
bool binio_read_file(const char *path, uint8_t **buf, size_t *n, av_error *err);

/* b to path, whole or not at all (atomic_write_file); a buffer whose
 * building ran out of memory is refused and nothing is written. */
bool binio_write_file(const char *path, const byte_buf *b, atomic_mode mode, av_error *err);

#endif
