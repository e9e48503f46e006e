/* Codepoint vocabulary: ids 0..2 are the special tokens (tokenizer.h), the rest
 * are codepoints, most frequent first. */
#ifndef ATTNVIEW_VOCAB_H
#define ATTNVIEW_VOCAB_H

#include "attnview/common.h"
#include "attnview/tokenizer.h"

typedef struct vocab {
	uint32_t size;	  /* including the special tokens */
	uint32_t *cps;	  /* [size]; cps[i] = AV_SPECIAL_CP + i for the specials */
	uint32_t *slots;  /* open-addressing table of id+1, 0 = empty */
	uint32_t nslots;  /* power of two */
} vocab;

/* Validates and copies `cps`: the three specials first, then distinct Unicode
 * scalar values that are not control characters. `what` names the source in
 * messages (a file name). */
bool vocab_init(vocab *v, const uint32_t *cps, uint32_t size, const char *what, av_error *err);
void vocab_finish(vocab *v);

/* Id of a codepoint, TOK_UNK if it is not in the vocabulary. */
int32_t vocab_id(const vocab *v, uint32_t cp);

/* Turn codepoints into tokens (id, width, unknown flag). */
void vocab_tokenize(const vocab *v, const uint32_t *cps, size_t n, token *out);

/* Frequency counting over the whole Unicode range. */
typedef struct vocab_counter {
	uint64_t *count; /* [0x110000] */
	uint64_t total;
} vocab_counter;

bool vocab_counter_init(vocab_counter *c, av_error *err);
void vocab_counter_finish(vocab_counter *c);
void vocab_counter_add(vocab_counter *c, const uint32_t *cps, size_t n);

/* Build a vocabulary from counts: codepoints seen at least min_count times,
 * most frequent first (ties by codepoint), at most max_size entries in all
 * (0 = no limit). U+FFFD and LF are ordinary codepoints here. */
bool vocab_build(vocab *v, const vocab_counter *c, uint64_t min_count, uint32_t max_size,
		 av_error *err);

#endif
