/* Every key of the interactive view and every default it uses, in one place.
 * The dispatcher, the help screen and the KEYS section of man/attnview.1 follow this
 * table; change a binding here and nowhere else. Include only from view.c
 * (it needs curses.h for the KEY_* codes). */
#ifndef ATTNVIEW_KEYS_H
#define ATTNVIEW_KEYS_H

#include <stdbool.h>

/* Defaults. */
#define VIEW_CELL_W	   2  /* heatmap cell, columns: one CJK character */
#define VIEW_VALUE_CELL_W  5  /* values mode: " .123" */
#define VIEW_PANEL_W	   34 /* details panel on the right */
#define VIEW_MIN_MAP_W	   40 /* the panel is shown only if the map keeps this */
#define VIEW_MIN_COLS	   50 /* smaller terminals get a message instead */
#define VIEW_MIN_LINES	   14
#define VIEW_PRED_DELAY_MS 50	/* ask for predictions this long after a result */
#define VIEW_BUSY_MS	   100	/* show "computing" when a result takes longer */
#define VIEW_TOPK	   5	/* top keys and top predictions in the panel */
#define VIEW_RAMP_LEVELS   16	/* steps of the colour ramp */
#define VIEW_ESCDELAY_MS   25	/* wait for the rest of an escape sequence */
#define VIEW_MAX_LINE	   4096 /* codepoints the input line holds */
#define VIEW_OV_MIN_BOX_W  4	/* overview: smallest heatmap, columns */
#define VIEW_OV_MIN_BOX_H  3	/* ... and lines, with its title */
#define VIEW_HELP_KEYS_W   22	/* help: a key group's names wrap past this */

/* Function keys ncurses does not know: bracketed paste, defined at start-up
 * with define_key for "\e[200~" and "\e[201~". */
#define VIEW_KEY_PASTE_BEGIN (KEY_MAX + 1)
#define VIEW_KEY_PASTE_END   (KEY_MAX + 2)

#define CTRL(c) ((c)&0x1f)

typedef enum view_action {
	ACT_NONE = 0,
	ACT_QUIT,
	ACT_HELP,
	ACT_REDRAW,
	ACT_FOCUS_MAP,	 /* leave the input line for the heatmap */
	ACT_FOCUS_INPUT, /* back to the input line */
	ACT_OVERVIEW,	 /* open or close the overview of all heads */
	ACT_VALUES,	 /* toggle printing the weights in the cells */
	ACT_UP,
	ACT_DOWN,
	ACT_LEFT,
	ACT_RIGHT,
	ACT_PAGE_UP,
	ACT_PAGE_DOWN,
	ACT_FIRST_ROW,
	ACT_LAST_ROW,
	ACT_FIRST_COL,
	ACT_LAST_COL,
	ACT_NEXT_HEAD,
	ACT_PREV_HEAD,
	ACT_NEXT_LAYER,
	ACT_PREV_LAYER,
	ACT_HEAD_NUMBER, /* the key's digit is the head, from 0 as --dump counts */
	ACT_OPEN,	 /* overview: open the selected head */
	ACT_EDIT_LEFT,
	ACT_EDIT_RIGHT,
	ACT_EDIT_HOME,
	ACT_EDIT_END,
	ACT_EDIT_BACKSPACE,
	ACT_EDIT_DELETE,
	ACT_EDIT_CLEAR,
	ACT_EDIT_KILL_END,
	ACT_EDIT_DELETE_WORD,
} view_action;

/* Where a binding applies (a bit set). */
enum {
	KC_INPUT = 1,	 /* typing in the input line */
	KC_MAP = 2,	 /* moving over the heatmap */
	KC_OVERVIEW = 4, /* the overview of all heads */
	KC_ALL = 7,
};

typedef struct key_binding {
	int key; /* a character, or a KEY_* code when is_code */
	bool is_code;
	unsigned ctx; /* KC_* */
	view_action act;
	const char *name; /* as the help screen shows it */
	const char *help; /* NULL: another key for the entry above, same act (test_keys) */
} key_binding;

/* First match wins; within a context a key appears once. */
// clang-format off
static const key_binding view_keys[] = {
	/* Everywhere. */
	{KEY_F(1), true, KC_ALL, ACT_HELP, "F1", "help (this screen)"},
	{CTRL('q'), false, KC_ALL, ACT_QUIT, "Ctrl-Q", "quit"},
	{KEY_F(10), true, KC_ALL, ACT_QUIT, "F10", NULL},
	{CTRL('l'), false, KC_ALL, ACT_REDRAW, "Ctrl-L", "redraw the screen"},
	{KEY_F(3), true, KC_ALL, ACT_OVERVIEW, "F3", "overview of all heads (open/close)"},
	{'\t', false, KC_INPUT | KC_MAP, ACT_NEXT_HEAD, "Tab", "next head"},
	{KEY_BTAB, true, KC_INPUT | KC_MAP, ACT_PREV_HEAD, "Shift-Tab", "previous head"},
	{CTRL('n'), false, KC_INPUT | KC_MAP, ACT_NEXT_LAYER, "Ctrl-N", "next layer"},
	{CTRL('p'), false, KC_INPUT | KC_MAP, ACT_PREV_LAYER, "Ctrl-P", "previous layer"},
	{KEY_UP, true, KC_INPUT | KC_MAP, ACT_UP, "Up", "previous Query row"},
	{KEY_DOWN, true, KC_INPUT | KC_MAP, ACT_DOWN, "Down", "next Query row"},
	{KEY_PPAGE, true, KC_INPUT | KC_MAP, ACT_PAGE_UP, "PageUp", "Query rows: a page up"},
	{KEY_NPAGE, true, KC_INPUT | KC_MAP, ACT_PAGE_DOWN, "PageDown", "Query rows: a page down"},
	{KEY_F(2), true, KC_INPUT | KC_MAP, ACT_VALUES, "F2", "values mode: weights in the cells"},

	/* The input line. */
	{'\r', false, KC_INPUT, ACT_FOCUS_MAP, "Enter", "go to the heatmap (keys below)"},
	{'\n', false, KC_INPUT, ACT_FOCUS_MAP, "Ctrl-J", NULL},
	{KEY_ENTER, true, KC_INPUT, ACT_FOCUS_MAP, NULL, NULL},
	{27, false, KC_INPUT, ACT_FOCUS_MAP, "Esc", NULL},
	{KEY_LEFT, true, KC_INPUT, ACT_EDIT_LEFT, "Left", "cursor a character left"},
	{CTRL('b'), false, KC_INPUT, ACT_EDIT_LEFT, "Ctrl-B", NULL},
	{KEY_RIGHT, true, KC_INPUT, ACT_EDIT_RIGHT, "Right", "cursor a character right"},
	{CTRL('f'), false, KC_INPUT, ACT_EDIT_RIGHT, "Ctrl-F", NULL},
	{KEY_HOME, true, KC_INPUT, ACT_EDIT_HOME, "Home", "start of the line"},
	{CTRL('a'), false, KC_INPUT, ACT_EDIT_HOME, "Ctrl-A", NULL},
	{KEY_END, true, KC_INPUT, ACT_EDIT_END, "End", "end of the line"},
	{CTRL('e'), false, KC_INPUT, ACT_EDIT_END, "Ctrl-E", NULL},
	{KEY_BACKSPACE, true, KC_INPUT, ACT_EDIT_BACKSPACE, "Backspace",
	 "delete the character before"},
	{127, false, KC_INPUT, ACT_EDIT_BACKSPACE, NULL, NULL},
	{CTRL('h'), false, KC_INPUT, ACT_EDIT_BACKSPACE, "Ctrl-H", NULL},
	{KEY_DC, true, KC_INPUT, ACT_EDIT_DELETE, "Delete", "delete the character at"},
	{CTRL('d'), false, KC_INPUT, ACT_EDIT_DELETE, "Ctrl-D", NULL},
	{CTRL('u'), false, KC_INPUT, ACT_EDIT_CLEAR, "Ctrl-U", "clear the line"},
	{CTRL('k'), false, KC_INPUT, ACT_EDIT_KILL_END, "Ctrl-K", "delete to the end"},
	{CTRL('w'), false, KC_INPUT, ACT_EDIT_DELETE_WORD, "Ctrl-W",
	 "delete the word before"},

	/* The heatmap. */
	{'i', false, KC_MAP, ACT_FOCUS_INPUT, "i", "edit the text again"},
	{'/', false, KC_MAP, ACT_FOCUS_INPUT, "/", NULL},
	{27, false, KC_MAP, ACT_FOCUS_INPUT, "Esc", NULL},
	{'\r', false, KC_MAP, ACT_FOCUS_INPUT, "Enter", NULL},
	{'q', false, KC_MAP, ACT_QUIT, "q", "quit"},
	{'?', false, KC_MAP, ACT_HELP, "?", "help"},
	{'k', false, KC_MAP, ACT_UP, "k", "previous Query row"},
	{'j', false, KC_MAP, ACT_DOWN, "j", "next Query row"},
	{'h', false, KC_MAP, ACT_LEFT, "h", "previous Key column"},
	{KEY_LEFT, true, KC_MAP, ACT_LEFT, "Left", NULL},
	{'l', false, KC_MAP, ACT_RIGHT, "l", "next Key column"},
	{KEY_RIGHT, true, KC_MAP, ACT_RIGHT, "Right", NULL},
	{'g', false, KC_MAP, ACT_FIRST_ROW, "g", "first Query row"},
	{'G', false, KC_MAP, ACT_LAST_ROW, "G", "last Query row"},
	{'^', false, KC_MAP, ACT_FIRST_COL, "^", "first Key column"},
	{KEY_HOME, true, KC_MAP, ACT_FIRST_COL, "Home", NULL},
	{'$', false, KC_MAP, ACT_LAST_COL, "$", "last Key column"},
	{KEY_END, true, KC_MAP, ACT_LAST_COL, "End", NULL},
	{' ', false, KC_MAP, ACT_PAGE_DOWN, "Space", "Query rows: a page down"},
	{'b', false, KC_MAP, ACT_PAGE_UP, "b", "Query rows: a page up"},
	{']', false, KC_MAP, ACT_NEXT_LAYER, "]", "next layer"},
	{'[', false, KC_MAP, ACT_PREV_LAYER, "[", "previous layer"},
	{'0', false, KC_MAP, ACT_HEAD_NUMBER, "0..9", "head 0..9, from 0 as in --dump"},
	{'1', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'2', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'3', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'4', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'5', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'6', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'7', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'8', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'9', false, KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{'v', false, KC_MAP, ACT_VALUES, "v", "values mode (as F2)"},
	{'o', false, KC_MAP, ACT_OVERVIEW, "o", "overview of all heads (as F3)"},

	/* The overview. */
	{'k', false, KC_OVERVIEW, ACT_UP, "k", "select the head above"},
	{KEY_UP, true, KC_OVERVIEW, ACT_UP, "Up", NULL},
	{'j', false, KC_OVERVIEW, ACT_DOWN, "j", "select the head below"},
	{KEY_DOWN, true, KC_OVERVIEW, ACT_DOWN, "Down", NULL},
	{'h', false, KC_OVERVIEW, ACT_LEFT, "h", "select the head on the left"},
	{KEY_LEFT, true, KC_OVERVIEW, ACT_LEFT, "Left", NULL},
	{KEY_BTAB, true, KC_OVERVIEW, ACT_LEFT, "Shift-Tab", NULL},
	{'l', false, KC_OVERVIEW, ACT_RIGHT, "l", "select the head on the right"},
	{KEY_RIGHT, true, KC_OVERVIEW, ACT_RIGHT, "Right", NULL},
	{'\t', false, KC_OVERVIEW, ACT_RIGHT, "Tab", NULL},
	{'\r', false, KC_OVERVIEW, ACT_OPEN, "Enter", "open the selected head"},
	{KEY_ENTER, true, KC_OVERVIEW, ACT_OPEN, NULL, NULL},
	{'o', false, KC_OVERVIEW, ACT_OVERVIEW, "o", "close the overview"},
	{27, false, KC_OVERVIEW, ACT_OVERVIEW, "Esc", NULL},
	{'q', false, KC_OVERVIEW, ACT_QUIT, "q", "quit"},
	{'?', false, KC_OVERVIEW, ACT_HELP, "?", "help"},
};
// clang-format on

#define VIEW_NKEYS (sizeof view_keys / sizeof view_keys[0])

/* Mouse, described for the help screen (the handling is in view.c). */
static const char *const view_mouse_help[][2] = {
    {"click a cell", "move the cursor there"},
    {"click a label", "its Query row or Key column"},
    {"click the text", "edit the text there"},
    {"wheel", "scroll the Query rows"},
    {"click a head", "overview: select it; again: open"},
};

#endif
