/* The details panel of the map screen. */
#ifndef ATTNVIEW_VIEW_PANEL_H
#define ATTNVIEW_VIEW_PANEL_H

#include "state.h"

#include <stdarg.h>

/* Lines of a panel page are written from y on while they fit above ymax,
 * x and w wide: pen_line one line (and the next y), pen_wrapped a text over
 * as many lines as it needs, broken after a space where there is one
 * (Chinese has none: anywhere). */
typedef struct pen {
	int x, w, y, ymax;
} pen;
void pen_vline(pen *p, style s, const char *fmt, va_list ap);
void pen_line(pen *p, style s, const char *fmt, ...) AV_PRINTF(3, 4);
void pen_wrapped(pen *p, style s, const char *text);
/* A grid's key on one line at y from x, w wide: "██ pos  ██ neg  · small",
 * the blocks in the colours of a positive and a negative value. */
void sign_key(view *v, int y, int x, int w, const char *pos, const char *neg);

/* What the matrix on the map does on this text (its statistics, and for
 * characters its roles in v->roles), made once per matrix: what the panel
 * and, in the word view, the heading say. */
const head_stats *panel_map_stats(view *v, const heat_src *s);
/* The word view's pattern (head_pattern) as the heading and the panel say
 * it: a column names its word and its rows, "column on “fruit” (11 of 17
 * rows)". */
void panel_words_pattern(view *v, const heat_src *s, char *out, size_t size);

/* Draws the panel in v->mg's panel area (nothing if it has none). */
void panel_draw(view *v);

/* What every page's state starts with: where its worker job stands. */
typedef struct page_job {
	bool valid; /* the page's numbers came, for seq */
	bool asked; /* ... asked for seq, not yet come */
	uint64_t seq;
} page_job;

/* A page of the details panel (state.h lists them), as the screens are
 * (screen.h): its key shows it, its own state (state_size zeroed bytes,
 * starting with a page_job) asks the worker for what it shows, takes the
 * answer and draws it. Adding a page is adding a file with its panel_page,
 * its row in PANEL_PAGES, its key's action (keys.h) and, for new numbers,
 * its kind of job (worker.h, worker_model.c). */
typedef struct panel_page {
	const char *name;  /* what its key says where it shows the panel: "circuits" */
	view_action act;   /* its key's action (keys.h) */
	worker_job_kind job; /* the kind of job whose answers it takes */
	/* The numbers are the model's (circuits): a new text keeps them. */
	bool per_model;
	bool ablation; /* the ablation's lines (Alt-A) go below it */
	size_t state_size;
	/* After the state is zeroed (NULL: zeroed is ready); false: out of
	 * memory. finish frees what the page allocated (NULL: nothing). */
	bool (*init)(view *v, void *state);
	void (*finish)(void *state);
	/* While the page is on: ask the worker (worker_post_job) for what it
	 * shows of the result on screen, unless that is there or asked for. */
	void (*request)(view *v, void *state);
	/* The worker's answer to a job of its kind for the result on screen
	 * (j->ok): kept if it is still what the page asked for (what it keeps
	 * of j's arrays, set NULL in j). */
	void (*take)(view *v, void *state, worker_job_result *j);
	/* Another model: what depends on its sizes (NULL: nothing but the
	 * page_job, which the panel clears). */
	void (*model_changed)(view *v, void *state);
	/* From p->y on, the matrix on the map s. */
	void (*draw)(view *v, void *state, pen *p, const heat_src *s);
} panel_page;

#define PAGE_OPS_(id, ops) extern const panel_page ops;
PANEL_PAGES(PAGE_OPS_)
#undef PAGE_OPS_
extern const panel_page *const panel_pages[PAGE_N];

/* Every page's state made (false: out of memory, err says so) and freed;
 * the page on asks for its numbers; a job's answer given to the page of its
 * kind (false: none takes it); a new result (not a partial one completed)
 * or a new model forgotten; whether a page waits for the worker. */
bool pages_init(view *v, av_error *err);
void pages_finish(view *v);
void pages_request(view *v);
bool pages_take(view *v, worker_job_result *j);
void pages_new_result(view *v);
void pages_new_model(view *v);
bool pages_waiting(const view *v);

/* The ablation's lines (panel.c): which heads are off, the loss. */
void ablation_lines(view *v, pen *p);

/* The patching page (panel_patch.c): its two characters (--targets, Alt-D;
 * given false: the default) and --compare's text; what it showed is
 * computed again. */
void patch_set_targets(view *v, bool given, const uint32_t targets[2]);
bool patch_set_compare(view *v, const char *text, av_error *err);

#endif
