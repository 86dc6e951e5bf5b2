/* SPDX-License-Identifier: MIT */
/*
 * rng.h - the jitter generator: uniform draws, one stream per thread.
 *
 * Each thread's state is seeded from the kernel (getrandom) on first use;
 * rs_rng_reseed() is called in a fork child so that forked workers never
 * retry in lock-step.  Thread-safe (the state is thread-local).
 */
#ifndef RS_RNG_H
#define RS_RNG_H

#include <stdint.h>

/* Returns a uniform double in [0, 1). */
double rs_rng_uniform(void);

/* Forgets the calling thread's state; the next draw seeds it anew. */
void rs_rng_reseed(void);

/* Seeds the calling thread's stream explicitly (tests). */
void rs_rng_seed(uint64_t seed);

#endif /* RS_RNG_H */
