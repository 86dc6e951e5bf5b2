/* SPDX-License-Identifier: MIT */
/*
 * clock.c - monotonic time in milliseconds, and the process deadline.
 */
#include "clock.h"

#include <time.h>

#include "hot.h"

/*
 * The sub-second part is below 10^9, so it fits 32 unsigned bits, whose
 * division by a constant compiles to one multiply and one shift (a signed
 * 64-bit one needs two more instructions to correct for a sign that is
 * never negative): this runs twice on every timed read.
 */
static int64_t read_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 +
	    (int64_t)((uint32_t)ts.tv_nsec / 1000000u);
}

/* Hot: read on every transfer of a socket with a timeout. */
RS_HOT int64_t rs_clock_now_ms(void)
{
	return read_ms(CLOCK_MONOTONIC);
}

RS_HOT int64_t rs_clock_coarse_ms(void)
{
	return read_ms(CLOCK_MONOTONIC_COARSE);
}

uint32_t rs_clock_coarse_lag_ms(void)
{
	static uint32_t lag;	/* 0: not asked yet; the answer is >= 1 */
	uint32_t v = __atomic_load_n(&lag, __ATOMIC_RELAXED);
	struct timespec res;

	if (v)
		return v;
	/* A tick of 10 ms (HZ=100) where the kernel does not say. */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 ||
	    res.tv_sec != 0 || res.tv_nsec <= 0)
		res.tv_nsec = 10000000;
	v = (uint32_t)(2 * rs_clock_timespec_ms(&res) + 1);
	__atomic_store_n(&lag, v, __ATOMIC_RELAXED);
	return v;
}

void rs_clock_later_ts(int64_t ms, struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int64_t rs_clock_epoch_ms(void)
{
	return read_ms(CLOCK_REALTIME);
}

int64_t rs_clock_epoch_to_mono_ms(int64_t epoch_ms)
{
	if (epoch_ms == RS_NEVER)
		return RS_NEVER;
	return rs_clock_now_ms() + (epoch_ms - rs_clock_epoch_ms()) +
	    RS_CLOCK_PAIR_MS;
}
