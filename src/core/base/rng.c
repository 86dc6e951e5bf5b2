/* SPDX-License-Identifier: MIT */
/*
 * rng.c - the jitter generator: xoshiro256** per thread, seeded by getrandom.
 *
 * The state is initial-exec TLS so that touching it never allocates (a
 * dynamically loaded TLS block can call malloc on first access).
 */
#include "rng.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TLS __thread __attribute__((tls_model("initial-exec")))

static TLS uint64_t state[4];
static TLS int seeded;

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* splitmix64 spreads one 64-bit seed over the four words of state. */
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rs_rng_seed(uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		state[i] = splitmix(&seed);
	seeded = 1;
}

/* The kernel's entropy, or (very old kernels) time, pid and an address. */
static uint64_t kernel_seed(void)
{
	int save = errno;
	uint64_t seed = 0;

	if (syscall(SYS_getrandom, &seed, sizeof(seed), 0x1 /* NONBLOCK */) !=
	    (long)sizeof(seed)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		    ((uint64_t)syscall(SYS_gettid) << 16) ^ (uintptr_t)&seed;
	}
	errno = save;
	return seed;
}

void rs_rng_reseed(void)
{
	seeded = 0;
}

double rs_rng_uniform(void)
{
	if (!seeded)
		rs_rng_seed(kernel_seed());
	uint64_t result = rotl(state[1] * 5, 7) * 9;
	uint64_t t = state[1] << 17;

	state[2] ^= state[0];
	state[3] ^= state[1];
	state[1] ^= state[2];
	state[0] ^= state[3];
	state[2] ^= t;
	state[3] = rotl(state[3], 45);
	/* The top 53 bits make an exact double in [0, 1). */
	return (double)(result >> 11) * 0x1.0p-53;
}
