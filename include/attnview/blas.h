/* OpenBLAS: which kernel it runs, and making sure it is a fast one.
 *
 * OpenBLAS 0.3.21 (Debian 12) does not recognise some recent CPUs and falls
 * back to its generic kernels (e.g. "Prescott"), several times slower. The
 * kernel is chosen when the library loads, from OPENBLAS_CORETYPE, so the only
 * way to change it is to set the variable and start again: blas_ensure_fast_kernel
 * re-executes the program once with OPENBLAS_CORETYPE set when the CPU can run
 * a faster kernel than the one picked. A user's own OPENBLAS_CORETYPE is
 * always respected. */
#ifndef ATTNVIEW_BLAS_H
#define ATTNVIEW_BLAS_H

#include <stdbool.h>

/* The kernel to ask for instead of `picked`, or NULL to keep it. */
const char *blas_better_coretype(const char *picked, bool avx512, bool avx2_fma);

/* Call first in main(). Returns only if no restart was needed or possible. */
void blas_ensure_fast_kernel(char **argv);

const char *blas_corename(void); /* e.g. "SkylakeX" */
const char *blas_config(void);	 /* OpenBLAS build description */
void blas_set_threads(int n);
/* Stops OpenBLAS's worker threads, started when it loaded; its next threaded
 * product starts them again from the calling thread, with that thread's
 * floating-point mode (ops.c: subnormals flushed to zero). */
void blas_restart_threads(void);
int blas_threads(void);

#endif
