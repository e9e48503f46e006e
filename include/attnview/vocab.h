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

/* Validates and copies `cps`: size in TOK_NSPECIAL..AV_MAX_VOCAB, the three
 * special markers first, then distinct Unicode scalar values that are neither
 * control characters (LF, a token, excepted) nor U+FEFF: what the tokenizer
 * removes is never in a vocabulary. `what` names the source in messages (a
 * file name), which also name the entry and its value: "model.attn: vocabulary
 * entry 17 is U+D800, not a Unicode scalar value: the file is damaged; retrain or
 * restore it". On failure *v is left empty (vocab_finish is harmless). */
bool vocab_init(vocab *v, const uint32_t *cps, uint32_t size, const char *what, av_error *err);
void vocab_finish(vocab *v);

/* Id of a codepoint, TOK_UNK if it is not in the vocabulary. The special
 * markers AV_SPECIAL_CP + id map to their ids. */
int32_t vocab_id(const vocab *v, uint32_t cp);

/* Turn codepoints into tokens (id, width, unknown and placeholder flags);
 * out has room for n tokens. AV_MASK_GLYPH, where the vocabulary has no
 * such character, becomes the mask token (its marker codepoint). */
void vocab_tokenize(const vocab *v, const uint32_t *cps, size_t n, token *out);

/* Frequency counting over the whole Unicode range (8.5 MiB of counts); values
 * from 0x110000 up (the special markers) are ignored and not in total. */
typedef struct vocab_counter {
	uint64_t *count; /* [0x110000] */
	uint64_t total;
} vocab_counter;

bool vocab_counter_init(vocab_counter *c, av_error *err);
void vocab_counter_finish(vocab_counter *c);
void vocab_counter_add(vocab_counter *c, const uint32_t *cps, size_t n);

/* Build a vocabulary from counts: codepoints seen at least min_count times
 * (0 counts as 1: unseen codepoints are never included), ids from TOK_NSPECIAL
 * on by decreasing count, ties by increasing codepoint, at most max_size
 * entries including the specials (0 = AV_MAX_VOCAB; 1..TOK_NSPECIAL or above
 * AV_MAX_VOCAB is refused with a message). U+FFFD and LF are ordinary
 * codepoints here; controls and non-scalar values, which vocab_init refuses,
 * are skipped. */
bool vocab_build(vocab *v, const vocab_counter *c, uint64_t min_count, uint32_t max_size,
		 av_error *err);

#endif
