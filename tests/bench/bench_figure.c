/* How long a figure takes (the all-heads grid of the built-in
 * model at 128 tokens in under a second): printed figures, no assertions.
 *   meson test -C build --benchmark figure --verbose
 * In the process: the model on 128 tokens, the overview's description (head
 * roles included), the layout and the file, per format; then the whole
 * program, attnview --export, as a user runs it (start-up and model loading
 * included). Medians of REPS runs. */
#include "attnview/blas.h"
#include "attnview/figure.h"
#include "attnview/modelfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 7

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

static const char text[] =
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
    "Time flies like an arrow; fruit flies like a banana, said the old teacher. "
    "The quick brown fox jumps over the lazy dog, and 春眠不觉晓，处处闻啼鸟。夜来风雨声。";

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int main(int argc, char **argv)
{
	(void)argc;
	blas_ensure_fast_kernel(argv); /* the kernel the CPU can run (blas.h) */
	av_error err;
	model *m = model_builtin(&err);
	if (!m) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	cp_buf cps = {0};
	if (!tokenize_text(text, strlen(text), "text", &cps, NULL, &err))
		return 1;
	int n = (int)m->cfg.context;
	if ((int)cps.n < n) {
		fprintf(stderr, "the text has only %zu tokens\n", cps.n);
		return 1;
	}
	token *toks = malloc((size_t)n * sizeof *toks);
	vocab_tokenize(&m->vocab, cps.v, (size_t)n, toks);
	activations ws = {0};
	attn_result r = {0};
	if (!activations_init(&ws, &m->cfg, 1, n, n, &err))
		return 1;
	double t_model[REPS];
	for (int i = 0; i < REPS; i++) {
		attn_result_finish(&r);
		double t0 = now();
		if (!model_attend(m, &ws, toks, n, 0, &r, &err))
			return 1;
		t_model[i] = now() - t0;
	}
	const char *tmpdir = getenv("TMPDIR");
	char dir[256];
	snprintf(dir, sizeof dir, "%s/attnview-bench-fig.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	printf("all %u x %u heads of the built-in model at %d tokens (medians of %d runs, ms)\n\n",
	       m->cfg.layers, m->cfg.heads, n, REPS);
	printf("| format | model | description | file | in the process | attnview --export | "
	       "size |\n|---|---|---|---|---|---|---|\n");
	const char *ext[3] = {"svg", "png", "pdf"};
	const char *bin = getenv("ATTNVIEW_BIN");
	char *cli_text = malloc(strlen(text) + 1);
	strcpy(cli_text, text);
	for (int fmt = 0; fmt < 3; fmt++) {
		if (!fig_format_available((fig_format)fmt))
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/grid.%s", dir, ext[fmt]);
		double t_desc[REPS], t_file[REPS], t_all[REPS], t_cli[REPS];
		for (int i = 0; i < REPS; i++) {
			fig_request q = {.show = SEL_OVERVIEW,
					 .scale = SCALE_ROW,
					 .ramp = RAMP_VIRIDIS,
					 .model_name = "builtin",
					 .text = text};
			double t0 = now();
			figure *f = figure_from_result(&r, &q, &err);
			double t1 = now();
			if (!f || !figure_write(f, path, true, &err)) {
				fprintf(stderr, "%s\n", err.msg);
				return 1;
			}
			double t2 = now();
			figure_destroy(f);
			t_desc[i] = t1 - t0;
			t_file[i] = t2 - t1;
			t_all[i] = t_model[i] + t2 - t0;
			t_cli[i] = 0;
			if (!bin)
				continue;
			t0 = now();
			pid_t pid = fork();
			if (pid == 0) {
				execl(bin, bin, "--export", path, "--overview", "--force", "--text",
				      cli_text, (char *)NULL);
				_exit(127);
			}
			int st;
			waitpid(pid, &st, 0);
			t_cli[i] = now() - t0;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				fprintf(stderr, "attnview --export %s failed\n", path);
		}
		double model_ms = median(t_model, REPS) * 1e3;
		printf("| %s | %.2f | %.2f | %.1f | **%.1f** | %.1f | %ld KB |\n", ext[fmt],
		       model_ms, median(t_desc, REPS) * 1e3, median(t_file, REPS) * 1e3,
		       median(t_all, REPS) * 1e3, bin ? median(t_cli, REPS) * 1e3 : 0.0,
		       (file_size(path) + 512) / 1024);
		unlink(path);
	}
	rmdir(dir);
	free(cli_text);
	attn_result_finish(&r);
	activations_finish(&ws);
	free(toks);
	cp_buf_finish(&cps);
	model_destroy(m);
	return 0;
}
