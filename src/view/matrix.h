/* What the map draws, made from what it is given: one kind of matrix
 * (select.h: a head, a summary of several, the value contributions) of a
 * result, seen character by character or word by word, on its own or as
 * the difference from a pinned matrix, with its labels. Computed on demand
 * and kept until the request changes; the heatmap, the panel and the
 * figures draw from it. Nothing here knows the view: the map screen (map.c)
 * owns a matrix_cache and asks with a matrix_request; tests ask without a
 * terminal (test_matrix). */
#ifndef ATTNVIEW_VIEW_MATRIX_H
#define ATTNVIEW_VIEW_MATRIX_H

#include "attnview/select.h"

#include "heatmap.h"

/* A pinned matrix for comparisons (F9 pins what is on the map). */
typedef struct pin {
	bool on;
	int n;
	float *w; /* (n, n) */
	bool causal;
	heat_label *labels; /* [n], texts copied */
	char *text_buf;
	char what[96]; /* "layer 0 head 1 of '他说'" */
	int32_t *ids;  /* the pinned text's ids (characters, not words), or NULL */
	int nids;      /* for patching (patch.h, the panel's Alt-X) */
} pin;

/* A copy of what s shows (its labels' texts included) into p, which is
 * then on; false when out of memory (p then off). */
bool pin_set(pin *p, const heat_src *s);
void pin_clear(pin *p);

/* What to make. */
typedef struct matrix_request {
	const attn_result *r; /* the result on screen ... */
	uint64_t seq;	      /* ... and its number: a new number is a new result */
	sel_kind kind;	      /* not SEL_OVERVIEW */
	int layer, head;      /* head: of SEL_HEAD and SEL_CONTRIB */
	bool words;	      /* the word view */
	const bool *marks;    /* words: [r->n] a word starts at token i ('|'), or NULL */
	const pin *pin;	      /* a difference from it, or NULL */
	scale_kind scale;     /* how weights become colours (a difference: SCALE_DIFF) */
	float *row_max;	      /* [r->n]: the scale's scratch */
} matrix_request;

/* The matrix made last, and what it was made of. */
typedef struct matrix_cache {
	float *mat, *mat2; /* (n, n) scratch each */
	size_t mat_cap;
	sel_cache sel; /* the rollout of every layer of result sel_seq */
	uint64_t sel_seq;
	heat_label *labels; /* [AV_MAX_CONTEXT + 1] */
	bool *wstart;	    /* [AV_MAX_CONTEXT + 1]: the words' starts */
	word_span *wspan;   /* [AV_MAX_CONTEXT + 1] */
	int nw;
	char *wtext; /* the words' labels */
	size_t wtext_cap;
	heat_src src; /* what it holds (sc is made again at every call) */
	bool valid;
	uint64_t gen; /* bumped whenever it is made anew */
	/* the request it was made for */
	uint64_t seq;
	sel_kind kind;
	int layer, head;
	bool words, pinned;
} matrix_cache;

bool matrix_init(matrix_cache *mx, av_error *err);
void matrix_finish(matrix_cache *mx);
/* Make it anew at the next matrix_make (the text or the pin changed). */
void matrix_forget(matrix_cache *mx);

/* The matrix and labels of rq into *out (kept in mx until the request
 * changes); false with a message when out of memory or the kind cannot be
 * made (contributions without norms). */
bool matrix_make(matrix_cache *mx, const matrix_request *rq, heat_src *out, av_error *err);
/* In a comparison: the two weights behind cell (q, k) of the matrix made
 * last from pin p. */
bool matrix_compare_cell(const matrix_cache *mx, const pin *p, int q, int k, float *now,
			 float *pinned);
/* Word view: the tokens [start, end) of word i of the word view made last. */
bool matrix_word_span(const matrix_cache *mx, int i, int *start, int *end);

#endif
