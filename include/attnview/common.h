/* Shared vocabulary of the engine: error reports and a few limits. */
#ifndef ATTNVIEW_COMMON_H
#define ATTNVIEW_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Engine functions that can fail return bool (or a count, -1 on failure) and
 * leave a complete, user-facing sentence here: what went wrong, where (file and
 * byte offset), and what to do. Library code never prints and never exits. */
typedef struct av_error {
	char msg[1024];
} av_error;

#if defined(__GNUC__)
#define AV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AV_PRINTF(a, b)
#endif

/* Set the message (printf-style). err may be NULL. Always returns false so a
 * failing function can `return av_fail(err, ...)`. */
bool av_fail(av_error *err, const char *fmt, ...) AV_PRINTF(2, 3);
/* As av_fail, with ": <strerror(errnum)>" appended. */
bool av_fail_errno(av_error *err, int errnum, const char *fmt, ...) AV_PRINTF(3, 4);

/* s quoted for a POSIX shell where it needs it (for commands printed in
 * messages); out is always terminated. */
void av_shell_quote(const char *s, char *out, size_t n);

/* Hard limits, shared by the loader, the trainer and the view. */
#define AV_MAX_CONTEXT 1024	 /* tokens per sequence */
#define AV_MAX_DIM 2048		 /* model width d */
#define AV_MAX_HEADS 64
#define AV_MAX_LAYERS 32
#define AV_MAX_VOCAB 200000	 /* includes the special tokens */
#define AV_MAX_PARAMS (1u << 28) /* 256 Mi floats = 1 GiB */
#define AV_MAX_STRING 4096	 /* name and corpus strings in a model file */
/* Attention cells of one full-context pass, layers * heads * context^2: the
 * view and the dump keep two floats per cell, so this bounds what a model
 * file can make attnview allocate (1 GiB) before it runs. */
#define AV_MAX_ATTN_CELLS (1u << 27)

#endif
