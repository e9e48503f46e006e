/* Which positions of a text the mechanism of a lab task decides (lab.h).
 *
 * The lab trains its models and scores them at those positions only: the
 * rest of its texts is random letters, which the model is never asked about
 * and of which it may be sure of the wrong one. A loss over every position
 * of a text then says nothing of the task; the loss at the positions the
 * task decides is what the lab reports (`attnview --train --task`), and
 * what the view shows beside the other for a lab model (Alt-A).
 *
 * On a text someone types there are no generator's marks, so each task has
 * a rule read from the text itself, true at every position its generator
 * scores (tests/unit/test_lab_positions.c) and, by chance, at a few more:
 *   previous, two-back  (causal) the next character is the one 1 (2) back
 *   induction           (causal) the character occurred before, and the next
 *                       one is the one after its latest earlier copy
 *   reverse             (masked) the character equals its mirror image
 *                       about the first '|'
 *   delimiter           (masked) the letter the nearest mark before it
 *                       stands for (LAB_MARK_LETTERS)
 *   class               (masked) a digit that is written elsewhere too
 *   next                (masked) a letter the same as the next character
 *   band                (masked) a letter between two, the later of them
 *   first               (masked) the first character, a digit, again
 *   word-start          (masked) a letter one or more into its word that
 *                       is the word's first
 *   line-parallel       (masked) a letter the same as the one at its place
 *                       in the line before or after (lines end in '.')
 *   duplicate           (causal) a letter at LAB_REGISTER places or more
 *                       that stands once among the first LAB_REGISTER, and
 *                       the next character is the digit of its place there
 *   script              (masked) a Latin or Greek letter the same as the
 *                       nearest letter of its script before it */
#ifndef ATTNVIEW_LAB_POSITIONS_H
#define ATTNVIEW_LAB_POSITIONS_H

#include "attnview/model.h"

#include <stdint.h>

/* The delimiter task: the letter each of the marks ".,;!?" stands for. */
#define LAB_MARK_LETTERS "aeiou"
/* The line-parallel task: letters a line (a full stop closes each). */
#define LAB_LINE 7
/* The duplicate task: the letters of the register that opens its texts. */
#define LAB_REGISTER 10

/* The lab task a model was trained on, from its metadata (a lab model's
 * corpus is "lab task NAME (generated, seed S)"), if this module has its
 * rule; else NULL. */
const char *lab_model_task(const model *m);

/* decided[i] = 1 where task's mechanism decides position i of cps[0..n) (a
 * causal task: the character after i; a masked one: the character at i),
 * else 0; returns how many, or -1 for a task without a rule. */
int lab_decided(const char *task, const uint32_t *cps, int n, uint8_t *decided);

/* The names of the tasks with a rule, NULL-terminated (the lab's test
 * checks they are its tasks). */
extern const char *const lab_rule_names[];

#endif
