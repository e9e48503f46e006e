/* Fuzz target: the input line driven by a key stream, as the view receives
 * it from the terminal (UTF-8 bytes; the control keys of keys.h's input-line
 * context; bracketed paste). The bytes 0xf8..0xff never occur in UTF-8, so
 * they stand for what is not a character:
 *   f8 W   redraw in a field W columns wide (lineedit_fit); keys that come
 *          in together (typeahead) are handled before the next redraw
 *   f9 C   mouse click at column C
 *   fa fb fc fd fe   Delete, Left, Right, Home, End keys
 *   ff N   replace the line with the next N codepoints (lineedit_set)
 *   1b [ 2 0 0 ~ ... 1b [ 2 0 1 ~   bracketed paste: everything between,
 *          controls and invalid UTF-8 included, inserted at once
 * Other bytes are typed text; an invalid UTF-8 sequence arrives as U+FFFD.
 * After every key the line holds only what lineedit.h allows, the cursor is in
 * range and the return values tell the truth; after a redraw the cursor is
 * inside the field and the UTF-8 of the line is accepted by tokenize_text. */
#include "fuzz.h"

#include <string.h>

#include "lineedit.h"
#include "attnview/tokenizer.h"

#define LINE_MAX 48

typedef struct snapshot {
	uint32_t cps[LINE_MAX];
	size_t n, cur;
} snapshot;

static void take(snapshot *s, const lineedit *le)
{
	memcpy(s->cps, le->cps, le->n * sizeof *le->cps);
	s->n = le->n;
	s->cur = le->cur;
}

static bool text_changed(const snapshot *s, const lineedit *le)
{
	return s->n != le->n || memcmp(s->cps, le->cps, le->n * sizeof *le->cps) != 0;
}

static void check_line(lineedit *le, int width, bool redraw)
{
	FUZZ_CHECK(le->n <= le->max, "n %zu > max %zu", le->n, le->max);
	FUZZ_CHECK(le->cur <= le->n, "cursor %zu past the end %zu", le->cur, le->n);
	for (size_t i = 0; i < le->n; i++) {
		uint32_t cp = le->cps[i];
		FUZZ_CHECK(cp_is_scalar(cp), "U+%X at %zu", cp, i);
		FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0)),
			   "control U+%04X at %zu", cp, i);
	}
	if (!redraw)
		return;
	int col = lineedit_fit(le, width);
	FUZZ_CHECK(le->scroll <= le->cur, "scroll %zu past the cursor %zu", le->scroll, le->cur);
	FUZZ_CHECK(col >= 0 && col <= (width > 1 ? width - 1 : 0), "cursor column %d of %d", col,
		   width);
	FUZZ_CHECK(col == lineedit_width(le, le->scroll, le->cur), "column %d, width %d", col,
		   lineedit_width(le, le->scroll, le->cur));

	size_t len = 0;
	char *s = lineedit_utf8(le, &len);
	FUZZ_CHECK(s, "lineedit_utf8");
	FUZZ_CHECK(strlen(s) == len, "NUL inside the line's UTF-8");
	cp_buf cps = {0};
	av_error err;
	FUZZ_CHECK(tokenize_text(s, len, "the input line", &cps, NULL, &err), "%s", err.msg);
	/* NFC can expand a character to at most three (Unicode's bound). */
	FUZZ_CHECK(cps.n <= 3 * le->n, "%zu tokens from %zu codepoints", cps.n, le->n);
	cp_buf_finish(&cps);
	free(s);
}

/* Decode one UTF-8 character at p (n bytes left); invalid gives U+FFFD for
 * one byte, as a terminal would pass it on. Returns the bytes used. */
static size_t decode(const uint8_t *p, size_t n, uint32_t *cp)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len = p[0] < 0x80		   ? 1
		     : p[0] >= 0xc2 && p[0] < 0xe0 ? 2
		     : p[0] >= 0xe0 && p[0] < 0xf0 ? 3
		     : p[0] >= 0xf0 && p[0] < 0xf5 ? 4
						   : 0;
	*cp = 0xfffd;
	if (len == 0 || len > n)
		return 1;
	uint32_t v = len == 1 ? p[0] : p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 1;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v < 0xe000))
		return 1;
	*cp = v;
	return len;
}

static const uint8_t paste_begin[] = "\x1b[200~", paste_end[] = "\x1b[201~";

static bool starts(const uint8_t *p, size_t n, const uint8_t *s)
{
	size_t k = strlen((const char *)s);
	return n >= k && memcmp(p, s, k) == 0;
}

static void insert(lineedit *le, const uint32_t *cps, size_t k)
{
	snapshot before;
	take(&before, le);
	bool full = false;
	size_t got = lineedit_insert(le, cps, k, &full);
	FUZZ_CHECK(got <= k, "inserted %zu of %zu", got, k);
	FUZZ_CHECK(le->n == before.n + got, "length %zu after inserting %zu into %zu", le->n, got,
		   before.n);
	FUZZ_CHECK(le->cur == before.cur + got, "cursor %zu after inserting %zu at %zu", le->cur,
		   got, before.cur);
	FUZZ_CHECK(!full || le->n == le->max, "full with %zu of %zu", le->n, le->max);
	/* The text around the insertion is kept. */
	FUZZ_CHECK(!memcmp(le->cps, before.cps, before.cur * sizeof *le->cps), "prefix changed");
	FUZZ_CHECK(!memcmp(le->cps + le->cur, before.cps + before.cur,
			   (before.n - before.cur) * sizeof *le->cps),
		   "suffix changed");
}

typedef bool (*edit_fn)(lineedit *le);

static void edit(lineedit *le, edit_fn f, bool is_motion)
{
	snapshot before;
	take(&before, le);
	bool r = f(le);
	bool changed = is_motion ? le->cur != before.cur : text_changed(&before, le);
	FUZZ_CHECK(r == changed, "returned %d, %s changed: %d", r, is_motion ? "cursor" : "text",
		   changed);
	if (is_motion)
		FUZZ_CHECK(!text_changed(&before, le), "a motion changed the text");
}

static edit_fn control_key(uint8_t c, bool *is_motion)
{
	*is_motion = false;
	switch (c) {
	case 0x01:
		*is_motion = true;
		return lineedit_home;
	case 0x02:
		*is_motion = true;
		return lineedit_left;
	case 0x05:
		*is_motion = true;
		return lineedit_end;
	case 0x06:
		*is_motion = true;
		return lineedit_right;
	case 0x08:
	case 0x7f:
		return lineedit_backspace;
	case 0x04:
		return lineedit_delete;
	case 0x15:
		return lineedit_clear;
	case 0x0b:
		return lineedit_kill_end;
	case 0x17:
		return lineedit_delete_word;
	default:
		return NULL;
	}
}

int fuzz_keys(const uint8_t *p, size_t n)
{
	lineedit le;
	FUZZ_CHECK(lineedit_init(&le, LINE_MAX), "lineedit_init");
	int width = 20;
	uint32_t buf[256];
	size_t i = 0;
	while (i < n) {
		uint8_t c = p[i];
		bool motion, redraw = false;
		edit_fn f;
		if (starts(p + i, n - i, paste_begin)) {
			i += sizeof paste_begin - 1;
			size_t k = 0;
			while (i < n && !starts(p + i, n - i, paste_end) && k < 256)
				i += decode(p + i, n - i, &buf[k++]);
			if (starts(p + i, n - i, paste_end))
				i += sizeof paste_end - 1;
			insert(&le, buf, k);
		} else if (c == 0xf8 || c == 0xf9 || c == 0xff) {
			int arg = i + 1 < n ? p[i + 1] : 0;
			i += 2;
			if (c == 0xf8) {
				width = arg;
				redraw = true;
			} else if (c == 0xf9) {
				lineedit_click(&le, arg);
			} else {
				size_t k = 0;
				while (i < n && k < (size_t)arg && k < 256)
					i += decode(p + i, n - i, &buf[k++]);
				lineedit_set(&le, buf, k, NULL);
				FUZZ_CHECK(le.cur == le.n, "cursor %zu after set, length %zu",
					   le.cur, le.n);
			}
		} else if (c >= 0xfa && c <= 0xfe) {
			static const edit_fn keys[] = {lineedit_delete, lineedit_left,
						       lineedit_right, lineedit_home, lineedit_end};
			edit(&le, keys[c - 0xfa], c != 0xfa);
			i++;
		} else if ((f = control_key(c, &motion))) {
			edit(&le, f, motion);
			i++;
		} else {
			/* Typed: one character, or a control the line must drop. */
			i += decode(p + i, n - i, &buf[0]);
			insert(&le, buf, 1);
		}
		check_line(&le, width, redraw);
	}
	lineedit_finish(&le);
	return 0;
}
