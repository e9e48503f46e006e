/* The screens of the view share one table of operations, as tig's views do,
 * and each keeps its own state (tig's view_ops.private_size): the view
 * allocates state_size zeroed bytes for it at the start (screen_state), calls
 * init and, at the end, finish. Adding a screen is adding a file with its
 * screen_ops, its state struct, a screen_id and a focus. The main loop asks
 * the screen of the current focus to lay itself out, draw and take the keys,
 * actions and clicks that are its own. */
#ifndef ATTNVIEW_VIEW_SCREEN_H
#define ATTNVIEW_VIEW_SCREEN_H

#include "state.h"

typedef struct screen_ops {
	const char *name;  /* on the status line: "MAP" */
	unsigned keys;	   /* the KC_* context of its bindings in keys.h */
	bool text_visible; /* the input and info lines are drawn above it */
	size_t state_size; /* its own state, at screen_state(v, id) */
	/* After the state is zeroed (NULL: zeroed is ready); false: out of
	 * memory. finish frees what init and the screen allocated (NULL:
	 * nothing). */
	bool (*init)(view *v, void *state);
	void (*finish)(void *state);
	/* Geometry for the terminal's size (LINES x COLS) and the result. */
	void (*layout)(view *v);
	void (*draw)(view *v);
	/* A key or click the screen handles itself (before the key table);
	 * NULL or false: the table decides. */
	bool (*key)(view *v, int ch, bool is_code);
	/* An action of the key table that is its own (the overview's arrows);
	 * NULL or false: the view's. */
	bool (*action)(view *v, view_action act);
	void (*mouse)(view *v, const MEVENT *ev);
} screen_ops;

extern const screen_ops map_screen, overview_screen, help_screen, timeline_screen;
extern const screen_ops *const view_screens[SCREEN_N];

/* The screen that has the focus (F_INPUT and F_MAP share the map). */
const screen_ops *view_screen(const view *v);

/* Every screen's state allocated and initialised; all freed. */
bool screens_init(view *v, av_error *err);
void screens_finish(view *v);

/* The overview (overview.c): open it on the current head, or go back to
 * where it was opened from (F3); open it at the start (--show overview);
 * forget the roles of the last model (a reload). */
void overview_toggle(view *v);
void overview_open(view *v, focus back);
void overview_model_changed(view *v);
/* F6 in the overview: a cell a token (tiles scrolled), or every head fit. */
void overview_toggle_cells(view *v);
/* The side of an overview tile's square grid of pooled cells on a screen of
 * lines x cols, for L x H heads over n tokens; 0 when the grid does not fit.
 * halves: two cells a line (colour), else a framed tile of shades. */
int overview_tile_side(int lines, int cols, int L, int H, int n, bool halves);

/* The timeline (timeline_screen.c): open it, or go back to where it was
 * opened from (Alt-H, Esc). */
void timeline_screen_toggle(view *v);

/* The help (help.c): open it over the current screen; where it returns. */
void help_open(view *v);
focus help_returns_to(const view *v);

#endif
