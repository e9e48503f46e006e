/* Every key of the interactive view and every default it uses, in one place.
 * The dispatcher, the help screen and the KEYS section of man/attnview.1 follow this
 * table; change a binding here and nowhere else. Include only from the view
 * (it needs curses.h for the KEY_* codes).
 *
 * The rule a person can rely on: a printable key always types into the text,
 * wherever the text is shown (not in the help and the training timeline,
 * which hide it; test_keys checks no printable key is bound). Commands
 * are function keys, Ctrl- and Alt- keys, arrows and the like; quitting takes
 * Ctrl-Q or F10, and asks first when the text would be lost. */
#ifndef ATTNVIEW_KEYS_H
#define ATTNVIEW_KEYS_H

#include "attnview/i18n.h"

#include <stdbool.h>

/* Defaults. */
#define VIEW_CELL_W	   2  /* heatmap cell, columns: one CJK character */
#define VIEW_CELL_MAX_W	   8  /* cells widen up to this when the text fits */
#define VIEW_CELL_MAX_H	   3  /* ... and grow to this many lines */
#define VIEW_VALUE_CELL_W  5  /* values mode: " .123" */
#define VIEW_WORD_CELL_W   5  /* word view: columns at least this wide for long words */
#define VIEW_BAR_W	   10 /* colour bar: edge marker, gap, bar, ticks, gap */
#define VIEW_PANEL_W	   34 /* details panel on the right */
#define VIEW_MIN_MAP_W	   40 /* the panel is shown only if the map keeps this */
/* A terminal cols wide has room for the panel beside the map. */
#define VIEW_PANEL_FITS(cols) ((cols)-VIEW_PANEL_W - 1 >= VIEW_MIN_MAP_W)
#define VIEW_MIN_COLS	   50 /* smaller terminals get a message instead */
#define VIEW_MIN_LINES	   14
#define VIEW_PRED_DELAY_MS 50	     /* ask for predictions this long after a result */
#define VIEW_PRED_RETRY_MS 200     /* look again this often at a prediction not answered */
#define VIEW_BUSY_MS	   100	     /* show "computing" when a result takes longer */
#define VIEW_WATCH_MS	   500	     /* look at the model file this often */
#define VIEW_WRITE_MS	   80	     /* the model writes a character at most this often */
#define VIEW_TOPK	   5	     /* top keys and top predictions in the panel */
#define VIEW_RAMP_LEVELS   16	     /* steps of the colour ramp on 256 colours */
#define VIEW_ESCDELAY_MS   25	     /* wait for the rest of an escape sequence */
#define VIEW_MAX_LINE	   4096	     /* codepoints the input line holds */
#define VIEW_MAX_PATH	   1024	     /* codepoints of a figure's file name */
#define VIEW_OV_MIN_BOX_W  4	     /* overview: smallest heatmap, columns */
#define VIEW_OV_MIN_BOX_H  3	     /* ... and lines, with its title */
#define VIEW_OV_BAR_W	   7	     /* overview: its colour bar, gap, bar, ticks */
#define VIEW_HELP_KEYS_W   22	     /* help: a key group's names wrap past this */
#define VIEW_DEFAULT_SCALE SCALE_DEFAULT_MAP /* why: man/attnview.1, COLOUR SCALES */
#define VIEW_OV_DEFAULT_SCALE SCALE_DEFAULT_OVERVIEW /* the overview's (scale.h) */

/* Function keys ncurses does not know: bracketed paste, defined at start-up
 * with define_key for "\e[200~" and "\e[201~". */
#define VIEW_KEY_PASTE_BEGIN (KEY_MAX + 1)
#define VIEW_KEY_PASTE_END   (KEY_MAX + 2)

#define CTRL(c) ((c)&0x1f)
/* Alt-c: Esc followed at once by c (how terminals send it). */
#define ALT_BIT 0x40000000
#define ALT(c)	(ALT_BIT | (c))

typedef enum view_action {
	ACT_NONE = 0,
	ACT_QUIT,
	ACT_HELP,
	ACT_REDRAW,
	ACT_FOCUS_MAP,	 /* leave the input line for the heatmap */
	ACT_FOCUS_INPUT, /* back to the input line */
	ACT_OVERVIEW,	 /* open or close the overview of all heads */
	ACT_TIMELINE,	 /* open or close the training timeline */
	ACT_VALUES,	 /* toggle printing the weights in the cells */
	ACT_SCALE,	 /* next colour scale: fixed, head, row, log, lift */
	ACT_PANEL,	 /* hide or show the details panel */
	ACT_CELLS,	 /* cell size: fit the screen, scroll, compact */
	ACT_RAMP,	 /* colour ramp: viridis, cividis */
	ACT_WORDS,	 /* word view on or off */
	ACT_PIN,	 /* compare: pin what the map shows, or unpin */
	ACT_CONTRIB,	 /* the map shows value contributions instead of weights */
	ACT_BREAKDOWN,	 /* the panel shows the q·k breakdown of the cursor cell */
	ACT_WHY,	 /* the panel shows the logit lens and the heads' logit parts */
	ACT_CIRCUITS,	 /* the panel shows the head's circuits from its weights */
	ACT_FAITH,	 /* the panel shows the faithfulness meter at the Query row */
	ACT_PATCH,	 /* the panel shows patching from the pinned text */
	ACT_TARGETS,	 /* patching's two characters: a prompt */
	ACT_ABLATE,	 /* switch the head on the map off, or on again */
	ACT_FIGURE,	 /* write what is shown as a figure (a prompt for the name) */
	ACT_WRITE,	 /* the model writes on from the end of the text, or stops */
	ACT_TEMPERATURE, /* the next temperature for writing */
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
	ACT_HEAD_NUMBER, /* Alt and a digit: that head, from 0 as --dump counts */
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
	ACT_COUNT
} view_action;

/* The screens, one row each (as tig's VIEW_INFO): X(ID, ops, keys_title).
 * ID names the screen (SCREEN_ID, its state at v->screen[SCREEN_ID]) and the
 * context of its bindings below (KC_ID); ops is its screen_ops (screen.h, in
 * the screen's own file); keys_title heads its keys in the help. */
#define VIEW_SCREENS(X)                                                                    \
	X(MAP, map_screen, N_("Heatmap (after Enter; typing goes back to the text)"))      \
	X(OVERVIEW, overview_screen, N_("Overview (typing edits the text)"))               \
	X(HELP, help_screen, NULL)                                                         \
	X(TIMELINE, timeline_screen, N_("Training timeline (Alt-H)"))

typedef enum screen_id {
#define SCREEN_ID_(id, ops, title) SCREEN_##id,
	VIEW_SCREENS(SCREEN_ID_)
#undef SCREEN_ID_
	SCREEN_N
} screen_id;

/* Where a binding applies (a bit set): the input line, or a screen (the
 * help takes its keys itself: only quitting reaches the table there). */
enum {
	KC_INPUT = 1, /* typing in the input line */
	KC_TEXT = 2,  /* with KC_ALL: editing the text, in every focus (its own help section) */
#define KC_ID_(id, ops, title) KC_##id = 4 << SCREEN_##id,
	VIEW_SCREENS(KC_ID_)
#undef KC_ID_
	KC_ALL = KC_INPUT | ((4 << SCREEN_N) - 4),
};
#define KC_OF(screen) (4u << (screen)) /* the context of a screen_id */

typedef struct key_binding {
	int key; /* a character (ALT(c) for Alt-c), or a KEY_* code when is_code */
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
	{KEY_F(1), true, KC_ALL, ACT_HELP, "F1", N_("help (this screen)")},
	{ALT('?'), false, KC_ALL, ACT_HELP, "Alt-?", NULL},
	{CTRL('q'), false, KC_ALL, ACT_QUIT, "Ctrl-Q", N_("quit (asks first if there is text)")},
	{KEY_F(10), true, KC_ALL, ACT_QUIT, "F10", NULL},
	{CTRL('l'), false, KC_ALL, ACT_REDRAW, "Ctrl-L", N_("redraw the screen")},
	{KEY_F(2), true, KC_ALL, ACT_VALUES, "F2", N_("values mode: weights in the cells")},
	{ALT('v'), false, KC_ALL, ACT_VALUES, "Alt-V", NULL},
	{KEY_F(3), true, KC_ALL, ACT_OVERVIEW, "F3", N_("overview of all heads (open/close)")},
	{ALT('o'), false, KC_ALL, ACT_OVERVIEW, "Alt-O", NULL},
	{ALT('h'), false, KC_ALL, ACT_TIMELINE, "Alt-H",
	 N_("training timeline (open/close)")},
	{KEY_F(4), true, KC_ALL, ACT_SCALE, "F4", N_("colour scale: fixed/head/row/log/lift")},
	{ALT('s'), false, KC_ALL, ACT_SCALE, "Alt-S", NULL},
	{KEY_F(5), true, KC_ALL, ACT_PANEL, "F5", N_("hide or show the details panel")},
	{ALT('p'), false, KC_ALL, ACT_PANEL, "Alt-P", NULL},
	{KEY_F(6), true, KC_ALL, ACT_CELLS, "F6", N_("cells: fit, scroll, compact; overview: 1:1")},
	{ALT('c'), false, KC_ALL, ACT_CELLS, "Alt-C", NULL},
	{KEY_F(7), true, KC_ALL, ACT_RAMP, "F7", N_("colours: viridis, cividis")},
	{ALT('m'), false, KC_ALL, ACT_RAMP, "Alt-M", NULL},
	{KEY_F(8), true, KC_ALL, ACT_WORDS, "F8", N_("word view (| marks words)")},
	{ALT('w'), false, KC_ALL, ACT_WORDS, "Alt-W", NULL},
	{KEY_F(9), true, KC_ALL, ACT_PIN, "F9", N_("compare: pin this map / unpin")},
	{ALT('='), false, KC_ALL, ACT_PIN, "Alt-=", NULL},
	{KEY_F(11), true, KC_ALL, ACT_CONTRIB, "F11", N_("value contributions |A v W_O|")},
	{ALT('n'), false, KC_ALL, ACT_CONTRIB, "Alt-N", NULL},
	{KEY_F(12), true, KC_ALL, ACT_BREAKDOWN, "F12", N_("panel: q·k breakdown of the cell")},
	{ALT('b'), false, KC_ALL, ACT_BREAKDOWN, "Alt-B", NULL},
	{ALT('l'), false, KC_ALL, ACT_WHY, "Alt-L",
	 N_("panel: logit lens, heads' parts")},
	{ALT('i'), false, KC_ALL, ACT_CIRCUITS, "Alt-I", N_("panel: the head's circuits")},
	{ALT('u'), false, KC_ALL, ACT_FAITH, "Alt-U", N_("panel: faithfulness meter")},
	{ALT('x'), false, KC_ALL, ACT_PATCH, "Alt-X", N_("panel: patching from the pin")},
	{ALT('d'), false, KC_ALL, ACT_TARGETS, "Alt-D", N_("patching: its two characters")},
	{ALT('a'), false, KC_ALL, ACT_ABLATE, "Alt-A", N_("ablation: this head off / on")},
	{CTRL('s'), false, KC_ALL, ACT_FIGURE, "Ctrl-S", N_("write a figure (svg, png, pdf)")},
	{ALT('f'), false, KC_ALL, ACT_FIGURE, "Alt-F", NULL},
	{CTRL('g'), false, KC_ALL, ACT_WRITE, "Ctrl-G", N_("the model writes on (causal models)")},
	{ALT('g'), false, KC_ALL, ACT_WRITE, "Alt-G", NULL},
	{ALT('t'), false, KC_ALL, ACT_TEMPERATURE, "Alt-T", N_("writing: greedy, temperatures")},
	{'\t', false, KC_INPUT | KC_MAP, ACT_NEXT_HEAD, "Tab",
	 N_("next head, then mean/max/rollout/all")},
	{KEY_BTAB, true, KC_INPUT | KC_MAP, ACT_PREV_HEAD, "Shift-Tab", N_("previous head")},
	{CTRL('n'), false, KC_INPUT | KC_MAP, ACT_NEXT_LAYER, "Ctrl-N", N_("next layer")},
	{CTRL('p'), false, KC_INPUT | KC_MAP, ACT_PREV_LAYER, "Ctrl-P", N_("previous layer")},
	{ALT('0'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, "Alt-0..9",
	 N_("head 0..9, from 0 as in --dump")},
	{ALT('1'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('2'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('3'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('4'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('5'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('6'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('7'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('8'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{ALT('9'), false, KC_INPUT | KC_MAP, ACT_HEAD_NUMBER, NULL, NULL},
	{KEY_UP, true, KC_INPUT | KC_MAP, ACT_UP, "Up", N_("previous Query row")},
	{KEY_DOWN, true, KC_INPUT | KC_MAP, ACT_DOWN, "Down", N_("next Query row")},
	{KEY_PPAGE, true, KC_INPUT | KC_MAP, ACT_PAGE_UP, "PageUp", N_("Query rows: a page up")},
	{KEY_NPAGE, true, KC_INPUT | KC_MAP, ACT_PAGE_DOWN, "PageDown",
	 N_("Query rows: a page down")},
	{KEY_SHOME, true, KC_INPUT | KC_MAP, ACT_FIRST_ROW, "Shift-Home", N_("first Query row")},
	{KEY_SEND, true, KC_INPUT | KC_MAP, ACT_LAST_ROW, "Shift-End", N_("last Query row")},

	/* The input line. */
	{'\r', false, KC_INPUT, ACT_FOCUS_MAP, "Enter", N_("the arrows move over the heatmap")},
	{'\n', false, KC_INPUT, ACT_FOCUS_MAP, "Ctrl-J", NULL},
	{KEY_ENTER, true, KC_INPUT, ACT_FOCUS_MAP, NULL, NULL},
	{27, false, KC_INPUT, ACT_FOCUS_MAP, "Esc", NULL},
	{KEY_LEFT, true, KC_INPUT, ACT_EDIT_LEFT, "Left", N_("cursor a character left")},
	{KEY_RIGHT, true, KC_INPUT, ACT_EDIT_RIGHT, "Right", N_("cursor a character right")},
	{KEY_HOME, true, KC_INPUT, ACT_EDIT_HOME, "Home", N_("start of the line")},
	{KEY_END, true, KC_INPUT, ACT_EDIT_END, "End", N_("end of the line")},
	{KEY_BACKSPACE, true, KC_INPUT, ACT_EDIT_BACKSPACE, "Backspace",
	 N_("delete the character before")},
	{127, false, KC_INPUT, ACT_EDIT_BACKSPACE, NULL, NULL},
	{KEY_DC, true, KC_INPUT, ACT_EDIT_DELETE, "Delete", N_("delete the character at")},

	/* Editing the text with Ctrl: the same in every focus. */
	{CTRL('b'), false, KC_ALL | KC_TEXT, ACT_EDIT_LEFT, "Ctrl-B",
	 N_("cursor a character left")},
	{CTRL('f'), false, KC_ALL | KC_TEXT, ACT_EDIT_RIGHT, "Ctrl-F",
	 N_("cursor a character right")},
	{CTRL('a'), false, KC_ALL | KC_TEXT, ACT_EDIT_HOME, "Ctrl-A", N_("start of the line")},
	{CTRL('e'), false, KC_ALL | KC_TEXT, ACT_EDIT_END, "Ctrl-E", N_("end of the line")},
	{CTRL('h'), false, KC_ALL | KC_TEXT, ACT_EDIT_BACKSPACE, "Ctrl-H",
	 N_("delete the character before")},
	{CTRL('d'), false, KC_ALL | KC_TEXT, ACT_EDIT_DELETE, "Ctrl-D",
	 N_("delete the character at")},
	{CTRL('u'), false, KC_ALL | KC_TEXT, ACT_EDIT_CLEAR, "Ctrl-U", N_("clear the line")},
	{CTRL('k'), false, KC_ALL | KC_TEXT, ACT_EDIT_KILL_END, "Ctrl-K", N_("delete to the end")},
	{CTRL('w'), false, KC_ALL | KC_TEXT, ACT_EDIT_DELETE_WORD, "Ctrl-W",
	 N_("delete the word before")},

	/* The heatmap (after Enter). Typing goes back to the text. */
	{27, false, KC_MAP, ACT_FOCUS_INPUT, "Esc", N_("back to the text cursor")},
	{'\r', false, KC_MAP, ACT_FOCUS_INPUT, "Enter", NULL},
	{KEY_ENTER, true, KC_MAP, ACT_FOCUS_INPUT, NULL, NULL},
	{KEY_LEFT, true, KC_MAP, ACT_LEFT, "Left", N_("previous Key column")},
	{KEY_RIGHT, true, KC_MAP, ACT_RIGHT, "Right", N_("next Key column")},
	{KEY_HOME, true, KC_MAP, ACT_FIRST_COL, "Home", N_("first Key column")},
	{KEY_END, true, KC_MAP, ACT_LAST_COL, "End", N_("last Key column")},
	{KEY_BACKSPACE, true, KC_MAP, ACT_EDIT_BACKSPACE, "Backspace",
	 N_("delete a character of the text")},
	{127, false, KC_MAP, ACT_EDIT_BACKSPACE, NULL, NULL},

	/* The overview. Typing edits the text; the tiles follow. */
	{KEY_UP, true, KC_OVERVIEW, ACT_UP, "Up", N_("select the head above")},
	{KEY_DOWN, true, KC_OVERVIEW, ACT_DOWN, "Down", N_("select the head below")},
	{KEY_LEFT, true, KC_OVERVIEW, ACT_LEFT, "Left", N_("select the head on the left")},
	{KEY_BTAB, true, KC_OVERVIEW, ACT_LEFT, "Shift-Tab", NULL},
	{KEY_RIGHT, true, KC_OVERVIEW, ACT_RIGHT, "Right", N_("select the head on the right")},
	{'\t', false, KC_OVERVIEW, ACT_RIGHT, "Tab", NULL},
	{'\r', false, KC_OVERVIEW, ACT_OPEN, "Enter", N_("open the selected head")},
	{KEY_ENTER, true, KC_OVERVIEW, ACT_OPEN, NULL, NULL},
	{27, false, KC_OVERVIEW, ACT_OVERVIEW, "Esc", N_("close the overview")},
	{KEY_BACKSPACE, true, KC_OVERVIEW, ACT_EDIT_BACKSPACE, "Backspace",
	 N_("delete a character of the text")},
	{127, false, KC_OVERVIEW, ACT_EDIT_BACKSPACE, NULL, NULL},

	/* The training timeline. */
	{KEY_LEFT, true, KC_TIMELINE, ACT_LEFT, "Left", N_("the recorded step before (also [)")},
	{KEY_RIGHT, true, KC_TIMELINE, ACT_RIGHT, "Right", N_("the recorded step after (also ])")},
	{KEY_HOME, true, KC_TIMELINE, ACT_FIRST_COL, "Home", N_("the first recorded step")},
	{KEY_END, true, KC_TIMELINE, ACT_LAST_COL, "End", N_("the last recorded step")},
	{KEY_UP, true, KC_TIMELINE, ACT_UP, "Up", N_("scroll the heads up")},
	{KEY_DOWN, true, KC_TIMELINE, ACT_DOWN, "Down", N_("scroll the heads down")},
	{'\r', false, KC_TIMELINE, ACT_OPEN, "Enter",
	 N_("view the model kept of the step (marked ◆); at the last step, the final model")},
	{KEY_ENTER, true, KC_TIMELINE, ACT_OPEN, NULL, NULL},
	{27, false, KC_TIMELINE, ACT_TIMELINE, "Esc", N_("close the timeline")},
};
// clang-format on

#define VIEW_NKEYS (sizeof view_keys / sizeof view_keys[0])

/* Mouse, described for the help screen (the handling is in actions.c and the
 * screens). */
static const char *const view_mouse_help[][2] = {
    {N_("click a cell"), N_("move the cursor there")},
    {N_("click a label"), N_("its Query row or Key column")},
    {N_("click the text"), N_("edit the text there")},
    {N_("wheel"), N_("scroll the Query rows")},
    {N_("click a head"), N_("overview: select it; again: open")},
};

#endif
