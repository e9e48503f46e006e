/* Head roles (analysis.h): the scores of a head on a text, the label they
 * earn, and what the head does in words. The bars are measured on the lab's
 * heads (lab.h; tests/bench_labeller.c prints the measurement, attnview(1)
 * the figures beside each bar). */
#include "attnview/analysis.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const role_names[] = {
    N_("previous"),    N_("next"),	    N_("self"),	  N_("first"),	N_("delimiter"),
    N_("duplicate"),   N_("induction"),	    N_("local"),  N_("offset"), N_("keyword"),
    N_("same script"), N_("line-parallel"), N_("mirror"), N_("broad"),	N_("word start")};
_Static_assert(sizeof role_names / sizeof role_names[0] == ROLE_NKINDS,
	       "a name for every role");

static const char *const score_keys[] = {
    "previous", "next",	   "self",   "first",	 "delimiter", "duplicate", "induction", "local",
    "offset",	"keyword", "script", "parallel", "mirror",    "entropy",   "word_start"};
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

/* ---- the bars --------------------------------------------------------------
 * A role passes when its score is at least `min` and at least `ratio` times
 * what a head spreading each row evenly over its visible keys would score
 * (ratio 0: no such comparison). Measured on the lab: attnview(1). */
typedef struct bar_spec {
	double min, ratio;
} bar_spec;

static const bar_spec bars[ROLE_NKINDS] = {
    [ROLE_PREVIOUS] = {0.4, 2},	 [ROLE_NEXT] = {0.4, 2},	[ROLE_SELF] = {0.4, 2},
    [ROLE_FIRST] = {0.4, 2},	 [ROLE_DELIMITER] = {0.4, 1.5}, [ROLE_DUPLICATE] = {0.3, 3},
    [ROLE_INDUCTION] = {0.4, 3}, [ROLE_LOCAL] = {0.6, 1.4},	[ROLE_OFFSET] = {0.5, 0},
    [ROLE_KEYWORD] = {0.4, 3},	 [ROLE_SCRIPT] = {0.6, 0},	[ROLE_PARALLEL] = {0.3, 3},
    [ROLE_MIRROR] = {0.4, 3},	 [ROLE_BROAD] = {0, 0},		[ROLE_WORDSTART] = {0.5, 3},
};

/* ---- what the scores need to know about the text ----------------------------- */

enum { SCRIPT_NONE, SCRIPT_HAN, SCRIPT_LATIN, SCRIPT_KANA, SCRIPT_HANGUL, SCRIPT_CYRILLIC,
       SCRIPT_GREEK };

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

/* A line ends after a line break or a punctuation mark (not after a space). */
static bool ends_line(uint32_t cp)
{
	return cp_is_delimiter(cp) && cp != ' ' && cp != '\t' && cp != 0x3000;
}

typedef struct role_text {
	int n;
	uint8_t *delim, *script;
	int *cls;   /* the index of the first token with the same character */
	int *line;  /* the line of each token */
	int *col;   /* its place in the line */
	int *start; /* [line]: its first token */
	int *len;   /* [line]: its length */
	int *best;  /* each row's largest weight's key */
	int *next_delim;	 /* the first delimiter at or after each token, or -1 */
	int *word;		 /* the first token of each token's word (analysis.h) */
	double *mass;		 /* per character (at its cls): the weight on it, all rows */
	double *diag_w, *diag_u; /* [c], 0 <= c <= 2n - 2: the weight on the
				    anti-diagonal i + j = c, and a uniform head's */
	int nlines;
} role_text;

/* The memory of a role_text of up to AV_MAX_CONTEXT tokens, on the stack of
 * head_roles (50 KiB): scoring a head allocates nothing, so it cannot fail
 * on a text a model can read. */
typedef struct role_text_mem {
	uint8_t b[2 * AV_MAX_CONTEXT];
	int i[8 * AV_MAX_CONTEXT];
	double mass[AV_MAX_CONTEXT];
	double diag[2][2 * AV_MAX_CONTEXT];
} role_text_mem;

static bool same_token(const token *tok, int i, int j)
{
	return tok[i].id == tok[j].id && (tok[i].id != TOK_UNK || tok[i].cp == tok[j].cp);
}

static void role_text_init(role_text *x, role_text_mem *mem, const token *tok, int n)
{
	x->n = n;
	x->delim = mem->b;
	x->cls = mem->i;
	x->mass = mem->mass;
	x->diag_w = mem->diag[0], x->diag_u = mem->diag[1];
	x->script = x->delim + n;
	x->line = x->cls + n, x->col = x->cls + 2 * n, x->start = x->cls + 3 * n;
	x->len = x->cls + 4 * n, x->best = x->cls + 5 * n, x->next_delim = x->cls + 6 * n;
	x->word = x->cls + 7 * n;
	x->nlines = 0;
	for (int i = 0; i < n; i++) {
		x->delim[i] = cp_is_delimiter(tok[i].cp);
		x->script[i] = cp_script(tok[i].cp);
		x->cls[i] = i;
		for (int j = 0; j < i; j++)
			if (same_token(tok, i, j)) {
				x->cls[i] = j;
				break;
			}
		if (i == 0 || ends_line(tok[i - 1].cp)) {
			x->start[x->nlines] = i;
			x->len[x->nlines++] = 0;
		}
		x->line[i] = x->nlines - 1;
		x->col[i] = x->len[x->nlines - 1]++;
		x->word[i] = i == 0 || x->delim[i - 1] ? i : x->word[i - 1];
	}
	for (int i = n - 1, next = -1; i >= 0; i--)
		x->next_delim[i] = next = x->delim[i] ? i : next;
	memset(x->mass, 0, (size_t)n * sizeof *x->mass);
	memset(mem->diag, 0, sizeof mem->diag);
}

/* ---- the scores ---------------------------------------------------------------- */

/* What a uniform head scores (the mean share of visible keys that count). */
typedef double uniform_shares[ROLE_NKINDS];

/* What the pass over the weights sums besides out->s and u: the script,
 * word start and delimiter share's parts. */
typedef struct pass_sums {
	int script_rows;
	double script_same, script_uni; /* sums of the rows' shares */
	double delim_all, delim_ahead;	/* weight on delimiters, on the one ahead */
	int word_rows;			/* rows two or more into their word */
	double word_w, word_u;		/* their weight on its start, a uniform head's */
} pass_sums;

/* Row i of the pass: every visible weight read once. The sums add the same
 * terms in the same order as a pass per score would (rows in order, keys
 * in order within a row; an anti-diagonal's cells by row), so the scores
 * are those of the formulas in analysis.h to the bit. */
static void pass_row(role_scores *out, double *u, pass_sums *p, const attn_matrix *a, role_text *x,
		     int i)
{
	const int n = a->n, vis = a->causal ? i + 1 : n, ci = x->cls[i];
	const double uni_cell = 1.0 / (a->causal ? i + 1 : n);
	const bool scripted = x->script[i] != SCRIPT_NONE;
	int delim = 0, dup = 0, ind = 0, near = 0, best = -1, any = 0, in_script = 0;
	double ent = 0, bw = -1, wany = 0, wsame = 0;
	double *s = out->s;
	for (int j = 0; j < vis; j++) {
		double w = attn_at(a, i, j);
		bool du = j != i && x->cls[j] == ci;
		bool in = j >= 1 && j - 1 != i && x->cls[j - 1] == ci;
		bool nb = abs(i - j) <= 2;
		if (x->delim[j]) {
			delim++;
			s[ROLE_DELIMITER] += w;
			p->delim_all += w;
			if (j == x->next_delim[i])
				p->delim_ahead += w;
		}
		if (du)
			dup++, s[ROLE_DUPLICATE] += w;
		if (in)
			ind++, s[ROLE_INDUCTION] += w;
		if (nb)
			near++, s[ROLE_LOCAL] += w;
		if (w > 0)
			ent -= w * log(w);
		if (w > bw)
			bw = w, best = j;
		else if (w == bw)
			best = -1; /* a tie: no single key */
		x->mass[x->cls[j]] += w;
		if (scripted && x->script[j] != SCRIPT_NONE) {
			any++;
			wany += w;
			if (x->script[j] == x->script[i])
				in_script++, wsame += w;
		}
		x->diag_w[i + j] += w;
		x->diag_u[i + j] += uni_cell;
	}
	x->best[i] = best;
	s[ROLE_BROAD] += ent;
	u[ROLE_PREVIOUS] += i >= 1 ? 1.0 / vis : 0;
	u[ROLE_NEXT] += i < n - 1 && !attn_masked(a, i, i + 1) ? 1.0 / vis : 0;
	u[ROLE_SELF] += 1.0 / vis;
	u[ROLE_FIRST] += 1.0 / vis;
	u[ROLE_DELIMITER] += (double)delim / vis;
	u[ROLE_DUPLICATE] += (double)dup / vis;
	u[ROLE_INDUCTION] += (double)ind / vis;
	u[ROLE_LOCAL] += (double)near / vis;
	if (i >= 1)
		s[ROLE_PREVIOUS] += attn_at(a, i, i - 1);
	if (i < n - 1 && !attn_masked(a, i, i + 1))
		s[ROLE_NEXT] += attn_at(a, i, i + 1);
	s[ROLE_SELF] += attn_at(a, i, i);
	s[ROLE_FIRST] += attn_at(a, i, 0);
	if (!x->delim[i] && x->word[i] <= i - 2) {
		p->word_rows++;
		p->word_w += attn_at(a, i, x->word[i]);
		p->word_u += 1.0 / vis;
	}
	if (scripted && wany > 0) {
		p->script_rows++;
		p->script_same += wsame / wany;
		p->script_uni += (double)in_script / any;
	}
}

/* The share of the rows whose largest weight is k away (and larger than
 * every other weight of the row), among the rows where that key is in the
 * text and visible (0 under 3 such rows). */
static double offset_share(const attn_matrix *a, const role_text *x, int k)
{
	int rows = 0, hits = 0;
	for (int i = 0; i < a->n; i++) {
		if (i + k < 0 || i + k >= a->n || attn_masked(a, i, i + k))
			continue;
		rows++;
		hits += x->best[i] == i + k;
	}
	return rows >= 3 ? (double)hits / rows : 0;
}

static void offset_score(role_scores *out, const attn_matrix *a, const role_text *x)
{
	out->offset = 0;
	for (int d = 2; d <= 8; d++)
		for (int sign = -1; sign <= 1; sign += 2) {
			double v = offset_share(a, x, sign * d);
			if (v > out->s[ROLE_OFFSET]) {
				out->s[ROLE_OFFSET] = v;
				out->offset = sign * d;
			}
		}
}

/* The one or two characters with the most weight over all rows (x->mass,
 * from the pass). */
static bool keyword_score(role_scores *out, double *u, const attn_matrix *a, const token *tok,
			  const role_text *x)
{
	int n = a->n;
	const double *mass = x->mass;
	/* Characters only: the mask and the unknown token are not keywords. */
	int c1 = -1, c2 = -1;
	for (int c = 0; c < n; c++) {
		if (x->cls[c] != c || tok[c].cp >= AV_SPECIAL_CP)
			continue;
		if (c1 < 0 || mass[c] > mass[c1])
			c2 = c1, c1 = c;
		else if (c2 < 0 || mass[c] > mass[c2])
			c2 = c;
	}
	if (c1 < 0)
		return false;
	double total = mass[c1] + (c2 >= 0 ? mass[c2] : 0);
	out->s[ROLE_KEYWORD] = total / n;
	out->keys[0] = tok[c1].cp;
	out->nkeys = 1;
	if (c2 >= 0 && mass[c2] >= 0.25 * total)
		out->keys[out->nkeys++] = tok[c2].cp;
	/* A uniform head's share of the two: keys of theirs among a row's
	 * visible ones, counted as a running sum (a causal row sees a prefix). */
	int seen = 0, all = 0;
	for (int j = 0; j < n; j++)
		all += x->cls[j] == c1 || x->cls[j] == c2;
	for (int i = 0; i < n; i++) {
		seen += x->cls[i] == c1 || x->cls[i] == c2;
		int visible = a->causal ? i + 1 : n;
		u[ROLE_KEYWORD] += (double)(a->causal ? seen : all) / visible;
	}
	return true;
}

/* Over the keys that have a script: the weight on the query's own script
 * against a uniform head's share. */
static void script_score(role_scores *out, const pass_sums *p)
{
	int rows = p->script_rows;
	double S = rows ? p->script_same / rows : 0, U = rows ? p->script_uni / rows : 1;
	double v = 1 - U >= 0.05 ? (S - U) / (1 - U) : 0;
	out->s[ROLE_SCRIPT] = v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Weight on the same place in the line before and after, over the rows
 * that have such a key. */
static void parallel_score(role_scores *out, double *u, const attn_matrix *a, const role_text *x)
{
	int n = a->n, rows = 0;
	double w = 0, uni = 0;
	for (int i = 0; i < n; i++) {
		int visible = a->causal ? i + 1 : n, in = 0;
		double wi = 0;
		for (int d = -1; d <= 1; d += 2) {
			int l = x->line[i] + d;
			if (l < 0 || l >= x->nlines || x->col[i] >= x->len[l])
				continue;
			int j = x->start[l] + x->col[i];
			if (attn_masked(a, i, j))
				continue;
			in++;
			wi += attn_at(a, i, j);
		}
		if (!in)
			continue;
		rows++;
		w += wi;
		uni += (double)in / visible;
	}
	bool enough = rows >= 1 && 4 * rows >= n;
	out->s[ROLE_PARALLEL] = enough ? w / rows : 0;
	u[ROLE_PARALLEL] = enough ? uni / rows : 0;
}

/* The anti-diagonal j = c - i with the most weight (x->diag_w, from the
 * pass). */
static void mirror_score(role_scores *out, double *u, const attn_matrix *a, const role_text *x)
{
	int n = a->n;
	out->mirror = 0;
	for (int c = 0; c <= 2 * n - 2; c++)
		if (x->diag_w[c] / n > out->s[ROLE_MIRROR]) {
			out->s[ROLE_MIRROR] = x->diag_w[c] / n;
			out->mirror = c;
			u[ROLE_MIRROR] = x->diag_u[c] / n;
		}
}

/* ---- the label ------------------------------------------------------------------ */

void role_bar(role_kind r, double *min, double *ratio)
{
	*min = r < ROLE_NKINDS ? bars[r].min : 0;
	*ratio = r < ROLE_NKINDS ? bars[r].ratio : 0;
}

static bool passes(const role_scores *out, const double *u, role_kind r)
{
	const bar_spec *b = &bars[r];
	return out->s[r] >= b->min && (b->ratio == 0 || out->s[r] >= b->ratio * u[r]);
}

void head_roles(role_scores *out, const attn_matrix *a, const token *tok)
{
	memset(out, 0, sizeof *out);
	int n = a->n;
	out->role = ROLE_BROAD;
	role_text x;
	role_text_mem mem;
	if (n <= 0 || n > AV_MAX_CONTEXT)
		return;
	role_text_init(&x, &mem, tok, n);
	uniform_shares u = {0};
	pass_sums p = {0};
	for (int i = 0; i < n; i++)
		pass_row(out, u, &p, a, &x, i);
	for (int r = 0; r <= ROLE_LOCAL; r++)
		out->s[r] /= n, u[r] /= n;
	out->s[ROLE_BROAD] = n > 1 ? out->s[ROLE_BROAD] / n / log((double)n) : 0;
	offset_score(out, a, &x);
	bool ok = keyword_score(out, u, a, tok, &x);
	u[ROLE_KEYWORD] /= n;
	script_score(out, &p);
	parallel_score(out, u, a, &x);
	mirror_score(out, u, a, &x);
	out->ahead = p.delim_all > 0 ? p.delim_ahead / p.delim_all : 0;
	if (p.word_rows >= 3) {
		out->s[ROLE_WORDSTART] = p.word_w / p.word_rows;
		u[ROLE_WORDSTART] = p.word_u / p.word_rows;
	}
	for (int r = 0; r < ROLE_NKINDS; r++) { /* rounding can pass 1 by an ulp */
		out->s[r] = out->s[r] > 1 ? 1 : out->s[r];
		out->uniform[r] = u[r];
	}
	/* The label: the highest score among the roles that pass (the first
	 * in role_kind's order on a tie), then the roles that name a kind of
	 * key rather than a place (keyword, same script), then a local
	 * window, else broad. */
	out->score = out->s[ROLE_BROAD];
	double best = -1;
	for (int r = 0; r < ROLE_NKINDS; r++) {
		if (r == ROLE_LOCAL || r == ROLE_SCRIPT || r == ROLE_BROAD || r == ROLE_KEYWORD)
			continue;
		if (passes(out, u, (role_kind)r) && out->s[r] > best) {
			best = out->s[r];
			out->role = (role_kind)r;
		}
	}
	/* In a text that repeats itself every m characters the keys of an
	 * induction head are m - 1 to the left, and in lines of one length the
	 * parallel keys are a line's length away: offsets too. Induction and
	 * line-parallel say why. */
	for (int k = 0; k < 2 && out->role == ROLE_OFFSET; k++) {
		role_kind r = k == 0 ? ROLE_INDUCTION : ROLE_PARALLEL;
		if (passes(out, u, r)) {
			best = out->s[r];
			out->role = r;
		}
	}
	static const role_kind fallbacks[] = {ROLE_KEYWORD, ROLE_SCRIPT, ROLE_LOCAL};
	for (int k = 0; k < 3 && best < 0; k++) {
		role_kind r = fallbacks[k];
		if (r == ROLE_KEYWORD && !ok)
			continue;
		if (passes(out, u, r)) {
			best = out->s[r];
			out->role = r;
		}
	}
	if (best >= 0)
		out->score = best;
}

/* ---- in words --------------------------------------------------------------------- */

AV_FORMAT_ARG(1) static const char *tr(const char *msg, bool translate)
{
	return translate ? _(msg) : msg;
}

/* A character as a label shows it: a space as the view draws it. */
static void put_char(uint32_t cp, char *out, size_t size)
{
	if (cp == ' ')
		cp = 0x2423;
	else if (cp == '\n')
		cp = 0x23CE;
	else if (cp >= AV_SPECIAL_CP)
		cp = 0x2588; /* the mask */
	char b[4];
	size_t k = cp_to_utf8(cp, b);
	snprintf(out, size, "%.*s", (int)k, b);
}

static void keys_text(const role_scores *rs, char *out, size_t size)
{
	char a[8], b[8];
	put_char(rs->keys[0], a, sizeof a);
	if (rs->nkeys < 2) {
		snprintf(out, size, "%s", a);
		return;
	}
	put_char(rs->keys[1], b, sizeof b);
	snprintf(out, size, "%s %s", a, b);
}

void role_label(const role_scores *rs, bool translate, char *out, size_t size)
{
	char keys[32];
	if (rs->role == ROLE_OFFSET) {
		snprintf(out, size,
			 rs->offset < 0 ? tr(N_("%d left"), translate) : tr(N_("%d right"), translate),
			 abs(rs->offset));
	} else if (rs->role == ROLE_KEYWORD) {
		keys_text(rs, keys, sizeof keys);
		snprintf(out, size, tr(N_("keyword %s"), translate), keys);
	} else {
		snprintf(out, size, "%s", tr(role_name(rs->role), translate));
	}
}

void role_sentence(const role_scores *rs, bool causal, bool translate, char *out, size_t size)
{
	static const char *const says[ROLE_NKINDS] = {
	    [ROLE_PREVIOUS] = N_("each character looks at the one before it"),
	    [ROLE_NEXT] = N_("each character looks at the one after it"),
	    [ROLE_SELF] = N_("each character looks at itself"),
	    [ROLE_FIRST] = N_("each character looks at the first character of the text"),
	    [ROLE_DUPLICATE] = N_("each character looks at other copies of itself"),
	    [ROLE_INDUCTION] = N_("each character looks at what came after an earlier copy of "
				  "itself (an induction head)"),
	    [ROLE_SCRIPT] = N_("each character looks at characters of its own script: Chinese "
			       "at Chinese, Latin letters at Latin letters"),
	    [ROLE_BROAD] = N_("each character spreads its attention over the whole text"),
	    [ROLE_WORDSTART] = N_("each character looks at the first character of its word (after "
				  "the last space or punctuation mark)"),
	};
	char keys[32];
	switch (rs->role) {
	case ROLE_OFFSET:
		snprintf(out, size,
			 rs->offset < 0
			     ? tr(N_("each character looks %d places to its left"), translate)
			     : tr(N_("each character looks %d places to its right"), translate),
			 abs(rs->offset));
		break;
	case ROLE_KEYWORD:
		keys_text(rs, keys, sizeof keys);
		snprintf(out, size,
			 rs->nkeys > 1 ? tr(N_("every character looks at the same two characters, "
					       "%s"), translate)
				       : tr(N_("every character looks at the same character, %s"),
					    translate),
			 keys);
		break;
	case ROLE_LOCAL: /* a causal row sees no neighbour to its right */
		snprintf(out, size, "%s",
			 causal
			     ? tr(N_("each character looks at its neighbours, the two before it"),
				  translate)
			     : tr(N_("each character looks at its neighbours, two places either "
				     "side"),
				  translate));
		break;
	case ROLE_DELIMITER:
		snprintf(out, size, "%s",
			 rs->ahead >= 0.5
			     ? tr(N_("each character looks at the punctuation or space that ends its "
				     "phrase"), translate)
			     : tr(N_("each character looks at the punctuation and spaces"), translate));
		break;
	case ROLE_PARALLEL:
		snprintf(out, size, "%s",
			 causal ? tr(N_("each character looks at the same place in the line before"),
				     translate)
				: tr(N_("each character looks at the same place in the lines before "
					"and after"), translate));
		break;
	case ROLE_MIRROR:
		snprintf(out, size,
			 tr(N_("each character looks at its mirror image: position i looks at %d - i"),
			    translate),
			 rs->mirror);
		break;
	default:
		snprintf(out, size, "%s", tr(says[rs->role < ROLE_NKINDS ? rs->role : ROLE_BROAD],
					    translate));
	}
}
