/* The screens of the view share one table of operations, as tig's views do:
 * adding a screen is adding a file with its screen_ops and a focus for it.
 * The main loop asks the screen of the current focus to lay itself out, draw
 * and take the keys and clicks that are its own. */
#ifndef ATTNVIEW_VIEW_SCREEN_H
#define ATTNVIEW_VIEW_SCREEN_H

#include "state.h"

typedef struct screen_ops {
	const char *name;  /* on the status line: "MAP" */
	unsigned keys;	   /* the KC_* context of its bindings in keys.h */
	bool text_visible; /* the input and info lines are drawn above it */
	/* Geometry for the terminal's size (LINES x COLS) and the result. */
	void (*layout)(view *v);
	void (*draw)(view *v);
	/* A key or click the screen handles itself (before the key table);
	 * NULL or false: the table decides. */
	bool (*key)(view *v, int ch, bool is_code);
	void (*mouse)(view *v, const MEVENT *ev);
} screen_ops;

extern const screen_ops map_screen, overview_screen, help_screen;

/* The screen that has the focus (F_INPUT and F_MAP share the map). */
const screen_ops *view_screen(const view *v);

/* help.c: the help lines, built once from keys.h. */
bool help_build(view *v);

#endif
