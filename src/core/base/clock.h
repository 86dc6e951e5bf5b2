/* SPDX-License-Identifier: MIT */
/*
 * clock.h - monotonic time in milliseconds, and the process deadline.
 *
 * Thread-safe.  Monotonic time never jumps with the wall clock, so every
 * timeout and backoff is measured on it; only RESOLUTE_DEADLINE, an epoch
 * value, is converted once from the wall clock.
 */
#ifndef RS_CLOCK_H
#define RS_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* No deadline. */
#define RS_NEVER INT64_MAX

/* Returns CLOCK_MONOTONIC in milliseconds. */
int64_t rs_clock_now_ms(void);

/*
 * Returns CLOCK_MONOTONIC_COARSE in milliseconds: the time of the last
 * tick, about five times cheaper to read than rs_clock_now_ms().  Never
 * ahead of rs_clock_now_ms(), and behind it by less than
 * rs_clock_coarse_lag_ms(); so it may only bound how long ago something
 * was, generously, never stamp when something happened.
 */
int64_t rs_clock_coarse_ms(void);

/*
 * Returns how far, in ms, rs_clock_coarse_ms() may trail rs_clock_now_ms():
 * two of its ticks (clock_getres) and one for the rounding of each to
 * whole ms.  Asked of the kernel once.
 */
uint32_t rs_clock_coarse_lag_ms(void);

/*
 * Sets *ts to CLOCK_MONOTONIC ms from now, as clock_nanosleep() takes an
 * absolute time (TIMER_ABSTIME): a sleep that signals interrupt then ends
 * when it would have.
 */
void rs_clock_later_ts(int64_t ms, struct timespec *ts);

/* Returns CLOCK_REALTIME (Unix epoch) in milliseconds. */
int64_t rs_clock_epoch_ms(void);

/*
 * An epoch time turned monotonic from two readings of whole milliseconds
 * (each cut short by less than one) is off by less than one either way:
 * it is taken this much later, never earlier than the moment it names.
 */
#define RS_CLOCK_PAIR_MS 1

/*
 * Converts an epoch time in ms to the monotonic clock, RS_CLOCK_PAIR_MS
 * later (RS_NEVER stays).
 */
int64_t rs_clock_epoch_to_mono_ms(int64_t epoch_ms);

/*
 * Returns the deadline of an interval of `ms` that starts at `stamp`, a
 * reading of rs_clock_now_ms(): the first reading at which the interval
 * has surely passed.  A reading is the time rounded down to whole ms, so
 * the start may really be up to 1 ms after its stamp; a wait that ended
 * when a later reading reached stamp + ms could end almost 1 ms before ms
 * had passed.  One ms more makes every backoff, connect_timeout and idle
 * timeout end no earlier than it must and at most 1 ms later (plus the
 * scheduler's delay).  Every "ms after a stamp" deadline is made here.
 */
static inline int64_t rs_clock_after(int64_t stamp, int64_t ms)
{
	/* No time at all has passed at once: a zero timeout never waits. */
	return ms ? stamp + ms + 1 : stamp;
}

/* Returns the earlier of two monotonic times. */
static inline int64_t rs_clock_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Returns the milliseconds from now until `when`, clamped to [0, INT32_MAX]
 * so it can be given to poll(); RS_NEVER gives -1 (wait forever).
 */
static inline int rs_clock_remaining_ms(int64_t when, int64_t now)
{
	if (when == RS_NEVER)
		return -1;
	if (when <= now)
		return 0;
	if (when - now > INT32_MAX)
		return INT32_MAX;
	return (int)(when - now);
}

/*
 * The one rounding of a kernel time value to milliseconds: up, so that a
 * wait the library does in place of the kernel's never ends before the
 * kernel's would.  The value must be valid (non-negative fields, the
 * sub-second one below a second).
 */
static inline int64_t rs_clock_timespec_ms(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
}

static inline int64_t rs_clock_timeval_ms(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000;
}

#endif /* RS_CLOCK_H */
