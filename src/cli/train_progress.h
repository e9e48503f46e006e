/* What attnview --train shows while it runs: on a terminal one status line,
 * redrawn, with a sparkline of the recent losses ("loss 3.8-4.4 ▇▆▅▄": a
 * labelled scale, kept until the losses leave it or use less than a quarter
 * of it); otherwise one plain line per evaluation. */
#ifndef ATTNVIEW_CLI_TRAIN_PROGRESS_H
#define ATTNVIEW_CLI_TRAIN_PROGRESS_H

#include "attnview/train.h"

#include <stddef.h>

typedef struct progress_ui {
	bool tty;
	double t0;	  /* when the run (or this resumed part of it) started */
	uint64_t step0;	  /* the step it started at */
	bool line_open;	  /* a live status line is on screen */
	double last_draw; /* when the status line was last drawn */
	float spark_lo, spark_hi; /* the sparkline's scale (equal: not set yet) */
	int spark_digits;	  /* its label's decimals */
} progress_ui;

/* Start the clock for a run beginning at step0. */
void progress_begin(progress_ui *ui, uint64_t step0);
/* The train_progress_fn of trainer_run; ctx is the progress_ui. */
void progress_report(const train_progress *p, void *ctx);
/* End the status line, if one is open, before anything else is printed. */
void progress_end(progress_ui *ui);

/* "42s", "3m07s", "1h05m"; "?" for a negative or absurd duration. */
void format_duration(double s, char *out, size_t n);

#endif
