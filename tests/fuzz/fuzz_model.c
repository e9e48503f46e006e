/* Fuzz target: the model file loader (model_parse, train_checkpoint_load),
 * and --info of what it accepts. */
#include "fuzz.h"

#include <string.h>

#include "attnview/checkpoint.h"
#include "attnview/dump.h"
#include "attnview/modelfile.h"
#include "attnview/train.h"
#include "textcheck.h"

/* Text a terminal is shown holds no control sequence (textcheck.h). */
static void check_shown(const char *what, const char *s, size_t n, bool tabs)
{
	const char *bad = "";
	size_t at = text_check(s, n, tabs, &bad);
	FUZZ_CHECK(at == n, "%s: byte %zu of %zu is %s", what, at, n, bad);
}

/* A refusal must be a sentence that names the file (or says what ran out),
 * safe to print. */
static void check_refusal(const av_error *err, const char *what)
{
	FUZZ_CHECK(err->msg[0] != '\0', "empty error message");
	FUZZ_CHECK(strstr(err->msg, what) || strstr(err->msg, "out of memory"),
		   "message does not name the file: %s", err->msg);
	check_shown("the refusal", err->msg, strlen(err->msg), true);
}

/* attnview --info of an accepted file: "key: value" lines, and nothing a
 * terminal would take as a command, whatever the metadata holds. */
static void check_info(const model *m)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return;
	dump_info(f, m, "fuzz.attn");
	FUZZ_CHECK(fclose(f) == 0 && text, "--info could not be written");
	check_shown("--info", text, n, false);
	for (const char *line = text; line < text + n;) {
		const char *end = memchr(line, '\n', (size_t)(text + n - line));
		FUZZ_CHECK(end, "--info does not end in a line break");
		const char *colon = memchr(line, ':', (size_t)(end - line));
		bool key = colon && colon > line && colon[1] == ' ';
		for (const char *p = line; key && p < colon; p++)
			key = (*p >= 'a' && *p <= 'z') || (*p == ' ' && p > line);
		FUZZ_CHECK(key, "--info line is not 'key: value': %.*s", (int)(end - line), line);
		line = end + 1;
	}
	free(text);
}

/* Accepted files are canonical: serialising the parsed model with the same
 * kind and tail gives back every byte, so nothing in a file is ignored. */
static void check_accepted(const model *m, uint32_t kind, const uint8_t *buf, size_t n, size_t off,
			   size_t len)
{
	FUZZ_CHECK(kind == AV_KIND_MODEL || kind == AV_KIND_CHECKPOINT, "kind %u", kind);
	FUZZ_CHECK(off + len + 4 == n, "tail at %zu+%zu in %zu bytes", off, len, n);
	av_error err;
	FUZZ_CHECK(model_config_check(&m->cfg, &err), "accepted config fails the check: %s",
		   err.msg);
	FUZZ_CHECK(m->vocab.size == m->cfg.vocab_size, "vocabulary size %u vs %u", m->vocab.size,
		   m->cfg.vocab_size);
	byte_buf extra = {(uint8_t *)(uintptr_t)(buf + off), len, len, false};
	byte_buf out;
	FUZZ_CHECK(model_serialize(m, kind, len ? &extra : NULL, &out, &err), "%s", err.msg);
	FUZZ_CHECK(out.n == n && memcmp(out.v, buf, n) == 0,
		   "re-serialised file differs (%zu bytes vs %zu)", out.n, n);
	bb_finish(&out);
}

static void parse_one(const uint8_t *buf, size_t n)
{
	av_error err = {{0}};
	uint32_t kind = 99;
	size_t off = 0, len = 0;
	model *m = model_parse(buf, n, "fuzz.attn", &kind, &off, &len, &err);
	if (!m) {
		check_refusal(&err, "fuzz.attn");
		return;
	}
	check_accepted(m, kind, buf, n, off, len);
	check_info(m);
	model_destroy(m);
	if (kind != AV_KIND_CHECKPOINT)
		return;
	/* model_parse checked the training state as every reader does: --resume
	 * may refuse only what it alone checks, options its --train refuses. */
	const char *path = fuzz_scratch(buf, n);
	if (!path)
		return;
	train_checkpoint ck;
	memset(&ck, 0, sizeof ck);
	if (train_checkpoint_load(&ck, path, &err)) {
		FUZZ_CHECK(ck.model != NULL, "checkpoint without a model");
		FUZZ_CHECK(ck.state_off + ck.state_len + 4 == ck.n, "state at %zu+%zu of %zu",
			   ck.state_off, ck.state_len, ck.n);
		train_checkpoint_finish(&ck);
	} else {
		check_refusal(&err, path);
		FUZZ_CHECK(strstr(err.msg, "options are invalid") ||
			       strstr(err.msg, "out of memory"),
			   "a checkpoint every reader takes, refused by --resume: %s", err.msg);
	}
}

int fuzz_model(const uint8_t *data, size_t n)
{
	parse_one(data, n);

	/* The same bytes with a consistent size field and checksum, so that
	 * mutations reach the checks behind the CRC. */
	if (n < AV_HEADER_FIXED + 12 || n > (64u << 20))
		return 0;
	uint8_t *copy = malloc(n);
	if (!copy)
		return 0;
	memcpy(copy, data, n);
	for (int i = 0; i < 8; i++)
		copy[16 + i] = (uint8_t)((uint64_t)n >> (8 * i));
	uint32_t crc = av_crc32(0, copy, n - 4);
	for (int i = 0; i < 4; i++)
		copy[n - 4 + i] = (uint8_t)(crc >> (8 * i));
	if (memcmp(copy, data, n) != 0)
		parse_one(copy, n);
	free(copy);
	return 0;
}
