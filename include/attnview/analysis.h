/* What the view and the dump say about attention, computed without a
 * terminal: statistics of a head, a row's strongest keys and a weight's rank,
 * and pooling a matrix into a smaller grid for the overview.
 *
 * Everything works on an attn_matrix: one n x n matrix of weights, rows the
 * queries i, columns the keys j. Today that is one head of one text; it is
 * also what a mean over heads, a rollout or a difference of two texts will
 * be, so the view's heatmap and these functions never ask where it came from. */
#ifndef ATTNVIEW_ANALYSIS_H
#define ATTNVIEW_ANALYSIS_H

#include "attnview/model.h"
#include "attnview/select.h"

typedef struct attn_matrix {
	const float *w; /* pack == 0: (n, n), row-major, w[i * n + j]; else row i
			 * (keys 0..i) at w + attn_packed_row(i) (model.h) */
	int n;
	bool causal; /* keys after the query are masked: not shown, not counted */
	int pack;    /* 0: dense; else packed (causal only) */
} attn_matrix;

/* Head `head` of layer `layer` of a result. */
attn_matrix attn_result_head(const attn_result *r, int layer, int head);

/* a as a dense (n, n) matrix into out, 0 where masked. */
void attn_matrix_copy(float *out, const attn_matrix *a);

static inline bool attn_masked(const attn_matrix *a, int q, int k)
{
	return a->causal && k > q;
}

/* A[q][k]: 0 where masked. */
static inline float attn_at(const attn_matrix *a, int q, int k)
{
	if (a->pack)
		return k > q ? 0.0f : a->w[attn_packed_row(q) + (size_t)k];
	return a->w[(size_t)q * (size_t)a->n + (size_t)k];
}

/* Statistics of a head on one text, averaged over its n query rows. Masked
 * keys have weight 0 and take no part. A is each row as a distribution
 * (divided by its sum: a head's rows sum to 1, a layer's max of heads'
 * do not; negative weights count as 0).
 *   entropy      mean over rows of -sum_j A[i][j] ln A[i][j] (nats)
 *   max_entropy  mean over rows of ln(number of visible keys): a uniform row
 *   distance     mean over rows of sum_j A[i][j] |i - j| (positions)
 *   self, prev, next
 *                share of rows whose largest weight (the first, on ties) is
 *                on the query itself, the key before it, the key after it */
typedef struct head_stats {
	int n; /* rows */
	double entropy, max_entropy, distance;
	double self, prev, next;
	int column;	 /* the key most rows look at (-1: none): their strongest,
			    for the rows that do not look nowhere */
	int column_rows; /* ... of how many rows */
	int nowhere;	 /* rows that look nowhere: their largest weight tied, or
			    under min(ROLE_FOCUS / v, (1 + 1/v) / 2) of v visible keys */
} head_stats;

void head_stats_compute(head_stats *s, const attn_matrix *a);

/* The strongest keys of row q, by weight, ties by position: writes up to k
 * key indices to keys and returns how many (masked keys are never listed). */
int row_top_keys(const attn_matrix *a, int q, int k, int *keys);

/* Rank of cell (q, j) in its row: 1 + the number of visible keys with a
 * larger weight. *visible (may be NULL) gets the number of visible keys. */
int row_rank(const attn_matrix *a, int q, int j, int *visible);

/* A word for a head's pattern on this text, from its statistics (the word
 * view's, whose keys are words and where the head roles, which compare
 * characters, do not apply): "previous", "next" or "self" when that is where
 * at least half of the rows have their maximum; "first" or "column" when
 * one key (the first, another: s->column) is the strongest of half the rows
 * or more; "local" when the weight lies on average within 5 positions of the
 * query and within a quarter of the text; "broad" when half the rows or more
 * have no key of three times an even share; otherwise "unclear". */
const char *head_pattern(const head_stats *s);

/* Pooling an n x n matrix into rows x cols samples (rows, cols <= n): sample
 * (r, c) covers queries [r*n/rows, (r+1)*n/rows) and keys [c*n/cols,
 * (c+1)*n/cols). */
typedef enum pool_kind {
	POOL_MEAN, /* mean weight of the block, masked cells counted as 0 */
	POOL_MAX,  /* largest visible weight: a diagonal stays a line */
} pool_kind;

/* out (rows, cols) the pooled values; masked (rows, cols) 1 where every
 * cell of the block is masked (out is 0 there). */
void pool_grid(float *out, uint8_t *masked, const attn_matrix *a, int rows, int cols,
	       pool_kind kind);

/* ---- head roles (roles.c, role_decide.c, role_words.c) --------------------------------
 * What a head does on one text, in terms a person can check in its picture:
 * every role is a statement about the rows' strongest keys. A row "looks
 * at" its strongest key when that key is the only largest of the row and
 * holds at least ROLE_FOCUS times the weight an even spread would give it
 * (halfway to all of it in a row of few keys: min(3/v, (1 + 1/v)/2), v the
 * row's visible keys). Rows with one visible key (a causal model's first)
 * have no choice and are not counted. A role's score is the share of its
 * rows whose strongest key fits it (attnview(1), HEAD ROLES):
 *   previous   rows i >= 1 that look at i - 1
 *   next       rows that see i + 1 and look at it
 *   self       rows that look at i
 *   first      rows i >= 1 that look at key 0
 *   delimiter  rows that see a space, line break or punctuation mark and
 *              look at the nearest one before or after them (the last at or
 *              before i, the first at or after i); only rows that see a key
 *              other than themselves that is none; 0 unless the rows that do
 *              look at two or more different ones (one key for most rows is
 *              a column: keyword or first); 0 where a band explains it
 *              (local scores as high, half its rows or more within two
 *              places, and under half of the rows whose marks are all FAR or
 *              more away, ROLE_MIN_ROWS of them or more, look at one)
 *   duplicate  rows that see another copy of their character FAR or more
 *              away and outside their own run of it (in "Hmmmm" an m three
 *              to the left is an offset), and a key as far that is no copy,
 *              and look at one; 0 when such rows are under a quarter of the
 *              rows, or fewer than ROLE_MIN_ROWS look at one; where one
 *              key holds half the rows or more (a column), 0 unless the
 *              share clears its bar without the rows on that key
 *   induction  rows that see the character after an earlier copy of their
 *              own (key j, tok[j - 1] = tok[i], j - 1 < i, FAR or more
 *              away, tok[j] != tok[i]) and look at one such key; 0 when
 *              such rows are under a quarter of the rows, or fewer than
 *              ROLE_MIN_ROWS look at one; a column as for duplicate
 *   local      rows that look within two places of themselves; 0 in a
 *              text of three characters or fewer
 *   offset     the largest, over k with 2 <= |k| <= 8, of the share of the
 *              rows that see i + k and look at it
 *   keyword    (S - C) / (1 - C), S the share of rows that look at a copy of
 *              the one or two characters most rows look at (the second only
 *              with a quarter of the two's rows), C the mean share of a row's
 *              keys that are such copies (chance: rows that look anywhere
 *              land on a frequent character often)
 *   script     over the rows of a character with a script (Han, Latin, kana,
 *              Hangul, Cyrillic, Greek) in a text of two scripts or more:
 *              (S - C) / (1 - C), S the share that look at their own script,
 *              C the share an even spread would give it
 *   parallel   in a text of lines (line breaks, or verses of one length
 *              closed by punctuation), rows that look at the same place of
 *              the line before (or after, in a masked model); in a masked
 *              model the largest of that share and those of the rows with
 *              a line before, and with a line after, alone (a side with
 *              half the rows or more); 0 without lines
 *   mirror     the largest, over c, of the share of rows that see c - i and
 *              look at it (only c that half the rows or more can see)
 *   broad      rows that look nowhere: no key holds ROLE_FOCUS times an even
 *              share
 *   word start rows two places or more into their word or phrase (after the
 *              last space or punctuation mark) that look at its first
 *              character; 0 unless they look at two different starts or
 *              more, and where a band explains it (as delimiter, the rows
 *              FAR or more into their word); 0 when such rows are under
 *              a quarter of the rows
 * The label (role_decide): too short to tell under ROLE_MIN_LABEL_ROWS rows
 * with a choice; else
 * induction when its score clears its bar, whatever else does (a repeated
 * text puts its keys at a fixed offset too), with same script beside it when
 * that clears its bar and outscores it; else the highest score among
 * the roles that clear their bars (local, same script and broad only when no
 * other does: a band, script-mates and spread attention come with other
 * patterns; but same script over a keyword it outscores: a few letters of
 * each script gather their script's rows), and when the second is within
 * ROLE_CLOSE of it, both; else
 * broad when most rows look nowhere; else "unclear", with the closest role
 * and its share. The bars are measured on the lab's heads
 * (tests/bench/bench_labeller.c, attnview(1)). */
typedef enum role_kind {
	ROLE_PREVIOUS,
	ROLE_NEXT,
	ROLE_SELF,
	ROLE_FIRST,
	ROLE_DELIMITER,
	ROLE_DUPLICATE,
	ROLE_INDUCTION,
	ROLE_LOCAL, /* "local window" */
	ROLE_OFFSET,
	ROLE_KEYWORD,
	ROLE_SCRIPT,
	ROLE_PARALLEL,
	ROLE_MIRROR,
	ROLE_BROAD,
	ROLE_WORDSTART,
	ROLE_NKINDS
} role_kind;

#define ROLE_FOCUS 3.0	  /* times an even share: a row looks at its strongest key */
#define ROLE_MIN_ROWS 3	     /* rows a score needs */
/* Rows with a choice a label needs; fewer: too short to tell. More than a
 * score's: in three rows every pattern is one of few (in three characters
 * two of them are two thirds of the keys, and every key is within two). */
#define ROLE_MIN_LABEL_ROWS 4
#define ROLE_CLOSE 0.1	  /* two roles this close both name the head */
/* The keyword's "character" when it is the unknown token: the characters
 * outside the vocabulary, which the model cannot tell apart. The unknown
 * token's own codepoint (tokenizer.h), so no character of the text is
 * taken for it; a label shows it as U+FFFD "�". */
#define ROLE_UNKNOWN_CP (AV_SPECIAL_CP + TOK_UNK)

/* How sure the label is. */
typedef enum role_verdict {
	ROLE_SURE,   /* one role clears its bar (or broad: most rows look nowhere) */
	ROLE_TWO,    /* two clear their bars within ROLE_CLOSE (or induction and
			a same script that outscores it): both are named */
	ROLE_UNSURE, /* none clears its bar: "unclear", the closest named */
	ROLE_SHORT,  /* fewer than ROLE_MIN_LABEL_ROWS rows with a choice */
} role_verdict;

typedef struct role_scores {
	double s[ROLE_NKINDS];	/* each role's score in [0, 1] */
	int hits[ROLE_NKINDS];	/* its rows that fit (script: that look at their own) */
	int rows[ROLE_NKINDS];	/* the rows it counts */
	int n;			/* rows with a choice */
	role_kind role;		/* the label */
	double score;		/* its score */
	role_verdict verdict;
	role_kind second;	/* ROLE_TWO: the other role named; else the runner-up
				   (ROLE_NKINDS: none) */
	double second_score;
	/* What the label and the sentence name: */
	int offset;	    /* the k of the offset score (0: none) */
	uint32_t keys[2];   /* the keyword's characters, most rows first;
			     * ROLE_UNKNOWN_CP: the characters the model does
			     * not know, one token to it */
	int nkeys;	    /* 1 or 2 */
	int key_places;	    /* positions of the keyword's characters the rows look at */
	int key_near;	    /* the keyword's rows that look within two of themselves */
	bool key_first;	    /* its first character is key 0's, its rows all on key 0 */
	double key_chance;  /* mean over the rows of the share of a row's
			       visible keys that are its characters' copies */
	int column;	    /* the key most rows look at (-1: none) */
	int column_rows;    /* ... and how many do */
	uint32_t before[8]; /* the word before the column's key (a space, a mark) */
	int nbefore;
	bool before_cut;    /* ... cut to its last 8 characters */
	uint32_t column_cp; /* the column's character */
	bool by_place;	    /* keyword scored as that one place, against its chance */
	double column_chance; /* ... which is the mean over the rows of 1 / the keys
				 a row sees, for the rows that see it */
	bool column_alone;  /* no other key is that character after that word */
	bool column_is_key; /* the column is one of the keyword's characters */
	bool column_unknown; /* ... is a character the model does not know */
	int mirror;	    /* the c of the mirror score */
	int par_dir;	    /* the parallel score's rows: 0 those with a line on
			       either side, -1 with one before, 1 after */
	int ahead;	    /* delimiter rows that look at the one ahead (a phrase's end) */
	int places;	    /* different keys the delimiter or word start rows look at */
	int left1, left2;   /* local: rows that look one and two to the left */
	int word_far;	    /* word start's rows three places or more into their word */
	int script_near;    /* same script's rows that look within two of themselves
			       (both -1: not counted, scores alone, as a timeline keeps) */
	double script_far;  /* same script over the rows that look further away */
	double chance;	    /* script: the share an even spread would give */
	double ind_chance;  /* induction: mean over its rows of the share of a
			       row's visible keys that are its induction keys */
	bool causal;
	/* The bars role_decide holds the scores to: NULL, the labeller's
	 * (role_bar); else one a role (a version 1 timeline's shares of
	 * weight: timeline_head_roles). */
	const double *bars;
} role_scores;

/* Names as the dump and the screen print them: "previous", "next", "self",
 * "first", "delimiter", "duplicate", "induction", "local", "offset",
 * "keyword", "same script", "line-parallel", "mirror", "broad", "word
 * start". */
const char *role_name(role_kind r);
/* The names of the scores in the dump's "scores" ("script", "parallel",
 * "word_start" for the names with a space or a dash). */
const char *role_score_key(role_kind r);

/* The scores of a head, tokens tok[0..n) (ids compare tokens: two unknown
 * characters count as the same only if their codepoints are equal), and its
 * label (role_decide). n at most AV_MAX_CONTEXT; allocates nothing, so it
 * cannot fail on a text a model can read. */
void head_roles(role_scores *out, const attn_matrix *a, const token *tok);

/* The label from out->s and out->n alone (the training timeline keeps the
 * scores, not the weights): role, score, verdict, second and second_score. */
void role_decide(role_scores *out);

/* The bar of role r: its score must be at least this. */
double role_bar(role_kind r);

/* The label in a few words: the role's name, or for an offset "2 left" /
 * "3 right", for a keyword "keyword 是 头", two roles "keyword 人 / first",
 * "unclear: 38% previous", "too short to tell". translate: in the messages'
 * language (the screen) or in English (the dump, the figures). */
void role_label(const role_scores *rs, bool translate, char *out, size_t size);
/* The label with its score where the label does not say it already:
 * "keyword 月 0.67", "keyword 人 0.74 / first 0.70" (each role its own),
 * "unclear: 44% keyword t", "too short to tell" (headings, tiles, figure
 * titles). */
void role_title(const role_scores *rs, bool translate, char *out, size_t size);
/* The role's name alone, for a label of a few columns. */
void role_short_label(const role_scores *rs, bool translate, char *out, size_t size);
/* What the head does, in one sentence with its evidence ("47 of 74 rows look
 * at the character before"). */
void role_sentence(const role_scores *rs, bool translate, char *out, size_t size);
/* The runner-up in a few words ("runner-up: keyword 人, 41 of 74 rows"), or
 * "" when there is none. */
void role_runner_up(const role_scores *rs, bool translate, char *out, size_t size);

/* ---- aggregates and rollout ---------------------------------------------- */
/* out (n, n): an aggregate of result r, kind SEL_MEAN (over a layer's
 * heads), SEL_MAX (their largest weight, cell by cell) or SEL_ALL (the mean
 * over every head of every layer; layer ignored). The rows of a mean sum to
 * 1 as the heads' do; a max's do not. */
void aggregate_heads(float *out, const attn_result *r, int layer, sel_kind kind);

/* Attention rollout (Abnar and Zuidema, 2020): with W_l the mean over layer
 * l's heads, A_l = W_l / 2 + I / 2, R_0 = A_0, R_l = A_l R_{l-1}.
 * out (L, n, n): R_0 .. R_{L-1}, rows summing to 1. work: n * n floats. */
void attention_rollout(float *out, float *work, const attn_result *r);

/* ---- words --------------------------------------------------------------- */
/* A word: tokens [start, end). */
typedef struct word_span {
	int start, end;
} word_span;

/* Words of tok[0..n) split at spaces and punctuation (Clark et al. 2019 split
 * at whitespace): a run of other characters is a word, each punctuation
 * character or line break is a word, each with the spaces after it; spaces
 * at the start are a word. Writes at most n spans; returns how many. */
int words_split(word_span *out, const token *tok, int n);

/* The character that marks where a word starts in the word view: Chinese has
 * no spaces, so "我|爱|北京" is three words. */
#define WORD_MARK '|'

/* Remove the marks from cps[0..n) in place and record them: marks[i] (room
 * for n) is true when a mark stood before the i-th remaining codepoint.
 * Returns the number left. */
size_t words_strip_marks(uint32_t *cps, size_t n, bool *marks);

/* Words from boundaries the user marked: marks[i] true means a word starts
 * at token i (marks[0] is implied). Returns the number of spans. */
int words_from_marks(word_span *out, const bool *marks, int n);

/* Character attention as word attention (Clark et al. 2019): a word's Key
 * columns are summed, its Query rows averaged:
 *   W[I][J] = mean_{i in I} sum_{j in J} A[i][j]
 * so every word row still sums to 1. out (nw, nw). */
void words_aggregate(float *out, const attn_matrix *a, const word_span *w, int nw);

/* ---- differences ---------------------------------------------------------- */
/* out (n, n) = a - b over their first n rows and columns (n <= both),
 * aligned by position. Masked cells of either are 0. */
void matrix_difference(float *out, const attn_matrix *a, const attn_matrix *b, int n);

/* ---- value contributions ---------------------------------------------------- */
/* out (n, n): what each key adds to the head's output at each query, as a
 * share of the row (Kobayashi et al. 2020):
 *   C[i][j] = A[i][j] |v_j W_O| / sum over k of A[i][k] |v_k W_O|
 * value_norms[j] = |v_j W_O| (explain.h, value_norms). Masked cells are 0;
 * a row whose sum is 0 is all 0. The map F11 shows, and the matrix its label
 * is read from. out may not alias a's weights. */
void contribution_shares(float *out, const attn_matrix *a, const float *value_norms);

#endif
