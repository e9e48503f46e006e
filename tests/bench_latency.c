/* Keystroke -> redrawn screen latency of the interactive view (issue 4,
 * point 10), measured on the real path: attnview runs on a pseudo-terminal,
 * this program types into it, and the view's hidden benchmark log
 * (ATTNVIEW_BENCH_LOG) timestamps, on the same CLOCK_MONOTONIC, when each key
 * arrived, when the screen echoing it was out (doupdate returned) and when the
 * screen showing the new heatmap was out. Texts of 32, 128 and full-context
 * tokens, in each way the heatmap can be drawn: 2-column cells that scroll,
 * the compact half-block mode, and the widest cells (a short text on a
 * 200x60 screen); median and p99 over a few hundred keystrokes; figures
 * printed, never asserted.
 *
 *   bench_latency [--model FILE] [--keys N]      (ATTNVIEW_BIN: the program) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct run {
	pid_t pid;
	int pty;
	FILE *log;
	char logpath[256];
	char line[512];
	size_t linelen;
} run;

/* Read and discard the screen output so the view never blocks on a full pty;
 * for up to ms milliseconds, or less if a log line arrives. */
static void pump(run *r, int ms)
{
	struct pollfd p = {r->pty, POLLIN, 0};
	if (poll(&p, 1, ms) > 0) {
		char buf[65536];
		ssize_t n = read(r->pty, buf, sizeof buf);
		(void)n;
	}
}

/* Next complete line of the log, or NULL (after waiting up to timeout_ms). */
static const char *log_line(run *r, int timeout_ms)
{
	double end = now_ms() + timeout_ms;
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
		if (now_ms() > end)
			return NULL;
		int st;
		if (r->pid > 0 && waitpid(r->pid, &st, WNOHANG) == r->pid) {
			r->pid = 0; /* it exited: nothing more will come */
			end = 0;
		}
		pump(r, 1);
	}
}

typedef struct bench_case {
	int tokens; /* 0: the model's context */
	unsigned short cols, lines;
	const char *cells; /* --cells */
	const char *show;  /* --show */
} bench_case;

static bool start(run *r, const char *bin, const char *model, const char *text,
		  const bench_case *bc)
{
	memset(r, 0, sizeof *r);
	snprintf(r->logpath, sizeof r->logpath, "/tmp/attnview-bench-%d.log", (int)getpid());
	unlink(r->logpath);
	int fd = open(r->logpath, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0)
		return false;
	close(fd);
	struct winsize ws = {bc ? bc->lines : 40, bc ? bc->cols : 120, 0, 0};
	r->pid = forkpty(&r->pty, NULL, NULL, &ws);
	if (r->pid < 0) {
		perror("forkpty");
		return false;
	}
	if (r->pid == 0) {
		setenv("TERM", "xterm-256color", 1);
		setenv("LC_ALL", "C.UTF-8", 1);
		setenv("ATTNVIEW_BENCH_LOG", r->logpath, 1);
		unsetenv("NO_COLOR");
		const char *cells = bc ? bc->cells : "fit", *show = bc && bc->show ? bc->show : "head";
		if (model)
			execl(bin, bin, "--model", model, "--cells", cells, "--show", show, "--layer",
			      "1", "--text", text, (char *)NULL);
		else
			execl(bin, bin, "--cells", cells, "--show", show, "--layer", "1", "--text", text,
			      (char *)NULL);
		_exit(127);
	}
	r->log = fopen(r->logpath, "r");
	return r->log != NULL;
}

static void stop(run *r)
{
	/* Ctrl-Q twice: with text on the line the first one only asks. */
	if (r->pid > 0 && write(r->pty, "\x11\x11", 2) < 0)
		kill(r->pid, SIGTERM);
	for (int i = 0; i < 200 && r->pid > 0; i++) {
		pump(r, 10);
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
	close(r->pty);
	fclose(r->log);
	unlink(r->logpath);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	int i = (int)(p * (n - 1) + 0.5);
	return v[i];
}

/* n codepoints of mixed Chinese and English text. */
static void make_text(char *out, size_t cap, int n)
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

int main(int argc, char **argv)
{
	const char *bin = getenv("ATTNVIEW_BIN");
	const char *model = NULL;
	int nkeys = 300;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
			model = argv[++i];
		else if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc)
			nkeys = atoi(argv[++i]);
	}
	if (!bin) {
		fprintf(stderr, "bench_latency: set ATTNVIEW_BIN to the attnview program\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	/* Ask the program for its context first. Without a built-in model, fall
	 * back to the golden test model (and say so). */
	run r;
	const char *l = NULL;
	int context = 0;
	unsigned L = 0, H = 0, d = 0;
	for (int attempt = 0; attempt < 2 && !context; attempt++) {
		static char golden[4096];
		const char *data = getenv("ATTNVIEW_TEST_DATA");
		if (attempt == 1) {
			if (model || !data)
				break;
			snprintf(golden, sizeof golden, "%s/golden/fwd_masked.attn", data);
			model = golden;
			fprintf(stderr, "bench_latency: no built-in model; using %s\n", model);
		}
		if (!start(&r, bin, model, "a", NULL))
			return 1;
		l = log_line(&r, 10000);
		if (!l ||
		    sscanf(l, "context %d layers %u heads %u dim %u", &context, &L, &H, &d) != 4)
			context = 0;
		stop(&r);
	}
	if (!context) {
		fprintf(stderr, "bench_latency: no benchmark log from %s\n", bin);
		return 1;
	}
	printf("attnview view latency: keystroke -> screen out (doupdate returned), %s\n",
	       model ? model : "built-in model");
	printf("model: %u layers, %u heads, dim %u, context %d; %d keystrokes per size\n", L, H, d,
	       context, nkeys);
	printf("%7s %-24s %6s %9s %9s %11s %11s %13s %10s\n", "tokens", "shown", "keys", "echo p50",
	       "echo p99", "screen p50", "screen p99", "pty->scr p99", "model p50");

	static const bench_case cases[] = {
	    {32, 120, 40, "scroll", NULL},   {128, 120, 40, "scroll", NULL},
	    {0, 120, 40, "scroll", NULL},    {128, 120, 40, "compact", NULL},
	    {0, 120, 40, "compact", NULL},   {24, 200, 60, "fit", NULL},
	    {0, 200, 60, "fit", NULL},	     {0, 120, 40, "scroll", "mean"},
	    {0, 120, 40, "scroll", "rollout"},
	};
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		const bench_case *bc = &cases[ci];
		int n = bc->tokens && bc->tokens < context ? bc->tokens : context;
		if (bc->tokens == 128 && context <= 128)
			continue; /* the same as full context */
		(void)0;
		static char text[65536];
		make_text(text, sizeof text, n - 1);
		if (!start(&r, bin, model, text, bc))
			return 1;
		/* Wait until the first heatmap is out. */
		bool ready = false;
		while ((l = log_line(&r, 20000)))
			if (strncmp(l, "ready", 5) == 0) {
				ready = true;
				break;
			}
		if (!ready) {
			fprintf(stderr, "bench_latency: attnview never drew its first heatmap\n");
			stop(&r);
			return 1;
		}
		double *echo = calloc((size_t)nkeys, sizeof *echo);
		double *screen = calloc((size_t)nkeys, sizeof *screen);
		double *outside = calloc((size_t)nkeys, sizeof *outside);
		double *modelt = calloc((size_t)nkeys, sizeof *modelt);
		int got = 0;
		for (int k = 0; k < nkeys; k++) {
			/* Type a character, then take it back: n and n-1 tokens. */
			const char *key = k % 2 == 0 ? "x" : "\x7f";
			pump(&r, 2);
			double sent = now_ms();
			if (write(r.pty, key, 1) != 1)
				break;
			unsigned long long seq;
			int tokens;
			double tk, te, td, tm;
			while ((l = log_line(&r, 5000)))
				if (sscanf(l, "key %llu %d %lf %lf %lf %lf", &seq, &tokens, &tk,
					   &te, &td, &tm) == 6)
					break;
			if (!l) {
				fprintf(stderr, "bench_latency: no result for keystroke %d\n", k);
				break;
			}
			echo[got] = te - tk;
			screen[got] = td - tk;
			outside[got] = td - sent;
			modelt[got] = tm;
			got++;
		}
		stop(&r);
		char label[48];
		snprintf(label, sizeof label, "%s %s %ux%u", bc->show ? bc->show : "head", bc->cells,
			 bc->cols, bc->lines);
		printf("%7d %-24s %6d %9.3f %9.3f %11.3f %11.3f %13.3f %10.3f\n", n, label, got,
		       pct(echo, got, 0.5), pct(echo, got, 0.99), pct(screen, got, 0.5),
		       pct(screen, got, 0.99), pct(outside, got, 0.99), pct(modelt, got, 0.5));
		free(echo);
		free(screen);
		free(outside);
		free(modelt);
	}
	printf("(milliseconds; 'screen' = key read by the view -> heatmap for the new text "
	       "drawn; 'pty->scr' includes the pty; target p99 < 16.7 ms)\n");
	return 0;
}
