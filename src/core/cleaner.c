/* Text cleaning and codepoint tokens.
 *
 * The cleaner is a pipeline with O(1) state per stage, so a stream can be fed in
 * chunks of any size and the output does not depend on where the chunks end:
 *
 *   bytes -> UTF-8 decoder -> escape filter -> control filter -> CR/LF -> NFC -> out
 *
 * Only the NFC stage holds more than a few bytes: composition and canonical
 * reordering can change a character because of the ones after it, so codepoints
 * from the last "boundary" on are held back (see nfc_tables below). */
#include "attnview/tokenizer.h"
#include "attnview/i18n.h"
#include "tokenizer_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- NFC boundaries ------------------------------------------------------------
 *
 * A position before codepoint c is a boundary when NFC(x c y) = NFC(x) NFC(c y) for
 * every x and y. That holds when c's full canonical decomposition starts with a
 * starter (ccc 0) that never composes with a preceding character: canonical
 * reordering only moves non-starters, and in the composition algorithm a starter
 * blocks every later character from the starters before it.
 *
 * The starters that do compose backwards (Hangul medial vowels and final
 * consonants, the second halves of Indic two-part vowels...) are exactly those
 * that appear after the first place of some canonical decomposition, so both
 * tables are derived from utf8proc's own data once per process, and follow
 * whatever Unicode version the installed library has.
 *
 * `inert` additionally says NFC(c) = c: a run of inert codepoints is its own NFC,
 * which lets plain text skip utf8proc entirely. */
#define NCP 0x110000u
static uint8_t nfc_boundary[NCP / 8];
static uint8_t nfc_inert[NCP / 8];
static pthread_once_t nfc_once = PTHREAD_ONCE_INIT;

static bool bit(const uint8_t *t, uint32_t cp)
{
	return t[cp >> 3] >> (cp & 7) & 1;
}

static void set_bit(uint8_t *t, uint32_t cp)
{
	t[cp >> 3] |= (uint8_t)(1u << (cp & 7));
}

static int ccc(uint32_t cp)
{
	return utf8proc_get_property((utf8proc_int32_t)cp)->combining_class;
}

static void nfc_tables_build(void)
{
	static uint8_t composes_back[NCP / 8];
	utf8proc_int32_t d[32];

	for (uint32_t cp = 0; cp < NCP; cp++) {
		if (!cp_is_scalar(cp))
			continue;
		utf8proc_ssize_t n =
		    utf8proc_decompose_char((utf8proc_int32_t)cp, d, 32, UTF8PROC_DECOMPOSE, NULL);
		for (utf8proc_ssize_t i = 1; i < n && n <= 32; i++)
			if (ccc((uint32_t)d[i]) == 0)
				set_bit(composes_back, (uint32_t)d[i]);
	}
	for (uint32_t cp = 0; cp < NCP; cp++) {
		if (!cp_is_scalar(cp)) {
			set_bit(nfc_boundary, cp); /* never reaches NFC; keep it cheap */
			continue;
		}
		utf8proc_ssize_t n =
		    utf8proc_decompose_char((utf8proc_int32_t)cp, d, 32, UTF8PROC_DECOMPOSE, NULL);
		if (n < 1 || n > 32)
			continue;
		uint32_t first = (uint32_t)d[0];
		if (ccc(first) != 0 || bit(composes_back, first))
			continue;
		set_bit(nfc_boundary, cp);
		if (n == 1 && first == cp) {
			set_bit(nfc_inert, cp);
			continue;
		}
		/* Decomposable: inert only if it composes back to itself (é does,
		 * U+212B ANGSTROM SIGN and composition exclusions do not). */
		utf8proc_ssize_t m = utf8proc_normalize_utf32(
		    d, n, (utf8proc_option_t)(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
		if (m == 1 && (uint32_t)d[0] == cp)
			set_bit(nfc_inert, cp);
	}
}

/* ---- The cleaner ------------------------------------------------------------------ */

/* Longest run of codepoints without an NFC boundary that is normalised as a
 * whole; beyond it a boundary is forced. Only degenerate text (a base with
 * hundreds of combining marks) gets there, and since the rule counts codepoints
 * of the stream, the output still does not depend on chunking. */
#define NFC_MAX_RUN 1024
/* Normalise held-back text once this much is waiting, even inside one big feed,
 * so the working buffers stay small whatever the caller's chunk size. */
#define NFC_FLUSH_AT 65536

enum utf8_problem {
	U8_NONE,
	U8_LONE_CONT, /* 80..BF with no lead byte */
	U8_BAD_LEAD,  /* C0, C1, F5..FF */
	U8_OVERLONG,  /* E0 80..9F, F0 80..8F */
	U8_SURROGATE, /* ED A0..BF */
	U8_TOO_BIG,   /* F4 90..BF */
	U8_CUT,	      /* a valid prefix followed by a byte that cannot continue it */
	U8_AT_END,    /* a valid prefix at the end of the input */
};

enum esc_state {
	ES_NONE,
	ES_ESC,	    /* after ESC */
	ES_NF,	    /* ESC + intermediate bytes 20..2F, waiting for the final byte */
	ES_CSI,	    /* parameters and intermediates, waiting for the final byte */
	ES_STR,	    /* OSC, DCS, SOS, PM, APC: a string up to the terminator */
	ES_STR_ESC, /* ESC inside a string: ESC '\' is the terminator */
};

struct cleaner {
	clean_stats st;
	bool finished;

	/* UTF-8 decoder: the sequence being read */
	uint32_t u_cp;
	int u_need;	    /* continuation bytes still expected */
	int u_len;	    /* bytes of the sequence seen so far */
	uint8_t u_lo, u_hi; /* range allowed for the next byte */
	uint8_t u_bytes[4];
	uint64_t u_start; /* stream offset of its first byte */

	/* the first invalid sequence, for tokenize_text's message */
	enum utf8_problem bad;
	uint8_t bad_bytes[4];
	int bad_len;
	int bad_next; /* the byte that cut the sequence short, -1 if none */

	enum esc_state esc;
	bool cr_pending; /* the last line end was a CR: a following LF is part of it */

	/* NFC stage: codepoints not yet normalised; pend.v[0..safe) can be */
	cp_buf pend;
	size_t safe;
	size_t run; /* codepoints since the last boundary */
	utf8proc_int32_t *work;
	size_t work_cap;
	char *enc;
	size_t enc_cap;
};

cleaner *cleaner_create(void)
{
	if (pthread_once(&nfc_once, nfc_tables_build) != 0)
		return NULL;
	cleaner *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->st.first_invalid = UINT64_MAX;
	c->bad_next = -1;
	return c;
}

void cleaner_destroy(cleaner *c)
{
	if (!c)
		return;
	cp_buf_finish(&c->pend);
	free(c->work);
	free(c->enc);
	free(c);
}

const clean_stats *cleaner_stats(const cleaner *c)
{
	return &c->st;
}

/* A new stream after cleaner_finish: forget everything but the buffers. */
static void cleaner_restart(cleaner *c)
{
	cp_buf pend = c->pend;
	utf8proc_int32_t *work = c->work;
	char *enc = c->enc;
	size_t work_cap = c->work_cap, enc_cap = c->enc_cap;

	memset(c, 0, sizeof *c);
	c->st.first_invalid = UINT64_MAX;
	c->bad_next = -1;
	c->pend = pend;
	c->pend.n = 0;
	c->work = work;
	c->work_cap = work_cap;
	c->enc = enc;
	c->enc_cap = enc_cap;
}

static bool oom(av_error *err, const cleaner *c)
{
	return av_fail(err, _("out of memory while cleaning text (%llu bytes read so far)"),
		       (unsigned long long)c->st.bytes);
}

static bool append(cp_buf *out, const uint32_t *v, size_t n)
{
	if (!cp_buf_reserve(out, n))
		return false;
	memcpy(out->v + out->n, v, n * sizeof *v);
	out->n += n;
	return true;
}

/* NFC of pend.v[0..safe) appended to out; the rest moves to the front. */
static bool nfc_flush(cleaner *c, cp_buf *out, av_error *err)
{
	size_t n = c->safe;
	if (n == 0)
		return true;
	const uint32_t *v = c->pend.v;
	size_t i = 0;
	while (i < n && bit(nfc_inert, v[i]))
		i++;
	size_t before = out->n;
	if (i == n) {
		if (!append(out, v, n))
			return oom(err, c);
	} else {
		/* utf8proc decomposes from UTF-8 only: encode, decompose (canonical
		 * order included), then compose in place. */
		if (n > (SIZE_MAX - 1) / 4)
			return oom(err, c);
		if (c->enc_cap < 4 * n + 1) {
			char *e = realloc(c->enc, 4 * n + 1);
			if (!e)
				return oom(err, c);
			c->enc = e;
			c->enc_cap = 4 * n + 1;
		}
		size_t len = 0;
		for (size_t k = 0; k < n; k++)
			len += cp_to_utf8(v[k], c->enc + len);
		utf8proc_option_t opt = (utf8proc_option_t)(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
		for (;;) {
			utf8proc_ssize_t m = utf8proc_decompose((const utf8proc_uint8_t *)c->enc,
								(utf8proc_ssize_t)len, c->work,
								(utf8proc_ssize_t)c->work_cap, opt);
			if (m < 0)
				return av_fail(err, _("cannot normalise text near byte %llu: %s"),
					       (unsigned long long)c->st.bytes, utf8proc_errmsg(m));
			if ((size_t)m <= c->work_cap) {
				m = utf8proc_normalize_utf32(c->work, m, opt);
				if (m < 0)
					return av_fail(
					    err, _("cannot normalise text near byte %llu: %s"),
					    (unsigned long long)c->st.bytes, utf8proc_errmsg(m));
				if (!cp_buf_reserve(out, (size_t)m))
					return oom(err, c);
				for (utf8proc_ssize_t k = 0; k < m; k++)
					out->v[out->n++] = (uint32_t)c->work[k];
				break;
			}
			free(c->work);
			c->work_cap = 0;
			c->work = malloc((size_t)m * sizeof *c->work);
			if (!c->work)
				return oom(err, c);
			c->work_cap = (size_t)m;
		}
	}
	c->st.codepoints += out->n - before;
	memmove(c->pend.v, c->pend.v + n, (c->pend.n - n) * sizeof *c->pend.v);
	c->pend.n -= n;
	c->safe = 0;
	return true;
}

static bool nfc_push(cleaner *c, uint32_t cp, cp_buf *out, av_error *err)
{
	if (!cp_buf_push(&c->pend, cp))
		return oom(err, c);
	if (bit(nfc_boundary, cp)) {
		c->safe = c->pend.n - 1;
		c->run = 1;
	} else if (++c->run >= NFC_MAX_RUN) {
		/* flush now: a later real boundary would overwrite `safe` */
		c->safe = c->pend.n;
		c->run = 0;
		return nfc_flush(c, out, err);
	}
	if (c->pend.n >= NFC_FLUSH_AT)
		return nfc_flush(c, out, err);
	return true;
}

/* Controls and line ends, after escape sequences are gone. */
static bool filter(cleaner *c, uint32_t cp, cp_buf *out, av_error *err)
{
	if (cp == '\t') {
		cp = ' ';
	} else if (cp == '\r') {
		c->st.crlf++;
		c->cr_pending = true;
		return nfc_push(c, '\n', out, err);
	} else if (cp == '\n') {
		if (c->cr_pending) {
			c->cr_pending = false;
			return true;
		}
	} else if (is_control(cp)) {
		c->st.controls++;
		return true;
	}
	c->cr_pending = false;
	return nfc_push(c, cp, out, err);
}

/* ECMA-48 escape sequences, recognised on codepoints so a sequence may straddle
 * chunks. String sequences (OSC and friends) end at BEL or ST; a line end also
 * ends them, so a stray "ESC ]" in a corpus loses one line, not the rest of the
 * file. A malformed sequence ends at the first character that cannot belong to
 * it, and that character is processed as text. */
static bool escapes(cleaner *c, uint32_t cp, cp_buf *out, av_error *err)
{
	for (;;) {
		switch (c->esc) {
		case ES_NONE:
			if (cp == 0x1B) {
				c->esc = ES_ESC;
			} else if (cp == 0x9B) {
				c->esc = ES_CSI;
				c->st.escapes++;
			} else if (cp == 0x90 || cp == 0x98 || cp == 0x9D || cp == 0x9E ||
				   cp == 0x9F) {
				c->esc = ES_STR;
				c->st.escapes++;
			} else {
				return filter(c, cp, out, err);
			}
			return true;
		case ES_ESC:
			if (cp == '[') {
				c->esc = ES_CSI;
			} else if (cp == ']' || cp == 'P' || cp == 'X' || cp == '^' || cp == '_') {
				c->esc = ES_STR;
			} else if (cp >= 0x20 && cp <= 0x2F) {
				c->esc = ES_NF;
			} else if (cp >= 0x30 && cp <= 0x7E) {
				c->esc = ES_NONE;
			} else {
				/* a lone ESC: a control character */
				c->st.controls++;
				c->esc = ES_NONE;
				continue;
			}
			c->st.escapes++;
			return true;
		case ES_NF:
			if (cp >= 0x20 && cp <= 0x2F)
				return true;
			c->esc = ES_NONE;
			if (cp >= 0x30 && cp <= 0x7E)
				return true;
			continue;
		case ES_CSI:
			if (cp >= 0x20 && cp <= 0x3F)
				return true;
			c->esc = ES_NONE;
			if (cp >= 0x40 && cp <= 0x7E)
				return true;
			continue;
		case ES_STR:
			if (cp == 0x07 || cp == 0x9C) {
				c->esc = ES_NONE;
			} else if (cp == 0x1B) {
				c->esc = ES_STR_ESC;
			} else if (cp == '\n' || cp == '\r') {
				c->esc = ES_NONE;
				continue;
			}
			return true;
		case ES_STR_ESC:
			if (cp == '\\') {
				c->esc = ES_NONE;
				return true;
			}
			/* the ESC starts a new sequence */
			c->esc = ES_ESC;
			continue;
		}
	}
}

/* A byte order mark goes before any other stage sees it: at the start of a
 * file or where files were joined, it is never text (tokenizer.h). */
static bool decoded(cleaner *c, uint32_t cp, cp_buf *out, av_error *err)
{
	if (cp == 0xFEFF) {
		c->st.boms++;
		return true;
	}
	return escapes(c, cp, out, err);
}

/* One U+FFFD for the maximal subpart u_bytes[0..u_len) (Unicode 3.9, "U+FFFD
 * substitution of maximal subparts"). */
static bool invalid(cleaner *c, enum utf8_problem why, int next, cp_buf *out, av_error *err)
{
	if (c->st.invalid++ == 0) {
		c->st.first_invalid = c->u_start;
		c->bad = why;
		memcpy(c->bad_bytes, c->u_bytes, sizeof c->bad_bytes);
		c->bad_len = c->u_len;
		c->bad_next = next;
	}
	c->u_need = c->u_len = 0;
	return decoded(c, 0xFFFD, out, err);
}

static bool decode_byte(cleaner *c, uint8_t b, uint64_t pos, cp_buf *out, av_error *err)
{
	if (c->u_need > 0) {
		if (b >= c->u_lo && b <= c->u_hi) {
			c->u_cp = c->u_cp << 6 | (b & 0x3Fu);
			c->u_bytes[c->u_len++] = b;
			c->u_lo = 0x80;
			c->u_hi = 0xBF;
			if (--c->u_need == 0)
				return decoded(c, c->u_cp, out, err);
			return true;
		}
		/* The second byte tells an overlong form, a surrogate or a value
		 * beyond U+10FFFF apart from a sequence that is merely cut short. */
		enum utf8_problem why = U8_CUT;
		if (c->u_len == 1 && b >= 0x80 && b <= 0xBF) {
			uint8_t l = c->u_bytes[0];
			why = l == 0xED ? U8_SURROGATE : l == 0xF4 ? U8_TOO_BIG : U8_OVERLONG;
			/* the lead alone is the maximal subpart; b is then a lone
			 * continuation byte of its own */
		}
		if (!invalid(c, why, b, out, err))
			return false;
	}
	if (b < 0x80)
		return decoded(c, b, out, err);
	c->u_start = pos;
	c->u_len = 1;
	c->u_bytes[0] = b;
	c->u_lo = 0x80;
	c->u_hi = 0xBF;
	if (b < 0xC2)
		return invalid(c, b < 0xC0 ? U8_LONE_CONT : U8_BAD_LEAD, -1, out, err);
	if (b < 0xE0) {
		c->u_need = 1;
		c->u_cp = b & 0x1Fu;
	} else if (b < 0xF0) {
		c->u_need = 2;
		c->u_cp = b & 0x0Fu;
		if (b == 0xE0)
			c->u_lo = 0xA0;
		else if (b == 0xED)
			c->u_hi = 0x9F;
	} else if (b < 0xF5) {
		c->u_need = 3;
		c->u_cp = b & 0x07u;
		if (b == 0xF0)
			c->u_lo = 0x90;
		else if (b == 0xF4)
			c->u_hi = 0x8F;
	} else {
		return invalid(c, U8_BAD_LEAD, -1, out, err);
	}
	return true;
}

bool cleaner_feed(cleaner *c, const char *buf, size_t n, cp_buf *out, av_error *err)
{
	if (c->finished)
		cleaner_restart(c);
	const uint8_t *p = (const uint8_t *)buf;
	for (size_t i = 0; i < n; i++) {
		uint64_t pos = c->st.bytes++;
		if (!decode_byte(c, p[i], pos, out, err))
			return false;
	}
	return nfc_flush(c, out, err);
}

bool cleaner_finish(cleaner *c, cp_buf *out, av_error *err)
{
	if (c->finished)
		return true;
	if (c->u_need > 0 && !invalid(c, U8_AT_END, -1, out, err))
		return false;
	if (c->esc == ES_ESC)
		c->st.controls++; /* a lone ESC at the very end */
	c->esc = ES_NONE;
	c->safe = c->pend.n;
	if (!nfc_flush(c, out, err))
		return false;
	c->finished = true;
	return true;
}

bool clean_text(const char *buf, size_t n, cp_buf *out, clean_stats *stats, av_error *err)
{
	cleaner *c = cleaner_create();
	if (!c)
		return av_fail(err, _("out of memory while cleaning text"));
	bool ok = cleaner_feed(c, buf, n, out, err) && cleaner_finish(c, out, err);
	if (stats)
		*stats = c->st;
	cleaner_destroy(c);
	return ok;
}

/* "byte 0xff cannot start a character", for the first invalid sequence. */
static void describe_invalid(const cleaner *c, char *s, size_t size)
{
	char hex[16] = "";
	for (int i = 0, k = 0; i < c->bad_len && i < 4; i++)
		k += snprintf(hex + k, sizeof hex - (size_t)k, "%s%02x", i ? " " : "",
			      c->bad_bytes[i]);
	uint8_t b0 = c->bad_bytes[0];
	switch (c->bad) {
	case U8_LONE_CONT:
		snprintf(s, size, _("byte 0x%02x continues a character that never started"), b0);
		break;
	case U8_BAD_LEAD:
		if (b0 < 0xC2)
			snprintf(s, size, _("byte 0x%02x could only start an overlong encoding"),
				 b0);
		else
			snprintf(s, size, _("byte 0x%02x cannot start a character"), b0);
		break;
	case U8_OVERLONG:
		snprintf(s, size, _("bytes %02x %02x start an overlong encoding"), b0, c->bad_next);
		break;
	case U8_SURROGATE:
		snprintf(s, size, _("bytes %02x %02x encode a UTF-16 surrogate"), b0, c->bad_next);
		break;
	case U8_TOO_BIG:
		snprintf(s, size, _("bytes %02x %02x encode a value beyond U+10FFFF"), b0,
			 c->bad_next);
		break;
	case U8_CUT:
		snprintf(s, size,
			 _("the character started by bytes %s is cut short by byte 0x%02x"), hex,
			 c->bad_next);
		break;
	case U8_AT_END:
		snprintf(s, size, _("the text ends inside a character (bytes %s)"), hex);
		break;
	case U8_NONE:
		snprintf(s, size, _("unknown problem"));
		break;
	}
}

bool tokenize_text(const char *s, size_t n, const char *what, cp_buf *cps, clean_stats *stats,
		   av_error *err)
{
	cleaner *c = cleaner_create();
	if (!c)
		return av_fail(err, _("out of memory while reading %s"), AV_Q(what));
	cps->n = 0;
	bool ok = cleaner_feed(c, s, n, cps, err) && cleaner_finish(c, cps, err);
	if (ok && c->st.invalid > 0) {
		char why[160];
		describe_invalid(c, why, sizeof why);
		ok = av_fail(err, _("invalid UTF-8 at byte %llu of %s: %s; give the text as UTF-8"),
			     (unsigned long long)c->st.first_invalid, AV_Q(what), why);
	}
	if (stats)
		*stats = c->st;
	if (!ok)
		cps->n = 0;
	cleaner_destroy(c);
	return ok;
}
