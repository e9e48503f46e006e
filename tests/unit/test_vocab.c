/* Vocabulary: build order and limits, lookups, and refusing damaged vocabularies. */
#include "harness.h"

#include "attnview/vocab.h"

#include <stdlib.h>
#include <string.h>

static void add_text(vocab_counter *c, const char *s)
{
	cp_buf cps = {0};
	av_error err = {""};
	bool ok = clean_text(s, strlen(s), &cps, NULL, &err);
	CHECKF(ok, "%s", err.msg);
	vocab_counter_add(c, cps.v, cps.n);
	cp_buf_finish(&cps);
}

static bool cps_are(const vocab *v, const uint32_t *want, uint32_t n)
{
	if (v->size != TOK_NSPECIAL + n) {
		fprintf(stderr, "  size %u, want %u\n", v->size, TOK_NSPECIAL + n);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (v->cps[TOK_NSPECIAL + i] != want[i]) {
			fprintf(stderr, "  id %u is U+%04X, want U+%04X\n", TOK_NSPECIAL + i,
				v->cps[TOK_NSPECIAL + i], want[i]);
			return false;
		}
	}
	return true;
}

#define CPS_ARE(v, ...)                                                                            \
	CHECK(cps_are(v, (const uint32_t[]){__VA_ARGS__},                                          \
		      sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t)))

static void test_build(void)
{
	vocab_counter c;
	av_error err = {""};
	vocab v;
	if (!vocab_counter_init(&c, &err)) {
		CHECKF(false, "%s", err.msg);
		return;
	}
	/* a:5 n:3 b:2 LF:2 ' ':1 中:1 */
	add_text(&c, "banana\nnab\n");
	add_text(&c, "a \xe4\xb8\xad");
	CHECK(c.total == 14);

	CHECKF(vocab_build(&v, &c, 0, 0, &err), "%s", err.msg);
	/* by decreasing count, ties by increasing codepoint; no count-0 entries */
	CPS_ARE(&v, 'a', 'n', '\n', 'b', ' ', 0x4E2D);
	for (uint32_t i = 0; i < TOK_NSPECIAL; i++)
		CHECK(v.cps[i] == AV_SPECIAL_CP + i);
	vocab_finish(&v);

	CHECKF(vocab_build(&v, &c, 2, 0, &err), "%s", err.msg);
	CPS_ARE(&v, 'a', 'n', '\n', 'b');
	vocab_finish(&v);
	CHECKF(vocab_build(&v, &c, 3, 0, &err), "%s", err.msg);
	CPS_ARE(&v, 'a', 'n');
	vocab_finish(&v);

	/* max_size counts the specials */
	CHECKF(vocab_build(&v, &c, 1, 5, &err), "%s", err.msg);
	CPS_ARE(&v, 'a', 'n');
	vocab_finish(&v);
	CHECKF(vocab_build(&v, &c, 1, 4, &err), "%s", err.msg);
	CPS_ARE(&v, 'a');
	vocab_finish(&v);
	CHECKF(vocab_build(&v, &c, 1, 1000, &err), "%s", err.msg);
	CHECK(v.size == 9);
	vocab_finish(&v);

	CHECK(!vocab_build(&v, &c, 1, 3, &err));
	CHECKF(strstr(err.msg, "at least 4") != NULL, "%s", err.msg);
	CHECK(!vocab_build(&v, &c, 1, AV_MAX_VOCAB + 1, &err));
	CHECKF(strstr(err.msg, "at most") != NULL, "%s", err.msg);

	/* U+FFFD is an ordinary character; raw controls fed by hand are left out */
	uint32_t odd[] = {0xFFFD, 0xFFFD, 0x07, 0x7F, 0x9B};
	vocab_counter_add(&c, odd, 5);
	CHECKF(vocab_build(&v, &c, 2, 0, &err), "%s", err.msg);
	CPS_ARE(&v, 'a', 'n', '\n', 'b', 0xFFFD);
	vocab_finish(&v);

	/* an empty corpus gives just the specials */
	vocab_counter_finish(&c);
	CHECK(vocab_counter_init(&c, &err));
	CHECK(vocab_build(&v, &c, 1, 0, &err) && v.size == TOK_NSPECIAL);
	vocab_finish(&v);
	vocab_counter_finish(&c);
}

static void test_lookup(void)
{
	vocab v;
	av_error err = {""};
	const uint32_t cps[] = {
	    AV_SPECIAL_CP, AV_SPECIAL_CP + 1, AV_SPECIAL_CP + 2, 'a', ' ', '\n', 0x4E2D, 0x301,
	    0x1F600};
	CHECKF(vocab_init(&v, cps, 9, "test", &err), "%s", err.msg);
	CHECK(v.nslots >= 2 * v.size && (v.nslots & (v.nslots - 1)) == 0);
	CHECK(vocab_id(&v, 'a') == 3);
	CHECK(vocab_id(&v, '\n') == 5);
	CHECK(vocab_id(&v, 0x1F600) == 8);
	CHECK(vocab_id(&v, 'b') == TOK_UNK);
	CHECK(vocab_id(&v, 0x4E2E) == TOK_UNK);
	CHECK(vocab_id(&v, AV_SPECIAL_CP + TOK_MASK) == TOK_MASK);

	const uint32_t text[] = {'a', 'b', 0x4E2D, 0x301, 0x1F600, AV_SPECIAL_CP + TOK_MASK};
	token t[6];
	vocab_tokenize(&v, text, 6, t);
	CHECK(t[0].cp == 'a' && t[0].id == 3 && !t[0].unknown && t[0].width == 1);
	CHECK(t[1].cp == 'b' && t[1].id == TOK_UNK && t[1].unknown && t[1].width == 1);
	CHECK(t[2].id == 6 && !t[2].unknown && t[2].width == 2 && !t[2].placeholder);
	CHECK(t[3].id == 7 && t[3].width == 1 && t[3].placeholder);
	CHECK(t[4].id == 8 && t[4].width == 2);
	CHECK(t[5].id == TOK_MASK && !t[5].unknown && t[5].width == 1);
	/* The mask's glyph typed: the mask token, where the vocabulary has no
	 * such character; a vocabulary that has one keeps it. */
	const uint32_t glyph = AV_MASK_GLYPH;
	vocab_tokenize(&v, &glyph, 1, t);
	CHECK(t[0].id == TOK_MASK && t[0].cp == AV_SPECIAL_CP + TOK_MASK && !t[0].unknown);
	vocab_finish(&v);
	const uint32_t with[] = {AV_SPECIAL_CP, AV_SPECIAL_CP + 1, AV_SPECIAL_CP + 2,
				 AV_MASK_GLYPH};
	CHECKF(vocab_init(&v, with, 4, "test", &err), "%s", err.msg);
	vocab_tokenize(&v, &glyph, 1, t);
	CHECK(t[0].id == 3 && t[0].cp == AV_MASK_GLYPH);
	vocab_finish(&v);

	/* many entries, in one dense block: every one found, neighbours not */
	uint32_t n = 30000;
	uint32_t *big = malloc((n + TOK_NSPECIAL) * sizeof *big);
	if (!big)
		return;
	for (uint32_t i = 0; i < TOK_NSPECIAL; i++)
		big[i] = AV_SPECIAL_CP + i;
	for (uint32_t i = 0; i < n; i++)
		big[TOK_NSPECIAL + i] = 0x20000 + 2 * i;
	CHECKF(vocab_init(&v, big, n + TOK_NSPECIAL, "big", &err), "%s", err.msg);
	uint32_t found = 0, wrong = 0;
	for (uint32_t i = 0; i < n; i++) {
		found += vocab_id(&v, 0x20000 + 2 * i) == (int32_t)(TOK_NSPECIAL + i);
		wrong += vocab_id(&v, 0x20001 + 2 * i) != TOK_UNK;
	}
	CHECK(found == n && wrong == 0);
	vocab_finish(&v);
	free(big);
}

/* vocab_init must refuse, with a message naming the source, entry and value. */
static void refuses(const uint32_t *cps, uint32_t n, const char *want)
{
	vocab v;
	av_error err = {""};
	bool ok = vocab_init(&v, cps, n, "model.attn", &err);
	CHECKF(!ok, "accepted (expected \"%s\")", want);
	CHECKF(strstr(err.msg, want) != NULL, "\"%s\" not in \"%s\"", want, err.msg);
	CHECK(strncmp(err.msg, "model.attn: ", 12) == 0);
	CHECK(v.size == 0 && v.cps == NULL && v.slots == NULL);
	CHECK(vocab_id(&v, 'a') == TOK_UNK); /* an empty vocabulary knows nothing */
	if (ok)
		vocab_finish(&v);
}

static void test_init_rejects(void)
{
	uint32_t good[20];
	for (uint32_t i = 0; i < 20; i++)
		good[i] = i < TOK_NSPECIAL ? AV_SPECIAL_CP + i : 'a' + i;
	vocab v;
	av_error err = {""};
	CHECKF(vocab_init(&v, good, 20, "model.attn", &err), "%s", err.msg);
	vocab_finish(&v);

	uint32_t bad[20];
	memcpy(bad, good, sizeof bad);
	bad[17] = 0xD800;
	refuses(bad, 20,
		"model.attn: vocabulary entry 17 is U+D800, not a Unicode scalar value: the file "
		"is damaged; retrain or restore it");
	bad[17] = 0x110000 + 7;
	refuses(bad, 20, "entry 17 is U+110007, not a Unicode scalar value");
	bad[17] = AV_SPECIAL_CP + TOK_MASK; /* a special marker out of place */
	refuses(bad, 20, "entry 17 is U+110002");
	bad[17] = 0x07;
	refuses(bad, 20, "entry 17 is U+0007, a control character");
	bad[17] = '\t';
	refuses(bad, 20, "entry 17 is U+0009, a control character");
	bad[17] = 0x9B;
	refuses(bad, 20, "entry 17 is U+009B, a control character");
	bad[17] = 0xFEFF;
	refuses(bad, 20, "entry 17 is U+FEFF, a byte order mark the tokenizer never produces");
	bad[17] = 'a' + 4;
	refuses(bad, 20, "entry 17 (U+0065) repeats entry 4");

	memcpy(bad, good, sizeof bad);
	bad[0] = AV_SPECIAL_CP + 1;
	bad[1] = AV_SPECIAL_CP;
	refuses(bad, 20, "entry 0 is U+110001, not the <pad> marker");
	memcpy(bad, good, sizeof bad);
	bad[2] = 'm';
	refuses(bad, 20, "entry 2 is U+006D, not the <mask> marker");
	refuses(good, 2, "2 entries, fewer than the 3 special tokens");
	refuses(good, AV_MAX_VOCAB + 1, "more than the limit");

	/* LF, U+FFFD and the largest scalar value are fine */
	memcpy(bad, good, sizeof bad);
	bad[3] = '\n';
	bad[4] = 0xFFFD;
	bad[5] = 0x10FFFF;
	CHECKF(vocab_init(&v, bad, 20, "model.attn", &err), "%s", err.msg);
	CHECK(vocab_id(&v, 0x10FFFF) == 5);
	vocab_finish(&v);
	CHECKF(vocab_init(&v, good, TOK_NSPECIAL, "model.attn", &err), "%s", err.msg);
	CHECK(vocab_id(&v, 'a') == TOK_UNK);
	vocab_finish(&v);
}

int main(void)
{
	test_build();
	test_lookup();
	test_init_rejects();
	return test_summary("vocab");
}
