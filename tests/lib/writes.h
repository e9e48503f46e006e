/* How loud a head is on a text: the mean norm of what it adds to the
 * residual stream (its output through its slice of the output projection)
 * over the mean norm of the stream its layer reads. A head that parks its
 * rows on a key whose value adds little writes little, whatever its
 * picture shows. Read from the activations of the pass that made the
 * weights (model_attend), which the labeller's callers do not pass. */
#ifndef ATTNVIEW_TESTS_WRITES_H
#define ATTNVIEW_TESTS_WRITES_H

#include "attnview/model.h"

/* Head h of layer l after a pass over T tokens on ws; -1 when out of
 * memory. */
double head_writes(const model *m, const activations *ws, int T, int l, int h);

#endif
