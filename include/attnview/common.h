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

/* Text from outside (a path, a name typed on the command line, a model
 * file's metadata) is never written raw to a terminal: its control
 * characters would be commands to the terminal (attnview(5), TEXT FROM
 * FILES). One character is "shown as it is" when it is valid UTF-8 and none
 * of these, which are escaped:
 *   C0 controls and DEL: \a \b \t \n \v \f \r \e, else \xNN (\x01, \x7f);
 *   C1 controls U+0080..U+009F: their UTF-8 bytes, \xc2\x9b for U+009B;
 *   the characters that turn the text's direction (av_cp_turns_text:
 *   marks, embeddings, overrides, isolates, line and paragraph
 *   separators), which reorder what follows them: \xe2\x80\xae;
 *   each byte that is not part of valid UTF-8: \xNN (\x9b, \xff).
 * Every \xNN is one byte, so an escaped string reads back as a shell's
 * $'...' reads it. */
#define AV_ESC_SIZE 16
/* The character at s (not at its end): the bytes it takes (at least 1), and
 * in esc its escape, or "" when it is shown as it is. *cp (may be NULL) gets
 * its codepoint, or the byte for an invalid one. */
size_t av_char_shown(const char *s, char esc[AV_ESC_SIZE], uint32_t *cp);

/* Whether cp changes the direction of the text around it: Unicode's
 * Bidi_Control characters (ALM, LRM, RLM, LRE to RLO, LRI to PDI) and the
 * line and paragraph separators, which start a new paragraph of
 * direction. Written raw they may turn the rest of a terminal line
 * around: av_char_shown escapes them, the view draws the placeholder. */
bool av_cp_turns_text(uint32_t cp);

/* s for a message (git's quoted paths): as it is when every character is
 * shown as it is and it has no '"' or '\\' and is not empty; else in double
 * quotes, with \" and \\ for those two and the escapes above. A string cut
 * short to fit in n bytes is quoted and followed by "...". Returns out,
 * always terminated (n >= 8). Callers quote the raw text once, where it goes
 * into a message; a function given a name quotes it itself. */
const char *av_quote(const char *s, char *out, size_t n);
#define AV_QUOTE_SIZE 1024
/* av_quote into a buffer that lives until the end of the enclosing block:
 *   av_fail(err, _("%s: cannot open"), AV_Q(path)); */
#define AV_Q(s) av_quote((s), (char[AV_QUOTE_SIZE]){""}, AV_QUOTE_SIZE)

/* s quoted for a POSIX shell where it needs it (for commands printed in
 * messages): as it is, in single quotes, or, when it holds a character that
 * is escaped above, in $'...' with those escapes; out is always terminated. */
void av_shell_quote(const char *s, char *out, size_t n);

/* Milliseconds on the monotonic clock (CLOCK_MONOTONIC: never steps back
 * when the wall clock is set), from an arbitrary start: the one clock of the
 * program, for durations only (the view's timers, the worker's timings, the
 * training's progress). */
double av_now_ms(void);

/* Memory for the large arrays a pass or a step streams through (weights,
 * activations, gradients, the optimizer's moments): from 2 MB on, aligned
 * to 2 MB and marked for the kernel's transparent huge pages
 * (MADV_HUGEPAGE; Debian's default is to give them only where asked), so
 * reading 40 MB of weights takes 20 translations, not 10,000: a causal
 * keystroke at the end reads every weight once (doc/speed.md, "Huge
 * pages"). Zeroed with zero (as calloc). Where the aligned block cannot be
 * had, or the system has no huge pages, malloc's; NULL when out of memory;
 * free() releases it. */
void *av_alloc_large(size_t bytes, bool zero);

/* The decimal digits of n >= 0 (1 for 0), for the width of an index. */
int av_digits(int n);

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
