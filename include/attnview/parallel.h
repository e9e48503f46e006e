/* The thread pool: parallel_for over an index range, on workers started once
 * and kept for the life of the process. Used by the forward ops, the
 * training step and the optimizer; knows nothing of either.
 *
 * Determinism: the range [0, n) is cut into contiguous slices that depend
 * only on n and the thread count, and callers write disjoint outputs per
 * index, so the result does not depend on which thread ran which slice. */
#ifndef ATTNVIEW_PARALLEL_H
#define ATTNVIEW_PARALLEL_H

#include <stdbool.h>

#define PARALLEL_MAX_THREADS 64

typedef void (*parallel_fn)(void *ctx, int begin, int end);

/* Threads for parallel_for. 0 (the default) follows
 * openblas_get_num_threads(), so one --threads setting governs everything;
 * clamped to [1, PARALLEL_MAX_THREADS]. Returns the setting it replaces. */
int parallel_set_threads(int n);
int parallel_threads(void);

/* fn(ctx, begin, end) over [0, n) in parallel_threads() contiguous slices,
 * the first on the calling thread; returns when all are done. A
 * parallel_for called from inside a slice runs its whole range in place (the
 * outer split already occupies the cores). In the child of a fork() every
 * slice runs on the calling thread. */
void parallel_for(int n, parallel_fn fn, void *ctx);
/* The same in exactly nt slices (nt <= n; fewer if n is smaller). */
void parallel_for_n(int nt, int n, parallel_fn fn, void *ctx);
/* fn(ctx, i, i + 1) for i in [0, nt), every member on a thread of its own at
 * the same time (member 0 on the caller), so that they may wait for one
 * another (a spin barrier between the phases of a small job that one wake-up
 * per phase would cost more than). Returns false, having run nothing, when
 * it cannot promise that: nt < 2 or above parallel_threads(), inside a
 * slice, in a fork()ed child, or a worker could not be started. Like every
 * job it waits while another thread's job holds the pool. */
bool parallel_team(int nt, parallel_fn fn, void *ctx);
/* parallel_for for work made of small BLAS calls: the slices run with
 * OpenBLAS single-threaded, and OpenBLAS gets its thread count back
 * afterwards. The slice count is taken first. */
void parallel_for_blas(int n, parallel_fn fn, void *ctx);

/* OpenBLAS on one thread until blas_single_thread_end(the returned count).
 * The count is global to OpenBLAS: nothing may call BLAS from another thread
 * meanwhile. */
int blas_single_thread_begin(void);
void blas_single_thread_end(int saved);

#endif
