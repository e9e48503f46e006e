/* The thread pool (parallel.h): workers started on first use and kept,
 * handed contiguous slices of an index range through a condition variable.
 *
 * Ordering rules: g_pool_user serialises callers (one job at a time);
 * g_pool.mu guards every field of g_pool. A job's slice 0 runs on the
 * caller, slice i on worker i - 1; the caller waits for busy == 0 before it
 * returns, so the job array on its stack outlives every use. */
#include "attnview/parallel.h"

#include <cblas.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_WORKERS PARALLEL_MAX_THREADS

static int g_threads;			/* 0: follow OpenBLAS */
static _Thread_local int t_in_parallel; /* inside a parallel_for slice */

int parallel_set_threads(int n)
{
	int was = g_threads;
	g_threads = n < 0 ? 0 : n;
	return was;
}

int parallel_threads(void)
{
	int n = g_threads ? g_threads : openblas_get_num_threads();
	if (n < 1)
		n = 1;
	return n > MAX_WORKERS ? MAX_WORKERS : n;
}

/* The attention products are small (T x T x hs per head). OpenBLAS splits a
 * product over its threads once it exceeds 256K multiply-adds (T > 128 here),
 * and from inside our own workers that is ruinous: at T = 256 on 2 cores the
 * backward took 5-20x longer with 2 BLAS threads than with 1 (measured).
 * So BLAS runs one thread per caller while the workers run, and gets its
 * count back after. The count is global to OpenBLAS: nothing else may call
 * BLAS from another thread meanwhile (training has one BLAS caller). These
 * products then always run on one BLAS thread: OpenBLAS's results are
 * repeatable for a given thread count but round differently with another
 * (measured), so fixing it here also keeps them independent of --threads. */
int blas_single_thread_begin(void)
{
	int n = openblas_get_num_threads();
	if (n > 1)
		openblas_set_num_threads(1);
	return n;
}

void blas_single_thread_end(int n)
{
	if (n > 1)
		openblas_set_num_threads(n);
}

typedef struct range_job {
	parallel_fn fn;
	void *ctx;
	int begin, end;
} range_job;

/* The workers: started when first needed, then kept for the life of the
 * process, waiting on a condition variable between jobs, instead of a thread
 * start and join per call (four a training step, and one per layer of the
 * view's forward pass). Measured on the reference training step at 2
 * threads: 22.50 ms against 22.71 ms (medians of 7 alternating runs of
 * bench_train), within the machine's noise but never slower. One job at a
 * time (pool_user); a job's slice 0 runs on the caller, slice i on worker
 * i - 1. */
static struct {
	pthread_mutex_t mu; /* guards the rest */
	pthread_cond_t go, done;
	int started;  /* workers running */
	unsigned gen; /* bumped for every job */
	unsigned first_gen[MAX_WORKERS];
	const range_job *jobs; /* the current job's slices */
	int njobs, busy;       /* slices; workers still on theirs */
} g_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
	    .go = PTHREAD_COND_INITIALIZER,
	    .done = PTHREAD_COND_INITIALIZER};
static pthread_mutex_t g_pool_user = PTHREAD_MUTEX_INITIALIZER;

static void *worker_main(void *p)
{
	int w = (int)(intptr_t)p;
	t_in_parallel = 1;
	pthread_mutex_lock(&g_pool.mu);
	unsigned seen = g_pool.first_gen[w];
	for (;;) {
		while (g_pool.gen == seen)
			pthread_cond_wait(&g_pool.go, &g_pool.mu);
		seen = g_pool.gen;
		/* A worker beyond this job's slices has nothing to do. The
		 * caller waits for busy == 0 before it posts another job, so no
		 * job with a slice for this worker passes unseen. */
		if (w + 1 >= g_pool.njobs)
			continue;
		range_job j = g_pool.jobs[w + 1];
		pthread_mutex_unlock(&g_pool.mu);
		j.fn(j.ctx, j.begin, j.end);
		pthread_mutex_lock(&g_pool.mu);
		if (--g_pool.busy == 0)
			pthread_cond_signal(&g_pool.done);
	}
	return NULL;
}

/* A child of fork() has none of the workers (nor a job in flight), and
 * should not start threads of its own (a multi-threaded process's child may
 * only rely on async-signal-safe calls; ThreadSanitizer stops one that
 * does): it runs every job on the calling thread. */
static bool g_pool_off;

static void pool_after_fork(void)
{
	pthread_mutex_init(&g_pool.mu, NULL);
	pthread_cond_init(&g_pool.go, NULL);
	pthread_cond_init(&g_pool.done, NULL);
	pthread_mutex_init(&g_pool_user, NULL);
	g_pool.started = g_pool.busy = g_pool.njobs = 0;
	g_pool_off = true;
}

/* Start workers up to `want` (g_pool.mu held); returns how many run. */
static int pool_grow(int want)
{
	static bool atfork_set; /* handlers are inherited by a child */
	if (!atfork_set)
		atfork_set = pthread_atfork(NULL, NULL, pool_after_fork) == 0;
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return g_pool.started;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (g_pool.started < want) {
		pthread_t t;
		g_pool.first_gen[g_pool.started] = g_pool.gen;
		if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)g_pool.started) != 0)
			break;
		g_pool.started++;
	}
	pthread_attr_destroy(&attr);
	return g_pool.started;
}

/* Run fn over [0, n) in nt contiguous slices, the first on the calling
 * thread. The slices depend only on n and the thread count and callers write
 * disjoint outputs, so the result is the same whichever thread runs what. A
 * slice without a worker (one could not be started) runs here instead:
 * slower, never wrong; but a team (every slice on a worker of its own, for
 * slices that wait for one another) then runs nothing and gets false. */
static bool run_job(int nt, int n, parallel_fn fn, void *ctx, bool team)
{
	range_job job[MAX_WORKERS];
	for (int i = 0; i < nt; i++)
		job[i] =
		    (range_job){fn, ctx, (int)((long)n * i / nt), (int)((long)n * (i + 1) / nt)};
	pthread_mutex_lock(&g_pool_user);
	pthread_mutex_lock(&g_pool.mu);
	int nw = pool_grow(nt - 1);
	if (nw > nt - 1)
		nw = nt - 1;
	if (team && nw < nt - 1) {
		pthread_mutex_unlock(&g_pool.mu);
		pthread_mutex_unlock(&g_pool_user);
		return false;
	}
	g_pool.jobs = job;
	g_pool.njobs = nw + 1;
	g_pool.busy = nw;
	g_pool.gen++;
	pthread_cond_broadcast(&g_pool.go);
	pthread_mutex_unlock(&g_pool.mu);

	t_in_parallel++;
	fn(ctx, job[0].begin, job[0].end);
	for (int i = nw + 1; i < nt; i++)
		fn(ctx, job[i].begin, job[i].end);
	t_in_parallel--;

	pthread_mutex_lock(&g_pool.mu);
	while (g_pool.busy > 0)
		pthread_cond_wait(&g_pool.done, &g_pool.mu);
	g_pool.njobs = 0;
	pthread_mutex_unlock(&g_pool.mu);
	pthread_mutex_unlock(&g_pool_user);
	return true;
}

void parallel_for_n(int nt, int n, parallel_fn fn, void *ctx)
{
	if (nt > n)
		nt = n;
	/* A parallel_for inside another (a slice of the training step calling
	 * an op that is parallel on its own) runs its whole range in place:
	 * the outer split already occupies the cores. */
	if (nt <= 1 || t_in_parallel || g_pool_off) {
		if (n > 0)
			fn(ctx, 0, n);
		return;
	}
	run_job(nt, n, fn, ctx, false);
}

bool parallel_team(int nt, parallel_fn fn, void *ctx)
{
	if (nt < 2 || nt > parallel_threads() || t_in_parallel || g_pool_off)
		return false;
	return run_job(nt, nt, fn, ctx, true);
}

void parallel_for(int n, parallel_fn fn, void *ctx)
{
	parallel_for_n(parallel_threads(), n, fn, ctx);
}

/* parallel_for for work made of small BLAS calls (see blas_single_thread_begin). */
void parallel_for_blas(int n, parallel_fn fn, void *ctx)
{
	int nt = parallel_threads();
	int nb = blas_single_thread_begin();
	parallel_for_n(nt, n, fn, ctx);
	blas_single_thread_end(nb);
}
