/* What roles.c and role_columns.c share (private to them): the facts about
 * a text every score reads, and the two shares the scores are made of. */
#ifndef ATTNVIEW_SRC_ROLES_INTERNAL_H
#define ATTNVIEW_SRC_ROLES_INTERNAL_H

#include "attnview/analysis.h"

#include <stdbool.h>
#include <stdint.h>

enum {
	SCRIPT_NONE,
	SCRIPT_HAN,
	SCRIPT_LATIN,
	SCRIPT_KANA,
	SCRIPT_HANGUL,
	SCRIPT_CYRILLIC,
	SCRIPT_GREEK,
	NSCRIPTS
};

/* Facts about the text, made once per head. The memory is on head_roles's
 * stack (about 80 KiB at AV_MAX_CONTEXT tokens): scoring allocates nothing. */
typedef struct role_text {
	int n;
	const token *tok;
	uint8_t delim[AV_MAX_CONTEXT], script[AV_MAX_CONTEXT], mark[AV_MAX_CONTEXT];
	int cls[AV_MAX_CONTEXT];	/* the first token of the same id (the
					   keyword's class: every unknown
					   character one class) */
	int prev_copy[AV_MAX_CONTEXT];	/* the last earlier copy, or -1 */
	int next_copy[AV_MAX_CONTEXT];	/* the first later copy, or -1 */
	int run[AV_MAX_CONTEXT];	/* the first place of its run of one character */
	int ind_keys[AV_MAX_CONTEXT];	/* row i's induction keys (roles.c) */
	double ind_chance;		/* their share of the keys, summed over
					   induction's rows */
	int prev_delim[AV_MAX_CONTEXT]; /* the last delimiter before i, or -1 */
	int next_delim[AV_MAX_CONTEXT]; /* the first delimiter after i, or -1 */
	int word[AV_MAX_CONTEXT];	/* the first token of i's word or phrase */
	int par[AV_MAX_CONTEXT][2];	/* the same place in the line before, after,
					   FAR or more away (-1: none) */
	int best[AV_MAX_CONTEXT];	/* the key row i looks at, or -1 */
	bool causal;			/* row i sees keys 0..i only */
	int count[AV_MAX_CONTEXT];	/* rows that look at key j */
	int cls_count[AV_MAX_CONTEXT];	/* ... at a copy of character cls */
	int cls_near[AV_MAX_CONTEXT];	/* ... of which within two of the row */
	int diag[2 * AV_MAX_CONTEXT];	/* rows that look at c - i, by c */
	uint16_t prefix[NSCRIPTS][AV_MAX_CONTEXT + 1]; /* tokens of each script before i */
	int nscripts;
	/* What row i has to choose from (bits): CHOICE_COPY, it sees a key
	 * FAR or more away that is no copy of its character; CHOICE_DELIM, a
	 * key other than itself that is no space or mark. Without one, looking
	 * at a copy (a mark) is what looking anywhere gives: in a text of
	 * spaces every key is both. */
	uint8_t choice[AV_MAX_CONTEXT];
	/* Rows of a word whose delimiters (its start) are all FAR or more away,
	 * where a band cannot reach them, and how many of those look there;
	 * and the role's rows that look within two of themselves. */
	int delim_far, delim_far_hits, delim_near;
	int word_far, word_far_hits, word_near;
	/* Rows with a line before (0) or after (1), and those that look at
	 * their place in it. */
	int par_rows[2], par_hits[2];
	/* The rows that look at key j at an earlier copy's next character
	 * (induction) and at a copy (duplicate). */
	uint16_t ind_on[AV_MAX_CONTEXT], dup_on[AV_MAX_CONTEXT];
} role_text;

#define CHOICE_COPY  1
#define CHOICE_DELIM 2

/* hits of rows, 0 under ROLE_MIN_ROWS rows */
static inline double share(int hits, int rows)
{
	return rows >= ROLE_MIN_ROWS ? (double)hits / rows : 0;
}

/* A share s of rows beyond the share c that looking anywhere would give:
 * (s - c) / (1 - c), in [0, 1]; 0 where chance leaves no room. */
static inline double above_chance(double s, double c)
{
	double v = 1 - c >= 0.05 ? (s - c) / (1 - c) : 0;
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* role_columns.c: the keyword and its column (the characters and the key
 * most rows look at, their chance, the word before the key); a column's
 * rows taken from induction and duplicate; induction's hits on one key. */
void role_column_score(role_scores *o, const role_text *x);
void role_column_explains(role_scores *o, const role_text *x);
void role_induction_spread(role_scores *o, const role_text *x);

#endif
