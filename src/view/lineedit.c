/* The input line. */
#include "lineedit.h"

#include "attnview/tokenizer.h"

#include <stdlib.h>
#include <string.h>

bool lineedit_init(lineedit *le, size_t max)
{
	memset(le, 0, sizeof *le);
	le->cps = malloc((max ? max : 1) * sizeof *le->cps);
	if (!le->cps)
		return false;
	le->max = max;
	return true;
}

void lineedit_finish(lineedit *le)
{
	free(le->cps);
	memset(le, 0, sizeof *le);
}

/* What an incoming codepoint becomes in the line: itself, a replacement, or
 * nothing (returns false). `prev_cr` tracks CR so that CR LF gives one LF. */
static bool filter_cp(uint32_t cp, bool *prev_cr, uint32_t *out)
{
	bool was_cr = *prev_cr;
	*prev_cr = cp == '\r';
	if (cp == '\r') {
		*out = '\n';
		return true;
	}
	if (cp == '\n') {
		if (was_cr)
			return false; /* the CR already gave the LF */
		*out = '\n';
		return true;
	}
	if (cp == '\t') {
		*out = ' ';
		return true;
	}
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || !cp_is_scalar(cp))
		return false;
	*out = cp;
	return true;
}

size_t lineedit_insert(lineedit *le, const uint32_t *cps, size_t n, bool *full)
{
	if (full)
		*full = false;
	/* Filter first into place at the gap: open a gap as large as the room
	 * left, write, then close what was not used. */
	size_t room = le->max - le->n;
	size_t tail = le->n - le->cur;
	memmove(le->cps + le->cur + room, le->cps + le->cur, tail * sizeof *le->cps);
	size_t w = 0;
	bool prev_cr = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c;
		if (!filter_cp(cps[i], &prev_cr, &c))
			continue;
		if (w == room) {
			if (full)
				*full = true;
			break;
		}
		le->cps[le->cur + w++] = c;
	}
	memmove(le->cps + le->cur + w, le->cps + le->cur + room, tail * sizeof *le->cps);
	le->cur += w;
	le->n += w;
	return w;
}

size_t lineedit_set(lineedit *le, const uint32_t *cps, size_t n, bool *full)
{
	le->n = le->cur = le->scroll = 0;
	return lineedit_insert(le, cps, n, full);
}

bool lineedit_backspace(lineedit *le)
{
	if (le->cur == 0)
		return false;
	memmove(le->cps + le->cur - 1, le->cps + le->cur, (le->n - le->cur) * sizeof *le->cps);
	le->cur--;
	le->n--;
	return true;
}

bool lineedit_delete(lineedit *le)
{
	if (le->cur == le->n)
		return false;
	memmove(le->cps + le->cur, le->cps + le->cur + 1, (le->n - le->cur - 1) * sizeof *le->cps);
	le->n--;
	return true;
}

bool lineedit_left(lineedit *le)
{
	if (le->cur == 0)
		return false;
	le->cur--;
	return true;
}

bool lineedit_right(lineedit *le)
{
	if (le->cur == le->n)
		return false;
	le->cur++;
	return true;
}

bool lineedit_home(lineedit *le)
{
	bool moved = le->cur != 0;
	le->cur = 0;
	return moved;
}

bool lineedit_end(lineedit *le)
{
	bool moved = le->cur != le->n;
	le->cur = le->n;
	return moved;
}

bool lineedit_clear(lineedit *le)
{
	bool had = le->n != 0;
	le->n = le->cur = le->scroll = 0;
	return had;
}

bool lineedit_kill_end(lineedit *le)
{
	bool had = le->cur != le->n;
	le->n = le->cur;
	return had;
}

static bool is_space(uint32_t cp)
{
	return cp == ' ' || cp == '\n' || cp == 0x3000; /* ideographic space too */
}

bool lineedit_delete_word(lineedit *le)
{
	/* Spaces before the cursor, then the run of non-spaces before them. */
	size_t i = le->cur;
	while (i > 0 && is_space(le->cps[i - 1]))
		i--;
	while (i > 0 && !is_space(le->cps[i - 1]))
		i--;
	if (i == le->cur)
		return false;
	memmove(le->cps + i, le->cps + le->cur, (le->n - le->cur) * sizeof *le->cps);
	le->n -= le->cur - i;
	le->cur = i;
	return true;
}

int lineedit_cp_width(uint32_t cp)
{
	return cp == ' ' ? 1 : cp_display_width(cp, NULL);
}

int lineedit_width(const lineedit *le, size_t from, size_t to)
{
	int w = 0;
	for (size_t i = from; i < to && i < le->n; i++)
		w += lineedit_cp_width(le->cps[i]);
	return w;
}

int lineedit_fit(lineedit *le, int width)
{
	if (width < 1)
		width = 1;
	if (le->scroll > le->cur)
		le->scroll = le->cur;
	/* The cursor needs its own column after the text before it, so the text
	 * shown before the cursor may take at most width - 1 columns. When
	 * scrolling right, leave a quarter of the field of context if it fits. */
	int before = lineedit_width(le, le->scroll, le->cur);
	if (before > width - 1) {
		int keep = (width - 1) * 3 / 4;
		size_t s = le->cur;
		int w = 0;
		while (s > 0 && w + lineedit_cp_width(le->cps[s - 1]) <= keep) {
			w += lineedit_cp_width(le->cps[s - 1]);
			s--;
		}
		le->scroll = s;
		before = w;
	}
	return before;
}

void lineedit_click(lineedit *le, int col)
{
	/* Edits since the last lineedit_fit may have left scroll past the end. */
	size_t i = le->scroll < le->n ? le->scroll : le->n;
	int x = 0;
	while (i < le->n) {
		int w = lineedit_cp_width(le->cps[i]);
		if (col < x + w)
			break;
		x += w;
		i++;
	}
	le->cur = i;
}

char *lineedit_utf8(const lineedit *le, size_t *len)
{
	char *s = malloc(le->n * 4 + 1);
	if (!s)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < le->n; i++)
		k += cp_to_utf8(le->cps[i], s + k);
	s[k] = '\0';
	if (len)
		*len = k;
	return s;
}
