#include "attnview/ops.h"
#include "attnview/parallel.h"
#include "harness.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The thread pool (src/core/parallel.c). Also built under ThreadSanitizer
 * (test_parallel_tsan), where a race in the pool fails the run.
 *
 * parallel_for hands slices to threads that live for the whole process.
 * Every index must be done exactly once, also when two threads use the pool
 * at the same time and in the child of a fork (which has none of the
 * workers: it must do the work itself, not wait for them forever nor start
 * threads, which ThreadSanitizer forbids after a multi-threaded fork). */

typedef struct count_job {
	int *hits;
	int round;
} count_job;

static void count_range(void *p, int begin, int end)
{
	count_job *j = p;
	for (int i = begin; i < end; i++)
		j->hits[i] += j->round;
}

/* Rounds 1..rounds of parallel_for over n indices, pausing pause_us
 * before every third (the workers then wait for the next job asleep, and
 * must be woken); true if every index got 1 + 2 + ... + rounds. */
static bool count_rounds_paused(int n, int rounds, int pause_us)
{
	int *hits = calloc((size_t)n, sizeof(int));
	if (!hits)
		return false;
	for (int r = 1; r <= rounds; r++) {
		count_job j = {hits, r};
		if (pause_us && r % 3 == 0)
			nanosleep(&(struct timespec){0, pause_us * 1000L}, NULL);
		parallel_for(n, count_range, &j);
	}
	bool ok = true;
	for (int i = 0; i < n; i++)
		ok &= hits[i] == rounds * (rounds + 1) / 2;
	free(hits);
	return ok;
}

static bool count_rounds(int n, int rounds)
{
	return count_rounds_paused(n, rounds, 0);
}

static void *count_thread(void *p)
{
	*(bool *)p = count_rounds(97, 300);
	return NULL;
}

static void pool_check(void)
{
	/* Two threads and three, jobs back to back and apart. */
	parallel_set_threads(2);
	CHECK(count_rounds_paused(1000, 60, 0));
	CHECK(count_rounds_paused(1000, 30, 1000));
	parallel_set_threads(3);
	CHECK(count_rounds_paused(1000, 30, 1000));
	CHECK(count_rounds(1000, 50));
	/* Fewer indices than threads, then more again. */
	CHECK(count_rounds(2, 20));
	CHECK(count_rounds(1000, 5));

	/* Two callers at once. */
	pthread_t t;
	bool ok_thread = false;
	CHECK(pthread_create(&t, NULL, count_thread, &ok_thread) == 0);
	bool ok_main = count_rounds(131, 300);
	pthread_join(t, NULL);
	CHECKF(ok_main && ok_thread, "two threads using the pool: main %d, other %d", ok_main,
	       ok_thread);

	/* A child of fork, with the workers started in the parent. */
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		alarm(20); /* a pool waiting for the parent's workers hangs */
		_exit(count_rounds(1000, 10) ? 0 : 1);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "parallel_for in a forked child: %s %d",
	       WIFSIGNALED(status) ? "killed by signal" : "exit status",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	parallel_set_threads(0);
}

/* Slices: contiguous, in order, covering [0, n) once, as many as asked
 * (fewer when n is smaller), each one's bounds a function of n and the count
 * alone: what makes a sum over slices independent of which thread ran it. */
typedef struct slice_log {
	int begin[PARALLEL_MAX_THREADS], end[PARALLEL_MAX_THREADS];
	int n;
	pthread_mutex_t mu;
} slice_log;

static void log_range(void *p, int begin, int end)
{
	slice_log *l = p;
	pthread_mutex_lock(&l->mu);
	if (l->n < PARALLEL_MAX_THREADS) {
		l->begin[l->n] = begin;
		l->end[l->n] = end;
		l->n++;
	}
	pthread_mutex_unlock(&l->mu);
}

static void slices_check(int nt, int n)
{
	slice_log l = {.mu = PTHREAD_MUTEX_INITIALIZER};
	parallel_for_n(nt, n, log_range, &l);
	int want = nt < n ? nt : n;
	CHECKF(l.n == want, "parallel_for_n(%d, %d): %d slices, want %d", nt, n, l.n, want);
	/* Sort by begin (threads log in any order). */
	for (int i = 1; i < l.n; i++)
		for (int j = i; j > 0 && l.begin[j - 1] > l.begin[j]; j--) {
			int b = l.begin[j], e = l.end[j];
			l.begin[j] = l.begin[j - 1], l.end[j] = l.end[j - 1];
			l.begin[j - 1] = b, l.end[j - 1] = e;
		}
	int at = 0;
	for (int i = 0; i < l.n; i++) {
		CHECKF(l.begin[i] == at && l.end[i] > l.begin[i],
		       "parallel_for_n(%d, %d): slice %d is [%d, %d), expected to start at %d", nt,
		       n, i, l.begin[i], l.end[i], at);
		CHECKF(l.begin[i] == (int)((long)n * i / want),
		       "parallel_for_n(%d, %d): slice %d starts at %d", nt, n, i, l.begin[i]);
		at = l.end[i];
	}
	CHECKF(at == n || n == 0, "parallel_for_n(%d, %d): slices end at %d", nt, n, at);
}

/* A parallel_for inside a slice runs its whole range on that slice's thread:
 * the outer split already has every core, and the pool serves one job. */
typedef struct nested_job {
	int hits[64];
	int inner_slices[8];
} nested_job;

static void inner_range(void *p, int begin, int end)
{
	int *count = p;
	(*count)++;
	(void)begin;
	(void)end;
}

static void outer_range(void *p, int begin, int end)
{
	nested_job *j = p;
	for (int i = begin; i < end; i++) {
		int count = 0;
		parallel_for(64, inner_range, &count);
		j->inner_slices[i] = count;
	}
}

static void nested_check(void)
{
	parallel_set_threads(2);
	nested_job j;
	memset(&j, 0, sizeof j);
	parallel_for(2, outer_range, &j);
	CHECKF(j.inner_slices[0] == 1 && j.inner_slices[1] == 1,
	       "nested parallel_for ran in %d and %d slices, want 1 each", j.inner_slices[0],
	       j.inner_slices[1]);
	parallel_set_threads(0);
}

/* A team's members run at the same time: each says it is here and waits
 * (at most a few seconds) for the other; run one after the other, neither
 * would see the other. */
typedef struct team_job {
	int members;
	atomic_int here;
	bool met[4], ran[4];
	int refused; /* parallel_team calls refused from inside a member */
} team_job;

static void member_fn(void *p, int begin, int end)
{
	team_job *j = p;
	(void)end;
	j->ran[begin] = true;
	atomic_fetch_add(&j->here, 1);
	for (long k = 0; k < 3000000000L && atomic_load(&j->here) < j->members; k++)
		if (!(k & 1023))
			sched_yield();
	j->met[begin] = atomic_load(&j->here) >= j->members;
	if (begin == 0 && !parallel_team(2, member_fn, p))
		j->refused++;
}

static void team_check(void)
{
	parallel_set_threads(2);
	team_job j = {.members = 2};
	atomic_init(&j.here, 0);
	CHECK(parallel_team(2, member_fn, &j));
	CHECKF(j.ran[0] && j.ran[1] && j.met[0] && j.met[1] && j.refused == 1,
	       "a team of two: ran %d %d, met %d %d, refused inside %d", j.ran[0], j.ran[1],
	       j.met[0], j.met[1], j.refused);
	/* More members than threads, or one: refused, nothing run. */
	team_job none = {.members = 3};
	atomic_init(&none.here, 0);
	CHECK(!parallel_team(3, member_fn, &none) && !none.ran[0]);
	CHECK(!parallel_team(1, member_fn, &none) && !none.ran[0]);
	parallel_set_threads(0);
}

/* parallel_for_blas runs its slices with OpenBLAS on one thread and gives
 * OpenBLAS its count back afterwards. */
static int g_blas_seen[PARALLEL_MAX_THREADS];

static void blas_range(void *p, int begin, int end)
{
	(void)p;
	for (int i = begin; i < end; i++)
		g_blas_seen[i] = openblas_get_num_threads();
}

static void blas_check(void)
{
	openblas_set_num_threads(2);
	int before = openblas_get_num_threads();
	parallel_set_threads(2);
	parallel_for_blas(4, blas_range, NULL);
	for (int i = 0; i < 4; i++)
		CHECKF(g_blas_seen[i] == 1, "slice %d ran with %d OpenBLAS threads", i,
		       g_blas_seen[i]);
	CHECKF(openblas_get_num_threads() == before, "OpenBLAS threads %d after, %d before",
	       openblas_get_num_threads(), before);
	parallel_set_threads(0);
}

static void threads_check(void)
{
	parallel_set_threads(3);
	CHECK(parallel_threads() == 3);
	parallel_set_threads(1000);
	CHECK(parallel_threads() == PARALLEL_MAX_THREADS);
	parallel_set_threads(0);
	openblas_set_num_threads(1);
	CHECKF(parallel_threads() == 1, "0 follows OpenBLAS (1 thread): %d", parallel_threads());
	openblas_set_num_threads(2);
	CHECKF(parallel_threads() == 2, "0 follows OpenBLAS (2 threads): %d", parallel_threads());
}

/* Subnormal numbers are flushed to zero on the calling thread and on every
 * worker (ops.c sets it before main; the workers inherit it), so that a
 * slice computes the same bits on whichever thread it runs; with
 * ATTNVIEW_KEEP_SUBNORMALS=1, on none of them. */
typedef struct flush_job {
	atomic_int flushing, members;
} flush_job;

static void flush_member(void *p, int begin, int end)
{
	flush_job *j = p;
	for (int i = begin; i < end; i++) {
		atomic_fetch_add(&j->flushing, ops_flushes_subnormals());
		atomic_fetch_add(&j->members, 1);
	}
}

static void subnormals_check(void)
{
	const char *keep = getenv("ATTNVIEW_KEEP_SUBNORMALS");
	bool want = !(keep && *keep && strcmp(keep, "0") != 0);
	int was = parallel_set_threads(4);
	flush_job j = {0};
	bool team = parallel_team(4, flush_member, &j);
	CHECKF(team, "no team of 4 threads");
	int n = atomic_load(&j.members), f = atomic_load(&j.flushing);
	CHECKF(n == 4 && f == (want ? 4 : 0), "%d of %d threads flush subnormals, want %s", f, n,
	       want ? "all" : "none");
	CHECK(ops_flushes_subnormals() == want);
	volatile float w = 0x1p-100f, v = 0x1p-30f;
	CHECKF((w * v == 0.0f) == want, "2^-130 computed as %g", (double)(w * v));
	parallel_set_threads(was);
	/* OpenBLAS's threads too, which it started when it loaded (ops.c
	 * restarts them): a product of terms 2^-140, whose sums are subnormal,
	 * split over two threads. Read as bits: under DAZ a subnormal compares
	 * equal to 0. */
	enum { N = 192 };
	static float a[N * N], c[N * N];
	for (int i = 0; i < N * N; i++)
		a[i] = 0x1p-70f;
	openblas_set_num_threads(2);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, a, N, 0.0f, c,
		    N);
	int kept = 0;
	for (int i = 0; i < N * N; i++) {
		uint32_t u;
		memcpy(&u, &c[i], sizeof u);
		kept += u != 0;
	}
	CHECKF(kept == (want ? 0 : N * N), "%d of %d subnormal sums kept, want %s", kept, N * N,
	       want ? "none" : "all");
}

int main(void)
{
	subnormals_check();
	threads_check();
	for (int nt = 1; nt <= 5; nt++)
		for (int n = 0; n <= 9; n++)
			slices_check(nt, n);
	slices_check(3, 1000);
	nested_check();
	team_check();
	blas_check();
	pool_check();
	return test_summary("parallel");
}
