/* SPDX-License-Identifier: MIT */
/*
 * httpwait.h - HTTP/1.x status retries on non-blocking sockets, driven by
 * the program's waits (SPEC 9).
 *
 * A blocking read retries inside the call (httpretry.h).  On a
 * non-blocking socket that would stall an event loop for the whole
 * Retry-After, so there the retry is a state machine stepped without
 * blocking: by the waits (poll, ppoll, select, pselect in wait.c; epoll
 * through the records of epolltrack.h) and by the program's reads.  From
 * the request's last byte on, the waits hide the socket's readability
 * from the program: they judge the response, consume a retried one, sleep
 * out Retry-After or the backoff as a timer of the wait (whose own
 * timeout is honoured), reconnect through the connect engine, send the
 * request again, and report the socket readable only once a response the
 * program will see is queued.  A read meanwhile fails with EAGAIN.
 *
 * Thread-safe as httpretry.h says: a wait that finds another thread inside
 * the connection's engine looks again a millisecond later.
 */
#ifndef RS_HTTPWAIT_H
#define RS_HTTPWAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "epollinst.h"
#include "fdtable.h"
#include "httpretry.h"

/* What the engine wants from the wait that steps it. */
enum rs_hw_want {
	RS_HW_NONE,	/* nothing hidden: the socket is the kernel's */
	RS_HW_SHOW,	/* a response the program sees is queued: readable */
	RS_HW_IN,	/* hidden; step again when it is readable */
	RS_HW_OUT,	/* hidden; step again when it is writable */
	RS_HW_TIMER,	/* hidden; step again at the time given */
	RS_HW_NOW,	/* a transport's (TLS): what the program reads next
			   is in its hands, or only the program's own read
			   may step it: readable now, whatever the kernel says */
};

/*
 * Whether the waits must step e before reporting it: a non-blocking
 * socket whose request awaits, or is retrying, its response, or whose
 * transport holds what the program reads next.  A few loads.
 */
static inline bool rs_hwait_wanted(const struct rs_fd *e)
{
	const struct rs_hconn *h = e->http;

	return h != NULL && e->nonblocking && !e->http_off &&
	    (h->m.phase == RS_HR_AWAIT || h->m.phase == RS_HR_DRAIN ||
		h->m.phase == RS_HR_WAIT ||
		(h->tx != NULL && h->tx->shows(h)));
}

/*
 * Steps fd's retry as far as it goes without blocking.  ready is true
 * when the kernel reported the socket to the wait.  Lowers *next to when
 * it needs a step without an event.  A connection fed by a transport (a
 * TLS session) is stepped only by a wait of the thread that last called
 * into the session (rs_hconn's driver); another thread's wait calls no
 * TLS function: it keeps the timer and reports fd readable (RS_HW_NOW)
 * when a step is due, which the driver's next read takes.
 */
enum rs_hw_want rs_hwait_step(struct rs_fd *e, int fd, int ready,
    int64_t now, int64_t *next);

/*
 * For poll: the events the kernel must watch on fd for the engine (0:
 * none, hide the descriptor), -1 when the wait should treat fd as usual
 * (what is queued, if anything, is the program's), or RS_HW_POLL_NOW:
 * report fd readable now, without the kernel (RS_HW_NOW).
 */
#define RS_HW_POLL_NOW (-2)
short rs_hwait_poll_events(struct rs_fd *e, int fd, int ready, int64_t now,
    int64_t *next);

/*
 * For epoll, with i locked (now: the clock, read): steps r's socket and makes the kernel hold
 * what the engine needs (a tagged EPOLLIN or EPOLLOUT, or nothing, with a
 * timer).  Returns true when it did so; *rev gets the events to report
 * now (in_wait: the response the program sees, with its own mask, once
 * for EPOLLET and EPOLLONESHOT too).  False: the record follows its
 * socket as usual.
 */
bool rs_hwait_ept(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, int ready, bool in_wait, int64_t now, int64_t *next,
    uint32_t *rev);

/*
 * A non-blocking read, with h entered: steps the retry.  Returns 0 (read
 * on), -EAGAIN (nothing the program may see yet), or RS_HW_RESTEP
 * (-EAGAIN too, after the waits' view of fd changed: tell them).
 */
#define RS_HW_RESTEP 1
int rs_hwait_settle(struct rs_hconn *h, struct rs_fd *e, int fd);

/*
 * A blocking read, with h entered, on a connection a non-blocking step
 * left in the middle of a retry: finishes that retry's steps, blocking,
 * up to the judgement of the next response.  Returns 0 or -errno.
 */
int rs_hwait_finish(struct rs_hconn *h, struct rs_fd *e, int fd);

#endif /* RS_HTTPWAIT_H */
