/* The model file: a round trip keeps every bit, and every kind of damage is
 * refused with a message that says what is wrong — never a crash (run this
 * under ASan to see the "never an out-of-bounds read" half). */
#include "harness.h"

#include "attnview/modelfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static model *small_model(void)
{
	model_config c = {OBJ_CAUSAL, 9, 8, 2, 2, 16};
	uint32_t cps[9] = {AV_SPECIAL_CP, AV_SPECIAL_CP + 1, AV_SPECIAL_CP + 2, 'a', 'b', ' ',
			   0x4F60, 0x1F600, '\n'};
	av_error err;
	model *m = model_create(&c, cps, &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		exit(1);
	model_init_random(m, 42);
	model_set_meta_strings(m, "tiny \xE5\xB0\x8F", "unit test corpus", &err);
	m->meta.steps = 1234;
	m->meta.tokens = 987654321;
	m->meta.created = 1700000000;
	m->meta.seed = 7;
	m->meta.val_loss = 2.5f;
	m->meta.val_acc = 0.25f;
	m->meta.base_loss = 3.5f;
	m->meta.base_acc = 0.125f;
	return m;
}

static void put_u32(uint8_t *p, uint32_t x)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(x >> (8 * i));
}

/* Fix the checksum after an edit, so the damage under test is the one seen. */
static void reseal(uint8_t *buf, size_t n)
{
	put_u32(buf + n - 4, av_crc32(0, buf, n - 4));
}

static bool refused(const uint8_t *buf, size_t n, const char *expect)
{
	av_error err = {{0}};
	model *m = model_parse(buf, n, "test.attn", NULL, NULL, NULL, &err);
	if (m) {
		model_destroy(m);
		fprintf(stderr, "accepted a damaged file (expected \"%s\")\n", expect);
		return false;
	}
	if (!strstr(err.msg, "test.attn") || (expect && !strstr(err.msg, expect))) {
		fprintf(stderr, "message \"%s\" lacks \"%s\" or the file name\n", err.msg,
			expect ? expect : "");
		return false;
	}
	return true;
}

static void check_round_trip(void)
{
	model *m = small_model();
	byte_buf b;
	av_error err;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &b, &err));
	CHECK(memcmp(b.v, "ATTNVIEW", 8) == 0);
	model *r = model_parse(b.v, b.n, "mem", NULL, NULL, NULL, &err);
	CHECKF(r != NULL, "%s", err.msg);
	if (r) {
		CHECK(memcmp(&r->cfg, &m->cfg, sizeof m->cfg) == 0);
		CHECK(memcmp(r->params, m->params, m->nparams * sizeof(float)) == 0);
		CHECK(memcmp(r->vocab.cps, m->vocab.cps, m->cfg.vocab_size * 4) == 0);
		CHECK(strcmp(r->meta.name, m->meta.name) == 0);
		CHECK(strcmp(r->meta.corpus, m->meta.corpus) == 0);
		CHECK(r->meta.steps == 1234 && r->meta.tokens == 987654321 &&
		      r->meta.created == 1700000000 && r->meta.seed == 7);
		CHECK(r->meta.val_loss == 2.5f && r->meta.val_acc == 0.25f &&
		      r->meta.base_loss == 3.5f && r->meta.base_acc == 0.125f);
		/* Serialising the loaded model gives the same bytes. */
		byte_buf b2;
		CHECK(model_serialize(r, AV_KIND_MODEL, NULL, &b2, &err));
		CHECK(b2.n == b.n && memcmp(b2.v, b.v, b.n) == 0);
		bb_free(&b2);
		model_destroy(r);
	}
	/* The layout is little-endian at the documented offsets. */
	CHECK(b.v[8] == 1 && b.v[9] == 0);
	CHECK(b.v[24] == OBJ_CAUSAL && b.v[28] == 9 && b.v[32] == 8 && b.v[36] == 2 &&
	      b.v[40] == 2 && b.v[44] == 16);
	uint64_t size = 0;
	for (int i = 0; i < 8; i++)
		size |= (uint64_t)b.v[16 + i] << (8 * i);
	CHECK(size == b.n);

	/* A checkpoint's tail comes back as the extra range. */
	byte_buf extra = {0};
	bb_u32(&extra, 0xDEADBEEF);
	byte_buf c;
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &extra, &c, &err));
	uint32_t kind;
	size_t eoff, elen;
	r = model_parse(c.v, c.n, "ckpt", &kind, &eoff, &elen, &err);
	CHECKF(r != NULL, "%s", err.msg);
	CHECK(kind == AV_KIND_CHECKPOINT && elen == 4 && eoff + 4 == c.n - 4);
	CHECK(c.v[eoff] == 0xEF && c.v[eoff + 3] == 0xDE);
	model_destroy(r);
	bb_free(&c);
	bb_free(&extra);
	bb_free(&b);
	model_destroy(m);
}

static void check_damage(void)
{
	model *m = small_model();
	byte_buf b;
	av_error err;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &b, &err));
	const size_t n = b.n;
	uint8_t *buf = malloc(n + 16);

	/* Truncation at every byte. */
	int bad = 0;
	for (size_t k = 0; k < n; k++) {
		memcpy(buf, b.v, k);
		if (!refused(buf, k, k >= 8 ? "truncated" : NULL))
			bad++;
	}
	CHECKF(bad == 0, "%d truncations not refused with a message", bad);
	/* Nothing at all. */
	CHECK(refused(b.v, 0, NULL));

	/* Every single-bit flip anywhere in the file is caught. */
	bad = 0;
	for (size_t k = 0; k < n; k++) {
		for (int bit = 0; bit < 8; bit += 3) {
			memcpy(buf, b.v, n);
			buf[k] ^= (uint8_t)(1u << bit);
			if (!refused(buf, n, NULL))
				bad++;
		}
	}
	CHECKF(bad == 0, "%d bit flips accepted", bad);
	/* ... and a flip in the body names the checksum. */
	memcpy(buf, b.v, n);
	buf[n / 2] ^= 0x10;
	CHECK(refused(buf, n, "checksum mismatch"));

	/* Wrong magic. */
	memcpy(buf, b.v, n);
	memcpy(buf, "PK\x03\x04", 4);
	CHECK(refused(buf, n, "not an attnview model"));

	/* A newer format version asks for a newer attnview. */
	memcpy(buf, b.v, n);
	put_u32(buf + 8, 2);
	reseal(buf, n);
	CHECK(refused(buf, n, "upgrade attnview"));

	/* Appended bytes. */
	memcpy(buf, b.v, n);
	buf[n] = 0;
	CHECK(refused(buf, n + 1, NULL));

	/* Impossible hyperparameters, with a valid checksum. */
	struct {
		size_t off;
		uint32_t value;
		const char *expect;
	} hp[] = {
		{24, 7, "objective"},	       {32, 0, "dimension"},
		{32, 9, "dimension"},	       {36, 3, "divisible"},
		{36, 0, "heads"},	       {40, 0, "layers"},
		{40, 1000, "layers"},	       {44, 0, "context"},
		{44, 1u << 20, "context"},     {28, 2, "vocabulary"},
		{28, 0xFFFFFFFF, "vocabulary"}, {28, 10, "vocabulary entry 9"},
		{40, 3, "remain"},
	};
	for (size_t i = 0; i < sizeof hp / sizeof hp[0]; i++) {
		memcpy(buf, b.v, n);
		put_u32(buf + hp[i].off, hp[i].value);
		reseal(buf, n);
		CHECKF(refused(buf, n, hp[i].expect), "header field at %zu = %u", hp[i].off,
		       hp[i].value);
	}
	/* Oversized: every field within its own limit, together too many
	 * parameters. */
	memcpy(buf, b.v, n);
	put_u32(buf + 28, AV_MAX_VOCAB);
	put_u32(buf + 32, AV_MAX_DIM);
	put_u32(buf + 40, AV_MAX_LAYERS);
	reseal(buf, n);
	CHECK(refused(buf, n, "limit"));

	/* Small in parameters but needing gigabytes to run: refused before any
	 * allocation. */
	memcpy(buf, b.v, n);
	put_u32(buf + 36, 8); /* heads 8 (d=8, head size 1), 2 layers, context 1024 */
	put_u32(buf + 40, AV_MAX_LAYERS);
	put_u32(buf + 44, AV_MAX_CONTEXT);
	reseal(buf, n);
	CHECK(refused(buf, n, "attention weights per text"));

	/* Strings: an absurd length, invalid UTF-8, a NUL (valid UTF-8, but not
	 * allowed: the message names that rule, not the other). The name starts at
	 * byte 100, the corpus description's length at 100 + 8. */
	memcpy(buf, b.v, n);
	put_u32(buf + AV_HEADER_FIXED, 0x7FFFFFFF);
	reseal(buf, n);
	CHECK(refused(buf, n, "model name"));
	memcpy(buf, b.v, n);
	buf[AV_HEADER_FIXED + 4 + 2] = 0xFF;
	reseal(buf, n);
	CHECK(refused(buf, n, "the model name at byte 100 is not valid UTF-8 (byte 102)"));
	memcpy(buf, b.v, n);
	buf[AV_HEADER_FIXED + 4 + 1] = 0x00;
	reseal(buf, n);
	CHECK(refused(buf, n, "the model name at byte 100 contains a NUL byte (byte 101)"));
	memcpy(buf, b.v, n);
	buf[AV_HEADER_FIXED + 4 + 8 + 4 + 3] = 0x00;
	reseal(buf, n);
	CHECK(refused(buf, n, "the corpus description at byte 112 contains a NUL byte (byte 115)"));

	/* The vocabulary: a surrogate, beyond Unicode, a duplicate, a bad special. */
	size_t voc = AV_HEADER_FIXED + 4 + strlen(m->meta.name) + 4 + strlen(m->meta.corpus);
	uint32_t vbad[][2] = {{4, 0xD800}, {5, 0x110005}, {6, 'a'}, {0, 'x'}, {1, AV_SPECIAL_CP}};
	for (size_t i = 0; i < sizeof vbad / sizeof vbad[0]; i++) {
		memcpy(buf, b.v, n);
		put_u32(buf + voc + 4 * vbad[i][0], vbad[i][1]);
		reseal(buf, n);
		CHECKF(refused(buf, n, "vocabulary"), "vocabulary entry %u = %u", vbad[i][0],
		       vbad[i][1]);
	}

	/* A parameter that is not a number. */
	memcpy(buf, b.v, n);
	put_u32(buf + voc + 4 * 9 + 40, 0x7FC00000);
	reseal(buf, n);
	CHECK(refused(buf, n, "finite"));

	free(buf);
	bb_free(&b);
	model_destroy(m);
}

static void check_files(void)
{
	av_error err;
	char dir[] = "/tmp/attnview-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[512], other[512];
	snprintf(path, sizeof path, "%s/m.attn", dir);
	snprintf(other, sizeof other, "%s/notes.txt", dir);

	model *m = small_model();
	CHECKF(model_save(m, path, &err), "%s", err.msg);
	model *r = model_load(path, &err);
	CHECKF(r != NULL, "%s", err.msg);
	model_destroy(r);
	/* Saving again replaces an attnview file. */
	m->meta.steps = 99;
	CHECKF(model_save(m, path, &err), "%s", err.msg);
	r = model_load(path, &err);
	CHECK(r && r->meta.steps == 99);
	model_destroy(r);

	/* A new model gets the mode the umask allows, a replaced one keeps its
	 * own: a model of private notes must not become world-readable. */
	char priv[512];
	snprintf(priv, sizeof priv, "%s/private.attn", dir);
	mode_t old = umask(077);
	CHECKF(model_save(m, priv, &err), "%s", err.msg);
	umask(old);
	struct stat st;
	CHECK(stat(priv, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(chmod(priv, 0640) == 0);
	CHECKF(model_save(m, priv, &err), "%s", err.msg);
	CHECK(stat(priv, &st) == 0 && (st.st_mode & 0777) == 0640);

	/* A file that is not a model is never overwritten. */
	FILE *f = fopen(other, "w");
	fputs("my thesis\n", f);
	fclose(f);
	CHECK(!model_save(m, other, &err) && strstr(err.msg, "not an attnview model"));
	size_t len;
	uint8_t *txt = test_read_file(other, &len);
	CHECK(txt && len == 10 && memcmp(txt, "my thesis\n", 10) == 0);
	free(txt);

	/* Directories, missing and unreadable files get named errors. */
	CHECK(!model_load(dir, &err) && strstr(err.msg, "directory"));
	snprintf(other, sizeof other, "%s/missing.attn", dir);
	CHECK(!model_load(other, &err) && strstr(err.msg, "No such file"));
	CHECK(!model_save(m, dir, &err) && strstr(err.msg, "directory"));

	/* No temporary files are left behind. */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp > /dev/null", dir);
	CHECK(system(cmd) != 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	model_destroy(m);
}

int main(void)
{
	check_round_trip();
	check_damage();
	check_files();
	return test_summary("modelfile");
}
