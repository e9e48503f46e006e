/* Keystroke -> redrawn screen latency of the interactive view,
 * measured on the real path: attnview runs on a pseudo-terminal,
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
#include "bench_pty.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_case {
	int tokens; /* 0: the model's context */
	unsigned short cols, lines;
	const char *cells; /* --cells */
	const char *show;  /* --show */
} bench_case;

static bool start(bench_run *r, const char *bin, const char *model, const char *text,
		  const bench_case *bc)
{
	const char *args[16];
	int k = 0;
	if (model) {
		args[k++] = "--model";
		args[k++] = model;
	}
	args[k++] = "--cells";
	args[k++] = bc ? bc->cells : "fit";
	args[k++] = "--show";
	args[k++] = bc && bc->show ? bc->show : "head";
	args[k++] = "--layer";
	args[k++] = "1";
	args[k++] = "--text";
	args[k++] = text;
	args[k] = NULL;
	return bench_start(r, bin, args, bc ? bc->cols : 120, bc ? bc->lines : 40);
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

	/* Ask the program for its context first. Without a built-in model, fall
	 * back to the golden test model (and say so). */
	bench_run r;
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
		l = bench_log_line(&r, 10000);
		if (!l ||
		    sscanf(l, "context %d layers %u heads %u dim %u", &context, &L, &H, &d) != 4)
			context = 0;
		bench_stop(&r);
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
	    {32, 120, 40, "scroll", NULL},     {128, 120, 40, "scroll", NULL},
	    {0, 120, 40, "scroll", NULL},      {128, 120, 40, "compact", NULL},
	    {0, 120, 40, "compact", NULL},     {24, 200, 60, "fit", NULL},
	    {0, 200, 60, "fit", NULL},	       {0, 120, 40, "scroll", "mean"},
	    {0, 120, 40, "scroll", "rollout"},
	};
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		const bench_case *bc = &cases[ci];
		int n = bc->tokens && bc->tokens < context ? bc->tokens : context;
		if (bc->tokens == 128 && context <= 128)
			continue; /* the same as full context */
		static char text[65536];
		bench_text(text, sizeof text, n - 1);
		if (!start(&r, bin, model, text, bc))
			return 1;
		if (!bench_wait_ready(&r, 20000)) {
			fprintf(stderr, "bench_latency: attnview never drew its first heatmap\n");
			bench_stop(&r);
			return 1;
		}
		bench_keys_result k;
		bench_type_keys(&r, nkeys, false, &k);
		bench_stop(&r);
		char label[48];
		snprintf(label, sizeof label, "%s %s %ux%u", bc->show ? bc->show : "head",
			 bc->cells, bc->cols, bc->lines);
		printf("%7d %-24s %6d %9.3f %9.3f %11.3f %11.3f %13.3f %10.3f\n", n, label, k.got,
		       k.echo_p50, k.echo_p99, k.screen_p50, k.screen_p99, k.outside_p99,
		       k.model_p50);
	}
	printf("(milliseconds; 'screen' = key read by the view -> heatmap for the new text "
	       "drawn; 'pty->scr' includes the pty; target p99 < 16.7 ms)\n");
	return 0;
}
