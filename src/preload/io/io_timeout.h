/* SPDX-License-Identifier: MIT */
/*
 * io_timeout.h - read and write timeouts of connected managed sockets
 * (SPEC §6): when they fall due, and how a wait reports them.
 *
 * Shared by the blocking calls (io_block.h) and the waits (wait.c,
 * epollwait.c).  Thread-safe: no locks, the entry's fields are atomics.
 * All times are monotonic milliseconds.
 */
#ifndef RS_IO_TIMEOUT_H
#define RS_IO_TIMEOUT_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "fdtable.h"
#include "learn.h"
#include "tdeadline.h"
#include "timed.h"

/*
 * Returns the time at which a transfer in direction out (a write when
 * true) times out: read_timeout (write_timeout) after the last activity,
 * or the process deadline if sooner; RS_NEVER for neither.  The last
 * activity is a reading of the clock (rounded down), so the timeout ends
 * at rs_clock_after() it: never before read_timeout (write_timeout) has
 * really passed.  Inline, as the two below: every wait on a timed socket
 * asks them.
 */
static inline int64_t rs_io_deadline(const struct rs_fd *e, bool out)
{
	const struct rs_settings *s = e->settings;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms;
	int64_t when = rs_io_process_deadline();
	int64_t last = rs_fd_last_activity(e);

	if (t != RS_OFF)
		when = rs_clock_min(when, rs_clock_after(last,
		    rs_learn_timeout_ms(e->rule, s, out ? RS_LEARN_WRITE :
			RS_LEARN_READ, t, last)));
	return when;
}

/* Counts and logs (warn) one timeout; called once per occurrence. */
void rs_io_log_timeout(const struct rs_fd *e, bool out, int64_t now);

/*
 * Takes a timeout a wait reported for direction out; returns whether so.
 * One relaxed load when none is pending.
 */
static inline bool rs_io_take_pending(struct rs_fd *e, bool out)
{
	bool *flag = out ? &e->write_timed_out : &e->read_timed_out;

	return __builtin_expect(__atomic_load_n(flag, __ATOMIC_RELAXED), 0) &&
	    __atomic_exchange_n(flag, false, __ATOMIC_ACQ_REL);
}

/* rs_io_wait_due() for a timeout already pending: due at once (below
   any time). */
#define RS_IO_DUE_NOW INT64_MIN

/*
 * For waits, without the time: when a wait for `events` (POLLIN and/or
 * POLLOUT) on the connected socket e times out under read_timeout/
 * write_timeout and the process deadline; RS_IO_DUE_NOW when a timeout
 * is already pending (the next call fails without blocking, so the
 * socket counts as ready), RS_NEVER for none.  A few loads: a wait on a
 * socket with nothing to time reads no clock.
 */
static inline int64_t rs_io_wait_due(const struct rs_fd *e, short events)
{
	int64_t when = RS_NEVER;

	if (rs_fd_state(e) != RS_FD_CONNECTED)
		return RS_NEVER;
	if (events & POLLIN) {
		if (__atomic_load_n(&e->read_timed_out, __ATOMIC_ACQUIRE))
			return RS_IO_DUE_NOW;
		when = rs_io_deadline(e, false);
	}
	if (events & POLLOUT) {
		if (__atomic_load_n(&e->write_timed_out, __ATOMIC_ACQUIRE))
			return RS_IO_DUE_NOW;
		when = rs_clock_min(when, rs_io_deadline(e, true));
	}
	return when;
}

/* rs_io_wait_due() with the time now: a pending timeout is due now. */
static inline int64_t rs_io_wait_deadline(const struct rs_fd *e,
    short events, int64_t now)
{
	int64_t when = rs_io_wait_due(e, events);

	return when == RS_IO_DUE_NOW ? now : when;
}

/*
 * For waits: that time has passed with no event.  Marks e so that the next
 * read (write) fails with ETIMEDOUT (once; the flag is then cleared) and
 * returns the events to report (POLLIN and/or POLLOUT, as asked).  Returns
 * 0 for a direction whose time has not in fact come (another thread's
 * activity on the socket moved it): the caller should wait on.  Each
 * timeout is logged once, here.
 */
short rs_io_wait_expired(struct rs_fd *e, short events, int64_t now);

#endif /* RS_IO_TIMEOUT_H */
