/* SPDX-License-Identifier: MIT */
/*
 * learn_io.h - the samples of read waits that reads and writes give the
 * learned latency (SPEC 13, learn.h), at the stamps they make anyway.
 *
 * A read that returns bytes on a connection whose rule has a read_timeout
 * ends a wait for data: the time from the socket's last activity to now
 * is exactly what read_timeout bounds, so it is the sample.  Both ends
 * are the stamps the timeouts already take (monotonic ms), so a sample
 * costs no clock read and no system call: a load, and the histogram's
 * atomic adds.  Its resolution is theirs, 1 ms (the difference of two
 * readings rounded down: unbiased, within 1 ms).  Thread-safe.
 */
#ifndef RS_LEARN_IO_H
#define RS_LEARN_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "fdtable.h"
#include "learn.h"

/* Stamps activity at now, after bytes were read; records the wait. */
static inline void rs_learn_touch_in(struct rs_fd *e, int64_t now)
{
	int64_t last = rs_fd_last_activity(e);

	rs_fd_touch(e, now);
	if (e->settings->read_timeout_ms != RS_OFF)
		rs_learn_wait(e->rule, e->settings, RS_LEARN_READ, now - last,
		    now);
}

/* Stamps activity at now after a write that had to wait for room; the
   wait is a sample of writes when write_timeout is not off. */
static inline void rs_learn_touch_out(struct rs_fd *e, int64_t now)
{
	int64_t last = rs_fd_last_activity(e);

	rs_fd_touch(e, now);
	if (e->settings->write_timeout_ms != RS_OFF)
		rs_learn_wait(e->rule, e->settings, RS_LEARN_WRITE, now - last,
		    now);
}

/* rs_io_touched() of a read: records the activity when r bytes came. */
static inline ssize_t rs_io_touched_in(struct rs_fd *e, ssize_t r)
{
	if (r > 0)
		rs_learn_touch_in(e, rs_clock_now_ms());
	return r;
}

#endif /* RS_LEARN_IO_H */
