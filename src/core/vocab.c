/* Codepoint vocabulary: a dense id -> codepoint array and an open-addressing hash
 * for codepoint -> id (linear probing, at most half full, so a miss ends after
 * about two probes on average). */
#include "attnview/vocab.h"
#include "attnview/i18n.h"

#include <stdlib.h>
#include <string.h>

static const char *const special_name[TOK_NSPECIAL] = {"<pad>", "<unk>", "<mask>"};

/* Fibonacci hashing: the top bits of cp * 2^32/phi spread consecutive
 * codepoints (a script's block) over the whole table. */
static uint32_t slot_of(uint32_t cp, uint32_t nslots)
{
	return (uint32_t)(((uint64_t)(cp * 2654435769u) * nslots) >> 32);
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

/* Id of cp if it is in the table, else the slot where it would go (as -1 - slot). */
static int64_t probe(const vocab *v, uint32_t cp)
{
	if (v->nslots == 0) /* an empty (finished or failed) vocabulary */
		return -1;
	uint32_t mask = v->nslots - 1;
	for (uint32_t s = slot_of(cp, v->nslots);; s = (s + 1) & mask) {
		uint32_t e = v->slots[s];
		if (e == 0)
			return -1 - (int64_t)s;
		if (v->cps[e - 1] == cp)
			return e - 1;
	}
}

bool vocab_init(vocab *v, const uint32_t *cps, uint32_t size, const char *what, av_error *err)
{
	const char *damaged = _("the file is damaged; retrain or restore it");

	memset(v, 0, sizeof *v);
	if (size < TOK_NSPECIAL)
		return av_fail(err,
			       _("%s: the vocabulary has %u entries, fewer than the %d special "
				 "tokens: %s"),
			       AV_Q(what), size, TOK_NSPECIAL, damaged);
	if (size > AV_MAX_VOCAB)
		return av_fail(
		    err, _("%s: the vocabulary has %u entries, more than the limit of %d: %s"),
		    AV_Q(what), size, AV_MAX_VOCAB, damaged);
	for (uint32_t i = 0; i < TOK_NSPECIAL; i++)
		if (cps[i] != AV_SPECIAL_CP + i)
			return av_fail(err,
				       _("%s: vocabulary entry %u is U+%04X, not the %s marker "
					 "U+%X: %s"),
				       AV_Q(what), i, cps[i], special_name[i], AV_SPECIAL_CP + i,
				       damaged);
	for (uint32_t i = TOK_NSPECIAL; i < size; i++) {
		uint32_t cp = cps[i];
		if (!cp_is_scalar(cp))
			return av_fail(err,
				       _("%s: vocabulary entry %u is U+%04X, not a Unicode scalar "
					 "value: %s"),
				       AV_Q(what), i, cp, damaged);
		if (is_control(cp) && cp != '\n')
			return av_fail(err,
				       _("%s: vocabulary entry %u is U+%04X, a control "
					 "character the tokenizer never produces: %s"),
				       AV_Q(what), i, cp, damaged);
		if (cp == 0xFEFF)
			return av_fail(err,
				       _("%s: vocabulary entry %u is U+FEFF, a byte order mark "
					 "the tokenizer never produces: %s"),
				       AV_Q(what), i, damaged);
	}

	uint32_t nslots = 1;
	while (nslots < 2 * size)
		nslots *= 2;
	v->cps = malloc(size * sizeof *v->cps);
	v->slots = calloc(nslots, sizeof *v->slots);
	if (!v->cps || !v->slots) {
		vocab_finish(v);
		return av_fail(err, _("%s: out of memory for a vocabulary of %u entries"),
			       AV_Q(what), size);
	}
	memcpy(v->cps, cps, size * sizeof *v->cps);
	v->nslots = nslots;
	v->size = size;
	for (uint32_t i = 0; i < size; i++) {
		int64_t r = probe(v, cps[i]);
		if (r >= 0) {
			av_fail(err, _("%s: vocabulary entry %u (U+%04X) repeats entry %u: %s"),
				AV_Q(what), i, cps[i], (uint32_t)r, damaged);
			vocab_finish(v);
			return false;
		}
		v->slots[-1 - r] = i + 1;
	}
	return true;
}

void vocab_finish(vocab *v)
{
	free(v->cps);
	free(v->slots);
	memset(v, 0, sizeof *v);
}

int32_t vocab_id(const vocab *v, uint32_t cp)
{
	int64_t r = probe(v, cp);
	return r >= 0 ? (int32_t)r : TOK_UNK;
}

void vocab_tokenize(const vocab *v, const uint32_t *cps, size_t n, token *out)
{
	for (size_t i = 0; i < n; i++) {
		token *t = &out[i];
		uint32_t cp = cps[i];
		t->id = vocab_id(v, cp);
		if (cp == AV_MASK_GLYPH && t->id == TOK_UNK) {
			cp = AV_SPECIAL_CP + TOK_MASK;
			t->id = TOK_MASK;
		}
		t->cp = cp;
		t->unknown = t->id == TOK_UNK && cp != AV_SPECIAL_CP + TOK_UNK;
		t->width = (uint8_t)cp_display_width(cp, &t->placeholder);
	}
}

#define NCP 0x110000u

bool vocab_counter_init(vocab_counter *c, av_error *err)
{
	c->total = 0;
	c->count = calloc(NCP, sizeof *c->count);
	if (!c->count)
		return av_fail(err, _("out of memory for the character counts (%zu MB)"),
			       NCP * sizeof *c->count >> 20);
	return true;
}

void vocab_counter_finish(vocab_counter *c)
{
	free(c->count);
	c->count = NULL;
	c->total = 0;
}

void vocab_counter_add(vocab_counter *c, const uint32_t *cps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (cps[i] < NCP) {
			c->count[cps[i]]++;
			c->total++;
		}
	}
}

struct cp_count {
	uint64_t count;
	uint32_t cp;
};

/* most frequent first, ties by increasing codepoint: a total order, so the
 * vocabulary does not depend on qsort's stability */
static int by_count(const void *a, const void *b)
{
	const struct cp_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->cp < y->cp ? -1 : x->cp > y->cp;
}

static bool wanted(const vocab_counter *c, uint32_t cp, uint64_t min_count)
{
	return c->count[cp] >= min_count && cp_is_scalar(cp) && (!is_control(cp) || cp == '\n') &&
	       cp != 0xFEFF;
}

bool vocab_build(vocab *v, const vocab_counter *c, uint64_t min_count, uint32_t max_size,
		 av_error *err)
{
	memset(v, 0, sizeof *v);
	if (max_size != 0 && max_size <= TOK_NSPECIAL)
		return av_fail(err,
			       _("a maximum vocabulary size of %u leaves no room for characters "
				 "after the %d special tokens; give at least %d"),
			       max_size, TOK_NSPECIAL, TOK_NSPECIAL + 1);
	if (max_size > AV_MAX_VOCAB)
		return av_fail(err,
			       _("a maximum vocabulary size of %u is above the limit of %d; "
				 "give at most %d"),
			       max_size, AV_MAX_VOCAB, AV_MAX_VOCAB);
	if (max_size == 0)
		max_size = AV_MAX_VOCAB;
	if (min_count == 0)
		min_count = 1;

	size_t n = 0;
	for (uint32_t cp = 0; cp < NCP; cp++)
		n += wanted(c, cp, min_count);
	struct cp_count *chars = malloc((n ? n : 1) * sizeof *chars);
	uint32_t keep = max_size - TOK_NSPECIAL;
	if (n < keep)
		keep = (uint32_t)n;
	uint32_t *cps = malloc((keep + TOK_NSPECIAL) * sizeof *cps);
	if (!chars || !cps) {
		free(chars);
		free(cps);
		return av_fail(err,
			       _("out of memory while building a vocabulary of %zu characters"), n);
	}
	n = 0;
	for (uint32_t cp = 0; cp < NCP; cp++)
		if (wanted(c, cp, min_count))
			chars[n++] = (struct cp_count){c->count[cp], cp};
	qsort(chars, n, sizeof *chars, by_count);
	for (uint32_t i = 0; i < TOK_NSPECIAL; i++)
		cps[i] = AV_SPECIAL_CP + i;
	for (uint32_t i = 0; i < keep; i++)
		cps[TOK_NSPECIAL + i] = chars[i].cp;
	free(chars);
	bool ok = vocab_init(v, cps, keep + TOK_NSPECIAL, _("the new vocabulary"), err);
	free(cps);
	return ok;
}
