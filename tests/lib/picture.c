/* The tests' reading of a heatmap (picture.h): each row's brightest key,
 * counted against the claim of each role. */
#include "picture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rows {
	const attn_matrix *a;
	const token *t;
	int n;
	int best[AV_MAX_CONTEXT]; /* the brightest key of row i, or: */
#define FLAT	  (-1)		  /* no key stands out */
#define NO_CHOICE (-2)		  /* one key visible */
	int all;		  /* rows with two keys or more */
} rows;

static int visible_keys(const attn_matrix *a, int i)
{
	return a->causal ? i + 1 : a->n;
}

/* Each row's brightest key, when it stands out (picture.h); a flatter row
 * shows none. */
static void read_rows(rows *p, const attn_matrix *a, const token *t)
{
	p->a = a, p->t = t, p->n = a->n < AV_MAX_CONTEXT ? a->n : AV_MAX_CONTEXT, p->all = 0;
	for (int i = 0; i < a->n; i++) {
		int vis = visible_keys(a, i), b = 0;
		for (int j = 1; j < vis; j++)
			if (attn_at(a, i, j) > attn_at(a, i, b))
				b = j;
		double focus = fmin(3.0 / vis, 0.5 * (1.0 + 1.0 / vis));
		p->best[i] = vis < 2 ? NO_CHOICE : attn_at(a, i, b) >= focus ? b : FLAT;
		p->all += vis >= 2;
	}
}

static bool seen(const rows *p, int i, int j)
{
	return j >= 0 && j < visible_keys(p->a, i);
}

/* A copy: the same id, as the model tells characters apart; a mask is
 * none, and nor is an unknown character (to the model every one is the
 * same: it has no copy of its own). */
static bool copy(const rows *p, int i, int j)
{
	const token *t = p->t;
	return i != j && t[i].cp < AV_SPECIAL_CP && t[i].id == t[j].id && t[i].id != TOK_UNK;
}

/* Key k, three or more from row i, just after a copy of i's character and
 * not one itself (in a run of one character every key is both). */
static bool after_copy(const rows *p, int i, int k)
{
	return k >= 1 && k - 1 < i && seen(p, i, k) && abs(k - i) >= 3 && copy(p, i, k - 1) &&
	       !copy(p, i, k);
}

static bool mark(const rows *p, int j)
{
	return cp_is_delimiter(p->t[j].cp);
}

/* The nearest mark before i and after it (-1: none). */
static void nearest_marks(const rows *p, int i, int *before, int *after)
{
	*before = *after = -1;
	for (int j = i - 1; j >= 0 && *before < 0; j--)
		if (mark(p, j))
			*before = j;
	for (int j = i + 1; j < p->n && *after < 0; j++)
		if (mark(p, j))
			*after = j;
}

static int word_start(const rows *p, int i)
{
	while (i > 0 && !mark(p, i - 1))
		i--;
	return i;
}

/* How many rows take the key most rows take, and (key) which it is. */
static int column_at(const rows *p, int *key)
{
	static int count[AV_MAX_CONTEXT];
	int most = 0;
	*key = -1;
	for (int j = 0; j < p->n; j++)
		count[j] = 0;
	for (int i = 0; i < p->n; i++)
		if (p->best[i] >= 0)
			count[p->best[i]]++;
	for (int j = 0; j < p->n; j++) /* ties: the first key, as the labeller */
		if (count[j] > most) {
			most = count[j];
			*key = j;
		}
	return most;
}

static int column_rows(const rows *p)
{
	int key;
	return column_at(p, &key);
}

static int script(uint32_t c)
{
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
		return 1;
	if (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7)
		return 1;
	if (c >= 0x370 && c <= 0x3FF)
		return 2;
	if (c >= 0x400 && c <= 0x4FF)
		return 3;
	if ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF))
		return 4;
	if (c >= 0x3041 && c <= 0x30FA)
		return 5;
	if (c >= 0xAC00 && c <= 0xD7AF)
		return 6;
	return 0;
}

/* A token's script: none for a character the model does not know. */
static int tok_script(const token *t)
{
	return t->id == TOK_UNK ? 0 : script(t->cp);
}

/* The same place in the line before (d = 0) or after (d = 1), -1: none.
 * Lines: after each line break; in a text without one, the pieces closed by
 * a mark other than a space, when two or more of them, half of the pieces,
 * are of one length of four or more (verses). */
static int parallel_place(const rows *p, int i, int d)
{
	static int start[AV_MAX_CONTEXT + 1];
	int nl = 0, breaks = 0, n = p->n;
	for (int j = 0; j < n; j++)
		breaks += p->t[j].cp == '\n';
	start[nl++] = 0;
	for (int j = 0; j + 1 < n; j++) {
		uint32_t c = p->t[j].cp;
		if (breaks ? c == '\n' : mark(p, j) && c != ' ' && c != '\t' && c != 0x3000)
			start[nl++] = j + 1;
	}
	start[nl] = n;
	if (!breaks) {
		int most = 0;
		for (int l = 0; l < nl; l++) {
			int len = start[l + 1] - start[l], same = 0;
			for (int m = 0; m < nl; m++)
				same += start[m + 1] - start[m] == len;
			if (len >= 4 && same > most)
				most = same;
		}
		if (most < 2 || 2 * most < nl)
			return -1;
	}
	int l = 0;
	while (start[l + 1] <= i)
		l++;
	int m = d ? l + 1 : l - 1;
	if (m < 0 || m >= nl)
		return -1;
	int at = start[m] + (i - start[l]);
	return at < start[m + 1] ? at : -1;
}

/* The count behind a verdict: "31 of 74 rows: previous". */
static bool said(char *why, size_t size, bool ok, int hits, int of, const char *what)
{
	if (why && size)
		snprintf(why, size, "%d of %d rows: %s", hits, of, what);
	return ok;
}

/* hits of eligible rows: at least PICTURE_MOST, and three rows or more. */
static bool most(int hits, int eligible)
{
	return eligible >= 3 && hits >= PICTURE_MOST * eligible;
}

/* Does row i, looking at b, speak of role r (*e) and show it (*h)? script:
 * what an even spread over the row's keys would give its own script. */
static void row_fits(const rows *p, const role_scores *rs, role_kind r, int i, int b, bool *e,
		     bool *h, double *script_chance)
{
	const token *t = p->t;
	const int vis = visible_keys(p->a, i);
	*e = *h = false;
	switch (r) {
	case ROLE_PREVIOUS:
		*e = i >= 1, *h = b == i - 1;
		break;
	case ROLE_NEXT:
		*e = seen(p, i, i + 1), *h = b == i + 1;
		break;
	case ROLE_SELF:
		*e = true, *h = b == i;
		break;
	case ROLE_FIRST:
		*e = i >= 1, *h = b == 0;
		break;
	case ROLE_LOCAL:
		*e = true, *h = abs(b - i) <= 2;
		break;
	case ROLE_OFFSET:
		*e = rs->offset != 0 && seen(p, i, i + rs->offset), *h = b == i + rs->offset;
		break;
	case ROLE_MIRROR:
		*e = rs->mirror - i != i && seen(p, i, rs->mirror - i), *h = b == rs->mirror - i;
		break;
	case ROLE_KEYWORD:
		*e = true;
		for (int k = 0; b >= 0 && k < rs->nkeys; k++)
			*h |= rs->keys[k] == ROLE_UNKNOWN_CP ? t[b].id == TOK_UNK
							     : t[b].cp == rs->keys[k];
		break;
	case ROLE_DELIMITER: {
		int before, after;
		nearest_marks(p, i, &before, &after);
		after = seen(p, i, after) ? after : -1;
		/* ... and a key that is no mark to choose instead */
		bool letter = false;
		for (int j = 0; j < vis; j++)
			letter |= j != i && !mark(p, j);
		*e = (before >= 0 || after >= 0) && letter, *h = b == before || b == after;
		break;
	}
	case ROLE_WORDSTART: /* rows two places or more into their word */
		*e = !mark(p, i) && word_start(p, i) <= i - 2, *h = b == word_start(p, i);
		break;
	case ROLE_INDUCTION:
		for (int c = 0; c < p->n; c++)
			*e |= after_copy(p, i, c + 1);
		*h = b >= 1 && after_copy(p, i, b);
		break;
	case ROLE_DUPLICATE: { /* a copy three or more away, and a key no copy */
		bool other = false;
		for (int c = 0; c < vis; c++) {
			*e |= copy(p, i, c) && abs(c - i) >= 3;
			other |= !copy(p, i, c) && abs(c - i) >= 3;
		}
		*e = *e && other;
		*h = b >= 0 && abs(b - i) >= 3 && copy(p, i, b);
		break;
	}
	case ROLE_PARALLEL: {
		int before = parallel_place(p, i, 0), after = parallel_place(p, i, 1);
		after = seen(p, i, after) ? after : -1;
		/* three or more away: nearer, after an empty line or one of a
		 * single character */
		before = before >= 0 && abs(before - i) >= 3 ? before : -1;
		after = after >= 0 && abs(after - i) >= 3 ? after : -1;
		before = rs->par_dir > 0 ? -1 : before; /* the lines the label names */
		after = rs->par_dir < 0 ? -1 : after;
		*e = before >= 0 || after >= 0, *h = b == before || b == after;
		break;
	}
	case ROLE_SCRIPT: {
		int own = 0, scripted = 0, s = tok_script(&t[i]);
		for (int j = 0; j < vis; j++)
			if (tok_script(&t[j]))
				scripted++, own += tok_script(&t[j]) == s;
		*e = s && scripted, *h = b >= 0 && tok_script(&t[b]) == s;
		if (*e)
			*script_chance += (double)own / scripted;
		break;
	}
	case ROLE_BROAD:
		*e = true, *h = b < 0 || attn_at(p->a, i, b) < 3.0 / vis;
		break;
	default:
		break;
	}
	if (b < 0 && r != ROLE_BROAD)
		*h = false; /* a flat row looks at nothing */
}

/* A band that lands on the nearest mark (the word's start) where one is
 * within two places, and stays in the band where it is further: of the
 * rows whose key for r is three places or more away (three or more), under
 * PICTURE_FAR look there, half of r's rows or more are within two places,
 * and the band's share is as large as r's. *far and *far_hits for why. */
static bool band_takes(const rows *p, const role_scores *rs, role_kind r, int *far, int *far_hits)
{
	int band = 0, band_rows = 0, hits = 0, elig = 0, near = 0;
	double unused = 0;
	*far = *far_hits = 0;
	for (int i = 0; i < p->n; i++) {
		bool e, h;
		int b = p->best[i];
		if (b == NO_CHOICE)
			continue;
		band_rows++;
		band += b >= 0 && abs(b - i) <= 2;
		row_fits(p, rs, r, i, b, &e, &h, &unused);
		if (!e)
			continue;
		elig++;
		hits += h;
		near += h && abs(b - i) <= 2;
		int before, after;
		nearest_marks(p, i, &before, &after);
		after = seen(p, i, after) ? after : -1;
		bool distant = r == ROLE_DELIMITER
				   ? !mark(p, i) && (before < 0 || i - before >= 3) &&
					 (after < 0 || after - i >= 3)
				   : word_start(p, i) <= i - 3;
		*far += distant;
		*far_hits += distant && h;
	}
	return *far >= 3 && *far_hits < PICTURE_FAR * *far && 2 * near >= hits && elig &&
	       (double)band / band_rows >= (double)hits / elig;
}

bool picture_holds(const attn_matrix *a, const token *t, const role_scores *rs, role_kind r,
		   char *why, size_t size)
{
	static rows p;
	static uint8_t hit_at[AV_MAX_CONTEXT];
	read_rows(&p, a, t);
	int elig = 0, hits = 0, places = 0;
	double chance = 0;
	memset(hit_at, 0, (size_t)p.n);
	for (int i = 0; i < p.n; i++) {
		bool e, h;
		if (p.best[i] == NO_CHOICE)
			continue;
		row_fits(&p, rs, r, i, p.best[i], &e, &h, &chance);
		elig += e;
		if (e && h) {
			hits++;
			if (p.best[i] >= 0) {
				places += !hit_at[p.best[i]];
				hit_at[p.best[i]] = 1;
			}
		}
	}
	bool ok = most(hits, elig);
	if (r == ROLE_DELIMITER || r == ROLE_WORDSTART) {
		int col = column_rows(&p);
		if (col >= PICTURE_HIDDEN * p.all)
			return said(why, size, false, col, p.all, "one key, a column");
		if (ok && places < 2)
			return said(why, size, false, hits, elig, "all on one key");
		int far, far_hits;
		if (ok && band_takes(&p, rs, r, &far, &far_hits))
			return said(why, size, false, far_hits, far,
				    "a band: of the rows whose key is three or more away");
	}
	if (r == ROLE_LOCAL && p.n <= 3)
		return said(why, size, false, hits, elig, "every key within two places");
	if (r == ROLE_PARALLEL && !elig) {
		if (why && size)
			snprintf(why, size,
				 "no row has a place in another line three or more away");
		return false;
	}
	if (r == ROLE_SCRIPT && elig) {
		chance /= elig;
		ok = elig >= 3 && hits >= (chance + PICTURE_MOST * (1 - chance)) * elig;
	}
	return said(why, size, ok, hits, elig, role_name(r));
}

bool picture_agrees(const attn_matrix *a, const token *t, const role_scores *rs, char *why,
		    size_t size)
{
	if (rs->verdict == ROLE_UNSURE || rs->verdict == ROLE_SHORT)
		return true;
	if (!picture_holds(a, t, rs, rs->role, why, size))
		return false;
	return rs->verdict != ROLE_TWO || picture_holds(a, t, rs, rs->second, why, size);
}

bool picture_hides_induction(const attn_matrix *a, const token *t, const role_scores *rs, char *why,
			     size_t size)
{
	/* "unclear: 48% induction" names it too, as the closest role */
	bool named = rs->verdict != ROLE_SHORT &&
		     (rs->role == ROLE_INDUCTION ||
		      (rs->verdict == ROLE_TWO && rs->second == ROLE_INDUCTION));
	if (named)
		return false;
	static rows p;
	read_rows(&p, a, t);
	/* rows on a key that holds half the rows are that column's */
	int col, col_rows = column_at(&p, &col), elig = 0, hits = 0, top = 0;
	static int on[AV_MAX_CONTEXT];
	memset(on, 0, sizeof on);
	if (2 * col_rows < p.all)
		col = -1;
	double chance = 0; /* the keys after a copy among those a row sees */
	for (int i = 0; i < p.n; i++) {
		int b = p.best[i], keys = 0;
		for (int c = 0; b != NO_CHOICE && c < p.n; c++)
			keys += after_copy(&p, i, c + 1);
		if (!keys)
			continue;
		elig++;
		chance += (double)keys / visible_keys(p.a, i);
		if (b >= 1 && b != col && after_copy(&p, i, b)) {
			hits++;
			top = ++on[b] > top ? on[b] : top;
		}
	}
	/* rows that land after their copies on one place, more than half of
	 * them, look at that place: not each after its own copy */
	if (2 * top > hits)
		hits -= top;
	/* ... and twice as many as looking anywhere would: in "abababab"
	 * every b follows an earlier a */
	return said(why, size,
		    hits >= 3 && 4 * elig >= p.all && hits >= PICTURE_HIDDEN * elig &&
			hits >= 2 * chance,
		    hits, elig, "of those with an earlier copy look just after it");
}
