/* A small portable random number generator (xoshiro256**, seeded through
 * splitmix64): the same seed gives the same numbers on every machine, and its
 * whole state is four words that a checkpoint can save. */
#ifndef ATTNVIEW_RNG_H
#define ATTNVIEW_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct rng {
	uint64_t s[4];
} rng;

static inline uint64_t rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void rng_seed(rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix64(&seed);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1) with 24 bits, exact in float. */
static inline float rng_uniform(rng *r)
{
	return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the tiny bias of
 * skipping rejection is irrelevant for batch sampling). */
static inline uint64_t rng_below(rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Standard normal (Box-Muller, one value per call). */
static inline float rng_normal(rng *r)
{
	double u1 = ((double)(rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
	double u2 = (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
	return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

#endif
