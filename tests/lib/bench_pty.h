/* The interactive view on a pseudo-terminal, for the benchmarks: start
 * attnview with its hidden benchmark log (ATTNVIEW_BENCH_LOG), which
 * timestamps on CLOCK_MONOTONIC when each key arrived, when the screen echoing
 * it was out (doupdate returned) and when the screen showing the heatmap of
 * its text was out; type into it; read the log. */
#ifndef ATTNVIEW_BENCH_PTY_H
#define ATTNVIEW_BENCH_PTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct bench_run {
	pid_t pid;
	int pty;
	FILE *log;
	char logpath[256];
	char line[512];
	size_t linelen;
} bench_run;

double bench_now_ms(void);
/* The p-quantile (0..1) of v[0..n), sorting v. */
double bench_pct(double *v, int n, double p);
/* n codepoints of mixed Chinese and English text into out (UTF-8). */
void bench_text(char *out, size_t cap, int n);

/* attnview (bin) with args (NULL-terminated) on a cols x lines pty. */
bool bench_start(bench_run *r, const char *bin, const char *const *args, unsigned short cols,
		 unsigned short lines);
/* Quit (Ctrl-Q twice), or kill after 2 s; harmless on a failed start. */
void bench_stop(bench_run *r);
/* The next complete line of the log, or NULL after timeout_ms. */
const char *bench_log_line(bench_run *r, int timeout_ms);
/* Read and discard the screen output (so the view never blocks on a full
 * pty), for up to ms milliseconds. */
void bench_pump(bench_run *r, int ms);
/* Until the first heatmap is out. */
bool bench_wait_ready(bench_run *r, int timeout_ms);

typedef struct bench_keys_result {
	int got;		       /* keystrokes measured */
	double echo_p50, echo_p99;     /* key read -> the screen echoing it out */
	double screen_p50, screen_p99; /* key read -> the heatmap of its text out */
	double outside_p99;	       /* key written to the pty -> heatmap out */
	double model_p50;	       /* the worker's time for the text, as logged */
	double full_p50;	       /* key read -> every layer in (after a partial) */
	int partial;		       /* keys whose first frame was partial */
} bench_keys_result;

/* n keystrokes at the end of the text, each after the frame of the one
 * before: 'x' then backspace in turn, or (grow) 'x' every time; false if a
 * frame never came. */
bool bench_type_keys(bench_run *r, int n, bool grow, bench_keys_result *out);

#endif
