/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/rftest.h - helpers shared by the unit tests.
 */
#ifndef RDMAFAST_TESTS_RFTEST_H
#define RDMAFAST_TESTS_RFTEST_H

#include <stdint.h>
#include <string.h>

/*
 * A small deterministic PRNG (xorshift64*), so randomized tests are
 * reproducible: a failure prints the seed, and the same seed replays it.
 */
struct rft_rng {
	uint64_t s;
};

static inline void rft_rng_seed(struct rft_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t rft_rand64(struct rft_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static inline uint32_t rft_rand32(struct rft_rng *r)
{
	return (uint32_t)(rft_rand64(r) >> 32);
}

static inline void rft_fill(struct rft_rng *r, void *p, size_t n)
{
	uint8_t *b = (uint8_t *)p;

	while (n--)
		*b++ = (uint8_t)rft_rand64(r);
}

/* Index of the first differing byte, or -1 when equal. */
static inline long rft_first_diff(const void *a, const void *b, size_t n)
{
	const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

#endif /* RDMAFAST_TESTS_RFTEST_H */
