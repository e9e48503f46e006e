/* The view on a pseudo-terminal for the benchmarks (bench_pty.h). */
#define _GNU_SOURCE
#include <stdio.h>

#include "bench_pty.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double bench_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_pct(double *v, int n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	int i = (int)(p * (n - 1) + 0.5);
	return v[i];
}

void bench_text(char *out, size_t cap, int n)
{
	static const char *const pieces[] = {
	    "注", "意", "力", " ",  "a",  "t",	"t", "e", "n", "t", "i", "o", "n", " ",
	    "床", "前", "明", "月", "光", "，", "m", "o", "o", "n", " ", "i", "s", "."};
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *p = pieces[i % (int)(sizeof pieces / sizeof pieces[0])];
		size_t pl = strlen(p);
		if (len + pl + 1 > cap)
			break;
		memcpy(out + len, p, pl + 1);
		len += pl;
	}
}

void bench_pump(bench_run *r, int ms)
{
	struct pollfd p = {r->pty, POLLIN, 0};
	if (poll(&p, 1, ms) > 0) {
		char buf[65536];
		ssize_t n = read(r->pty, buf, sizeof buf);
		(void)n;
	}
}

const char *bench_log_line(bench_run *r, int timeout_ms)
{
	double end = bench_now_ms() + timeout_ms;
	for (;;) {
		int c;
		while ((c = fgetc(r->log)) != EOF) {
			if (c == '\n') {
				r->line[r->linelen] = '\0';
				r->linelen = 0;
				return r->line;
			}
			if (r->linelen < sizeof r->line - 1)
				r->line[r->linelen++] = (char)c;
		}
		clearerr(r->log);
		if (bench_now_ms() > end)
			return NULL;
		int st;
		if (r->pid > 0 && waitpid(r->pid, &st, WNOHANG) == r->pid) {
			r->pid = 0; /* it exited: nothing more will come */
			end = 0;
		}
		bench_pump(r, 1);
	}
}

bool bench_start(bench_run *r, const char *bin, const char *const *args, unsigned short cols,
		 unsigned short lines)
{
	memset(r, 0, sizeof *r);
	r->pty = -1;
	snprintf(r->logpath, sizeof r->logpath, "/tmp/attnview-bench-%d.log", (int)getpid());
	unlink(r->logpath);
	int fd = open(r->logpath, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0)
		return false;
	close(fd);
	signal(SIGPIPE, SIG_IGN);
	struct winsize ws = {lines, cols, 0, 0};
	r->pid = forkpty(&r->pty, NULL, NULL, &ws);
	if (r->pid < 0) {
		perror("forkpty");
		r->pid = 0;
		return false;
	}
	if (r->pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("LC_ALL", "C.UTF-8", 1);
		setenv("ATTNVIEW_BENCH_LOG", r->logpath, 1);
		unsetenv("NO_COLOR");
		const char *argv[64];
		int k = 0;
		argv[k++] = bin;
		for (int i = 0; args[i] && k < 63; i++)
			argv[k++] = args[i];
		argv[k] = NULL;
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	r->log = fopen(r->logpath, "r");
	return r->log != NULL;
}

void bench_stop(bench_run *r)
{
	/* Ctrl-Q twice: with text on the line the first one only asks. */
	if (r->pid > 0 && write(r->pty, "\x11\x11", 2) < 0)
		kill(r->pid, SIGTERM);
	for (int i = 0; i < 200 && r->pid > 0; i++) {
		bench_pump(r, 10);
		int st;
		if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
			r->pid = 0;
			break;
		}
	}
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	r->pid = 0;
	if (r->pty >= 0)
		close(r->pty);
	r->pty = -1;
	if (r->log)
		fclose(r->log);
	r->log = NULL;
	unlink(r->logpath);
}

bool bench_wait_ready(bench_run *r, int timeout_ms)
{
	const char *l;
	while ((l = bench_log_line(r, timeout_ms)))
		if (strncmp(l, "ready", 5) == 0)
			return true;
	return false;
}

bool bench_type_keys(bench_run *r, int n, bool grow, bench_keys_result *out)
{
	memset(out, 0, sizeof *out);
	double *echo = calloc((size_t)n + 1, sizeof *echo);
	double *screen = calloc((size_t)n + 1, sizeof *screen);
	double *outside = calloc((size_t)n + 1, sizeof *outside);
	double *modelt = calloc((size_t)n + 1, sizeof *modelt);
	double *full = calloc((size_t)n + 1, sizeof *full);
	bool ok = echo && screen && outside && modelt && full;
	int got = 0;
	for (int k = 0; k < n && ok; k++) {
		const char *key = grow || k % 2 == 0 ? "x" : "\x7f";
		bench_pump(r, 2);
		double sent = bench_now_ms();
		if (write(r->pty, key, 1) != 1) {
			ok = false;
			break;
		}
		unsigned long long seq;
		int tokens;
		double tk, te, td, tm, tf = 0, tfm;
		int partial = 0;
		const char *l;
		while ((l = bench_log_line(r, 10000)))
			if (sscanf(l, "key %llu %d %lf %lf %lf %lf %d", &seq, &tokens, &tk, &te,
				   &td, &tm, &partial) >= 6)
				break;
		/* A first frame of a partial result: the complete one follows
		 * before the next key (which would replace its pass). */
		while (l && partial > 0 && (l = bench_log_line(r, 10000)))
			if (sscanf(l, "full %*u %lf %lf", &tf, &tfm) == 2)
				break;
		if (!l) {
			fprintf(stderr, "bench: no frame for keystroke %d\n", k);
			ok = false;
			break;
		}
		echo[got] = te - tk;
		screen[got] = td - tk;
		full[got] = partial > 0 ? tf - tk : td - tk;
		outside[got] = td - sent;
		modelt[got] = partial > 0 ? tfm : tm;
		out->partial += partial > 0;
		got++;
	}
	out->got = got;
	if (got) {
		out->echo_p50 = bench_pct(echo, got, 0.5);
		out->echo_p99 = bench_pct(echo, got, 0.99);
		out->screen_p50 = bench_pct(screen, got, 0.5);
		out->screen_p99 = bench_pct(screen, got, 0.99);
		out->outside_p99 = bench_pct(outside, got, 0.99);
		out->model_p50 = bench_pct(modelt, got, 0.5);
		out->full_p50 = bench_pct(full, got, 0.5);
	}
	free(full);
	free(echo);
	free(screen);
	free(outside);
	free(modelt);
	return ok;
}
