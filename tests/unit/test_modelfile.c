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
	model_config c = {OBJ_CAUSAL, 9, 8, 2, 2, 16, {0}};
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

/* A training state laid out as man 5 attnview ("Training state") says, for a
 * checkpoint of m: a run of 40 steps with 10 done, `nrecent` recent losses,
 * `nevals` evaluations and `nbest` best parameters (P with --patience 3 once
 * evaluated, else 0); version 3 with --sharpen `sharpen`, or version 2 (no
 * such field) if it is negative. Written from the page, not with the
 * trainer's code. */
static void put_state(byte_buf *s, const model *m, const char *val_path, uint32_t nrecent,
		      uint32_t nevals, uint32_t nbest, uint64_t patience, float sharpen)
{
	const model_config *c = &m->cfg;
	bb_bytes(s, "ATCK", 4);
	bb_u32(s, sharpen < 0.0f ? 2 : 3); /* state version */
	bb_u32(s, c->objective);
	bb_u32(s, c->dim);
	bb_u32(s, c->heads);
	bb_u32(s, c->layers);
	bb_u32(s, c->context);
	bb_u32(s, 4);	  /* batch */
	bb_u64(s, 40);	  /* total steps */
	bb_u64(s, 0);	  /* epochs */
	bb_f32(s, 1e-3f); /* learning rate */
	bb_u64(s, 4);	  /* warmup */
	bb_u64(s, 7);	  /* seed */
	bb_u64(s, 1);	  /* minimum count */
	bb_u32(s, 0);	  /* maximum vocabulary */
	bb_u64(s, 10);	  /* evaluate every */
	bb_u64(s, 0);	  /* checkpoint every */
	bb_u32(s, 1);	  /* threads, at byte 96 */
	bb_u64(s, patience);
	if (sharpen >= 0.0f)
		bb_f32(s, sharpen);
	bb_u32(s, (uint32_t)strlen(val_path));
	bb_bytes(s, val_path, strlen(val_path));
	bb_u64(s, 1000);   /* training characters */
	bb_u64(s, 100);	   /* validation characters */
	bb_u64(s, 0x1234); /* corpus hash */
	bb_u64(s, 10);	   /* steps done */
	bb_u64(s, 640);	   /* tokens seen */
	for (int i = 0; i < 4; i++)
		bb_u64(s, 99 + (uint64_t)i); /* generator state */
	bb_u64(s, 10);			     /* AdamW step count */
	for (size_t i = 0; i < 2 * m->nparams; i++)
		bb_f32(s, i < m->nparams ? 0.5f : 0.25f);
	bb_u32(s, nrecent);
	for (uint32_t i = 0; i < nrecent; i++)
		bb_f32(s, 3.0f - 0.1f * (float)i);
	bb_u32(s, nevals);
	for (uint32_t i = 0; i < nevals; i++) {
		bb_u64(s, 10 * (uint64_t)(i + 1));
		bb_f32(s, 2.5f);
		bb_f32(s, 0.25f);
		bb_f32(s, 3.5f);   /* the baseline's loss */
		bb_f32(s, 0.125f); /* and accuracy */
		bb_f32(s, 2.75f);  /* mean training loss since the evaluation before */
	}
	bb_u32(s, nbest);
	for (uint32_t i = 0; i < nbest; i++)
		bb_f32(s, 0.125f);
}

/* The file parses; its training state's range in eoff, elen. */
static bool model_parse_ok(const uint8_t *buf, size_t n, size_t *eoff, size_t *elen)
{
	av_error err;
	uint32_t kind;
	model *r = model_parse(buf, n, "ckpt", &kind, eoff, elen, &err);
	bool ok = r != NULL;
	CHECKF(ok, "%s", ok ? "" : err.msg);
	model_destroy(r);
	return ok;
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
		bb_finish(&b2);
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

	/* A checkpoint's tail, the training state, comes back as the extra
	 * range, and decodes to what was written. */
	byte_buf extra = {0};
	put_state(&extra, m, "val.txt", 3, 2, (uint32_t)m->nparams, 3, 0.5f);
	byte_buf c;
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &extra, &c, &err));
	uint32_t kind;
	size_t eoff, elen;
	r = model_parse(c.v, c.n, "ckpt", &kind, &eoff, &elen, &err);
	CHECKF(r != NULL, "%s", err.msg);
	CHECK(kind == AV_KIND_CHECKPOINT && elen == extra.n && eoff + extra.n == c.n - 4);
	CHECK(memcmp(c.v + eoff, extra.v, extra.n) == 0);
	model_destroy(r);
	training_state st;
	CHECKF(training_state_parse(c.v, eoff, elen, &m->cfg, "ckpt", &st, &err), "%s", err.msg);
	CHECK(st.threads == 1 && st.total_steps == 40 && st.steps_done == 10 &&
	      st.adam_step == 10 && st.lr == 1e-3f && st.val_path_len == 7 &&
	      memcmp(st.val_path, "val.txt", 7) == 0 && st.ntrain == 1000 && st.hash == 0x1234 &&
	      st.rng[3] == 102 && st.nrecent == 3 && st.nevals == 2 && st.patience == 3 &&
	      st.nbest == m->nparams && st.sharpen == 0.5f);
	CHECK(st.m == c.v + eoff + 123 + 80 && st.v == st.m + 4 * m->nparams);
	CHECK(st.evals == st.recent + 4 * 3 + 4 && st.best == st.evals + 2 * 28 + 4);
	bb_finish(&c);
	bb_finish(&extra);
	/* A version-2 state, from before --sharpen: read as --sharpen 0. */
	byte_buf v2 = {0};
	put_state(&v2, m, "val.txt", 3, 2, (uint32_t)m->nparams, 3, -1.0f);
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &v2, &c, &err));
	CHECK(model_parse_ok(c.v, c.n, &eoff, &elen));
	CHECKF(training_state_parse(c.v, eoff, elen, &m->cfg, "ckpt", &st, &err), "%s", err.msg);
	CHECK(st.sharpen == 0.0f && st.patience == 3 && st.val_path_len == 7 &&
	      st.nbest == m->nparams && st.m == c.v + eoff + 119 + 80);
	bb_finish(&c);
	bb_finish(&v2);
	/* A weight past --sharpen's range is damage, at its byte (108). */
	byte_buf big = {0};
	put_state(&big, m, "", 0, 0, 0, 0, 200.0f);
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &big, &c, &err));
	CHECK(refused(c.v, c.n,
		      "(byte 108 of the state): the --sharpen weight is not between 0 and 100"));
	bb_finish(&c);
	bb_finish(&big);
	bb_finish(&b);
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
	put_u32(buf + 8, AV_FORMAT_VERSION_ARCH + 1);
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
	bb_finish(&b);
	model_destroy(m);
}

/* The training state of a kind-1 file: every reader refuses one that is
 * missing, short, long, garbage, of another magic or version, or that does
 * not fit the header or itself, naming the file and the byte of the file and
 * of the state. */
static void check_state_damage(void)
{
	model *m = small_model();
	av_error err;
	byte_buf good = {0};
	put_state(&good, m, "", 3, 2, 0, 0, -1.0f);
	const size_t S = good.n, P = m->nparams;
	const size_t steps = 136, adam = 184, recent = 192 + 8 * P; /* offsets in the state */
	char best_want[128];
	snprintf(best_want, sizeof best_want,
		 "it keeps %zu best parameters where the run's patience and evaluations call "
		 "for 0",
		 P);
	byte_buf c;
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &good, &c, &err));
	const size_t off = c.n - 4 - S; /* the state's first byte in the file */
	bb_finish(&c);
	uint8_t *st = malloc(S + 300);
	char want[256];
	struct {
		const char *what;
		size_t at, len; /* a u32 written at `at` (len 0: none); the state's length */
		uint32_t value;
		const char *expect;
		size_t byte; /* of the state, in the message; SIZE_MAX: none */
	} cases[] = {
	    {"no state", 0, 0, 0, "there is none", 0},
	    {"16 bytes short", 0, S - 16, 0,
	     "the evaluations need 56 bytes but the state has 44 left", S - 60},
	    {"4 bytes long", 0, S + 4, 0, "4 bytes follow its last field", S},
	    {"another magic", 0, S, 0x58435441 /* "ATCX" */, "does not start with \"ATCK\"", 0},
	    {"state version 1", 4, S, 1,
	     "training state version 1 at byte @, but this attnview reads version 3: the "
	     "checkpoint is from another version",
	     SIZE_MAX},
	    {"another objective", 8, S, OBJ_MASKED,
	     "does not match the model in the same file (its objective is 0 at byte @, the "
	     "header's 1)",
	     SIZE_MAX},
	    {"another context", 24, S, 32, "its context is 32", SIZE_MAX},
	    {"no threads", 96, S, 0, "the thread count is 0", 96},
	    {"a path too long", 108, S, 5000,
	     "the --val-file path is 5000 bytes long, more than 4096", 108},
	    {"best parameters without patience", S - 4, S, (uint32_t)P, best_want, S - 4},
	    {"too many recent losses", recent, S, 300, "it keeps 300 recent losses, more than 256",
	     recent},
	    {"more steps than the run", steps, S, 41, "41 steps done, more than the 40 of the run",
	     steps},
	    {"AdamW behind", adam, S, 9, "the AdamW step count 9 is not the 10 steps done", adam},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t len = cases[i].len;
		memset(st, 0, S + 300);
		memcpy(st, good.v, len < S ? len : S);
		if (cases[i].value || cases[i].at)
			put_u32(st + cases[i].at, cases[i].value);
		byte_buf extra = {st, len, S + 300, false};
		CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &extra, &c, &err));
		/* '@' stands for the byte of the file where the field is */
		const char *e = cases[i].expect, *at = strchr(e, '@');
		if (at)
			snprintf(want, sizeof want, "%.*s%zu%s", (int)(at - e), e,
				 off + cases[i].at, at + 1);
		else
			snprintf(want, sizeof want, "%s", e);
		CHECKF(refused(c.v, c.n, want), "%s", cases[i].what);
		if (cases[i].byte != SIZE_MAX) {
			snprintf(want, sizeof want,
				 "test.attn: the training state is damaged at byte %zu of the file "
				 "(byte %zu of the state): ",
				 off + cases[i].byte, cases[i].byte);
			CHECKF(refused(c.v, c.n, want), "%s: the offsets", cases[i].what);
		}
		bb_finish(&c);
	}
	/* Garbage: whatever it holds, refused. */
	for (size_t i = 0; i < S; i++)
		st[i] = (uint8_t)(i * 2654435761u >> 13);
	byte_buf junk = {st, S, S + 300, false};
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &junk, &c, &err));
	CHECK(refused(c.v, c.n, "the training state"));
	bb_finish(&c);
	/* A NUL in the --val-file path (a file name). */
	byte_buf nul = {0};
	put_state(&nul, m, "a\x01b", 0, 0, 0, 0, -1.0f);
	nul.v[112 + 1] = 0;
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &nul, &c, &err));
	CHECK(refused(c.v, c.n, "(byte 113 of the state): the --val-file path holds a NUL byte"));
	bb_finish(&c);
	bb_finish(&nul);
	/* With patience and an evaluation, the best parameters must be there. */
	byte_buf nobest = {0};
	put_state(&nobest, m, "", 0, 1, 0, 3, -1.0f);
	CHECK(model_serialize(m, AV_KIND_CHECKPOINT, &nobest, &c, &err));
	snprintf(want, sizeof want,
		 "(byte %zu of the state): it keeps 0 best parameters where the run's patience "
		 "and evaluations call for %zu",
		 nobest.n - 4, P);
	CHECK(refused(c.v, c.n, want));
	bb_finish(&c);
	bb_finish(&nobest);
	free(st);
	bb_finish(&good);
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
	check_state_damage();
	check_files();
	return test_summary("modelfile");
}
