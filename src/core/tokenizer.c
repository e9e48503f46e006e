/* Codepoint tokens: the codepoint buffer and UTF-8, delimiters, and how a
 * codepoint is drawn on a terminal (its width, a stand-in for joiners and
 * controls). The text cleaner that makes the tokens is in cleaner.c. */
#include "attnview/tokenizer.h"
#include "attnview/i18n.h"
#include "tokenizer_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* Room for `extra` more codepoints. */
bool cp_buf_reserve(cp_buf *b, size_t extra)
{
	if (extra <= b->cap - b->n)
		return true;
	if (extra > SIZE_MAX / sizeof *b->v - b->n)
		return false;
	size_t need = b->n + extra;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 / sizeof *b->v ? need : cap * 2;
	uint32_t *v = realloc(b->v, cap * sizeof *v);
	if (!v)
		return false;
	b->v = v;
	b->cap = cap;
	return true;
}

bool cp_buf_push(cp_buf *b, uint32_t cp)
{
	if (b->n == b->cap && !cp_buf_reserve(b, 1))
		return false;
	b->v[b->n++] = cp;
	return true;
}

void cp_buf_finish(cp_buf *b)
{
	free(b->v);
	b->v = NULL;
	b->n = b->cap = 0;
}

bool cp_is_scalar(uint32_t cp)
{
	return cp < 0xD800 || (cp >= 0xE000 && cp <= 0x10FFFF);
}

size_t cp_to_utf8(uint32_t cp, char out[4])
{
	unsigned char *o = (unsigned char *)out;
	if (!cp_is_scalar(cp))
		return 0;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

bool cp_is_delimiter(uint32_t cp)
{
	if (cp == '\n' || cp == '\t')
		return true;
	if (cp >= AV_SPECIAL_CP || !cp_is_scalar(cp))
		return false;
	switch (utf8proc_category((utf8proc_int32_t)cp)) {
	case UTF8PROC_CATEGORY_ZS:
	case UTF8PROC_CATEGORY_ZL:
	case UTF8PROC_CATEGORY_ZP:
	case UTF8PROC_CATEGORY_PC:
	case UTF8PROC_CATEGORY_PD:
	case UTF8PROC_CATEGORY_PS:
	case UTF8PROC_CATEGORY_PE:
	case UTF8PROC_CATEGORY_PI:
	case UTF8PROC_CATEGORY_PF:
	case UTF8PROC_CATEGORY_PO:
		return true;
	default:
		return false;
	}
}

/* ---- Display ---------------------------------------------------------------------- */

/* Codepoints that make a terminal join a character with its neighbour: the
 * zero-width joiner (which glues the next emoji onto the previous one),
 * variation selectors and tag characters (which change the glyph before
 * them), emoji skin-tone modifiers (which merge into the emoji before them)
 * and regional indicators (two of which become one flag). Written raw, they
 * leave the terminal's cursor where attnview does not expect it and shift
 * every column after them, so each is drawn as a stand-in of its own: the
 * one-column "⨝" (ZWJ), "ᵛ" (variation selector), "ᵗ" (tag); the
 * two-column "ᶠ2" to "ᶠ6" (the modifier's Fitzpatrick type); and the
 * fullwidth letter of a regional indicator ("Ｃ" for U+1F1E8). Returns the
 * width, 0 if cp is none of these. */
static int joiner_standin(uint32_t cp, char out[32])
{
	size_t n;
	if (cp == 0x200D) {
		n = cp_to_utf8(0x2A1D, out);
		out[n] = '\0';
		return 1;
	}
	if ((cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0100 && cp <= 0xE01EF)) {
		n = cp_to_utf8(0x1D5B, out);
		out[n] = '\0';
		return 1;
	}
	if (cp >= 0xE0000 && cp <= 0xE007F) {
		n = cp_to_utf8(0x1D57, out);
		out[n] = '\0';
		return 1;
	}
	if (cp >= 0x1F3FB && cp <= 0x1F3FF) {
		n = cp_to_utf8(0x1DA0, out);
		out[n++] = (char)('2' + (cp - 0x1F3FB));
		out[n] = '\0';
		return 2;
	}
	if (cp >= 0x1F1E6 && cp <= 0x1F1FF) {
		n = cp_to_utf8(0xFF21 + (cp - 0x1F1E6), out);
		out[n] = '\0';
		return 2;
	}
	return 0;
}

int cp_display_width(uint32_t cp, bool *placeholder)
{
	if (placeholder)
		*placeholder = false;
	char standin[32];
	int sw = joiner_standin(cp, standin);
	if (sw)
		return sw;
	if (cp >= AV_SPECIAL_CP || !cp_is_scalar(cp) || is_control(cp))
		return 1; /* drawn as a one-column stand-in, see cp_glyph */
	int w = utf8proc_charwidth((utf8proc_int32_t)cp);
	if (w >= 2)
		return 2;
	/* Hangul medial vowels and final consonants: utf8proc says 1, but terminals
	 * (glibc wcwidth) draw them as zero-width parts of the syllable before. A
	 * lone one only survives NFC when nothing precedes it to combine with. */
	if ((cp >= 0x1160 && cp <= 0x11FF) || (cp >= 0xD7B0 && cp <= 0xD7FF))
		w = 0;
	if (w <= 0) {
		if (placeholder)
			*placeholder = true;
		return 1;
	}
	return 1;
}

static size_t glyph_str(const char *g, char out[32])
{
	size_t n = strlen(g);
	memcpy(out, g, n + 1);
	return n;
}

size_t cp_glyph(uint32_t cp, char out[32])
{
	if (cp >= AV_SPECIAL_CP) {
		switch (cp - AV_SPECIAL_CP) {
		case TOK_PAD:
			return glyph_str("\u2205", out); /* ∅ */
		case TOK_UNK:
			return glyph_str("\u00bf", out); /* ¿ */
		case TOK_MASK:
			return glyph_str("\u2592", out); /* ▒ */
		default:
			return glyph_str("\ufffd", out);
		}
	}
	if (!cp_is_scalar(cp))
		return glyph_str("\ufffd", out);
	if (cp == ' ')
		return glyph_str("\u2423", out); /* ␣ */
	if (cp == '\n')
		return glyph_str("\u23ce", out); /* ⏎ */
	/* Never send a control character to the terminal: C0 and DEL have their
	 * Control Pictures (U+2400 + c, U+2421), C1 has none. */
	if (cp < 0x20 || cp == 0x7F) {
		size_t n = cp_to_utf8(cp == 0x7F ? 0x2421 : 0x2400 + cp, out);
		out[n] = '\0';
		return n;
	}
	if (cp >= 0x80 && cp <= 0x9F)
		return glyph_str("\ufffd", out);
	if (joiner_standin(cp, out))
		return strlen(out);
	bool ph;
	cp_display_width(cp, &ph);
	size_t n = 0;
	if (ph)
		n = cp_to_utf8(0x25CC, out); /* ◌ */
	/* A direction mark, embedding, override, isolate or separator: the
	 * placeholder alone (the panel gives its number). */
	if (!av_cp_turns_text(cp))
		n += cp_to_utf8(cp, out + n);
	out[n] = '\0';
	return n;
}
