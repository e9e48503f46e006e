/* The view's state, shared by its files (never included outside src/view).
 *
 * Threads: everything here belongs to the interface thread. The worker
 * (worker.h) owns its own state and talks through worker_post_* and
 * worker_take_*; the interface thread never runs the model and the worker
 * never calls curses. */
#ifndef ATTNVIEW_VIEW_STATE_H
#define ATTNVIEW_VIEW_STATE_H

#include "attnview/analysis.h"
#include "attnview/colormap.h"
#include "attnview/explain.h"
#include "attnview/generate.h"
#include "attnview/scale.h"

#include "colors.h"
#include "draw.h"
#include "heatmap.h"
#include "matrix.h"
#include "keys.h"
#include "lineedit.h"
#include "view.h"
#include "worker.h"

#include <stdio.h>

/* Where the keys go: the screen on display (keys.h's list of screens, each
 * with its own state at v->screen[id]: screen.h) and, on the map, whether
 * the input line has them (typing) or the heatmap does. */
typedef struct focus {
	screen_id screen;
	bool typing; /* only on SCREEN_MAP */
} focus;
#define FOCUS_TYPING ((focus){SCREEN_MAP, true})
#define FOCUS_ON(id) ((focus){(id), false})

/* What tells one version of a file from the next. */
typedef struct file_stamp {
	uint64_t dev, ino, size, mtime_ns;
} file_stamp;

typedef struct watched {
	char path[4096];
	file_stamp st;
	bool ok; /* the file existed at the last look, with stamp st */
} watched;

/* The details panel's pages beside its first (the cell, the row's top keys,
 * the statistics, the predictions), one row each: X(ID, ops). ID names the
 * page (PAGE_ID, its state at v->pages[PAGE_ID]); ops is its panel_page
 * (panel.h, in the page's own file). */
#define PANEL_PAGES(X)                                                                     \
	X(BREAKDOWN, breakdown_page)                                                       \
	X(WHY, why_page)                                                                   \
	X(CIRCUITS, circuits_page)                                                         \
	X(FAITH, faith_page)                                                               \
	X(PATCH, patch_page)

typedef enum page_id {
#define PAGE_ID_(id, ops) PAGE_##id,
	PANEL_PAGES(PAGE_ID_)
#undef PAGE_ID_
	PAGE_N,
	PAGE_DETAILS = PAGE_N /* the first page, which needs no job */
} page_id;

/* Screen lines shared by the screens that show the text. */
enum { Y_INPUT = 0, Y_INFO = 1, Y_HEAD = 2, Y_BODY = 3 };

/* The map screen's geometry (map.c). */
typedef struct map_geom {
	int map_w;	      /* columns for the heatmap and its colour bar */
	int panel_x, panel_w; /* details panel; panel_w 0: none */
	heat_geom heat;
} map_geom;

enum { PRED_NONE = 0, PRED_HAVE = 2 };

struct screen_ops;

typedef struct view {
	const model *m; /* owned: the view destroys it (and its replacements) */
	worker *w;
	/* the model file and its checkpoint, watched (reload.c) */
	watched watch[2];
	bool watching; /* false: the built-in model */
	bool reloading;
	double watch_due;
	int reloads;
	int context, head_dim;

	/* the text */
	lineedit le;
	cp_buf cps;
	token *toks; /* [context] */
	int ntok, ntot;
	size_t cut_cp; /* input-line index from which the text is cut off */
	size_t text_given; /* characters --text had, when more than the line holds */
	uint64_t seq;  /* of the latest text */
	bool pending;  /* latest text posted, no result yet */
	double post_ms;
	bool busy_shown;

	/* the result on screen */
	bool have;
	uint64_t res_seq;
	attn_result r;	  /* r.partial: the layers on screen came before the rest */
	uint64_t res_gen; /* counts the results taken: what caches of r key on */
	double res_ms;
	char error[sizeof(av_error)];
	/* Every head's roles of r, [layer * heads + head], computed by the
	 * worker (worker_text_opts.roles, or JOB_ROLES for a result that came
	 * without them, asked for roles_seq), or NULL: read through
	 * view_roles_of. */
	role_scores *all_roles;
	bool roles_asked;
	uint64_t roles_seq;
	/* The heads a screen reads all of (the overview, a summary): their
	 * weights come from the worker too (JOB_ROLES), into r, so that this
	 * thread never computes them. heads_seq: the result a JOB_ROLES last
	 * answered for, heads_roles: with the roles; heads_here: its weights
	 * could not be taken (view_heads_ready then lets this thread compute
	 * them, as it would without a worker). */
	uint64_t heads_seq;
	bool heads_roles, heads_here;
	role_scores hr; /* of the selected head, cached for the head line */
	uint64_t hr_seq;
	int hr_layer, hr_head;
	head_stats hs; /* of the matrix on the map, cached for the panel */
	role_scores roles;
	uint64_t hs_gen; /* mat_gen they are for, 0: none */
	uint8_t *pstate; /* [context] */
	int32_t *pids;	 /* [context][VIEW_TOPK] */
	float *pps;
	int pred_req;	 /* row of the outstanding prediction request, -1 none */
	double pred_due; /* when to ask for the first predictions of a result, 0 none */

	/* navigation */
	int layer, head;
	heat_view hv; /* cursor and scrolling of the map */
	bool values;
	scale_kind scale;    /* the map's colour scale */
	scale_kind ov_scale; /* the overview's (F4 there changes this one) */
	heat_cells cells;  /* fit, scroll or compact */
	bool panel;	   /* the details panel is wanted (shown if there is room) */
	bool panel_forced; /* ... even where the map would show every column without it */
	bool confirm_quit; /* Ctrl-Q was pressed with text: the next one quits */
	bool contrib;	   /* the map shows value contributions, not weights */
	page_id page;		/* the details panel's page (panel.h) */
	void *pages[PAGE_N];	/* each page's own state */
	worker_text_opts topts; /* ablation, value norms: what texts are posted with */
	int nablated;
	/* the Alt-D prompt of patching's two characters (targets_key.c) */
	struct {
		bool active; /* it has the status line */
		int n;	     /* characters typed so far */
		uint32_t cps[2];
	} tp;
	/* the loss on the text with and without the ablation (JOB_LOSS), then
	 * with the heads' mean output (JOB_LOSS_MEAN), for res_seq; for a lab
	 * model also at the positions its task decides, task_positions of them
	 * (-1: not a lab model). A job that failed for this text is not asked
	 * again: failed (mean_failed), and why. */
	struct {
		bool valid, asked, failed;
		bool mean_valid, mean_asked, mean_failed;
		av_error why;
		uint64_t seq;
		double before, after, mean; /* every head, heads zeroed, mean-ablated */
		int positions;
		double task_before, task_after, task_mean;
		int task_positions;
	} loss;
	focus focus;
	focus back[SCREEN_N];	/* where each screen goes back to (screen_back) */
	void *screen[SCREEN_N]; /* each screen's own state (screen.h) */

	bool words;	/* the word view */
	bool has_marks; /* the text marks its words with WORD_MARK */
	bool *wmarks;	/* [context]: a word starts at this token */

	/* drawing */
	colors col;
	float *row_max; /* [context]: the row scale's maxima */
	bool too_small;
	int field_x, field_w; /* the input field */
	char notice[256];
	bool color_note; /* colors.why is shown on the info line until a key comes */

	struct fig_prompt *fig; /* the figure key's prompt (figure_key.c) */
	struct writer *wr;	/* the model writing (writing.c) */

	/* paste in progress */
	bool pasting;
	cp_buf paste;

	bool quit;
	struct view_script *script; /* keys from a script (script.h), or NULL */

	/* hidden benchmark mode: key time -> echoed -> result drawn */
	FILE *bench;
	uint64_t bench_seq;
	double bench_key, bench_echo;
	bool bench_echo_pending, bench_done_pending, bench_ready;
	bool bench_full_pending; /* the key's first frame was partial */
	/* a key that opened another screen: when it came, the heads this
	 * thread had computed by then; whether the screen's frame, then every
	 * head of it, are still to be logged */
	double bench_switch_key;
	uint64_t bench_switch_heads;
	bool bench_switch_pending, bench_switch_full_pending;
} view;

static inline int nlayers(const view *v)
{
	return (int)v->m->cfg.layers;
}

static inline int nheads(const view *v)
{
	return (int)v->m->cfg.heads;
}

/* Layer l of the result on screen is there (a partial result has only the
 * first layers: worker.h). */
static inline bool view_layer_ready(const view *v, int l)
{
	return v->have && attn_layer_ready(&v->r, l);
}

void set_notice(view *v, const char *fmt, ...) AV_PRINTF(2, 3);

/* The map and what it shows (map.c; the matrix itself is made by matrix.c
 * from a request, the map screen keeps it with the pin):
 * view_sel: a head or the summary Tab is on; view_map_kind: what the map
 * draws (the contributions on a head with F11); sel_describe: "head 2",
 * "mean of heads 0-7" ... ; sel_where: the same after its layer, "Layer 1
 * head 2", or "All layers mean of all 32 heads" (capital: "Layer",
 * else "layer"); view_matrix: the matrix and labels the map
 * draws now, or false when there is none (no result yet, or out of memory,
 * with a notice); view_matrix_gen: bumped whenever it is made anew;
 * view_compare_cell: in a comparison, the two weights behind cell (q, k);
 * view_word_span: the tokens [start, end) of word i; view_n: the size of
 * the matrix (0 without one); view_query_token: the token whose
 * predictions belong to Query row q (in the word view: the word's first);
 * view_matrix_invalidate: make it anew (the text, the selection or the
 * view changed); view_pin: the pinned matrix; toggle_pin: F9;
 * view_map_geom: where the map is drawn. */
#define SEL_EXTRA SEL_NSUMMARIES /* selections after a layer's heads */
sel_kind view_sel(const view *v);
sel_kind view_map_kind(const view *v);
void sel_describe(const view *v, char *out, size_t size);
void sel_where(const view *v, bool capital, char *out, size_t size);
bool view_matrix(view *v, heat_src *out);
uint64_t view_matrix_gen(const view *v);
bool view_compare_cell(view *v, int q, int k, float *now, float *pinned);
bool view_word_span(const view *v, int i, int *start, int *end);
int view_n(view *v);
int view_query_token(const view *v, int q);
void view_matrix_invalidate(view *v);
const pin *view_pin(const view *v);
void toggle_pin(view *v);
const map_geom *view_map_geom(const view *v);

/* The selected head of the result on screen (v->have), and its roles. */
attn_matrix view_head(const view *v);
const role_scores *view_head_roles(view *v);
/* The roles of head h of layer l of the result on screen as the worker
 * computed them, or NULL (not asked for that result). */
const role_scores *view_roles_of(const view *v, int l, int h);
/* Whether every head of layers l0..l1-1 of the result on screen can be
 * read without computing its weights here (they came from the worker, or
 * the result keeps them); false while they are on their way (request_jobs
 * asks for them). */
bool view_heads_ready(const view *v, int l0, int l1);
/* The layers a summary on the map reads every head of, [*l0, *l1); false
 * for a head (the map's own, computed here when first read). */
bool view_sel_layers(const view *v, int *l0, int *l1);
/* Give the result on screen back to the worker (v->have: false). */
void view_let_go(view *v);

/* Styles that depend on the terminal's colours (chrome.c). */
style accent(view *v, attr_t a);
style token_style(view *v, const token *t, attr_t a);

/* The text and its results (text.c). */
void text_changed(view *v);
void insert_text(view *v, const uint32_t *cps, size_t n);
void take_results(view *v);
void request_pred(view *v);
/* Ask the worker for what the screen needs of the result: the panel page's
 * numbers, every head's weights and roles (the overview, a summary), the
 * loss (ablation). */
void request_jobs(view *v);
void clamp_cursor(view *v); /* into the matrix on the map */

/* The lines around every screen (chrome.c). */
void draw_input(view *v);
void draw_info(view *v);
void draw_status(view *v);
void draw_too_small(view *v);
/* "Layer 0  Head 1 (layers 0-1, heads 0-3)": how headings name a head, from
 * 0 as --dump numbers them. */
int put_head_title(view *v, int y, int x, int maxw, int layer, int head);

/* Keys and mouse (actions.c). ch is ALT(c) for Alt-c. */
void handle_key(view *v, int ch, bool is_code);
void do_action(view *v, view_action act, int key);
void move_row(view *v, int d);

/* The figure key (figure_key.c), its prompt's state its own: made with
 * the folder and fig_format of new names (dir NULL: the current folder;
 * format -1: PNG if built, else SVG), and freed; open the prompt; its keys
 * (true: taken); whether it has the status line, drawn there; the column
 * of its cursor (-1: none); "wrote PATH" after a figure until the next key
 * (figure_prompt_key forgets it), or "". */
bool figure_prompt_init(view *v, const char *dir, int format);
void figure_prompt_finish(view *v);
void figure_prompt_open(view *v);
bool figure_prompt_key(view *v, int ch, bool is_code);
bool figure_prompt_shown(const view *v);
void draw_figure_prompt(view *v, int y);
int figure_prompt_cursor(const view *v);
const char *figure_prompt_done(const view *v);

/* The patching targets' key (targets_key.c, its state v->tp): open its
 * prompt; its keys (true: taken); whether it has the status line, drawn
 * there. */
void targets_prompt_open(view *v);
bool targets_prompt_key(view *v, int ch, bool is_code);
bool targets_prompt_shown(const view *v);
void draw_targets_prompt(view *v, int y);

/* The model writes (writing.c), its state its own: made with the sampler's
 * settings, and freed; whether it is writing; start or stop (Ctrl-G), the
 * next temperature (Alt-T), the step posted from the main loop, the
 * worker's answer, when the next step is due (0: nothing to wait for), the
 * info line while it writes. */
bool writing_init(view *v, float temperature, int top_k, uint64_t seed);
void writing_finish(view *v);
bool writing_on(const view *v);
void writing_toggle(view *v);
void writing_stop(view *v, const char *why);
void writing_temperature(view *v);
void writing_step(view *v);
void writing_take(view *v, const worker_job_result *j);
double writing_due(const view *v);
void writing_describe(const view *v, char *out, size_t size);

/* The model file, watched and reloaded (reload.c). */
void watch_init(view *v, const char *path);
void watch_model(view *v);
void take_model(view *v);
/* "step 1200, val 2.310" from the model's metadata, or "". */
void model_step_label(const model *m, char *out, size_t size);

/* The terminal (term.c). */
/* headless: curses on /dev/null, LINES x COLUMNS from the environment,
 * the terminal left alone (a script's keys, script.h). */
bool term_start(view *v, cm_ramp ramp, bool headless, av_error *err);
void term_stop(void);
int term_signal_fd(void);
int term_signal(void);
void term_reset_signal(void);

#endif
