/* The input line: a bounded buffer of codepoints with a cursor, editing
 * operations and a horizontal scroll that keeps the cursor in view. Widths come
 * from cp_display_width, so the line is laid out as the heatmap labels are.
 * No curses here. */
#ifndef ATTNVIEW_LINEEDIT_H
#define ATTNVIEW_LINEEDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lineedit {
	uint32_t *cps; /* [max] */
	size_t n;      /* codepoints in the line */
	size_t max;    /* capacity; insertions beyond it are dropped */
	size_t cur;    /* cursor, 0..n: insertions go before cps[cur] */
	size_t scroll; /* first codepoint shown */
} lineedit;

bool lineedit_init(lineedit *le, size_t max);
void lineedit_finish(lineedit *le);

/* Insert codepoints at the cursor, as typed or pasted. Text is made
 * single-line-safe on the way in: CR LF and lone CR become LF (a token of its
 * own), TAB becomes a space, other control characters and non-scalar values
 * are dropped. Returns the number of codepoints inserted; fewer than given
 * when the line is full (*full is then set; may be NULL). */
size_t lineedit_insert(lineedit *le, const uint32_t *cps, size_t n, bool *full);
/* Replace the whole line (cursor at the end). */
size_t lineedit_set(lineedit *le, const uint32_t *cps, size_t n, bool *full);

/* Editing and motion; each returns true if the text (edits) or the cursor
 * (motions) changed. */
bool lineedit_backspace(lineedit *le);
bool lineedit_delete(lineedit *le);
bool lineedit_left(lineedit *le);
bool lineedit_right(lineedit *le);
bool lineedit_home(lineedit *le);
bool lineedit_end(lineedit *le);
bool lineedit_clear(lineedit *le);
bool lineedit_kill_end(lineedit *le);	 /* delete from the cursor to the end */
bool lineedit_delete_word(lineedit *le); /* delete the word before the cursor */

/* Columns codepoint cp takes in the input line (a space is drawn as a space,
 * everything else as in the heatmap labels). */
int lineedit_cp_width(uint32_t cp);
/* Columns taken by cps[from..to). */
int lineedit_width(const lineedit *le, size_t from, size_t to);
/* Adjust scroll so the cursor is visible in a field `width` columns wide (with
 * a column for the cursor at the end) and return the cursor's column. */
int lineedit_fit(lineedit *le, int width);
/* Put the cursor at the codepoint drawn at column col of the field (a mouse
 * click), given the current scroll. */
void lineedit_click(lineedit *le, int col);

/* The line as UTF-8, NUL-terminated, in a new allocation (*len gets the byte
 * count; may be NULL). NULL when out of memory. */
char *lineedit_utf8(const lineedit *le, size_t *len);

#endif
