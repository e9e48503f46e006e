/* Why the model predicts what it predicts: the logit lens (what
 * the residual stream after each block would predict through the final
 * LayerNorm and the tied unembedding) and the direct logit attribution of
 * each head (what its output, through the final LayerNorm with its scale
 * frozen, adds to one logit). Both from one plain forward pass of the text
 * (model_forward: no position masked), exact formulas in man 5 attnview. */
#ifndef ATTNVIEW_LENS_H
#define ATTNVIEW_LENS_H

#include "attnview/model.h"

/* The rows of the pass that lens and attribution report: positions row0 ..
 * row0 + nrows - 1 of a text of n (0 and n: all; the view asks for one). */
typedef struct lens_rows {
	int row0, nrows;
} lens_rows;

/* The lens of ids[0..n) at rows rs into top_id, top_p (L, nrows, topk):
 * after block l, the topk characters of softmax(lnf(x_l) wte^T + out_b) at
 * each position, most probable first (the softmax summed in double).
 * commit[nrows] (may be NULL): the first block from which on the top
 * character is the last block's, that is the model's own prediction in
 * this pass. ws: B >= 1, T >= n. */
bool logit_lens(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs, int topk,
		int32_t *top_id, float *top_p, int *commit, av_error *err);

/* The lens's probability of target[i] (one id per row) after each block
 * at rows rs into p (L, nrows): the --export figure of the lens, whose
 * target is the last block's top-1. ws: B >= 1, T >= n. */
bool logit_lens_p(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs,
		  const int32_t *target, float *p, av_error *err);

/* Direct logit attribution at rows rs of ids[0..n), each array indexed by
 * the row from rs.row0. target[i] is the character whose logit is taken
 * apart (NULL: the pass's own top-1 there); target_out[i] receives it.
 * With s = the final LayerNorm's 1/std at the row and
 * c(u) = gamma . (u - mean(u)) . wte[target], a part u of the residual
 * stream adds s c(u) to the logit:
 *   heads[i][l][h] = s c(y_h W_O^h)      head h of block l's output
 *   rest[i]        = s (c(embedding) + sum_l c(proj_b + rounding) + c(mlp_l))
 *                    + beta . wte[target] + out_b[target]
 *   logit[i]       = the logit of the pass (float), = sum heads + rest up to
 *                    the rounding of the pass (man 5 attnview bounds it).
 * The parts are summed in double. heads (nrows, L, H); ws: B >= 1, T >= n. */
bool logit_attribution(const model *m, activations *ws, const int32_t *ids, int n, lens_rows rs,
		       const int32_t *target, int32_t *target_out, float *logit, float *heads,
		       float *rest, av_error *err);

#endif
