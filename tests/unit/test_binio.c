/* Bytes in and out (src/core/binio.c): CRC-32 against its published check
 * values, the byte buffer read back by the reader, reads past the end, and
 * whole files read and written. */
#include "attnview/binio.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *at(const char *name)
{
	static char buf[2][512];
	static int i;
	i = (i + 1) % 2;
	snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
	return buf[i];
}

static void crc(void)
{
	/* The CRC-32 check value (zlib, PNG, Ethernet). */
	CHECK(av_crc32(0, "123456789", 9) == 0xCBF43926u);
	CHECK(av_crc32(0, "", 0) == 0);
	/* Continued in pieces of every length around the 8-byte steps. */
	uint8_t b[100];
	for (int i = 0; i < 100; i++)
		b[i] = (uint8_t)(i * 37 + 11);
	uint32_t whole = av_crc32(0, b, sizeof b);
	for (size_t cut = 0; cut <= sizeof b; cut += 7)
		CHECK(av_crc32(av_crc32(0, b, cut), b + cut, sizeof b - cut) == whole);
	/* PNG's IEND chunk ends with the CRC of its type. */
	CHECK(av_crc32(0, "IEND", 4) == 0xAE426082u);
}

static void round_trip(void)
{
	byte_buf b = {0};
	bb_bytes(&b, "AB", 2);
	bb_u32(&b, 0x01020304u);
	bb_u64(&b, 0x1122334455667788ull);
	bb_f32(&b, -1.5f);
	float fs[3] = {0.25f, NAN, 3e38f};
	bb_f32s(&b, fs, 3);
	CHECK(!b.failed && b.n == 2 + 4 + 8 + 4 + 12);
	/* Little-endian on every machine. */
	CHECK(b.v[2] == 4 && b.v[3] == 3 && b.v[4] == 2 && b.v[5] == 1);
	CHECK(b.v[6] == 0x88 && b.v[13] == 0x11);

	byte_reader r = {b.v, b.n, 0};
	char ab[2];
	uint32_t u;
	uint64_t q;
	float f, g[3];
	CHECK(br_bytes(&r, ab, 2) && memcmp(ab, "AB", 2) == 0);
	CHECK(br_u32(&r, &u) && u == 0x01020304u);
	CHECK(br_u64(&r, &q) && q == 0x1122334455667788ull);
	CHECK(br_f32(&r, &f) && f == -1.5f);
	CHECK(br_f32s(&r, g, 3) && g[0] == 0.25f && isnan(g[1]) && g[2] == 3e38f);
	CHECK(r.off == r.n);
	/* Past the end: false, and the offset stays. */
	CHECK(!br_u32(&r, &u) && r.off == r.n);
	r.off = r.n - 3;
	CHECK(!br_u32(&r, &u) && r.off == r.n - 3);
	CHECK(!br_f32s(&r, g, 1) && !br_bytes(&r, NULL, 4) && br_bytes(&r, NULL, 3));
	r.off = 0;
	CHECK(!br_f32s(&r, g, (SIZE_MAX / 4) + 1) && r.off == 0); /* no overflow */
	bb_finish(&b);
	CHECK(!b.v && b.n == 0);
}

static void files(void)
{
	av_error err;
	byte_buf b = {0};
	for (uint32_t i = 0; i < 5000; i++)
		bb_u32(&b, i * 2654435761u);
	CHECKF(binio_write_file(at("f"), &b, ATOMIC_KEEP, &err), "%s", err.msg);
	uint8_t *got = NULL;
	size_t n = 0;
	CHECKF(binio_read_file(at("f"), &got, &n, &err), "%s", err.msg);
	CHECK(got && n == b.n && memcmp(got, b.v, n) == 0);
	free(got);
	/* Kept, or replaced, as asked. */
	CHECK(!binio_write_file(at("f"), &b, ATOMIC_KEEP, &err));
	byte_buf small = {0};
	bb_u32(&small, 7);
	CHECKF(binio_write_file(at("f"), &small, ATOMIC_REPLACE, &err), "%s", err.msg);
	CHECK(binio_read_file(at("f"), &got, &n, &err) && n == 4 && got[0] == 7);
	free(got);
	/* A buffer that ran out of memory is never written. */
	small.failed = true;
	CHECK(!binio_write_file(at("g"), &small, ATOMIC_REPLACE, &err) &&
	      strstr(err.msg, "nothing was written"));
	struct stat st;
	CHECK(stat(at("g"), &st) != 0);
	/* A directory, a FIFO, a missing file: refused at once, named. */
	CHECK(!binio_read_file(dir, &got, &n, &err) && strstr(err.msg, "directory"));
	CHECK(mkfifo(at("p"), 0600) == 0);
	CHECK(!binio_read_file(at("p"), &got, &n, &err) && strstr(err.msg, "not a regular file"));
	CHECK(!binio_read_file(at("none"), &got, &n, &err) && strstr(err.msg, "none"));
	/* An empty file is empty, not an error. */
	CHECKF(binio_write_file(at("e"), &(byte_buf){0}, ATOMIC_KEEP, &err), "%s", err.msg);
	CHECK(binio_read_file(at("e"), &got, &n, &err) && n == 0);
	free(got);
	unlink(at("f"));
	unlink(at("p"));
	unlink(at("e"));
	rmdir(dir);
	bb_finish(&b);
	bb_finish(&small);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/attnview-binio.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	crc();
	round_trip();
	files();
	return test_summary("binio");
}
