/* The real program's --dump (ATTNVIEW_BIN), for tests that check the
 * program prints what the library computes. */
#ifndef ATTNVIEW_TESTS_RUN_DUMP_H
#define ATTNVIEW_TESTS_RUN_DUMP_H

#include "json.h"

/* attnview --dump ARGS... (args NULL-terminated), which must exit 0, its
 * output parsed; NULL (and a failed check) otherwise. */
json *test_dump_json(const char *const *args);

#endif
