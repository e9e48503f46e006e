/* Shared by tokenizer.c and cleaner.c; not part of the public API. */
#ifndef ATTNVIEW_TOKENIZER_INTERNAL_H
#define ATTNVIEW_TOKENIZER_INTERNAL_H

#include "attnview/tokenizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Room for `extra` more codepoints in b. */
bool cp_buf_reserve(cp_buf *b, size_t extra);

static inline bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

#endif
