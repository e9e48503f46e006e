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
 * keys have weight 0 and take no part.
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
} head_stats;

void head_stats_compute(head_stats *s, const attn_matrix *a);

/* The strongest keys of row q, by weight, ties by position: writes up to k
 * key indices to keys and returns how many (masked keys are never listed). */
int row_top_keys(const attn_matrix *a, int q, int k, int *keys);

/* Rank of cell (q, j) in its row: 1 + the number of visible keys with a
 * larger weight. *visible (may be NULL) gets the number of visible keys. */
int row_rank(const attn_matrix *a, int q, int j, int *visible);

/* A one-word description of a head's pattern on this text, from its
 * statistics: "previous", "next" or "self" when that is where at least half
 * of the rows have their maximum, "local" when the weight lies on average
 * within 5 positions of the query and within a quarter of the text,
 * otherwise "broad". */
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

/* ---- head roles (roles.c) -----------------------------------------------
 * Scores in [0, 1] of one head on one text (TransformerLens's detector
 * scores, generalised to bidirectional models, and more), A the head's n x n
 * weights, masked cells counted as 0; attnview(1), HEAD ROLES, has the
 * formulas as a reader meets them and the measured precision and recall of
 * every bar below:
 *   previous   sum_{i>=1} A[i][i-1] / n
 *   next       sum_{i<n-1} A[i][i+1] / n
 *   self       sum_i A[i][i] / n
 *   first      sum_i A[i][0] / n
 *   delimiter  sum_i sum_{j: tok_j space, line break or punctuation} A[i][j] / n
 *   duplicate  sum_i sum_{j != i, tok_j = tok_i} A[i][j] / n
 *   induction  sum_i sum_{j >= 1, j - 1 != i, tok_{j-1} = tok_i} A[i][j] / n
 *   local      sum_i sum_{|i - j| <= 2} A[i][j] / n
 *   offset     max over k, 2 <= |k| <= 8, of the share of the rows i with
 *              key i + k in the text and visible whose largest weight is at
 *              i + k and larger than every other (0 where fewer than 3 such
 *              rows)
 *   keyword    sum_i sum_{j: tok_j in K} A[i][j] / n, K the one or two
 *              characters with the most weight summed over all rows
 *   script     (S - U) / (1 - U), clipped to [0, 1], over the rows whose
 *              character has a script (Han, Latin, kana, Hangul, Cyrillic,
 *              Greek): S the mean weight on keys of the query's script, U a
 *              uniform head's (0 where 1 - U < 0.05: one script only)
 *   parallel   the mean over rows that have one of the weight on the keys
 *              at the same place (the same distance from the start of its
 *              line) in the line before or after; a line ends after a line
 *              break or a punctuation mark (0 where fewer than n/4 rows have
 *              such a key)
 *   mirror     max over c of sum_{i: 0 <= c - i < n} A[i][c - i] / n
 *   entropy    mean over rows of -sum_j A[i][j] ln A[i][j], divided by ln n
 *   word start the mean of A[i][w(i)] over the rows R whose character is not
 *              a delimiter and stands at least two places into its word,
 *              w(i) <= i - 2, w(i) the word's first character (the first after
 *              the last space, line break or punctuation mark at or before
 *              i - 1, else 0); 0 where R has fewer than 3 rows
 * Word start comes after broad: the training timeline (timeline.h) records
 * the scores up to broad's, the roles it was made with. */
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

typedef struct role_scores {
	double s[ROLE_NKINDS]; /* ROLE_BROAD holds the entropy */
	role_kind role;	       /* the label */
	double score;	       /* the score that earned it */
	/* What the label and the sentence name: */
	int offset;	    /* the k of the offset score (0: none) */
	uint32_t keys[2];   /* the keyword's characters, most weight first */
	int nkeys;	    /* 1 or 2 (a second only with a quarter of the weight) */
	int mirror;	    /* the c of the mirror score */
	double ahead;	    /* share of the delimiter weight on the first delimiter
			       at or after the query (a segment's end) */
	double uniform[ROLE_NKINDS]; /* what a head spreading each row evenly over
					its visible keys scores (where a bar compares) */
} role_scores;

/* Names as the dump and the screen print them: "previous", "next", "self",
 * "first", "delimiter", "duplicate", "induction", "local", "offset",
 * "keyword", "same script", "line-parallel", "mirror", "broad", "word
 * start". */
const char *role_name(role_kind r);
/* The names of the scores in the dump's "scores" ("entropy" for broad,
 * "script", "parallel" and "word_start" for the names with a space or a
 * dash). */
const char *role_score_key(role_kind r);

/* The scores of a head, tokens tok[0..n) (ids compare tokens: two unknown
 * characters count as the same only if their codepoints are equal), and its
 * label (n at most AV_MAX_CONTEXT; scoring allocates nothing): among the
 * roles whose score clears its bar (attnview(1), HEAD
 * ROLES) the one with the highest score, the first in role_kind's order on a
 * tie; else "same script", else "local", if that clears its bar; else
 * "broad" with the entropy as its score. */
void head_roles(role_scores *out, const attn_matrix *a, const token *tok);

/* The bar of role r: its score must be at least *min and at least *ratio
 * times the uniform head's (ratio 0: no such comparison). */
void role_bar(role_kind r, double *min, double *ratio);

/* The label in a few words: the role's name, or for an offset "2 left" /
 * "3 right", for a keyword "keyword 是 头". translate: in the messages'
 * language (the screen) or in English (the dump, the figures). */
void role_label(const role_scores *rs, bool translate, char *out, size_t size);
/* What the head does, in one sentence ("each character looks at the one
 * before it"). */
void role_sentence(const role_scores *rs, bool causal, bool translate, char *out, size_t size);

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

#endif
