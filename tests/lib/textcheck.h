/* Whether text is safe to show on a terminal, checked without the
 * program's own av_char_shown so that the check is independent of what it
 * checks: shared by tests/lib/hostile.c and the model fuzz target. */
#ifndef ATTNVIEW_TESTS_TEXTCHECK_H
#define ATTNVIEW_TESTS_TEXTCHECK_H

#include <stdbool.h>
#include <stddef.h>

/* The offset of the first byte sequence in s[0..n) a terminal could take as
 * a command: a C0 control other than line feed and tab (and tab too when
 * !tabs), DEL, a C1 control (U+0080..U+009F), or a byte that is not valid
 * UTF-8; n when there is none. *what (may be NULL) says which. */
size_t text_check(const char *s, size_t n, bool tabs, const char **what);

#endif
