/* Head roles (analysis.h): where each row of a head looks, counted role by
 * role. Every score is a share of rows (keyword's and same script's with
 * chance taken out), so the label's evidence is something a person can
 * count in the picture; the label those counts earn is decided in
 * role_decide.c, its words are in role_words.c. The bars are measured on the lab's heads
 * (lab.h; tests/bench/bench_labeller.c prints the measurement). */
#include "attnview/analysis.h"
#include "attnview/i18n.h"
#include "roles_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const role_names[] = {
    N_("previous"),    N_("next"),	    N_("self"),	  N_("first"),	N_("delimiter"),
    N_("duplicate"),   N_("induction"),	    N_("local"),  N_("offset"), N_("keyword"),
    N_("same script"), N_("line-parallel"), N_("mirror"), N_("broad"),	N_("word start")};
_Static_assert(sizeof role_names / sizeof role_names[0] == ROLE_NKINDS, "a name for every role");

static const char *const score_keys[] = {
    "previous", "next",	   "self",   "first",	 "delimiter", "duplicate", "induction", "local",
    "offset",	"keyword", "script", "parallel", "mirror",    "broad",	   "word_start"};
_Static_assert(sizeof score_keys / sizeof score_keys[0] == ROLE_NKINDS,
	       "a dump key for every role");

const char *role_name(role_kind r)
{
	return r < ROLE_NKINDS ? role_names[r] : "?";
}

const char *role_score_key(role_kind r)
{
	return r < ROLE_NKINDS ? score_keys[r] : "?";
}

/* ---- what the scores need to know about the text ----------------------------- */

/* The least distance of a duplicate's key, an induction key or a row's
 * place in another line: nearer, the picture cannot tell it from a band. */
#define FAR 3

static uint8_t cp_script(uint32_t cp)
{
	if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
	    (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x3FFFF) || cp == 0x3007)
		return SCRIPT_HAN;
	if ((cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') ||
	    (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) ||
	    (cp >= 0x1E00 && cp <= 0x1EFF))
		return SCRIPT_LATIN;
	if (cp >= 0x3041 && cp <= 0x30FF && cp != 0x30FB)
		return SCRIPT_KANA;
	if ((cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0x1100 && cp <= 0x11FF))
		return SCRIPT_HANGUL;
	if (cp >= 0x0400 && cp <= 0x04FF)
		return SCRIPT_CYRILLIC;
	if (cp >= 0x0370 && cp <= 0x03FF)
		return SCRIPT_GREEK;
	return SCRIPT_NONE;
}

/* Punctuation that closes a verse or a line (not a space). */
static bool ends_line(uint32_t cp)
{
	return cp_is_delimiter(cp) && cp != ' ' && cp != '\t' && cp != 0x3000;
}

/* A copy for duplicate and induction: the same id. A character outside
 * the vocabulary has none: to the model every one is the unknown token,
 * and looking after one would be looking almost anywhere in a text of
 * them. The mask is no character: two masks are not copies. */
static bool same_token(const token *tok, int i, int j)
{
	return tok[i].id == tok[j].id && tok[i].cp < AV_SPECIAL_CP && tok[i].id != TOK_UNK;
}

static void find_copies(role_text *x)
{
	const int n = x->n;
	int unknown = -1; /* the first unknown character: the keyword's class of them all */
	for (int i = 0; i < n; i++) {
		x->prev_copy[i] = -1;
		for (int j = i - 1; j >= 0; j--)
			if (same_token(x->tok, i, j)) {
				x->prev_copy[i] = j;
				break;
			}
		if (x->tok[i].id == TOK_UNK && unknown < 0)
			unknown = i;
		x->cls[i] = x->tok[i].id == TOK_UNK ? unknown
			    : x->prev_copy[i] >= 0  ? x->cls[x->prev_copy[i]]
						    : i;
		x->next_copy[i] = -1;
		x->run[i] = i > 0 && same_token(x->tok, i, i - 1) ? x->run[i - 1] : i;
	}
	for (int i = 0; i < n; i++)
		if (x->prev_copy[i] >= 0)
			x->next_copy[x->prev_copy[i]] = i;
}

/* A duplicate's key: a copy of row i's character FAR or more away, outside
 * the row's own run of it: in "Hmmmmmm" every m three to the left is a copy
 * wherever the row looks, and the picture shows an offset, not copying. */
static bool dup_key(const role_text *x, int i, int p)
{
	return p >= 0 && abs(p - i) >= FAR && same_token(x->tok, p, i) && x->run[p] != x->run[i];
}

/* Lines: at line breaks; without one, verses closed by punctuation when
 * most of them (two or more) have one length of four or more. */
static void find_lines(role_text *x)
{
	const int n = x->n;
	int start[AV_MAX_CONTEXT + 1], nl = 0;
	bool breaks = false;
	for (int i = 0; i < n; i++)
		breaks |= x->tok[i].cp == '\n';
	start[nl++] = 0;
	for (int i = 0; i + 1 < n; i++)
		if (breaks ? x->tok[i].cp == '\n' : ends_line(x->tok[i].cp))
			start[nl++] = i + 1;
	start[nl] = n;
	if (!breaks) { /* verses: most of one length */
		int same = 0;
		for (int l = 0; l < nl; l++) {
			int len = start[l + 1] - start[l], k = 0;
			for (int m = 0; m < nl; m++)
				k += start[m + 1] - start[m] == len;
			same = len >= 4 && k > same ? k : same;
		}
		if (nl < 2 || 2 * same < nl + 1)
			nl = 1; /* no lines */
	}
	for (int i = 0; i < n; i++)
		x->par[i][0] = x->par[i][1] = -1;
	/* A place FAR or more away: the line before is as far as it is long,
	 * its line break counted, so after an empty line or one of a single
	 * character the place is one or two to the left (and so is the line
	 * after from a row of such a line), a band's reach: the picture cannot
	 * tell them apart. */
	for (int l = 0; l < nl && nl > 1; l++)
		for (int i = start[l]; i < start[l + 1]; i++)
			for (int d = 0; d < 2; d++) {
				int m = d == 0 ? l - 1 : l + 1,
				    at = m >= 0 && m < nl ? start[m] + i - start[l] : -1;
				x->par[i][d] =
				    at >= 0 && at < start[m + 1] && abs(at - i) >= FAR ? at : -1;
			}
}

/* choice[]: over the keys a row sees (causal: 0..i), the copies of its
 * character that lie FAR or more away against the keys that do (the window
 * of FAR - 1 places on each side taken out), and the keys other than
 * itself that are no delimiter. */
static void find_choices(role_text *x)
{
	const int n = x->n;
	int total[AV_MAX_CONTEXT], seen[AV_MAX_CONTEXT], words = 0, words_seen = 0;
	memset(total, 0, (size_t)n * sizeof total[0]);
	memset(seen, 0, (size_t)n * sizeof seen[0]);
	for (int i = 0; i < n; i++) {
		total[x->cls[i]]++;
		words += !x->delim[i];
	}
	for (int i = 0; i < n; i++) {
		seen[x->cls[i]]++;
		words_seen += !x->delim[i];
		int hi = x->causal ? i : n - 1, lo = i - FAR + 1 > 0 ? i - FAR + 1 : 0;
		/* (an unknown character's class holds them all, but it has no
		 * copy to look at: copy_key finds none, whatever this says) */
		int copies = x->causal ? seen[x->cls[i]] : total[x->cls[i]];
		int near = (hi < i + FAR - 1 ? hi : i + FAR - 1) - lo + 1;
		for (int j = lo; j <= hi && j < i + FAR; j++)
			copies -= x->cls[j] == x->cls[i];
		int others = (x->causal ? words_seen : words) - !x->delim[i];
		x->choice[i] = (uint8_t)((hi + 1 - near > copies ? CHOICE_COPY : 0) |
					 (others > 0 ? CHOICE_DELIM : 0));
	}
}

static void role_text_init(role_text *x, const token *tok, int n, bool causal)
{
	x->n = n;
	x->causal = causal;
	x->tok = tok;
	bool seen[NSCRIPTS] = {false};
	for (int s = 0; s < NSCRIPTS; s++)
		x->prefix[s][0] = 0;
	for (int i = 0; i < n; i++) {
		x->delim[i] = cp_is_delimiter(tok[i].cp);
		/* the model cannot tell an unknown character's script */
		x->script[i] = tok[i].id == TOK_UNK ? SCRIPT_NONE : cp_script(tok[i].cp);
		seen[x->script[i]] = true;
		for (int s = 0; s < NSCRIPTS; s++)
			x->prefix[s][i + 1] = (uint16_t)(x->prefix[s][i] + (x->script[i] == s));
		x->word[i] = i == 0 || x->delim[i - 1] ? i : x->word[i - 1];
		x->prev_delim[i] = i == 0 ? -1 : x->delim[i - 1] ? i - 1 : x->prev_delim[i - 1];
		x->count[i] = x->cls_count[i] = x->cls_near[i] = 0;
	}
	for (int i = n - 1; i >= 0; i--)
		x->next_delim[i] = i == n - 1 ? -1 : x->delim[i + 1] ? i + 1 : x->next_delim[i + 1];
	x->nscripts = 0;
	for (int s = SCRIPT_NONE + 1; s < NSCRIPTS; s++)
		x->nscripts += seen[s];
	memset(x->diag, 0, (size_t)(2 * n) * sizeof x->diag[0]);
	find_copies(x);
	find_lines(x);
	find_choices(x);
}

/* ---- where each row looks ------------------------------------------------------ */

/* The largest of w[0..n), and -1 if every one is smaller (a weight never
 * is); NaN never counts. Eight running maxima, each `x > m ? x : m`, which
 * the compiler makes one vector maximum: the labeller reads every weight of
 * a head, 262,144 of them at 512 tokens, and one comparison waiting for the
 * last took 0.5 ms a head. */
static float row_max(const float *w, int n)
{
	float m8[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, m = -1;
	int j = 0;
	for (; j + 8 <= n; j += 8)
		for (int l = 0; l < 8; l++)
			m8[l] = w[j + l] > m8[l] ? w[j + l] : m8[l];
	for (; j < n; j++)
		m = w[j] > m ? w[j] : m;
	for (int l = 0; l < 8; l++)
		m = m8[l] > m ? m8[l] : m;
	return m;
}

/* The key row i looks at: its only largest weight, when that holds at least
 * min(ROLE_FOCUS / v, (1 + 1/v) / 2) of the row (v visible keys); else -1. */
static int row_looks_at(const attn_matrix *a, int i, int vis)
{
	const float *w = a->pack ? a->w + attn_packed_row(i) : a->w + (size_t)i * (size_t)a->n;
	float bw = row_max(w, vis);
	double focus = fmin(ROLE_FOCUS / vis, 0.5 * (1.0 + 1.0 / vis));
	if (!(bw >= focus))
		return -1;
	/* Where it is, and that it is there once: lanes of eight counting. */
	int t8[8] = {0}, ties = 0, j = 0, best = -1;
	for (; j + 8 <= vis; j += 8)
		for (int l = 0; l < 8; l++)
			t8[l] += w[j + l] == bw;
	for (; j < vis; j++)
		ties += w[j] == bw;
	for (int l = 0; l < 8; l++)
		ties += t8[l];
	for (j = 0; ties == 1 && best < 0; j++)
		best = w[j] == bw ? j : -1;
	return ties == 1 ? best : -1;
}

static bool visible(const attn_matrix *a, int i, int j)
{
	return j >= 0 && j < a->n && !attn_masked(a, i, j);
}

/* Is key k an induction key of row i: FAR or more away, just after an
 * earlier copy of i's character and not one itself (in a run of one
 * character every key is after a copy: the picture cannot tell induction
 * there)? A masked model's row also sees the keys after later copies: they
 * are not what an induction head looks at. */
static bool induction_key(const role_text *x, int i, int k)
{
	return k >= 1 && k < x->n && k - 1 < i && abs(k - i) >= FAR &&
	       same_token(x->tok, k - 1, i) && !same_token(x->tok, k, i);
}

/* How many induction keys row i has, for every row in one pass: those of
 * its last earlier copy p0 (after the copies before p0, FAR or more before
 * p0, so before i too), and the keys after p0 and after the copies within
 * FAR of p0, where FAR or more before i. A row without a copy has none. */
static void count_induction_keys(role_text *x)
{
	for (int i = 0; i < x->n; i++) {
		int p0 = x->prev_copy[i], k = p0 >= 0 ? x->ind_keys[p0] : 0;
		for (int p = p0; p >= 0 && p >= p0 - FAR; p = x->prev_copy[p])
			k += p + 1 <= i - FAR && !same_token(x->tok, p + 1, i);
		x->ind_keys[i] = k;
	}
}

/* Does row i see a key FAR or more away at a copy of its character
 * (after = 0: a duplicate's key) or an induction key (after = 1)? */
static bool copy_key(const role_text *x, const attn_matrix *a, int i, int after)
{
	for (int p = x->prev_copy[i]; p >= 0; p = x->prev_copy[p])
		if (after ? induction_key(x, i, p + 1) && visible(a, i, p + 1)
			  : dup_key(x, i, p) && visible(a, i, p))
			return true;
	for (int p = x->next_copy[i]; !after && p >= 0; p = x->next_copy[p])
		if (dup_key(x, i, p) && visible(a, i, p))
			return true;
	return false;
}

/* Counts row i (looking at b, or -1) for delimiter and word start, and what
 * the band test asks (band_explains): the rows that look within two places
 * of their key, those whose key lies FAR or more away, and how many of
 * those look there. */
static void count_phrase(role_scores *o, role_text *x, const attn_matrix *a, int i, int b)
{
	int pd = x->prev_delim[i], nd = visible(a, i, x->next_delim[i]) ? x->next_delim[i] : -1;
	if ((pd >= 0 || nd >= 0) && (x->choice[i] & CHOICE_DELIM)) {
		bool on = b >= 0 && (b == pd || b == nd);
		o->rows[ROLE_DELIMITER]++;
		o->hits[ROLE_DELIMITER] += on;
		if (on) {
			o->ahead += b == nd;
			x->mark[b] |= 1;
			x->delim_near += abs(b - i) <= 2;
		}
		if (!x->delim[i] && (pd < 0 || i - pd >= FAR) && (nd < 0 || nd - i >= FAR)) {
			x->delim_far++;
			x->delim_far_hits += on;
		}
	}
	if (!x->delim[i] && x->word[i] <= i - 2) { /* two places or more into a word */
		bool on = b == x->word[i];
		o->rows[ROLE_WORDSTART]++;
		o->hits[ROLE_WORDSTART] += on;
		if (on) {
			x->mark[b] |= 2;
			x->word_near += i - b <= 2;
		}
		if (x->word[i] <= i - FAR) {
			x->word_far++;
			x->word_far_hits += on;
		}
	}
}

/* Counts one row: hits[] and rows[] of the roles that look at one key. */
static void count_row(role_scores *o, role_text *x, const attn_matrix *a, int i, int b,
		      int *off_rows, int *off_hits)
{
	const bool causal = a->causal;
	int *rows = o->rows, *hits = o->hits;
#define COUNT(r, eligible, fits)                                                                   \
	do {                                                                                       \
		if (eligible) {                                                                    \
			rows[r]++;                                                                 \
			hits[r] += b >= 0 && (fits);                                               \
		}                                                                                  \
	} while (0)
	COUNT(ROLE_PREVIOUS, i >= 1, b == i - 1);
	COUNT(ROLE_NEXT, visible(a, i, i + 1), b == i + 1);
	COUNT(ROLE_SELF, true, b == i);
	COUNT(ROLE_FIRST, i >= 1, b == 0);
	COUNT(ROLE_LOCAL, true, abs(b - i) <= 2);
	rows[ROLE_BROAD]++;
	hits[ROLE_BROAD] += b < 0;
	/* Keys of a copy, or after one, count from FAR places away: nearer, the
	 * picture cannot tell them from a band (previous, two to the left). */
	bool dup = (x->choice[i] & CHOICE_COPY) && copy_key(x, a, i, 0), ind = copy_key(x, a, i, 1);
	COUNT(ROLE_DUPLICATE, dup, dup_key(x, i, b));
	COUNT(ROLE_INDUCTION, ind, induction_key(x, i, b));
	if (ind) /* looking anywhere: its induction keys among the keys it sees */
		x->ind_chance += (double)x->ind_keys[i] / (causal ? i + 1 : x->n);
	/* ... and the key each hit lands on (a column's, column_explains) */
	if (dup && dup_key(x, i, b))
		x->dup_on[b]++;
	if (b >= 0 && ind && induction_key(x, i, b))
		x->ind_on[b]++;
	count_phrase(o, x, a, i, b);
	int p0 = x->par[i][0], p1 = causal ? -1 : x->par[i][1];
	COUNT(ROLE_PARALLEL, p0 >= 0 || p1 >= 0, b == p0 || b == p1);
	for (int d = 0; d < 2; d++) {
		int p = d ? p1 : p0;
		x->par_rows[d] += p >= 0;
		x->par_hits[d] += p >= 0 && b == p;
	}
	if (b >= 0 && b == i - 1)
		o->left1++;
	if (b >= 0 && b == i - 2)
		o->left2++;
#undef COUNT
	for (int k = -8; k <= 8; k++)
		if (abs(k) >= 2 && visible(a, i, i + k)) {
			off_rows[k + 8]++;
			off_hits[k + 8] += b == i + k;
		}
	if (b >= 0) {
		x->count[b]++;
		x->cls_count[x->cls[b]]++;
		x->cls_near[x->cls[b]] += abs(b - i) <= 2;
		if (b != i)
			x->diag[i + b]++;
	}
}

/* The rows that can see c - i (not i itself), with a choice. */
static int mirror_rows(const attn_matrix *a, int c)
{
	int rows = 0;
	for (int i = 0; i < a->n; i++) {
		int j = c - i;
		rows += j != i && visible(a, i, j) && (!a->causal || i >= 1);
	}
	return rows;
}

static void offset_score(role_scores *o, const int *off_rows, const int *off_hits)
{
	o->offset = 0;
	for (int d = 2; d <= 8; d++)
		for (int sign = -1; sign <= 1; sign += 2) {
			int k = sign * d;
			/* k away is an offset where half the rows can look
			 * there: in seven characters three rows see four to the
			 * right, and two of them are not the picture */
			if (2 * off_rows[k + 8] < o->n)
				continue;
			double v = share(off_hits[k + 8], off_rows[k + 8]);
			if (v > o->s[ROLE_OFFSET]) {
				o->s[ROLE_OFFSET] = v;
				o->offset = k;
				o->rows[ROLE_OFFSET] = off_rows[k + 8];
				o->hits[ROLE_OFFSET] = off_hits[k + 8];
			}
		}
}

/* Line-parallel over the rows that have a line on either side, or over
 * those that have one before (after): a masked model's head may serve one
 * side, as another head the other, and every row that has a line before
 * looking at its place there is the picture of a causal model's head. A
 * side counts alone when it has half the text's rows or more: the three
 * rows of a short last line are not the picture. */
static void parallel_score(role_scores *o, const role_text *x)
{
	o->par_dir = 0;
	for (int d = 0; d < 2; d++) {
		if (2 * x->par_rows[d] < o->n)
			continue;
		double v = share(x->par_hits[d], x->par_rows[d]);
		if (v > o->s[ROLE_PARALLEL]) {
			o->s[ROLE_PARALLEL] = v;
			o->par_dir = d ? 1 : -1;
			o->rows[ROLE_PARALLEL] = x->par_rows[d];
			o->hits[ROLE_PARALLEL] = x->par_hits[d];
		}
	}
}

/* Over the rows of a character with a script: the share that look at
 * their own script, against an even spread's. */
static void script_score(role_scores *o, const role_text *x, const attn_matrix *a)
{
	if (x->nscripts < 2)
		return;
	int rows = 0, hits = 0, near = 0, far = 0, far_hits = 0;
	double chance = 0, far_chance = 0;
	for (int i = 0; i < a->n; i++) {
		int vis = a->causal ? i + 1 : a->n, s = x->script[i];
		int scripted = vis - x->prefix[SCRIPT_NONE][vis];
		if (s == SCRIPT_NONE || vis < 2 || scripted == 0)
			continue;
		rows++;
		double c = (double)x->prefix[s][vis] / scripted;
		chance += c;
		int b = x->best[i];
		bool on = b >= 0 && x->script[b] == s;
		hits += on;
		near += on && abs(b - i) <= 2;
		if (b >= 0 && abs(b - i) > 2) { /* beyond a band's reach */
			far++;
			far_hits += on;
			far_chance += c;
		}
	}
	o->rows[ROLE_SCRIPT] = rows;
	o->hits[ROLE_SCRIPT] = hits;
	o->script_near = near;
	o->script_far =
	    far >= ROLE_MIN_ROWS ? above_chance(share(far_hits, far), far_chance / far) : 0;
	o->chance = rows ? chance / rows : 1;
	o->s[ROLE_SCRIPT] = above_chance(share(hits, rows), o->chance);
}

static void mirror_score(role_scores *o, const role_text *x, const attn_matrix *a)
{
	o->mirror = 0;
	for (int c = 0; c <= 2 * a->n - 2; c++) {
		if (x->diag[c] < ROLE_MIN_ROWS)
			continue;
		int rows = mirror_rows(a, c);
		double v = share(x->diag[c], rows);
		if (2 * rows >= o->n && v > o->s[ROLE_MIRROR]) {
			o->s[ROLE_MIRROR] = v;
			o->mirror = c;
			o->rows[ROLE_MIRROR] = rows;
			o->hits[ROLE_MIRROR] = x->diag[c];
		}
	}
}

/* Role r's rows (delimiter, word start) are a band's: local scores as high
 * as r, half or more of r's rows look within two places of themselves, and
 * of the rows whose key for r lies FAR or more away (far of them,
 * ROLE_MIN_ROWS or more) under half look there. With fewer such rows the
 * picture cannot tell the two apart, and r stands. */
static bool band_explains(const role_scores *o, role_kind r, int near, int far, int far_hits)
{
	return o->s[r] > 0 && o->s[ROLE_LOCAL] >= o->s[r] && 2 * near >= o->hits[r] &&
	       far >= ROLE_MIN_ROWS && 2 * far_hits < far;
}

/* Delimiter and word start name a different key per phrase: one key for
 * most rows is a column, not either. */
static int marked_places(const role_text *x, uint8_t bit)
{
	int k = 0;
	for (int j = 0; j < x->n; j++)
		k += (x->mark[j] & bit) != 0;
	return k;
}

void head_roles(role_scores *out, const attn_matrix *a, const token *tok)
{
	memset(out, 0, sizeof *out);
	out->causal = a->causal;
	out->column = -1;
	int n = a->n;
	if (n <= 0 || n > AV_MAX_CONTEXT) {
		role_decide(out);
		return;
	}
	role_text x;
	role_text_init(&x, tok, n, a->causal);
	memset(x.mark, 0, (size_t)n);
	memset(x.ind_on, 0, (size_t)n * sizeof x.ind_on[0]);
	memset(x.dup_on, 0, (size_t)n * sizeof x.dup_on[0]);
	count_induction_keys(&x);
	x.ind_chance = 0;
	x.delim_far = x.delim_far_hits = x.delim_near = 0;
	x.word_far = x.word_far_hits = x.word_near = 0;
	memset(x.par_rows, 0, sizeof x.par_rows);
	memset(x.par_hits, 0, sizeof x.par_hits);
	int off_rows[17] = {0}, off_hits[17] = {0};
	for (int i = 0; i < n; i++) {
		int vis = a->causal ? i + 1 : n;
		x.best[i] = vis >= 2 ? row_looks_at(a, i, vis) : -1;
		if (vis < 2)
			continue;
		out->n++;
		count_row(out, &x, a, i, x.best[i], off_rows, off_hits);
	}
	for (int r = 0; r < ROLE_NKINDS; r++)
		out->s[r] = share(out->hits[r], out->rows[r]);
	/* In three characters every key is within two places of every row:
	 * a band has no room to show. */
	if (n <= 3)
		out->s[ROLE_LOCAL] = 0;
	/* Induction names what a head does with a repeat: a text whose
	 * earlier copies reach under a quarter of its rows (two full stops,
	 * two masks' neighbours) has too few rows to show it, and so do two
	 * rows that look after a copy, named over every other role. */
	if (4 * out->rows[ROLE_INDUCTION] < out->n || out->hits[ROLE_INDUCTION] < ROLE_MIN_ROWS)
		out->s[ROLE_INDUCTION] = 0;
	/* So with a copy: three lines' full stops are three rows, however
	 * many look at the stop before; and two rows on a copy are not a
	 * head's habit. */
	if (4 * out->rows[ROLE_DUPLICATE] < out->n || out->hits[ROLE_DUPLICATE] < ROLE_MIN_ROWS)
		out->s[ROLE_DUPLICATE] = 0;
	/* And word start, rows two places or more into their word: in code
	 * or a list of short words a few rows are not the picture. */
	if (4 * out->rows[ROLE_WORDSTART] < out->n)
		out->s[ROLE_WORDSTART] = 0;
	/* And line-parallel, rows whose place in another line is FAR or more
	 * away: in lines of one or two characters a few rows are not lines. */
	if (4 * out->rows[ROLE_PARALLEL] < out->n)
		out->s[ROLE_PARALLEL] = 0;
	/* A band lands on the nearest mark (its word's start) wherever one is
	 * within two places: where the rows that have theirs further away
	 * mostly stay in the band, the band is the picture. Before the places
	 * are counted, so that the sentence counts the role it names. */
	if (band_explains(out, ROLE_DELIMITER, x.delim_near, x.delim_far, x.delim_far_hits))
		out->s[ROLE_DELIMITER] = 0;
	if (band_explains(out, ROLE_WORDSTART, x.word_near, x.word_far, x.word_far_hits))
		out->s[ROLE_WORDSTART] = 0;
	out->word_far = x.word_far;
	int dp = marked_places(&x, 1), wp = marked_places(&x, 2);
	out->places = dp;
	if (dp < 2)
		out->s[ROLE_DELIMITER] = 0;
	if (wp < 2)
		out->s[ROLE_WORDSTART] = 0;
	else if (out->s[ROLE_WORDSTART] > out->s[ROLE_DELIMITER])
		out->places = wp;
	offset_score(out, off_rows, off_hits);
	parallel_score(out, &x);
	role_column_score(out, &x);
	/* Delimiter and word start name a key per phrase: where one key holds
	 * half the rows or more, the picture is a column (keyword or first). */
	if (2 * out->column_rows >= out->n)
		out->s[ROLE_DELIMITER] = out->s[ROLE_WORDSTART] = 0;
	role_column_explains(out, &x);
	role_induction_spread(out, &x);
	/* Induction's rows at least twice as often after a copy as looking
	 * anywhere would be: in "abababab" every b is after an earlier a, and
	 * a head whose a rows look at some b and whose b rows at some b is a
	 * keyword b's picture, not a repeat followed. */
	out->ind_chance = out->rows[ROLE_INDUCTION] ? x.ind_chance / out->rows[ROLE_INDUCTION] : 0;
	if (out->s[ROLE_INDUCTION] < 2 * out->ind_chance)
		out->s[ROLE_INDUCTION] = 0;
	script_score(out, &x, a);
	/* As word start: under a quarter of the rows with a script the model
	 * can tell (the rest unknown to it, or spaces) are not the picture. */
	if (4 * out->rows[ROLE_SCRIPT] < out->n)
		out->s[ROLE_SCRIPT] = 0;
	mirror_score(out, &x, a);
	role_decide(out);
}
