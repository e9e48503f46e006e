/* Bytes in and out (binio.h): CRC-32, the byte buffer and reader, whole
 * files. */
#include "attnview/binio.h"
#include "attnview/i18n.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- CRC-32 (IEEE 802.3, reflected, as zlib) ---- */

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	/* Slicing-by-8 tables: eight bytes per step. */
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] =
			    (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
}

uint32_t av_crc32(uint32_t crc, const void *buf, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, crc_init);
	const uint8_t *p = buf;
	crc = ~crc;
	while (n >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		crc = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
		      crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
		      crc_table[0][p[7]];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

/* ---- little-endian writer ---- */

bool bb_reserve(byte_buf *b, size_t more)
{
	if (b->failed)
		return false;
	if (b->n + more <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + more)
		cap *= 2;
	uint8_t *v = realloc(b->v, cap);
	if (!v) {
		b->failed = true;
		return false;
	}
	b->v = v;
	b->cap = cap;
	return true;
}

void bb_bytes(byte_buf *b, const void *p, size_t n)
{
	if (n && bb_reserve(b, n)) {
		memcpy(b->v + b->n, p, n);
		b->n += n;
	}
}

void bb_u32(byte_buf *b, uint32_t x)
{
	uint8_t v[4] = {(uint8_t)x, (uint8_t)(x >> 8), (uint8_t)(x >> 16), (uint8_t)(x >> 24)};
	bb_bytes(b, v, 4);
}

void bb_u64(byte_buf *b, uint64_t x)
{
	bb_u32(b, (uint32_t)x);
	bb_u32(b, (uint32_t)(x >> 32));
}

void bb_f32(byte_buf *b, float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	bb_u32(b, u);
}

void bb_f32s(byte_buf *b, const float *x, size_t n)
{
	if (!bb_reserve(b, 4 * n))
		return;
	for (size_t i = 0; i < n; i++)
		bb_f32(b, x[i]);
}

void bb_finish(byte_buf *b)
{
	free(b->v);
	memset(b, 0, sizeof *b);
}

/* ---- bounds-checked reader ---- */

bool br_bytes(byte_reader *r, void *dst, size_t n)
{
	if (n > r->n - r->off)
		return false;
	if (dst)
		memcpy(dst, r->p + r->off, n);
	r->off += n;
	return true;
}

bool br_u32(byte_reader *r, uint32_t *x)
{
	uint8_t v[4];
	if (!br_bytes(r, v, 4))
		return false;
	*x = (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
	return true;
}

bool br_u64(byte_reader *r, uint64_t *x)
{
	uint32_t lo, hi;
	if (!br_u32(r, &lo) || !br_u32(r, &hi))
		return false;
	*x = (uint64_t)hi << 32 | lo;
	return true;
}

bool br_f32(byte_reader *r, float *x)
{
	uint32_t u;
	if (!br_u32(r, &u))
		return false;
	memcpy(x, &u, 4);
	return true;
}

bool br_f32s(byte_reader *r, float *dst, size_t n)
{
	if (n > (r->n - r->off) / 4)
		return false;
	for (size_t i = 0; i < n; i++)
		br_f32(r, &dst[i]);
	return true;
}

/* ---- whole files ---- */

bool binio_read_file(const char *path, uint8_t **buf, size_t *n, av_error *err)
{
	/* O_NONBLOCK: a FIFO is refused below instead of waiting for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return av_fail_errno(err, errno, _("%s: cannot open"), AV_Q(path));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return av_fail_errno(err, e, _("%s: cannot stat"), AV_Q(path));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return av_fail(err, _("%s: is %s, not a regular file"), AV_Q(path),
			       S_ISDIR(st.st_mode) ? _("a directory") : _("a special file"));
	}
	size_t size = (size_t)st.st_size;
	uint8_t *b = malloc(size ? size : 1);
	if (!b) {
		close(fd);
		return av_fail(err, _("%s: out of memory for %zu bytes"), AV_Q(path), size);
	}
	size_t got = 0;
	while (got < size) {
		ssize_t k = read(fd, b + got, size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(b);
			close(fd);
			return av_fail_errno(err, e, _("%s: read failed at byte %zu"), AV_Q(path),
					     got);
		}
		if (k == 0)
			break; /* shrank while reading: what was there */
		got += (size_t)k;
	}
	close(fd);
	*buf = b;
	*n = got;
	return true;
}

bool binio_write_file(const char *path, const byte_buf *b, atomic_mode mode, av_error *err)
{
	if (b->failed)
		return av_fail(err, _("%s: out of memory building the file; nothing was written"),
			       AV_Q(path));
	return atomic_write_file(path, b->v, b->n, mode, err);
}
