/* SPDX-License-Identifier: MIT */
/*
 * connect_step.h - the state machine of one logical connect.
 *
 * A managed socket's connect() becomes up to `attempts` kernel connects on
 * the same descriptor, each bounded by connect_timeout, separated by
 * backoff waits, all bounded by connect_budget and the process deadline.
 * rs_connect_step() advances it as far as it can without blocking; the
 * blocking driver (connect_wait.h) and the waits (wait.c, epollwait.c)
 * call it when time passes or the socket is reported.  Thread-safe per
 * descriptor: the entry's lock is held only inside a step.
 */
#ifndef RS_CONNECT_STEP_H
#define RS_CONNECT_STEP_H

#include <stdint.h>

#include "fdtable.h"

/* What a pending connect wants from the wait that drives it. */
enum rs_connect_want {
	RS_WANT_NOTHING,	/* finished (connect_events.h: what to report) */
	RS_WANT_WRITABLE,	/* an attempt is in flight: watch for POLLOUT */
	RS_WANT_TIMER,		/* backing off: hide the socket until then */
};

/*
 * Advances the pending connect of e (state CONNECTING or BACKOFF) as far as
 * it can without blocking.  ready is true when a wait reported the socket
 * (writable, error or hang-up).  Returns what the connect wants next.
 */
enum rs_connect_want rs_connect_step(int fd, struct rs_fd *e, int ready,
    int64_t now_ms);

/*
 * Returns the monotonic time at which the pending connect next needs a
 * step even without an event (attempt timeout or end of backoff), or
 * RS_NEVER when it is finished.
 */
/*
 * The first attempt of a new blocking logical connect (state BACKOFF, no
 * attempt yet) on a plain socket (born.h), made as one blocking kernel
 * connect bounded by a SO_SNDTIMEO of ours: returns 0 when it connected,
 * -EINPROGRESS when the kernel's timer passed or the socket was
 * non-blocking after all, -EINTR on a signal (the attempt in flight in
 * all three), another -errno when it failed (the connect then backs off
 * or has ended), or 1 when it was not made (a timeout too short for the
 * kernel's timer, another thread stepping): the steps go on from there.
 * now is the time the logical connect started, a moment ago (one clock
 * read less).  The logical connect is counted here (connects, and
 * connect_attempts when the attempt is made), not by its caller: one
 * look-up of the rule's counters for both.
 */
int rs_connect_step_kernel(int fd, struct rs_fd *e, int64_t now);

int64_t rs_connect_next_ms(const struct rs_fd *e);

/*
 * getsockopt(SO_ERROR) on a failed managed connect: returns the error the
 * program must see (once, as the kernel does) and clears it, or -1 when the
 * real getsockopt should answer.
 */
int rs_connect_take_error(struct rs_fd *e);

/*
 * getsockopt(SO_ERROR) on a managed socket: while its logical connect goes
 * on, takes one step and returns 0 (in progress, as the kernel would say),
 * leaving the kernel's pending error to the library; once it failed, the
 * error, once; -1 when the real getsockopt should answer.
 */
int rs_connect_so_error(int fd, struct rs_fd *e);

/* Returns the failure class of errno err for a socket of family. */
unsigned rs_connect_classify(int err, int family);

#endif /* RS_CONNECT_STEP_H */
