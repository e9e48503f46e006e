/* The interactive terminal view (ncursesw): an input line, the heatmap of one
 * head, a details panel, an overview of all heads, help and status. All curses
 * calls of the program live in view.c; the model runs on the worker thread. */
#ifndef ATTNVIEW_VIEW_H
#define ATTNVIEW_VIEW_H

#include "attnview/colormap.h"
#include "attnview/generate.h"
#include "attnview/model.h"
#include "attnview/scale.h"

typedef struct view_options {
	const char *text;      /* initial text (UTF-8), or NULL */
	const char *bench_log; /* latency records go here (hidden benchmark mode), or NULL */
	int delay_ms;	       /* added to every inference (tests of a slow model), or 0 */
	int layer, head;       /* to start on; -1: 0 */
	int scale;	       /* scale_kind, or -1: the default */
	int ramp;	       /* cm_ramp, or -1: viridis */
	int cells;	       /* heat_cells (0 fit, 1 scroll, 2 compact), or -1: fit */
	bool no_panel;	       /* start with the details panel hidden */
	int show;	       /* sel_kind (select.h) to start on, or -1: a head */
	const char *model_path; /* the model's file, watched and reloaded when replaced */
	const char *figure_dir; /* where the figure key puts new files; NULL: here */
	int figure_format;	/* fig_format of new figures, or -1: PNG if built, else SVG */
	float temperature;	/* the model writing (Ctrl-G): generate.h's sampler */
	int top_k;
	uint64_t seed;
	const char *script; /* keys from this script, headless (script.h), or NULL */
	const char *compare; /* --compare: patching's other text (Alt-X), or NULL */
	bool has_targets;    /* --targets A B: patching's two characters */
	uint32_t targets[2];
} view_options;

/* Options with nothing chosen. */
#define VIEW_OPTIONS_INIT                                                                          \
	{                                                                                          \
		NULL, NULL, 0, -1, -1, -1, -1, -1, false, -1, NULL, NULL, -1, GEN_TEMPERATURE,     \
		    GEN_TOP_K, 1, NULL, NULL, false,                                               \
		{                                                                                  \
			0, 0                                                                       \
		}                                                                                  \
	}

/* Check that the view can run here: stdin and stdout are terminals (not
 * when headless: a script gives the keys) and the locale's character set
 * is UTF-8 (setlocale must have been called). */
bool view_check_terminal(bool headless, av_error *err);

/* Run the view on the terminal until the user quits; the view owns m from
 * here on (with opt->model_path it replaces it when the file is replaced,
 * and it destroys the last one). The terminal is restored
 * on every return, and by signal handlers on SIGINT, SIGTERM, SIGHUP and on
 * crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT; those re-raise).
 * *signo is set to the terminating signal when SIGINT, SIGTERM or SIGHUP ended
 * the view (the caller cleans up and re-raises it), 0 otherwise. */
bool view_run(model *m, const view_options *opt, int *signo, av_error *err);

#endif
