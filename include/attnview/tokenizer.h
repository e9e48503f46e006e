/* Text -> clean NFC codepoints -> tokens.
 *
 * Cleaning (the same for corpora and for typed text):
 *   - U+FEFF is a byte order mark wherever it stands (at byte 0, or where files
 *     with BOMs were concatenated; Unicode deprecates its other use, the
 *     zero-width no-break space, for U+2060): removed as soon as it is decoded,
 *     before the stages below see it (so it interrupts no escape sequence and
 *     no CR LF pair), and counted in stats.boms;
 *   - invalid UTF-8 becomes U+FFFD, one per maximal subpart (the Unicode
 *     "substitution of maximal subparts": a lead byte with the valid continuation
 *     bytes that follow it is one U+FFFD; a byte that can start nothing is one
 *     U+FFFD by itself), counted, with the byte offset of the first one kept for
 *     the message. Overlong forms, surrogates (ED A0..BF) and values above
 *     U+10FFFF are invalid;
 *   - ANSI escape sequences are removed whole and counted: CSI (ESC '[' params
 *     final 0x40-0x7E), OSC, DCS, SOS, PM, APC (ESC ']' 'P' 'X' '^' '_' ... up to
 *     BEL or ST = ESC '\'; a line end also ends them, so a stray ESC ']' costs one
 *     line, not the rest of a file), ESC intermediates final (ESC '(' 'B'), two-byte
 *     ESC x; also the C1 forms (U+009B CSI, U+009D OSC...). A malformed sequence
 *     ends at the first character that cannot belong to it, which is kept as text.
 *     An ESC that starts no sequence is a control character;
 *   - CRLF and lone CR become LF (stats.crlf counts the CRs; escapes or controls
 *     between CR and LF do not split the pair); TAB becomes a space; LF is kept
 *     (it is a token);
 *   - every other control character (C0, DEL, C1) is removed and counted;
 *   - the result is normalised to NFC (libutf8proc). A run of more than 1024
 *     codepoints with no NFC boundary (one base carrying a thousand combining
 *     marks) is normalised in pieces of 1024; only such text can differ from
 *     strict NFC, and it is the same whatever the chunking.
 * Text given on the command line is stricter: invalid UTF-8 is an error naming
 * the byte offset (tokenize_text). */
#ifndef ATTNVIEW_TOKENIZER_H
#define ATTNVIEW_TOKENIZER_H

#include "attnview/common.h"

/* Special tokens have fixed ids and, in a vocabulary, the marker codepoints
 * AV_SPECIAL_CP + id, which lie above the Unicode range. */
enum { TOK_PAD = 0, TOK_UNK = 1, TOK_MASK = 2, TOK_NSPECIAL = 3 };
#define AV_SPECIAL_CP 0x110000u
/* U+2592 (medium shade), the glyph the screen draws for the mask token:
 * typed where the model has no such character, it is the mask token
 * (vocab_tokenize), so that a masked model's hidden positions can be
 * written in a text. */
#define AV_MASK_GLYPH 0x2592u

typedef struct clean_stats {
	uint64_t bytes;		    /* input bytes consumed */
	uint64_t codepoints;	    /* codepoints produced */
	uint64_t invalid;	    /* invalid UTF-8 sequences replaced by U+FFFD */
	uint64_t first_invalid;	    /* byte offset of the first; UINT64_MAX if none */
	uint64_t escapes;	    /* ANSI escape sequences removed */
	uint64_t controls;	    /* other control characters removed */
	uint64_t crlf;		    /* CRLF or lone CR line ends turned into LF */
	uint64_t boms;		    /* byte order marks (U+FEFF) removed, anywhere */
} clean_stats;

/* A growable array of codepoints. */
typedef struct cp_buf {
	uint32_t *v;
	size_t n, cap;
} cp_buf;

bool cp_buf_push(cp_buf *b, uint32_t cp);
void cp_buf_finish(cp_buf *b);

/* Streaming cleaner: bytes in, NFC codepoints out, in chunks of any size
 * (a UTF-8 sequence, an escape sequence, a CRLF pair or a combining sequence may
 * straddle two chunks); the output and the counts do not depend on the chunking.
 * Output is appended to `out`; a tail that NFC may still change (from the last
 * character that nothing after it can combine with) is held back until the next
 * feed or cleaner_finish, so memory stays bounded by the chunk size. The only
 * failure is running out of memory.
 * cleaner_finish flushes everything (a sequence cut short by the end is one
 * U+FFFD); the stats stay readable, and a later feed starts a new stream with
 * the counts at zero. cleaner_create returns NULL when out of memory. */
typedef struct cleaner cleaner;

cleaner *cleaner_create(void);
void cleaner_destroy(cleaner *c);
bool cleaner_feed(cleaner *c, const char *buf, size_t n, cp_buf *out, av_error *err);
bool cleaner_finish(cleaner *c, cp_buf *out, av_error *err);
const clean_stats *cleaner_stats(const cleaner *c);

/* Clean a whole buffer at once (files read into memory, tests); appends to
 * `out`; stats may be NULL. */
bool clean_text(const char *buf, size_t n, cp_buf *out, clean_stats *stats, av_error *err);

/* Columns a codepoint takes on a terminal as attnview draws it (cp_glyph): 2 for
 * wide (utf8proc_charwidth 2: CJK, fullwidth forms, emoji with emoji
 * presentation), 1 otherwise; East Asian "ambiguous" characters count as 1, as in
 * utf8proc and most terminals. Zero-width codepoints (combining marks, format
 * characters such as U+200B, Hangul medial vowels and final consonants left alone
 * after NFC) are drawn on the placeholder base U+25CC and take 1;
 * *placeholder is set for them (may be NULL). Special tokens, control characters
 * and non-scalar values are drawn as one-column stand-ins and take 1. */
int cp_display_width(uint32_t cp, bool *placeholder);

/* The UTF-8 text attnview draws for a token: the character itself, or a visible
 * stand-in: space U+2423 "␣", LF U+23CE "⏎", U+25CC "◌" followed by the mark for
 * zero-width characters; for codepoints that make terminals join neighbouring
 * characters (so that every later column would shift), a stand-in without
 * them: ZWJ "⨝", variation selectors "ᵛ", tags "ᵗ", skin-tone modifiers "ᶠ2"
 * to "ᶠ6" (two columns), regional indicators their fullwidth letter ("Ｃ");
 * and for the special tokens (one column each, unlike
 * "<pad>", so they fit a heatmap cell) pad U+2205 "∅", unknown U+00BF "¿", mask
 * U+2592 "▒". Nothing is ever written raw that a terminal would act on: C0
 * controls and DEL get their Control Pictures (U+2400 + c, U+2421), C1 controls
 * and non-scalar values U+FFFD.
 * Writes a NUL-terminated string (at most 32 bytes) and returns its length. */
size_t cp_glyph(uint32_t cp, char out[32]);

/* A delimiter for the head roles and the word view: a space (Unicode
 * category Z*), a line break, or punctuation (P*). */
bool cp_is_delimiter(uint32_t cp);

/* Encode one codepoint as UTF-8 (no NUL); returns the length, 0 if invalid. */
size_t cp_to_utf8(uint32_t cp, char out[4]);

/* True for Unicode scalar values (0..0x10FFFF without surrogates). */
bool cp_is_scalar(uint32_t cp);

typedef struct token {
	uint32_t cp;	   /* NFC codepoint */
	int32_t id;	   /* vocabulary id; TOK_UNK when not in the vocabulary */
	uint8_t width;	   /* display columns, see cp_display_width */
	bool unknown;	   /* not in the vocabulary (false for the special tokens) */
	bool placeholder;  /* zero-width character drawn on a base */
} token;

/* Text given by a person (--text, --input, the input line). Invalid UTF-8 is an
 * error naming the first bad sequence: "invalid UTF-8 at byte 7 of --text: byte
 * 0xff cannot start a character; give the text as UTF-8". Escapes and controls
 * are removed as for corpora and counted in *stats (may be NULL; filled even on
 * failure). Replaces the contents of cps (cps->n = 0 on failure). */
bool tokenize_text(const char *s, size_t n, const char *what, cp_buf *cps, clean_stats *stats,
		   av_error *err);

#endif
