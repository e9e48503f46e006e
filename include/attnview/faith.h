/* The faithfulness meter: does a head's attention point
 * at the keys that matter? For a row (a query position), the effect of
 * blanking each key it sees (its id replaced by the mask id in a masked
 * model, the unknown id in a causal one) on the loss at that row, and per
 * head the Spearman correlation of the row's attention with those effects
 * (Abnar & Zuidema 2020 report such correlations). A row costs a forward
 * pass per key; exact formulas in man 5 attnview, section 10. */
#ifndef ATTNVIEW_FAITH_H
#define ATTNVIEW_FAITH_H

#include "attnview/model.h"

#define FAITH_BATCH 8 /* texts per forward pass */

/* The meter at rows row0 .. row0 + nrows - 1 of ids[0..n), each array
 * indexed by the row from row0:
 *   loss[r]         the row's loss (nats), NAN where it has none (a causal
 *                   model's last row, a target that is unknown or special)
 *   effect[r][j]    (nrows, n) the loss with key j blanked minus loss[r];
 *                   NAN for the keys the row does not see (a causal model's
 *                   later ones; a masked model's row itself, already masked)
 *   spearman[r][k]  (nrows, L H) head k's (k = l H + h) Spearman correlation
 *                   of its attention at the row (in the row's own pass)
 *                   with effect[r]; NAN where either is constant, the row has
 *                   fewer than 2 keys or no loss
 *   att[r][k][j]    (nrows, L H, n; may be NULL) that attention.
 * stop (may be NULL) is asked between passes: when it says true, the
 * computation ends early and returns false with err empty. */
bool faith_rows(const model *m, const int32_t *ids, int n, int row0, int nrows, float *loss,
		float *effect, float *spearman, float *att, bool (*stop)(void *ctx),
		void *stop_ctx, av_error *err);

/* Spearman's rank correlation of x and y (n each; ties get their mean
 * rank), NAN if fewer than 2 or either is constant. */
double faith_spearman(const float *x, const float *y, int n);

#endif
