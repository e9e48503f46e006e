/* The training timeline's section of the model file (timeline.h, man 5
 * attnview "Timeline"): a model with one keeps every record through a round
 * trip, a file without one reads as before, and a damaged section is refused
 * with the byte named, never a crash; what a record measures: the induction
 * score of a head built to copy, the in-context learning score of a model
 * that predicts late positions better. */
#include "harness.h"

#include "attnview/modelfile.h"
#include "attnview/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static model *small_model(objective obj)
{
	model_config c = {obj, 9, 8, 2, 2, 16, {0}};
	uint32_t cps[9] = {
	    AV_SPECIAL_CP, AV_SPECIAL_CP + 1, AV_SPECIAL_CP + 2, 'a', 'b', 'c', 'd', 'e', ' '};
	av_error err;
	model *m = model_create(&c, cps, &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		exit(1);
	model_init_random(m, 42);
	return m;
}

/* A timeline of 3 records (steps 0, 5, 10) on m. */
static void add_timeline(model *m)
{
	uint32_t probe[2 * 12];
	for (int i = 0; i < 24; i++)
		probe[i] = "abcde "[i % 6];
	av_error err;
	m->timeline = timeline_create(m, probe, 2, 12, 5, 7, &err);
	CHECKF(m->timeline != NULL, "%s", err.msg);
	for (uint64_t s = 0; m->timeline && s <= 10; s += 5)
		CHECKF(timeline_record(m->timeline, m, s, 2.0f - 0.1f * (float)s, true, &err), "%s",
		       err.msg);
}

static size_t find(const uint8_t *b, size_t n, const char *s)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (memcmp(b + i, s, 4) == 0)
			return i;
	return n;
}

static void put_u32(uint8_t *p, uint32_t x)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(x >> (8 * i));
}

static void reseal(uint8_t *buf, size_t n)
{
	put_u32(buf + n - 4, av_crc32(0, buf, n - 4));
}

static void test_round_trip(void)
{
	model *m = small_model(OBJ_CAUSAL);
	add_timeline(m);
	const timeline *a = m->timeline;
	CHECK(a && a->count == 3 && a->step[2] == 10);
	byte_buf b;
	av_error err;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &b, &err));
	model *r = model_parse(b.v, b.n, "t.attn", NULL, NULL, NULL, &err);
	CHECKF(r && r->timeline, "%s", r ? "no timeline read back" : err.msg);
	if (r && r->timeline && a) {
		const timeline *t = r->timeline;
		CHECK(t->count == 3 && t->every == 5 && t->windows == 2 && t->n == 12);
		CHECK(memcmp(t->v, a->v, 3 * 2 * 2 * TL_NVALUES * sizeof(float)) == 0);
		CHECK(memcmp(t->repeated, a->repeated, 12 * sizeof(uint32_t)) == 0);
		CHECK(t->loss[1] == a->loss[1] && isnan(t->loss[0]) == isnan(a->loss[0]));
		/* Written again: the same bytes (nothing in the section is lost). */
		byte_buf b2;
		CHECK(model_serialize(r, AV_KIND_MODEL, NULL, &b2, &err));
		CHECK(b2.n == b.n && memcmp(b2.v, b.v, b.n) == 0);
		bb_finish(&b2);
	}
	model_destroy(r);
	/* Without a timeline: the file of before, byte for byte (no section). */
	timeline_destroy(m->timeline);
	m->timeline = NULL;
	byte_buf plain;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &plain, &err));
	CHECK(plain.n < b.n && find(plain.v, plain.n, TL_MAGIC) == plain.n);
	r = model_parse(plain.v, plain.n, "old.attn", NULL, NULL, NULL, &err);
	CHECK(r && r->timeline == NULL);
	model_destroy(r);
	bb_finish(&plain);
	bb_finish(&b);
	model_destroy(m);
}

/* One damage: edit at section offset `at` (a u32), expect a refusal with
 * `want` and the byte. */
static void damaged(const byte_buf *b, size_t sec, size_t at, uint32_t value, const char *want,
		    size_t byte)
{
	uint8_t *c = malloc(b->n);
	memcpy(c, b->v, b->n);
	put_u32(c + sec + at, value);
	reseal(c, b->n);
	av_error err;
	model *r = model_parse(c, b->n, "bad.attn", NULL, NULL, NULL, &err);
	char num[32];
	snprintf(num, sizeof num, "byte %zu", byte);
	CHECKF(!r && strstr(err.msg, want) && strstr(err.msg, num) && strstr(err.msg, "bad.attn"),
	       "edit at %zu: %s", at, r ? "accepted" : err.msg);
	model_destroy(r);
	free(c);
}

/* A version 1 timeline (14 values a head, shares of
 * weight) is read and written back as it is, labelled from its values by
 * the same labeller, and cannot take records of this version's. */
static void test_version1(void)
{
	model *m = small_model(OBJ_CAUSAL);
	add_timeline(m);
	timeline *tl = m->timeline;
	tl->version = 1;
	tl->nvalues = TL_V1_NVALUES;
	float vals[2 * 2 * TL_V1_NVALUES] = {0};
	for (size_t r = 0; r < tl->count; r++) {
		for (int k = 0; k < 2 * 2; k++) {
			vals[k * TL_V1_NVALUES + ROLE_DELIMITER] = 0.7f;
			vals[k * TL_V1_NVALUES + ROLE_INDUCTION] = r == 2 && k == 3 ? 0.6f : 0.1f;
		}
		memcpy(tl->v + r * 2 * 2 * TL_V1_NVALUES, vals, sizeof vals);
	}
	byte_buf b;
	av_error err;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &b, &err));
	model *back = model_parse(b.v, b.n, "v1.attn", NULL, NULL, NULL, &err);
	CHECKF(back && back->timeline, "%s", back ? "no timeline" : err.msg);
	if (back && back->timeline) {
		const timeline *t1 = back->timeline;
		CHECK(t1->version == 1 && t1->nvalues == TL_V1_NVALUES && t1->count == 3);
		CHECK(timeline_head(t1, 2, 1, 1)[ROLE_INDUCTION] == 0.6f);
		role_scores rs;
		timeline_head_roles(t1, 2, 1, 1, &rs);
		CHECKF(rs.role == ROLE_INDUCTION, "v1 induction head: %s", role_name(rs.role));
		timeline_head_roles(t1, 2, 1, 0, &rs);
		CHECKF(rs.role == ROLE_DELIMITER, "v1 delimiter head: %s", role_name(rs.role));
		/* Version 1's broad held the entropy: a sharp head no role
		 * holds (local 0.55 under its bar of 0.6, broad 0.05) is
		 * unclear, its closest role local, not "broad 0.05"; an even
		 * one (broad 0.95, every score low) is broad. */
		float *v = (float *)timeline_head(t1, 0, 0, 0);
		for (uint32_t k = 0; k < TL_V1_NVALUES; k++)
			v[k] = k == ROLE_LOCAL ? 0.55f : k == ROLE_BROAD ? 0.05f : 0;
		timeline_head_roles(t1, 0, 0, 0, &rs);
		CHECKF(rs.role == ROLE_LOCAL && rs.verdict == ROLE_UNSURE, "v1, no role: %s",
		       role_name(rs.role));
		for (uint32_t k = 0; k < TL_V1_NVALUES; k++)
			v[k] = k == ROLE_BROAD ? 0.95f : k == ROLE_DELIMITER ? 0.25f : 0.05f;
		timeline_head_roles(t1, 0, 0, 0, &rs);
		CHECKF(rs.role == ROLE_BROAD && rs.verdict == ROLE_SURE, "v1, even: %s",
		       role_name(rs.role));
		int head = -1;
		CHECK(timeline_phase_change(t1, &head) == 2 && head == 3);
		CHECK(!timeline_record(back->timeline, back, 20, 1.0f, true, &err) &&
		      strstr(err.msg, "older attnview"));
	}
	model_destroy(back);
	bb_finish(&b);
	model_destroy(m);
}

static void test_damage(void)
{
	model *m = small_model(OBJ_MASKED);
	add_timeline(m);
	byte_buf b;
	av_error err;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &b, &err));
	size_t sec = find(b.v, b.n, TL_MAGIC);
	CHECK(sec < b.n);
	size_t probe = TL_HEADER_BYTES, rec = probe + 4 * 3 * 12, vals = rec + 20;
	damaged(&b, sec, 4, TL_VERSION + 1, "upgrade attnview", sec);
	damaged(&b, sec, 4, 1, "values per head", sec + 16); /* version 1 had 14 */
	damaged(&b, sec, 16, TL_NVALUES + 1, "values per head", sec + 16);
	damaged(&b, sec, 24, 17, "longer than the context", sec + 24);
	damaged(&b, sec, 28, 0, "every 0 steps", sec + 28);
	damaged(&b, sec, 44, 4, "size that does not match", sec + 8);
	damaged(&b, sec, probe + 8, 0xD800, "not a character", sec + probe + 8);
	/* The second record's step at or before the first's. */
	size_t rb = 20 + 4 * 2 * 2 * TL_NVALUES;
	damaged(&b, sec, rec + rb, 0, "does not follow", sec + rec + rb);
	damaged(&b, sec, rec + 12, 0xff800000u, "impossible loss", sec + rec + 12);
	damaged(&b, sec, vals + 8, 0x40000000u, "outside [0, 1]", sec + vals + 8);
	/* Cut inside the section (the file's size and checksum made to agree). */
	size_t cut = sec + 30;
	uint8_t *c = malloc(cut + 4);
	memcpy(c, b.v, cut);
	for (int i = 0; i < 8; i++)
		c[16 + i] = (uint8_t)((uint64_t)(cut + 4) >> (8 * i));
	reseal(c, cut + 4);
	model *r = model_parse(c, cut + 4, "cut.attn", NULL, NULL, NULL, &err);
	CHECKF(!r && strstr(err.msg, "cut short"), "%s", r ? "accepted" : err.msg);
	model_destroy(r);
	free(c);
	/* Every byte of the section flipped in turn: refused or read, never a
	 * crash (under ASan: never a read out of bounds). */
	for (size_t i = sec; i < b.n - 4; i++) {
		b.v[i] ^= 0x41;
		reseal(b.v, b.n);
		r = model_parse(b.v, b.n, "flip.attn", NULL, NULL, NULL, &err);
		model_destroy(r);
		b.v[i] ^= 0x41;
	}
	bb_finish(&b);
	model_destroy(m);
}

/* The repeated probe is n/2 characters written twice; a step recorded again
 * replaces its record, a resume drops the records after its step; the phase
 * change is where the labeller first names the head that rises most an
 * induction head (its score over the bar, not an unclear label's closest). */
static void test_records(void)
{
	model *m = small_model(OBJ_CAUSAL);
	add_timeline(m);
	timeline *t = m->timeline;
	if (!t)
		return;
	for (uint32_t i = 6; i < 12; i++)
		CHECK(t->repeated[i] == t->repeated[i - 6]);
	av_error err;
	CHECK(timeline_record(t, m, 10, 1.0f, false, &err) && t->count == 3 && t->loss[2] == 1.0f &&
	      isnan(t->probe_loss[2]));
	timeline_truncate(t, 7);
	CHECK(t->count == 2 && t->step[1] == 5);
	CHECK(timeline_due(t, 15, 17) && timeline_due(t, 17, 17) && !timeline_due(t, 16, 17));
	CHECK(timeline_auto_every(2000) == 20 && timeline_auto_every(50) == 1 &&
	      timeline_auto_every(101) == 2);
	/* Head (1, 1) rises from 0.1 to 0.9 between records 4 and 6 (0.5 at
	 * 5); head (0, 0) rises by 0.15 only. */
	for (uint64_t s = 10; s <= 40; s += 5)
		CHECK(timeline_record(t, m, s, 1.0f, true, &err));
	CHECK(t->count == 9);
	int head = -2;
	for (size_t r = 0; r < t->count; r++) {
		float *v = (float *)timeline_head(t, r, 1, 1);
		float *w = (float *)timeline_head(t, r, 0, 0);
		for (int k = 0; k < 2; k++)
			((float *)timeline_head(t, r, k, 1 - k))[ROLE_INDUCTION] = 0.05f;
		v[ROLE_INDUCTION] = r < 4 ? 0.1f : r == 4 ? 0.3f : r == 5 ? 0.5f : 0.9f;
		w[ROLE_INDUCTION] = r < 3 ? 0.1f : 0.25f;
	}
	CHECK(timeline_phase_change(t, &head) == 5 && head == 3);
	/* Under the bar, the head's row is "unclear: 45% induction": the
	 * closest role, not a name, and no phase change yet. */
	float *v4 = (float *)timeline_head(t, 4, 1, 1);
	for (uint32_t k = 0; k < t->nvalues; k++)
		v4[k] = k == ROLE_INDUCTION ? 0.45f : 0;
	role_scores rs;
	timeline_head_roles(t, 4, 1, 1, &rs);
	CHECKF(rs.role == ROLE_INDUCTION && rs.verdict == ROLE_UNSURE, "record 4: %s",
	       role_name(rs.role));
	CHECK(timeline_phase_change(t, &head) == 5 && head == 3);
	for (size_t r = 0; r < t->count; r++)
		((float *)timeline_head(t, r, 1, 1))[ROLE_INDUCTION] = 0.1f;
	CHECK(timeline_phase_change(t, &head) == -1 && head == -1);
	/* A head that rises by 0.35 but never clears the bar: no phase
	 * change, and the head that rose is still given (the screen says
	 * it rose but is never named). */
	for (size_t r = 0; r < t->count; r++) {
		float *v = (float *)timeline_head(t, r, 1, 1);
		for (uint32_t k = 0; k < t->nvalues; k++)
			v[k] = k == ROLE_INDUCTION ? (r < 4 ? 0.1f : 0.45f) : 0;
	}
	CHECK(timeline_phase_change(t, &head) == -1 && head == 3);
	model_destroy(m);
}

/* A kept model's path names the model it was kept beside; other paths,
 * however close, do not. */
static void test_kept_owner(void)
{
	char buf[64];
	CHECK(timeline_kept_owner("/a/ind.attn.steps/step-000080.attn", buf, sizeof buf) &&
	      strcmp(buf, "/a/ind.attn") == 0);
	char back[64]; /* and back */
	CHECK(timeline_kept_path(buf, 80, back, sizeof back) &&
	      strcmp(back, "/a/ind.attn.steps/step-000080.attn") == 0);
	CHECK(timeline_kept_owner("m.steps/step-1234567.attn", buf, sizeof buf) &&
	      strcmp(buf, "m") == 0);
	const char *not_kept[] = {
	    "/a/ind.attn",
	    "/a/ind.attn.steps/step-80.attn",
	    "/a/ind/step-000080.attn",
	    "/a/ind.attn.steps/step-00008x.attn",
	    "/a/.steps/step-000080.attn",
	    ".steps/step-000080.attn",
	    "step-000080.attn",
	    "/a/ind.attn.steps/step-000080.attn.tmp",
	};
	for (size_t i = 0; i < sizeof not_kept / sizeof *not_kept; i++)
		CHECKF(!timeline_kept_owner(not_kept[i], buf, sizeof buf), "%s: owner %s",
		       not_kept[i], buf);
	CHECK(!timeline_kept_owner("/a/ind.attn.steps/step-000080.attn", buf, 8)); /* too long */
}

/* --train's default interval keeps the records under 2% of the training
 * time at every run length (estimated: a record costs TL_RECORD_CHARS
 * characters of training), as far as the first and last records allow;
 * a 2000-step run at the default sizes records every 20 steps as before. */
static void auto_every_cost(void)
{
	static const uint32_t sizes[][2] = {{32, 128}, {12, 128}, {8, 32}, {4, 16}};
	int over = 0, runs = 0;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		for (uint64_t total = 1; total <= 20000; total += total < 200 ? 1 : 97) {
			uint32_t B = sizes[i][0], T = sizes[i][1];
			uint64_t k = timeline_auto_every_cost(total, B, T);
			double share = timeline_auto_share(total, B, T, k);
			/* Only the first and last records: what they cost is said. */
			bool two = k >= total;
			runs++;
			over += share > TL_MAX_SHARE && !two;
			CHECK(k >= 1 && k >= timeline_auto_every(total) / 2);
		}
	CHECKF(over == 0, "%d of %d runs record more than 2%% of their training", over, runs);
	CHECK(timeline_auto_every_cost(2000, 32, 128) == 20);
	CHECK(timeline_auto_every_cost(80, 12, 128) >= 20);
	CHECK(timeline_auto_share(80, 12, 128, 1) > 0.3); /* the old default: every step */
}

int main(void)
{
	auto_every_cost();
	test_round_trip();
	test_damage();
	test_version1();
	test_records();
	test_kept_owner();
	return test_summary("timeline");
}
