/* Helpers shared by the fuzz targets. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[512];
static int scratch_fd = -1;

static void remove_scratch(void)
{
	if (scratch_fd >= 0) {
		close(scratch_fd);
		unlink(scratch);
	}
}

const char *fuzz_scratch(const void *data, size_t n)
{
	if (scratch_fd < 0) {
		const char *dir = getenv("TMPDIR");
		snprintf(scratch, sizeof scratch, "%s/attnview-fuzz.XXXXXX",
			 dir && *dir ? dir : "/tmp");
		scratch_fd = mkstemp(scratch);
		if (scratch_fd < 0)
			return NULL;
		atexit(remove_scratch);
	}
	if (ftruncate(scratch_fd, 0) != 0)
		return NULL;
	const char *p = data;
	size_t done = 0;
	while (done < n) {
		ssize_t k = pwrite(scratch_fd, p + done, n - done, (off_t)done);
		if (k <= 0)
			return NULL;
		done += (size_t)k;
	}
	return scratch;
}
