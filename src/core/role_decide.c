/* The label a head's role scores earn (analysis.h, role_decide): the bars
 * each score must clear, and which of the roles that clear them the label
 * names, alone, as two, or as unclear. The scores come from roles.c; the
 * bars are measured on the lab's heads (lab.h; tests/bench/bench_labeller.c
 * prints the measurement). */
#include "attnview/analysis.h"
#include "attnview/tokenizer.h"

#include <stdlib.h>

/* The bars: "most rows" for every role, the choice a person makes when
 * counting rows; tests/bench/bench_labeller.c measures their precision and recall
 * on the lab's heads. */
static const double bars[ROLE_NKINDS] = {
    [ROLE_PREVIOUS] = 0.5,  [ROLE_NEXT] = 0.5,	    [ROLE_SELF] = 0.5,	    [ROLE_FIRST] = 0.5,
    [ROLE_DELIMITER] = 0.5, [ROLE_DUPLICATE] = 0.5, [ROLE_INDUCTION] = 0.5, [ROLE_LOCAL] = 0.5,
    [ROLE_OFFSET] = 0.5,    [ROLE_KEYWORD] = 0.5,   [ROLE_SCRIPT] = 0.5,    [ROLE_PARALLEL] = 0.5,
    [ROLE_MIRROR] = 0.5,    [ROLE_BROAD] = 0.5,	    [ROLE_WORDSTART] = 0.5,
};

double role_bar(role_kind r)
{
	return r < ROLE_NKINDS ? bars[r] : 1;
}

/* ---- the label ------------------------------------------------------------------ */

/* A score computed with chance taken out may miss an exact bar by the last
 * bit of a double: it clears it within ROLE_ROUNDING. */
#define ROLE_ROUNDING 1e-9

static bool passes(const role_scores *o, role_kind r)
{
	return o->s[r] > 0 && o->s[r] >= (o->bars ? o->bars : bars)[r] - ROLE_ROUNDING;
}

/* Roles that come with other patterns: named only when no other is. */
static bool fallback(role_kind r)
{
	return r == ROLE_LOCAL || r == ROLE_SCRIPT || r == ROLE_BROAD;
}

/* Word starts all two to the left (words of three characters, phrases of
 * three): no row shows a start a band would not reach, and where a band
 * holds most rows the band, or the place most rows look at, is what the
 * picture shows; word start is not named (the runner-up may say it). */
static bool band_alone(const role_scores *o, role_kind r)
{
	return r == ROLE_WORDSTART && o->word_far == 0 && passes(o, ROLE_LOCAL);
}

/* The role with the highest score among those that pass (skip excluded;
 * ties: the first in role_kind's order), or ROLE_NKINDS. */
static role_kind best_passing(const role_scores *o, role_kind skip, bool fallbacks)
{
	role_kind best = ROLE_NKINDS;
	for (int r = 0; r < ROLE_NKINDS; r++)
		if ((role_kind)r != skip && fallback((role_kind)r) == fallbacks &&
		    passes(o, (role_kind)r) && !band_alone(o, (role_kind)r) &&
		    (best == ROLE_NKINDS || o->s[r] > o->s[best]))
			best = (role_kind)r;
	return best;
}

/* The highest score but the label's and broad's (the runner-up). */
static role_kind runner_up(const role_scores *o, role_kind label)
{
	role_kind best = ROLE_NKINDS;
	for (int r = 0; r < ROLE_NKINDS; r++)
		if ((role_kind)r != label && r != ROLE_BROAD && o->s[r] > 0 &&
		    (best == ROLE_NKINDS || o->s[r] > o->s[best]))
			best = (role_kind)r;
	return best;
}

/* The keyword's characters are spaces or marks (none known: the training
 * timeline keeps no characters). */
static bool keys_are_delimiters(const role_scores *o)
{
	for (int k = 0; k < o->nkeys; k++)
		if (!cp_is_delimiter(o->keys[k]))
			return false;
	return true;
}

/* A place within two of the row: where a band's rows look too. */
static bool positional(const role_scores *o, role_kind r)
{
	return r == ROLE_PREVIOUS || r == ROLE_SELF || r == ROLE_NEXT ||
	       (r == ROLE_OFFSET && abs(o->offset) <= 2);
}

/* Two roles that clear their bars on the same rows for one reason: the
 * label names the one that says more. */
static bool nested(const role_scores *o, role_kind a, role_kind b)
{
	role_kind lo = a < b ? a : b, hi = a < b ? b : a;
	if (a == ROLE_INDUCTION) /* a repeat's keys, at an offset or a place */
		return true;
	if (lo == ROLE_OFFSET && hi == ROLE_PARALLEL)
		return true;
	/* A column at key 0: the keyword's rows are the first's, but for
	 * those of its second character, fewer (the runner-up says it); so
	 * when the keyword is scored as that one place. */
	if (lo == ROLE_FIRST && hi == ROLE_KEYWORD)
		return o->key_places <= 1 || o->key_first || (o->by_place && o->column == 0);
	if (lo == ROLE_DELIMITER && hi == ROLE_KEYWORD)
		return keys_are_delimiters(o);
	return false;
}

static void set_label(role_scores *o, role_kind r, role_verdict v)
{
	o->role = r;
	o->score = r < ROLE_NKINDS ? o->s[r] : 0;
	o->verdict = v;
}

/* The role that says most among those the highest score's rows also fit
 * (ROLE_NKINDS: a band or nothing above the fallbacks). */
static role_kind refine(const role_scores *o, role_kind best)
{
	/* A place that a reason explains: line-parallel keys sit a line's
	 * length away, an induction head's a repeat's. */
	if (best == ROLE_OFFSET && passes(o, ROLE_PARALLEL))
		best = ROLE_PARALLEL;
	/* Rows split between neighbouring places (one and two to the left) are
	 * a band: local, when the best place holds under 60% of the
	 * rows and a quarter or more look near but elsewhere. */
	if (positional(o, best) && passes(o, ROLE_LOCAL) && o->s[best] < 0.6 &&
	    o->s[ROLE_LOCAL] - o->s[best] >= 0.25)
		best = ROLE_NKINDS;
	/* Rows on every space are a keyword ␣ head, unless most look at the
	 * nearest: a delimiter head. One mark that holds most rows, those of
	 * other phrases too, is a column all the same. */
	if (best == ROLE_KEYWORD && passes(o, ROLE_DELIMITER) && keys_are_delimiters(o) &&
	    2 * o->column_rows < o->n)
		best = ROLE_DELIMITER;
	/* A keyword that is not the nearest mark: a band over a text of
	 * common letters lands on two of them on most rows ("keyword a t" in
	 * English): a keyword whose rows look mostly within two of themselves,
	 * in a band that holds as many rows, is the band. As many rows, not
	 * as high a score: the keyword's has chance taken out, and on "la la
	 * la" a keyword of 13 rows of 13 scores 1.00 where 61% land on ␣ or a
	 * by chance, the band of 12 rows 0.92. */
	const int kr = o->rows[ROLE_KEYWORD];
	const double key_share = kr > 0 ? (double)o->hits[ROLE_KEYWORD] / kr : 0;
	if (best == ROLE_KEYWORD && passes(o, ROLE_LOCAL) &&
	    o->s[ROLE_LOCAL] >= key_share - ROLE_CLOSE && 2 * o->key_near >= o->hits[ROLE_KEYWORD])
		best = ROLE_NKINDS;
	/* Most rows on key 0: the first column, however many rows a keyword of
	 * its character and another one gathers (the runner-up says it). */
	if (best == ROLE_KEYWORD && passes(o, ROLE_FIRST))
		best = ROLE_FIRST;
	/* Rows that follow their script: in a text of two scripts, a few
	 * letters of each shown gather the rows of their script, and two of
	 * them may hold half the rows. When the rows keep to their own script
	 * more than to those two characters (chance taken out), the script is
	 * what the picture shows: same script, the keyword the runner-up. */
	if (best == ROLE_KEYWORD && passes(o, ROLE_SCRIPT) &&
	    o->s[ROLE_SCRIPT] > o->s[ROLE_KEYWORD])
		best = ROLE_SCRIPT;
	return best;
}

void role_decide(role_scores *o)
{
	o->second = ROLE_NKINDS;
	o->second_score = 0;
	if (o->n < ROLE_MIN_LABEL_ROWS) {
		set_label(o, ROLE_BROAD, ROLE_SHORT);
		o->score = 0;
		return;
	}
	role_kind best = refine(o, passes(o, ROLE_INDUCTION) ? ROLE_INDUCTION
							     : best_passing(o, ROLE_NKINDS, false));
	if (best < ROLE_NKINDS) {
		set_label(o, best, ROLE_SURE);
		role_kind two = best_passing(o, best, false);
		/* A column over a band: both are in the picture. */
		if (two == ROLE_NKINDS && best == ROLE_KEYWORD && passes(o, ROLE_LOCAL))
			two = ROLE_LOCAL;
		/* Rows that keep to their script more than they follow a
		 * repeat: in a text of two scripts whose placeholders repeat,
		 * the key after an earlier copy is often of the row's script.
		 * Both are in the picture; induction is still named first. */
		bool script = best == ROLE_INDUCTION && passes(o, ROLE_SCRIPT) &&
			      o->s[ROLE_SCRIPT] > o->s[ROLE_INDUCTION];
		if (script)
			two = ROLE_SCRIPT;
		if (two < ROLE_NKINDS && (script || !nested(o, best, two)) &&
		    o->s[two] >= o->s[best] - ROLE_CLOSE) {
			o->verdict = ROLE_TWO;
			o->second = two;
			o->second_score = o->s[two];
			return;
		}
	} else if ((best = best_passing(o, ROLE_BROAD, true)) < ROLE_NKINDS) {
		/* Rows on themselves and their neighbours keep to their own
		 * script wherever a script runs on: where most of same script's
		 * rows are the band's, and the rows that look further away keep
		 * to their script no more than chance would (under the bar), the
		 * band is what the picture shows. */
		if (best == ROLE_SCRIPT && passes(o, ROLE_LOCAL) && o->script_near >= 0 &&
		    2 * o->script_near >= o->hits[ROLE_SCRIPT] &&
		    o->script_far < (o->bars ? o->bars : bars)[ROLE_SCRIPT])
			best = ROLE_LOCAL;
		set_label(o, best, ROLE_SURE); /* local or same script */
	} else if (passes(o, ROLE_BROAD)) {
		set_label(o, ROLE_BROAD, ROLE_SURE);
	} else {
		role_kind r = runner_up(o, ROLE_BROAD);
		set_label(o, r < ROLE_NKINDS ? r : ROLE_BROAD, ROLE_UNSURE);
		return;
	}
	o->second = runner_up(o, o->role);
	o->second_score = o->second < ROLE_NKINDS ? o->s[o->second] : 0;
}
