/* Text -> clean NFC codepoints -> tokens.
 *
 * Cleaning (the same for corpora and for typed text):
 *   - a UTF-8 byte order mark at the very start is dropped;
 *   - invalid UTF-8 becomes U+FFFD (one per maximal invalid subsequence), counted,
 *     with the byte offset of the first one kept for the message;
 *   - ANSI escape sequences are removed whole: CSI (ESC '[' params final 0x40-0x7E),
 *     OSC (ESC ']' ... BEL or ESC '\'), and two-byte ESC x; also C1 CSI (U+009B);
 *   - CRLF and lone CR become LF; TAB becomes a space; LF is kept (it is a token);
 *   - every other control character (C0, DEL, C1) is removed and counted;
 *   - the result is normalised to NFC (libutf8proc).
 * Text given on the command line is stricter: invalid UTF-8 is an error naming
 * the byte offset (tokenize_text). */
#ifndef ATTNVIEW_TOKENIZER_H
#define ATTNVIEW_TOKENIZER_H

#include "attnview/common.h"

/* Special tokens have fixed ids and, in a vocabulary, the marker codepoints
 * AV_SPECIAL_CP + id, which lie above the Unicode range. */
enum { TOK_PAD = 0, TOK_UNK = 1, TOK_MASK = 2, TOK_NSPECIAL = 3 };
#define AV_SPECIAL_CP 0x110000u

typedef struct clean_stats {
	uint64_t bytes;		    /* input bytes consumed */
	uint64_t codepoints;	    /* codepoints produced */
	uint64_t invalid;	    /* invalid UTF-8 sequences replaced by U+FFFD */
	uint64_t first_invalid;	    /* byte offset of the first; UINT64_MAX if none */
	uint64_t escapes;	    /* ANSI escape sequences removed */
	uint64_t controls;	    /* other control characters removed */
	uint64_t crlf;		    /* CRLF or lone CR line ends turned into LF */
	bool bom;		    /* a leading byte order mark was removed */
} clean_stats;

/* A growable array of codepoints. */
typedef struct cp_buf {
	uint32_t *v;
	size_t n, cap;
} cp_buf;

bool cp_buf_push(cp_buf *b, uint32_t cp);
void cp_buf_free(cp_buf *b);

/* Streaming cleaner: bytes in, NFC codepoints out, in chunks of any size
 * (a UTF-8 sequence, an escape sequence or a combining sequence may straddle
 * two chunks). Output is appended to `out`; a tail that NFC may still change
 * is held back until the next feed or cleaner_finish. */
typedef struct cleaner cleaner;

cleaner *cleaner_create(void);
void cleaner_destroy(cleaner *c);
bool cleaner_feed(cleaner *c, const char *buf, size_t n, cp_buf *out, av_error *err);
bool cleaner_finish(cleaner *c, cp_buf *out, av_error *err);
const clean_stats *cleaner_stats(const cleaner *c);

/* Clean a whole buffer at once (files read into memory, tests). */
bool clean_text(const char *buf, size_t n, cp_buf *out, clean_stats *stats, av_error *err);

/* Columns a codepoint takes on a terminal as attnview draws it: 2 for wide
 * (CJK, most emoji), 1 otherwise. Zero-width codepoints (combining marks,
 * format characters) are drawn on the placeholder base U+25CC and take 1;
 * *placeholder is set for them (may be NULL). */
int cp_display_width(uint32_t cp, bool *placeholder);

/* The UTF-8 text attnview draws for a token: the character itself, or a visible
 * stand-in for space (U+2423), LF (U+23CE), a placeholder base + the mark for
 * zero-width characters, and <pad>/<unk>/<mask> for special tokens.
 * Writes a NUL-terminated string (at most 32 bytes) and returns its length. */
size_t cp_glyph(uint32_t cp, char out[32]);

/* Encode one codepoint as UTF-8 (no NUL); returns the length, 0 if invalid. */
size_t cp_to_utf8(uint32_t cp, char out[4]);

/* True for Unicode scalar values (0..0x10FFFF without surrogates). */
bool cp_is_scalar(uint32_t cp);

typedef struct token {
	uint32_t cp;	   /* NFC codepoint */
	int32_t id;	   /* vocabulary id; TOK_UNK when not in the vocabulary */
	uint8_t width;	   /* display columns, see cp_display_width */
	bool unknown;	   /* not in the vocabulary */
	bool placeholder;  /* zero-width character drawn on a base */
} token;

/* Text given by a person (--text, --input, the input line). Invalid UTF-8 is an
 * error: "invalid UTF-8 at byte N of <what>: ...". Escapes and controls are
 * removed as for corpora and counted in *stats (may be NULL). Fills cps. */
bool tokenize_text(const char *s, size_t n, const char *what, cp_buf *cps, clean_stats *stats,
		   av_error *err);

#endif
