/* Activation patching between two texts of the same length: run
 * the text, and again with one head's output (at one
 * position, or at all of them) taken from the run of the other text, and
 * say how much the logit difference of two characters at one position
 * moves. Exact formulas in man 5 attnview. */
#ifndef ATTNVIEW_PATCH_H
#define ATTNVIEW_PATCH_H

#include "attnview/model.h"

/* Where the two characters of the logit difference come from. */
typedef enum patch_targets_from {
	PATCH_TOP1,	  /* the text's top-1 at pos and the other text's */
	PATCH_GIVEN,	  /* the caller's (--targets, the view's Alt-D) */
	PATCH_DIFFERENCE, /* the characters where the two texts differ */
	PATCH_NFROMS
} patch_targets_from;
/* "top-1", "given", "difference": the dump's "targets_from". */
const char *patch_targets_from_name(patch_targets_from f);

/* What patching found. Cells are indexed [l * H + h]. */
typedef struct patch_result {
	int n, L, H;	   /* tokens, blocks, heads per block */
	int pos;	   /* the row whose logits are read */
	int32_t target[2]; /* a and b: the logit difference is z_a - z_b */
	patch_targets_from from;
	float diff;	   /* z_a - z_b in the run of the text */
	float diff2;	   /* the same in the run of the other text */
	float *heads;	   /* (L, H): head l.h patched at every position */
	float *cells;	   /* (n, L, H): head l.h patched at one position */
} patch_result;

/* Patch ids2 into ids (both n tokens) and read the logits at row pos. Each
 * number is D(patched) - D(text), with D = z_a - z_b at pos. A patched run
 * shares the text's pass up to the patched block, runs that block from its
 * projection on the patched rows only, the blocks after it on every row and
 * the last one on row pos only; D(text) comes from the same last-row
 * computation. A patch that changes no bit is 0 without a run, so ids2 =
 * ids gives 0 everywhere, exactly; so are a position after pos in a causal
 * model and a position other than pos in the last block, which cannot reach
 * row pos. targets (2) may be NULL: a = the text's top-1 at pos, b
 * = the other text's (or the text's second when the two agree). Heads off
 * in ws->ablate stay off in every run. ws: B >= 1, T >= n. Fills r (free
 * with patch_result_finish). */
bool activation_patch(const model *m, activations *ws, const int32_t *ids, const int32_t *ids2,
		      int n, int pos, const int32_t *targets, patch_result *r, av_error *err);
/* The same, asking stop(ctx) between heads (stop may be NULL): when it says
 * true it gives up (false, r empty), as the view's worker does when a newer
 * text has come. */
bool activation_patch_until(const model *m, activations *ws, const int32_t *ids,
			    const int32_t *ids2, int n, int pos, const int32_t *targets,
			    bool (*stop)(void *), void *ctx, patch_result *r, av_error *err);
void patch_result_finish(patch_result *r);

/* Where ids and ids2 (n each) differ in one place only, d: a = ids[d] and
 * b = ids2[d], the question "which heads carry b rather than a" (the two
 * characters of 她 -> 他); true. Else (no difference, or several) false:
 * activation_patch's own default, the top-1s, is the question then. */
bool patch_difference_targets(const int32_t *ids, const int32_t *ids2, int n, int32_t out[2]);

#endif
