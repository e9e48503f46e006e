/* Which OpenBLAS kernel attnview asks for (blas.h): only OpenBLAS's generic
 * fallbacks are replaced, and only by a kernel the CPU can run. */
#include "harness.h"

#include "attnview/blas.h"

#include <string.h>

static bool is(const char *got, const char *want)
{
	return got && want ? strcmp(got, want) == 0 : got == want;
}

int main(void)
{
	/* A misdetected AVX-512 CPU gets SkylakeX, an AVX2 one Haswell. */
	CHECK(is(blas_better_coretype("Prescott", true, true), "SkylakeX"));
	CHECK(is(blas_better_coretype("Prescott", false, true), "Haswell"));
	CHECK(is(blas_better_coretype("nehalem", false, true), "Haswell"));
	CHECK(is(blas_better_coretype("Core2", true, false), "SkylakeX"));
	/* A CPU without AVX2 keeps the generic kernel: nothing faster runs. */
	CHECK(is(blas_better_coretype("Prescott", false, false), NULL));
	/* A recognised CPU keeps its kernel. */
	CHECK(is(blas_better_coretype("Haswell", true, true), NULL));
	CHECK(is(blas_better_coretype("SkylakeX", true, true), NULL));
	CHECK(is(blas_better_coretype("Cooperlake", true, true), NULL));
	CHECK(is(blas_better_coretype("Zen", false, true), NULL));
	CHECK(is(blas_better_coretype(NULL, true, true), NULL));
	/* The kernel in use has a name. */
	CHECK(blas_corename() && blas_corename()[0]);
	return test_summary("blas");
}
