/* Does the picture show what a head's label says? The tests' own reading of
 * a heatmap, written apart from the labeller (src/core/roles.c) and simpler
 * than it: each row's brightest key (its largest weight, the first on
 * ties), counted the way a student counts cells, against the claim each
 * role's sentence makes (attnview(1), HEAD ROLES):
 *
 *   previous, next, self, first   the key one to the left, one to the
 *                                 right, the row itself, key 0
 *   k left / k right, mirror c    the key k away; the key c - i
 *   local                         a key within two places of the row; never
 *                                 in three characters
 *   keyword C                     a copy of the label's characters
 *   delimiter                     the nearest space or mark before or after
 *                                 the row (rows with a key that is none),
 *                                 two marks or more, no one key holding
 *                                 PICTURE_HIDDEN of the rows (that is a
 *                                 column; the labeller: half), and no band
 *                                 that lands on near marks: of the rows
 *                                 whose marks are three places or more away
 *                                 (three or more) PICTURE_FAR look there
 *                                 (the labeller: half)
 *   word start                    the first character of the row's own word
 *                                 or phrase (rows two or more into it), two
 *                                 starts or more, no column, no band as for
 *                                 delimiter (rows three or more into it)
 *   induction                     the key just after another copy of the
 *                                 row's character (three or more away)
 *   duplicate                     another copy of the row's character (rows
 *                                 with a key as far that is none)
 *   line-parallel                 the same place in the line before or
 *                                 after (the label's: the line before
 *                                 alone, of the rows that have one, or the
 *                                 line after); the text must have lines
 *   same script                   a key of the row's own script, well over
 *                                 an even spread's share
 *   broad                         no key over three times an even share
 *
 * A row looks at its brightest key when that key has three times an even
 * share or more (halfway between an even share and all, where that is
 * less: attnview(1)'s definition); a flatter row looks nowhere. A
 * claim holds when at least PICTURE_MOST of the rows it speaks of show it
 * (the labeller asks half of its own, stricter count: a lenient reading, so
 * a holding claim never hangs on one kernel's last digit). */
#ifndef ATTNVIEW_TESTS_PICTURE_H
#define ATTNVIEW_TESTS_PICTURE_H

#include "attnview/analysis.h"

#include <stdbool.h>
#include <stddef.h>

#define PICTURE_MOST 0.4
#define PICTURE_HIDDEN 0.6
#define PICTURE_FAR    0.3

/* Does the picture show role r as rs names it (its offset, its mirror's c,
 * its keyword's characters)? why gets the count ("31 of 74 rows: one to
 * the left") or what rules it out ("one key holds 60 of 74 rows"). */
bool picture_holds(const attn_matrix *a, const token *t, const role_scores *rs, role_kind r,
		   char *why, size_t size);

/* Every role the label names holds (an unclear label or "too short to
 * tell" claims nothing: true). why as above, of the first that fails. */
bool picture_agrees(const attn_matrix *a, const token *t, const role_scores *rs, char *why,
		    size_t size);

/* A mechanism the label hides: PICTURE_HIDDEN of the rows with an earlier
 * copy, and twice as many as looking anywhere gives (the share of the
 * keys a row sees that follow a copy), a quarter of the text's rows or
 * more, look just after it, those
 * on a key that holds half of all rows left out (a column's rows), and so
 * those on one key that holds more than half of them, and the
 * label does not say induction (as its role, its second or, unclear, the
 * closest). The labeller names induction from half of its stricter count:
 * the margin again keeps a kernel's last digit out of the verdict. */
bool picture_hides_induction(const attn_matrix *a, const token *t, const role_scores *rs,
			     char *why, size_t size);

#endif
