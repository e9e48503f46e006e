/* Training throughput on the reference configuration (d=64, h=4,
 * L=2, T=128, B=32, masked, V about 6000 for a Chinese + English vocabulary),
 * or another size, against the sgemm peak of this machine measured in the
 * same run.
 *
 *   bench_train [--threads N] [--steps N] [--vocab V] [--batch B] [--causal]
 *               [--dim D] [--heads H] [--layers L] [--context T]
 *               [--train-only] [--group-rows N]
 *
 * The bigger configuration: --dim 128 --heads 8 --layers 4 --context 256.
 * --train-only skips the forward-alone timing (for profiling the step);
 * --group-rows sets the step's cache blocking (train_step_set_group_rows).
 *
 * Random weights and random batches: the cost of a step does not depend on the
 * values, only on the shapes and the number of targets (15% of positions).
 * Run by `meson test --benchmark`; it asserts nothing about speed. */
#include "attnview/blas.h"
#include "attnview/optimizer.h"
#include "attnview/rng.h"
#include "attnview/train_step.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the whole process: on a shared machine the time the step was
 * actually running, whatever else ran meanwhile (with one thread, the
 * step's own work; with more, the sum over the threads). */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median GFLOP/s of an n^3 sgemm (2 n^3 flops) on `threads` threads. */
static double sgemm_peak(int n, int threads, int reps)
{
	blas_set_threads(threads);
	float *a = malloc((size_t)n * n * 4), *b = malloc((size_t)n * n * 4);
	float *c = malloc((size_t)n * n * 4);
	for (size_t i = 0; i < (size_t)n * n; i++) {
		a[i] = (float)(i % 7) * 0.1f;
		b[i] = (float)(i % 5) * 0.1f;
	}
	double t[32];
	for (int r = 0; r < reps + 1; r++) {
		double t0 = now();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n,
			    0.0f, c, n);
		t[r] = now() - t0;
	}
	free(a);
	free(b);
	free(c);
	return 2.0 * n * n * (double)n / median(t + 1, reps) * 1e-9; /* first run warms up */
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv);
	int threads = blas_threads(), steps = 20, V = 6000, B = 32;
	int d = 64, h = 4, L = 2, T = 128;
	bool causal = false, train_only = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--vocab") && i + 1 < argc)
			V = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			B = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dim") && i + 1 < argc)
			d = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--heads") && i + 1 < argc)
			h = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--layers") && i + 1 < argc)
			L = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--context") && i + 1 < argc)
			T = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--causal"))
			causal = true;
		else if (!strcmp(argv[i], "--train-only"))
			train_only = true;
		else if (!strcmp(argv[i], "--group-rows") && i + 1 < argc)
			train_step_set_group_rows(atoi(argv[++i]));
		else {
			fprintf(stderr,
				"usage: %s [--threads N] [--steps N] [--vocab V] "
				"[--batch B] [--causal] [--dim D] [--heads H] [--layers L] "
				"[--context T] [--train-only] [--group-rows N]\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1)
		threads = 1;
	if (steps < 1 || steps > 1000)
		steps = 20;
	const int N = B * T;
	model_config cfg = {causal ? OBJ_CAUSAL : OBJ_MASKED,
			    (uint32_t)V,
			    (uint32_t)d,
			    (uint32_t)h,
			    (uint32_t)L,
			    (uint32_t)T, {0}};
	av_error err;
	if (B < 1 || !model_config_check(&cfg, &err)) {
		fprintf(stderr, "bench_train: %s\n",
			B < 1 ? "--batch must be at least 1" : err.msg);
		return 2;
	}

	/* A Chinese + English vocabulary: the specials, printable ASCII, then
	 * CJK ideographs. */
	uint32_t *cps = malloc((size_t)V * sizeof *cps);
	for (int i = 0; i < V; i++)
		cps[i] = i < TOK_NSPECIAL	 ? 0x110000u + (uint32_t)i
			 : i < TOK_NSPECIAL + 95 ? 0x20u + (uint32_t)(i - TOK_NSPECIAL)
						 : 0x4E00u + (uint32_t)(i - TOK_NSPECIAL - 95);
	model *m = model_create(&cfg, cps, &err);
	free(cps);
	if (!m) {
		fprintf(stderr, "bench_train: %s\n", err.msg);
		return 1;
	}
	model_init_random(m, 1);

	/* Batches: masked as the trainer makes them (15% targets, 80% of them
	 * replaced by the mask token); causal: a target at every position. */
	rng r;
	rng_seed(&r, 2);
	int32_t *tok = malloc((size_t)N * sizeof *tok), *tgt = malloc((size_t)N * sizeof *tgt);
	int R = 0;
	for (int i = 0; i < N; i++) {
		tok[i] = TOK_NSPECIAL + (int32_t)rng_below(&r, (uint64_t)V - TOK_NSPECIAL);
		tgt[i] = -1;
		if (causal || rng_uniform(&r) < 0.15f) {
			tgt[i] = TOK_NSPECIAL + (int32_t)rng_below(&r, (uint64_t)V - TOK_NSPECIAL);
			if (!causal && rng_uniform(&r) < 0.8f)
				tok[i] = TOK_MASK;
			R++;
		}
	}

	activations a;
	grad_acts g;
	adamw o;
	if (!activations_init(&a, &cfg, B, T, N, &err) || !grad_acts_init(&g, &cfg, B, T, &err) ||
	    !adamw_init(&o, m, 1e-3f, 10, 1000, &err)) {
		fprintf(stderr, "bench_train: %s\n", err.msg);
		return 1;
	}
	/* As the trainer allocates them (train.c). */
	float *grads = av_alloc_large(m->nparams * sizeof *grads, false);

	printf("OpenBLAS %s, core %s\n", blas_config(), blas_corename());
	printf("model: d=%d h=%d L=%d T=%d B=%d V=%d %s, %zu parameters, %d targets/batch\n", d, h,
	       L, T, B, V, causal ? "causal" : "masked", m->nparams, R);

	/* FLOPs of the matrix products a step performs (2 per multiply-add),
	 * N = B*T rows, R target rows:
	 *   a full block, forward: qkv 2N d 3d + proj 2N d d + fc 2N d 4d +
	 *     fc2 2N 4d d = 24 N d^2, attention Q K^T and A V: 2 * 2 B h T T (d/h)
	 *     = 4 B T^2 d
	 *   the last block (last_block.c: keys and values at every row, the rest
	 *     at the target rows only): K|V 4 N d^2, Q 2 R d^2, attention
	 *     4 R T d, proj + fc + fc2 18 R d^2
	 *   output projection at the target rows: 2 R d V
	 *   backward: two products per forward product (input and weight
	 *     gradients; for attention dA, dV, dQ, dK), so a step is 3x forward:
	 *   step = 3 ((L-1)(24 N d^2 + 4 B T^2 d) + 4 N d^2 + 4 R T d + 20 R d^2
	 *             + 2 R d V)
	 * The causal mask is not subtracted: the products are computed whole.
	 * `full` is the same with every row through the last block, what a
	 * framework that computes all rows (PyTorch here) performs. */
	double dd = (double)d * d;
	double block = 24.0 * N * dd + 4.0 * B * (double)T * T * d;
	double flops = 3.0 * ((L - 1) * block + 4.0 * N * dd + 4.0 * R * (double)T * d +
			      20.0 * R * dd + 2.0 * R * d * (double)V);
	double full = 3.0 * (L * block + 2.0 * R * d * (double)V);

	/* The training steps first: OpenBLAS's own threads, once they have had
	 * work (the threaded forward, the 2-thread sgemm peak), spin for a while
	 * before they sleep, and would take cycles from the step's workers. */
	blas_set_threads(threads);
	const int warm = 3;
	double *ts = malloc((size_t)(steps + warm) * sizeof *ts);
	double *tf = malloc((size_t)(steps + warm) * sizeof *tf);
	double *tc = malloc((size_t)(steps + warm) * sizeof *tc);
	float loss = 0;
	for (int s = 0; s < steps + warm; s++) {
		double t0 = now(), c0 = cpu_now();
		memset(grads, 0, m->nparams * sizeof *grads);
		step_stats st;
		if (!model_train_step_grads(m, &a, &g, tok, tgt, B, T, grads, &st, &err)) {
			fprintf(stderr, "bench_train: %s\n", err.msg);
			return 1;
		}
		loss = st.loss;
		adamw_step(&o, m->params, grads);
		ts[s] = now() - t0;
		tc[s] = cpu_now() - c0;
	}
	for (int s = 0; s < steps + warm; s++) {
		double t0 = now();
		if (!train_only)
			model_forward(m, &a, tok, B, T);
		tf[s] = now() - t0;
	}
	double peak1 = sgemm_peak(1024, 1, 7);
	double peakn = threads > 1 ? sgemm_peak(1024, threads, 7) : peak1;
	double step = median(ts + warm, steps), fwd = median(tf + warm, steps);
	double gflops = flops / step * 1e-9;
	printf("sgemm 1024^3: %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on %d threads\n", peak1, peakn,
	       threads);
	printf("forward alone: %.2f ms (median of %d)\n", fwd * 1e3, steps);
	printf("train step (forward + backward + AdamW): %.2f ms median of %d, loss %.3f\n",
	       step * 1e3, steps, loss);
	printf("tokens/s: %.0f\n", N / step);
	printf("train step CPU time: %.2f ms median (all threads)\n",
	       median(tc + warm, steps) * 1e3);
	printf("matrix-product FLOPs/step: %.3f G performed (%.3f G with the last block at "
	       "every row)\n",
	       flops * 1e-9, full * 1e-9);
	printf("achieved %.1f GFLOP/s = %.0f%% of the %d-thread sgemm peak (%.0f%% of "
	       "1-thread)\n",
	       gflops, 100.0 * gflops / peakn, threads, 100.0 * gflops / peak1);
	printf("train_tokens_per_s threads=%d %.0f\n", threads, N / step);

	free(ts);
	free(tf);
	free(tc);
	free(grads);
	free(tok);
	free(tgt);
	adamw_finish(&o);
	grad_acts_finish(&g);
	activations_finish(&a);
	model_destroy(m);
	return 0;
}
