/* Shared by train.c and train_options.c; not part of the public API. */
#ifndef ATTNVIEW_TRAIN_INTERNAL_H
#define ATTNVIEW_TRAIN_INTERNAL_H

#include "attnview/train.h"

/* The characters of a window: the context, and for a causal model the
 * next character of its last position. */
static inline int window_of(const train_options *o)
{
	return (int)o->context + (o->objective == OBJ_CAUSAL);
}

#endif
