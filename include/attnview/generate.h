/* Writing text with a causal (next-character) model: the distribution of
 * the character after a text, and a sampler that picks from it, greedy or
 * at a temperature among the k most likely. The sampler is exactly defined
 * (attnview(1), GENERATING TEXT), so one seed gives one text: in the view,
 * in --dump --generate and on every machine.
 *
 *	gen_sampler s;
 *	gen_sampler_init(&s, 0.8f, 10, 1);
 *	model_next_logits(m, &ws, ids, n, logits, &err);
 *	int32_t id = gen_pick(&s, logits, V, &p);   // never a special token
 */
#ifndef ATTNVIEW_GENERATE_H
#define ATTNVIEW_GENERATE_H

#include "attnview/model.h"
#include "attnview/rng.h"

typedef struct gen_sampler {
	float temperature; /* 0: greedy, the most likely character */
	int top_k;	   /* sample among the k most likely; 0: all */
	uint64_t seed;
	rng r;
	struct gen_cand *cand; /* [V] scratch, gen_pick's */
	double *w;	       /* [V] */
	int cap;
} gen_sampler;

/* The defaults of the view and of --dump --generate. */
#define GEN_TEMPERATURE 0.8f
#define GEN_TOP_K 20
#define GEN_MAX_TEMPERATURE 10.0f

void gen_sampler_init(gen_sampler *s, float temperature, int top_k, uint64_t seed);
void gen_sampler_finish(gen_sampler *s);

/* The next token from logits[V]: the special tokens (pad, unknown, mask)
 * are never chosen. Greedy: the largest logit (the lowest id on a tie).
 * Otherwise the candidates are the top_k largest logits (all when top_k is
 * 0 or at least the vocabulary), in decreasing order (lower id first on a
 * tie), weighted exp((logit - max) / temperature) in double precision; one
 * uniform number u in [0, 1) from the seeded generator (24 bits, rng.h)
 * picks the first candidate whose running sum of weights exceeds u times
 * their total. *p gets the model's own probability of the choice
 * (softmax at temperature 1 over the whole vocabulary). Returns -1 when out
 * of memory. */
int32_t gen_pick(gen_sampler *s, const float *logits, int V, float *p);

/* logits[V] of the token after ids[0..n) (1 <= n <= context) for a causal
 * model: the last row of one forward pass. */
bool model_next_logits(const model *m, activations *ws, const int32_t *ids, int n, float *out,
		       av_error *err);

#endif
