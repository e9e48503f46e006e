/* The screens of the view share one table of operations, as tig's views do,
 * and each keeps its own state (tig's view_ops.private_size): the view
 * allocates state_size zeroed bytes for it at the start (screen_state), calls
 * init and, at the end, finish. The screens are listed once, a row each, in
 * keys.h (VIEW_SCREENS): their ids, key contexts and this table follow from
 * it. Adding a screen is adding a file with its screen_ops and its state
 * struct, its row and its keys. The main loop asks the screen that has the
 * focus to lay itself out, draw and take the keys, actions and clicks that
 * are its own. */
#ifndef ATTNVIEW_VIEW_SCREEN_H
#define ATTNVIEW_VIEW_SCREEN_H

#include "state.h"

#include "attnview/figure.h"

typedef struct screen_ops {
	const char *name;  /* on the status line: "MAP" */
	const char *hint;  /* ... and what its keys do there, the way back first */
	bool text_visible; /* the input and info lines are drawn above it */
	/* It shows every head at once: a text is computed with every head's
	 * weights and roles (worker_text_opts), and a result that came without
	 * them asks for the roles (JOB_ROLES). */
	bool every_head;
	/* The action that opens it and, on it, goes back to where it was
	 * opened (ACT_NONE: none: the map is where the others go back to);
	 * what it does as it opens (NULL: nothing). */
	view_action toggle;
	void (*opened)(view *v);
	/* It passes (the help): a screen opened from it goes back where it
	 * would have. */
	bool passing;
	size_t state_size; /* its own state, at v->screen[id] */
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
	/* An action of the key table that is its own (the overview's arrows,
	 * its scale); NULL or false: the view's. */
	bool (*action)(view *v, view_action act);
	void (*mouse)(view *v, const MEVENT *ev);
	/* The figure key (Ctrl-S, figure_key.c): the stem of a new file's name
	 * for what it shows ("attnview-L0H1"), or false with a notice saying
	 * why there is nothing to write; then the figure written to path. NULL:
	 * the screen has no figure. */
	bool (*figure_name)(view *v, char *stem, size_t size);
	bool (*figure)(view *v, const char *path, bool replace, av_error *err);
} screen_ops;

#define SCREEN_OPS_(id, ops, title) extern const screen_ops ops;
VIEW_SCREENS(SCREEN_OPS_)
#undef SCREEN_OPS_
extern const screen_ops *const view_screens[SCREEN_N];

/* The screen that has the focus. */
static inline const screen_ops *view_screen(const view *v)
{
	return view_screens[v->focus.screen];
}

/* Every screen's state allocated and initialised; all freed. */
bool screens_init(view *v, av_error *err);
void screens_finish(view *v);
/* Open a screen, remembering where it goes back to; go back from the one
 * on display; the screen an action toggles (its key), opened or left
 * (false: the action toggles none). */
void screen_open(view *v, screen_id id);
void screen_back(view *v);
bool screen_toggle(view *v, view_action act);

/* What the figure key writes for the map and the overview (figure_key.c):
 * what --export draws for q (its text, model name and ablation filled in)
 * from the result on screen; the map's matrix as it is drawn, a comparison
 * with the pinned map included. */
bool figure_write_result(view *v, fig_request q, const char *path, bool replace,
			 av_error *err);
bool figure_write_map(view *v, const char *path, bool replace, av_error *err);
/* The model's name in a figure's titles ("model" when it has none). */
const char *figure_model_name(const view *v);

/* The overview (overview.c): forget the roles of the last model (a
 * reload); the side of a tile's square grid of pooled cells on a screen of
 * lines x cols, for L x H heads over n tokens, 0 when the grid does not fit
 * (halves: two cells a line (colour), else a framed tile of shades). */
void overview_model_changed(view *v);
int overview_tile_side(int lines, int cols, int L, int H, int n, bool halves);

#endif
