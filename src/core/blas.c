#include "attnview/blas.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OpenBLAS's own entry points (declared in its cblas.h under names that vary
 * between versions; these are stable). */
char *openblas_get_corename(void);
char *openblas_get_config(void);
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);

/* Kernels that OpenBLAS falls back to when it does not know the CPU. */
static const char *const generic_kernels[] = {
	"Prescott", "Katmai", "Coppermine", "Northwood", "Banias", "Core2", "Penryn",
	"Dunnington", "Nehalem", "Atom", "Unknown",
};

const char *blas_better_coretype(const char *picked, bool avx512, bool avx2_fma)
{
	if (!picked)
		return NULL;
	bool generic = false;
	for (size_t i = 0; i < sizeof generic_kernels / sizeof generic_kernels[0]; i++)
		if (strcasecmp(picked, generic_kernels[i]) == 0)
			generic = true;
	if (!generic)
		return NULL;
	if (avx512)
		return "SkylakeX";
	if (avx2_fma)
		return "Haswell";
	return NULL;
}

void blas_ensure_fast_kernel(char **argv)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (getenv("OPENBLAS_CORETYPE") || getenv("ATTNVIEW_BLAS_RESTARTED"))
		return;
	__builtin_cpu_init();
	bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
	bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	/* The test suite cannot make OpenBLAS misdetect this machine's CPU; it
	 * names the kernel OpenBLAS would have picked instead. */
	const char *picked = getenv("ATTNVIEW_TEST_PICKED_CORE");
	const char *better = blas_better_coretype(picked ? picked : openblas_get_corename(),
						  avx512, avx2);
	if (!better)
		return;
	/* The marker stops a loop should the kernel still not change. */
	if (setenv("OPENBLAS_CORETYPE", better, 1) != 0 ||
	    setenv("ATTNVIEW_BLAS_RESTARTED", "1", 1) != 0)
		return;
	/* By its own path, so that the process keeps its name (ps, pgrep,
	 * killall: an exec of /proc/self/exe would be called "exe"); by
	 * /proc/self/exe if that path is gone (replaced while running). */
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len > 0) {
		self[len] = '\0';
		execv(self, argv);
	}
	execv("/proc/self/exe", argv);
	/* exec failed: carry on with the slow kernel rather than not at all. */
	unsetenv("OPENBLAS_CORETYPE");
#else
	(void)argv;
#endif
}

const char *blas_corename(void)
{
	return openblas_get_corename();
}

const char *blas_config(void)
{
	return openblas_get_config();
}

/* OpenBLAS's own (it stops them before a fork); weak, so that a BLAS
 * without it links all the same. Its next threaded product starts them
 * again, from the calling thread, whose floating-point mode they inherit. */
int blas_thread_shutdown_(void) __attribute__((weak));

void blas_restart_threads(void)
{
	if (blas_thread_shutdown_)
		blas_thread_shutdown_();
}

void blas_set_threads(int n)
{
	openblas_set_num_threads(n);
}

int blas_threads(void)
{
	return openblas_get_num_threads();
}
