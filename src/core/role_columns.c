/* The keyword's scores and its column (roles_internal.h): which one or two
 * characters most rows look at and the key that holds most of them, against
 * the chance of their copies or of that one place; the rows a column takes
 * from induction and duplicate. Part of head_roles (roles.c). */
#include "roles_internal.h"

#include <stdlib.h>

/* Chance for a keyword of the characters of classes c1 and c2: the mean
 * share, over the counted rows, of the keys a row sees that are their
 * copies. */
static double copies_chance(const role_scores *o, const role_text *x, int c1, int c2)
{
	int copies = 0;
	double sum = 0; /* causal: row i sees the copies among keys 0..i */
	for (int i = 0; i < x->n; i++) {
		copies += x->cls[i] == c1 || x->cls[i] == c2;
		if (x->causal && i >= 1)
			sum += (double)copies / (i + 1);
	}
	if (!o->n)
		return 0;
	return x->causal ? sum / o->n : (double)copies / x->n; /* masked: every row sees all */
}

/* Whether key col is the only one that is its character after the nb
 * characters before it: then "c after “word”" finds it. */
static bool column_alone(const role_text *x, int col, int nb)
{
	for (int j = nb; j < x->n; j++) {
		if (j == col || x->tok[j].cp != x->tok[col].cp)
			continue;
		int k = 1;
		while (k <= nb && x->tok[j - k].cp == x->tok[col - k].cp)
			k++;
		if (k > nb)
			return false;
	}
	return true;
}

/* The share of rows that land on key col by chance: 1 / the keys a row
 * sees, over the rows that see it. */
static double place_chance(const role_scores *o, const role_text *x, int col)
{
	if (!o->n)
		return 0;
	if (!x->causal)
		return 1.0 / x->n;
	double sum = 0;
	for (int i = col > 1 ? col : 1; i < x->n; i++)
		sum += 1.0 / (i + 1);
	return sum / o->n;
}

/* A keyword's character as the label names it: the unknown token's by the
 * mark that says so, for the model cannot tell its characters apart. */
static uint32_t key_cp(const role_text *x, int j)
{
	return x->tok[j].id == TOK_UNK ? ROLE_UNKNOWN_CP : x->tok[j].cp;
}

/* The column (the key most rows look at): its rows, its character and
 * the word before it, and whether that word finds it. */
static void column_place(role_scores *o, const role_text *x)
{
	o->column_rows = o->column >= 0 ? x->count[o->column] : 0;
	o->nbefore = 0;
	for (int j = o->column - 1; j >= 0 && o->nbefore < 8 && !x->delim[j]; j--)
		o->nbefore++;
	for (int k = 0; k < o->nbefore; k++)
		o->before[k] = x->tok[o->column - o->nbefore + k].cp;
	const int j = o->column - o->nbefore - 1;
	o->before_cut = o->nbefore == 8 && j >= 0 && !x->delim[j];
	o->column_cp = o->column >= 0 ? x->tok[o->column].cp : 0;
	o->column_unknown = o->column >= 0 && x->tok[o->column].id == TOK_UNK;
	o->column_alone = o->column >= 0 && column_alone(x, o->column, o->nbefore);
}

/* Half the rows or more on one place of the keyword's character: a
 * column, whose chance is the place's. In a text of one character every
 * key is a copy and the copies' chance leaves no room above it, but a
 * place is one key among those a row sees. The keyword takes the higher;
 * scored as the place, it is that place's character, rows and chance
 * (the label, the sentence and the runner-up say so). */
static void place_score(role_scores *o, const role_text *x)
{
	const int col = o->column;
	if (col < 0 || 2 * o->column_rows < o->n)
		return;
	double pc = place_chance(o, x, col);
	double v = above_chance(share(o->column_rows, o->n), pc);
	if (v < o->s[ROLE_KEYWORD])
		return; /* a tie: the place, the narrower claim */
	o->s[ROLE_KEYWORD] = v;
	o->by_place = true;
	o->column_chance = pc;
	o->keys[0] = key_cp(x, col);
	o->nkeys = 1;
	o->hits[ROLE_KEYWORD] = o->column_rows;
	o->key_places = 1;
	o->key_first = col == 0;
	o->key_near = 0;
	for (int i = 0; i < x->n; i++)
		o->key_near += x->best[i] == col && abs(i - col) <= 2;
}

/* More rows look at class a than at b; of two that tie, a is the rarer in
 * the text (fewer copies a row lands on by chance), which says more. */
static bool more_rows(const role_text *x, const int *copies, int a, int b)
{
	return x->cls_count[a] > x->cls_count[b] ||
	       (x->cls_count[a] == x->cls_count[b] && copies[a] < copies[b]);
}

/* The characters and the key most rows look at, and the word before it. */
void role_column_score(role_scores *o, const role_text *x)
{
	const int n = x->n;
	int c1 = -1, c2 = -1;
	int copies[AV_MAX_CONTEXT] = {0};
	for (int j = 0; j < n; j++)
		copies[x->cls[j]]++;
	o->column = -1;
	for (int j = 0; j < n; j++) {
		if (x->count[j] > 0 && (o->column < 0 || x->count[j] > x->count[o->column]))
			o->column = j;
		if (x->cls[j] != j || !x->cls_count[j] ||
		    (x->tok[j].cp >= AV_SPECIAL_CP && x->tok[j].id != TOK_UNK))
			continue; /* the mask is no keyword (the unknown token is) */
		if (c1 < 0 || more_rows(x, copies, j, c1))
			c2 = c1, c1 = j;
		else if (c2 < 0 || more_rows(x, copies, j, c2))
			c2 = j;
	}
	column_place(o, x);
	if (c1 < 0)
		return;
	int h = x->cls_count[c1];
	o->key_near = x->cls_near[c1];
	o->key_first = c1 == 0 && x->cls_count[0] == x->count[0];
	o->keys[0] = key_cp(x, c1);
	o->nkeys = 1;
	if (c2 >= 0 && 4 * x->cls_count[c2] >= h + x->cls_count[c2]) {
		o->keys[o->nkeys++] = key_cp(x, c2);
		h += x->cls_count[c2];
		o->key_near += x->cls_near[c2];
	}
	o->hits[ROLE_KEYWORD] = h;
	o->rows[ROLE_KEYWORD] = o->n;
	if (o->nkeys < 2)
		c2 = c1; /* from here: the keyword's classes, c1 and c2 */
	o->key_chance = copies_chance(o, x, c1, c2);
	o->s[ROLE_KEYWORD] = above_chance(share(h, o->n), o->key_chance);
	o->key_places = 0;
	for (int j = 0; j < n; j++)
		o->key_places += x->count[j] > 0 && (x->cls[j] == c1 || x->cls[j] == c2);
	o->column_is_key = o->column >= 0 && (x->cls[o->column] == c1 || x->cls[o->column] == c2);
	if (o->column >= 0 && x->cls[o->column] == c1)
		place_score(o, x);
}

/* A column's rows are the column's: where one key holds half the rows or
 * more, induction and duplicate rows that look at it (a space after an
 * earlier space, a line break's copy) show no copying unless the role
 * clears its bar with them counted as misses. The score, when it stays,
 * counts them all, as a person counting the picture does; a score no row
 * on the column makes is left as it is. */
void role_column_explains(role_scores *o, const role_text *x)
{
	if (o->column < 0 || 2 * o->column_rows < o->n)
		return;
	const role_kind roles[2] = {ROLE_INDUCTION, ROLE_DUPLICATE};
	const uint16_t *on[2] = {x->ind_on, x->dup_on};
	for (int k = 0; k < 2; k++) {
		role_kind r = roles[k];
		if (o->s[r] > 0 && on[k][o->column] > 0 &&
		    share(o->hits[r] - on[k][o->column], o->rows[r]) < role_bar(r) - 1e-9)
			o->s[r] = 0;
	}
}

/* Induction's hits on one key: rows that land after their copies on one
 * place look at a column (spaces on the brace that follows the first
 * space), not each after its own copy. Where one key holds more than half
 * of them, induction holds only if it clears its bar without them. */
void role_induction_spread(role_scores *o, const role_text *x)
{
	int k = 0;
	for (int j = 1; j < x->n; j++)
		if (x->ind_on[j] > x->ind_on[k])
			k = j;
	int on = x->n > 0 ? x->ind_on[k] : 0, h = o->hits[ROLE_INDUCTION];
	if (o->s[ROLE_INDUCTION] > 0 && 2 * on > h &&
	    share(h - on, o->rows[ROLE_INDUCTION]) < role_bar(ROLE_INDUCTION) - 1e-9)
		o->s[ROLE_INDUCTION] = 0;
}
