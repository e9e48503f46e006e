/* Text that is not UTF-8: which encoding it looks like, and how to say so.
 *
 * attnview reads UTF-8 only; other text is cleaned like damaged UTF-8 (every
 * invalid sequence becomes U+FFFD), which trains nothing useful and shows
 * nothing readable. encoding_guess looks at the start of a text for the
 * encodings people have text in: UTF-16 and UTF-32 (a byte order mark, or
 * the zero bytes or CJK code units of every other byte), the Chinese
 * double-byte encodings GB18030 (GBK, GB2312) and Big5 (pairs of a lead
 * byte 0x81-0xFE and a trail byte; Big5 puts many trail bytes below 0x80,
 * GB2312 none), and single-byte Western text (Latin-1, Windows-1252: high
 * bytes between ASCII ones). encoding_hint turns the guess into a sentence
 * with the iconv command that converts the file. */
#ifndef ATTNVIEW_ENCODING_H
#define ATTNVIEW_ENCODING_H

#include "attnview/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

/* Bytes of a text's start that encoding_guess needs. */
#define ENCODING_SAMPLE 65536

typedef enum text_encoding {
	ENC_UTF8 = 0, /* UTF-8, or nothing else recognised */
	ENC_UTF16LE,
	ENC_UTF16BE,
	ENC_UTF32LE,
	ENC_UTF32BE,
	ENC_GB18030,
	ENC_BIG5,
	ENC_LATIN1,
} text_encoding;

/* What the first n bytes of a text look like. */
text_encoding encoding_guess(const uint8_t *s, size_t n);

/* The encoding's name for iconv -f ("UTF-16LE", "GB18030", "WINDOWS-1252"...). */
const char *encoding_name(text_encoding e);

/* If the text `name` (a path, or "standard input") is probably not UTF-8,
 * a sentence (no trailing newline) saying what it looks like and the iconv
 * command that converts it, and true; else "" and false. `guess` comes from
 * encoding_guess on its first bytes, st from cleaning it: the guess alone
 * decides for UTF-16 and UTF-32 (whose zero bytes were removed as control
 * characters, not replaced); otherwise more than 1% of its characters must
 * have been invalid UTF-8. */
bool encoding_hint(text_encoding guess, const clean_stats *st, const char *name, char *buf,
		   size_t n);

/* A text is mostly not UTF-8 text when more than ENCODING_NOT_TEXT_PERCENT
 * of what it gave (characters, and the control characters removed) was
 * invalid UTF-8 or control characters: a binary file, or text in another
 * encoding (GB18030, UTF-16) that reads as replacement characters. */
#define ENCODING_NOT_TEXT_PERCENT 25
bool encoding_not_text(const clean_stats *st);

/* False, with a message naming `name`, what was found and what to do, when
 * the text is mostly not text; `anyway` (e.g. "--any-encoding trains on it
 * anyway") ends the message. */
bool encoding_check_text(const clean_stats *st, text_encoding guess, const char *name,
			 const char *anyway, av_error *err);

#endif
