/* SPDX-License-Identifier: MIT */
/*
 * clocks.c - what the clock reads of a steady timed round trip cost here.
 *
 *   clocks [N]          (default 5000000 reads of each clock)
 *
 * A blocking round trip under read_timeout (write, then a read that the
 * kernel times: ktimeo.h) reads CLOCK_MONOTONIC twice, once per activity
 * stamp (SPEC §6 counts idleness from the last byte sent or received, and
 * the "never early, at most 2 ms late" rules out the coarse clock,
 * whose tick is 4 ms at HZ=250), and CLOCK_MONOTONIC_COARSE once (the
 * read's "did it start right after the last activity?").  Those reads are
 * a floor under what the library can add to a round trip, whatever its
 * own code does: printed here per read, as the median of 5 blocks, and as
 * the sum per round trip.  Also the bare cost of the CPU's time stamp
 * counter (rdtsc), which the fine clock reads: on a VM it may be several
 * times what it is on bare metal.  Prints "clocks FINE COARSE RDTSC
 * PER_RT" in ns.  Nothing here asserts a timing.
 */
#include <stdint.h>

#include "bench.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_RDTSC 1
#endif

#define BLOCKS 5

static volatile uint64_t sink;

/* ns per read of clock id over n reads (id -1: rdtsc). */
static double per_read(int id, long n)
{
	struct timespec ts;
	uint64_t s = 0;
	long long t0 = b_now_ns();

	for (long i = 0; i < n; i++) {
#ifdef HAVE_RDTSC
		if (id < 0) {
			s += __rdtsc();
			continue;
		}
#endif
		clock_gettime((clockid_t)id, &ts);
		s += (uint64_t)ts.tv_nsec;
	}
	sink = s;
	return (double)(b_now_ns() - t0) / (double)n;
}

static double median_of(int id, long n)
{
	double v[BLOCKS];

	for (int b = 0; b < BLOCKS; b++)
		v[b] = per_read(id, n / BLOCKS);
	return b_quantile(v, BLOCKS, 0.5);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	double fine, coarse, tsc = 0;

	if (n < BLOCKS)
		n = BLOCKS;
	fine = median_of(CLOCK_MONOTONIC, n);
	coarse = median_of(CLOCK_MONOTONIC_COARSE, n);
#ifdef HAVE_RDTSC
	tsc = median_of(-1, n);
#endif
	printf("clocks %.1f %.1f %.1f %.1f\n", fine, coarse, tsc,
	    2 * fine + coarse);
	return 0;
}
