/* SPDX-License-Identifier: MIT */
/*
 * wait.c - the program's waits: poll and ppoll, and the managed wait under
 * select and pselect (waitselect.c translates them); epoll is in
 * waitepoll.c, over epolltrack.c and epollwait.c.
 *
 * A wait that involves a managed socket whose connect is pending, failed
 * or whose read/write timeout may expire runs as a loop of real calls of
 * the program's kind (poll for poll and select, ppoll for ppoll and
 * pselect, with the program's signal mask): pending connects are
 * stepped, sockets backing off are hidden from the kernel, internal
 * events are swallowed and the loop waits again with the time the
 * program has left.  Every other wait costs one table lookup
 * per descriptor and goes straight to the kernel.  select and pselect are
 * translated to poll, so descriptors >= FD_SETSIZE work.  Thread-safe: the
 * only shared state is the fd table, whose entries lock themselves.
 */
#include "wait.h"
#include "waitpoll.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "clock.h"
#include "connect_events.h"
#include "connect_step.h"
#include "fdtable.h"
#include "httpwait.h"
#include "io.h"
#include "io_timeout.h"
#include "real.h"
#include "realfast.h"

/* Waits with up to this many involved descriptors need no allocation. */
#define STACK_ITEMS 64

/* One pollfd entry the library looks after during a wait. */
struct watched {
	nfds_t idx;		/* its index in the program's array */
	struct rs_fd *e;
	int fd;			/* the program's fd and events, restored */
	short events;
	short report;		/* events made up by the library */
	bool connecting;	/* kernel watches POLLOUT for the attempt */
	bool hidden;		/* backing off: fd negated */
	bool expire;		/* read/write timeout reached */
	bool http;		/* an HTTP response is judged (httpwait.h) */
	bool http_ready;	/* the kernel reported it to the engine */
};

/* involvement() of a descriptor with more to it than a timeout, and
   steady_due()'s answer for a wait that needs more than a timer.  The
   value of RS_IO_DUE_NOW, below any time: a timeout already pending is
   more than a timer too. */
#define NOT_TIMED_ONLY RS_IO_DUE_NOW

/*
 * The real call a managed wait makes: the kind the program called, so
 * that a program whose system calls are filtered (seccomp) makes no call
 * it did not make bare -- poll for poll and select (which waits as poll),
 * ppoll for ppoll and pselect, with the program's signal mask.
 */
struct wait_call {
	bool ppoll;
	const sigset_t *mask;	/* ppoll's; NULL: the thread's own */
};

/* One wait in progress. */
struct pwait {
	struct pollfd *fds;
	nfds_t n;
	int64_t end_ms;		/* RS_NEVER: no timeout */
	struct wait_call how;
	struct watched *items;
	size_t count;
};

/*
 * What the wait must look after e for: NOT_TIMED_ONLY when its connect is
 * pending, or failed and not yet reported, or an HTTP response is judged,
 * or a timeout is pending; else its read/write deadline, RS_NEVER for
 * none (the wait need not look after it).  No clock: a socket with
 * nothing to time costs a few loads.
 */
static inline __attribute__((always_inline)) int64_t involvement(
    const struct rs_fd *e, short events)
{
	if ((events & POLLIN) && rs_hwait_wanted(e))
		return NOT_TIMED_ONLY;
	switch (rs_fd_state(e)) {
	case RS_FD_CONNECTING:
	case RS_FD_BACKOFF:
		return NOT_TIMED_ONLY;
	case RS_FD_FAILED:
		return e->final_error ? NOT_TIMED_ONLY : RS_NEVER;
	case RS_FD_CONNECTED:
		return rs_io_wait_due(e, events & (POLLIN | POLLOUT));
	default:
		return RS_NEVER;
	}
}

/*
 * steady_due() from fds[0] on, whose entry e has something to time or
 * look after.  Out of line: see steady_due().
 */
static __attribute__((noinline)) int64_t steady_due_from(
    const struct pollfd *fds, nfds_t n, const struct rs_fd *e,
    int64_t *now)
{
	int64_t next = RS_NEVER;

	for (nfds_t i = 0; i < n; i++) {
		if (i && !(e = rs_fd_get(fds[i].fd)))
			continue;
		int64_t due = involvement(e, fds[i].events);

		if (due == NOT_TIMED_ONLY) {
			*now = rs_clock_now_ms();
			return NOT_TIMED_ONLY;
		}
		next = rs_clock_min(next, due);
	}
	if (next == RS_NEVER)
		return RS_NEVER;
	*now = rs_clock_now_ms();
	return next <= *now ? NOT_TIMED_ONLY : next;
}

/*
 * The wait of a request's steady state, told apart without filling
 * anything in: returns the earliest read/write deadline of the managed
 * descriptors in fds, RS_NEVER when none is timed (the library has
 * nothing to do), or NOT_TIMED_ONLY when one needs more than a timer (a
 * pending connect, a failure to report, an HTTP response being judged)
 * or is due already.  The clock is read, into *now, only when the answer
 * is not RS_NEVER.  Inline, up to the first descriptor the library has
 * something to do for: a wait on unmanaged descriptors and sockets with
 * nothing to time (the default policy's) makes no call of its own.
 */
static inline int64_t steady_due(const struct pollfd *fds, nfds_t n,
    int64_t *now)
{
	for (nfds_t i = 0; i < n; i++) {
		const struct rs_fd *e = rs_fd_get(fds[i].fd);

		if (e && !rs_io_plain(e))
			return steady_due_from(fds + i, n - i, e, now);
	}
	return RS_NEVER;
}

/* Counts the involved entries, filling items with the first cap of them. */
static size_t scan(const struct pollfd *fds, nfds_t n, struct watched *items,
    size_t cap)
{
	size_t count = 0;

	for (nfds_t i = 0; i < n; i++) {
		struct rs_fd *e = rs_fd_get(fds[i].fd);

		if (!e || involvement(e, fds[i].events) == RS_NEVER)
			continue;
		if (count < cap)
			items[count] = (struct watched){ .idx = i, .e = e,
				.fd = fds[i].fd, .events = fds[i].events };
		count++;
	}
	return count;
}

/*
 * Steps a pending connect and sets up what the kernel should watch for it:
 * POLLOUT during an attempt, nothing (a negative fd) during a backoff.
 * The program's own events are asked too: a socket in SYN_SENT reports
 * none of them, and when the attempt connects the kernel's answer is the
 * one a program without the library gets (data, or data and a reset, that
 * came with the connection).  Returns false when the connect has finished.
 */
static bool prepare_connect(struct watched *it, struct pollfd *p, int64_t now,
    int64_t *next)
{
	enum rs_connect_want w = rs_connect_step(it->fd, it->e, 0, now);

	if (w == RS_WANT_NOTHING)
		return false;
	*next = rs_clock_min(*next, rs_connect_next_ms(it->e));
	if (w == RS_WANT_WRITABLE) {
		p->events = POLLOUT | it->events;
		it->connecting = true;
	} else {
		p->fd = -1;
		it->hidden = true;
	}
	return true;
}

/*
 * An item whose response the HTTP engine judges or retries: the kernel
 * watches what the engine wants, and the program sees nothing of it.
 */
static bool http_item(struct watched *it, struct pollfd *p, int64_t now,
    int64_t *next, bool *zero)
{
	bool ready = it->http_ready;
	short ev;

	it->http = it->http_ready = false;
	if (!(it->events & POLLIN) || !rs_hwait_wanted(it->e) ||
	    (ev = rs_hwait_poll_events(it->e, it->fd, ready, now, next)) == -1)
		return false;
	it->http = true;
	if (ev == RS_HW_POLL_NOW) {
		/* What the program reads next is the engine's (TLS). */
		it->report = POLLIN;
		p->fd = -1;
		*zero = true;
	} else if (ev)
		p->events = ev;
	else
		p->fd = -1;
	return true;
}

/* Readies one item for the next real wait; *zero: do not block. */
static void ready_item(struct watched *it, struct pollfd *p, int64_t now,
    int64_t *next, bool *zero)
{
	struct rs_fd *e = it->e;

	it->report = 0;
	it->connecting = it->hidden = it->expire = false;
	if (http_item(it, p, now, next, zero))
		return;
	enum rs_fd_state st = rs_fd_state(e);
	if ((st == RS_FD_CONNECTING || st == RS_FD_BACKOFF) &&
	    prepare_connect(it, p, now, next))
		return;
	st = rs_fd_state(e);
	if (st == RS_FD_FAILED && e->final_error) {
		it->report = (short)rs_connect_failed_events(
		    (uint16_t)it->events);
		*zero = true;
	} else if (st == RS_FD_CONNECTED) {
		short want = it->events & (POLLIN | POLLOUT);
		int64_t dl = want ? rs_io_wait_deadline(e, want, now) :
		    RS_NEVER;

		if (dl <= now) {
			it->expire = true;
			*zero = true;
		} else {
			*next = rs_clock_min(*next, dl);
		}
	}
}

/* Puts the program's fd and events back into its array. */
static void restore(struct pwait *w)
{
	for (size_t i = 0; i < w->count; i++) {
		struct pollfd *p = &w->fds[w->items[i].idx];

		p->fd = w->items[i].fd;
		p->events = w->items[i].events;
	}
}

/*
 * What the program sees of its connect that has just ended, given what
 * the kernel reported in this round (got, for the events prepare_connect
 * asked): a failure as the kernel reports one, a connection as the kernel
 * reported it (asked again when it was found connected without an event).
 */
static short connect_end(const struct watched *it, short got)
{
	uint32_t ev = (uint16_t)it->events;

	if (rs_fd_state(it->e) == RS_FD_FAILED)
		return (short)rs_connect_failed_events(ev);
	if (got)
		return got & (it->events | POLLERR | POLLHUP);
	return (short)rs_connect_kernel_events(it->fd, ev);
}

/*
 * Turns the kernel's answer for one item into what the program sees.  An
 * event on an attempt in flight, or its timeout, steps the connect; only
 * its end is reported.
 */
static void translate_item(struct watched *it, struct pollfd *p, int64_t now)
{
	short got = p->revents;

	p->revents = 0;
	if (it->http)
		it->http_ready = got != 0;
	if (it->hidden || (it->http && !it->report))
		return;
	if (it->connecting) {
		if (!got && now < rs_connect_next_ms(it->e))
			return;
		if (rs_connect_step(it->fd, it->e, got != 0, now) !=
		    RS_WANT_NOTHING)
			return;
		p->revents = connect_end(it, got);
		return;
	}
	short io = it->events & (POLLIN | POLLOUT);

	if (it->expire && !(got & io))
		got |= rs_io_wait_expired(it->e, io, now);
	p->revents = got | it->report;
}

/*
 * The real wait, with tmo_ms < 0 meaning no timeout.  The time is in
 * milliseconds either way (the waits count in them).  Where the program
 * called poll or select this is poll, not ppoll: the kernel's ppoll writes
 * the time left back to the caller's timespec, reading the clock once
 * more, which costs a round trip that sleeps in it ~0.25 us more than
 * poll with the same timeout (this VM).
 */
static inline int real_wait(struct pollfd *fds, nfds_t n, int tmo_ms,
    struct wait_call how)
{
	if (!how.ppoll)
		return rs_realfast_poll(fds, n, tmo_ms);
	struct timespec ts = { tmo_ms / 1000, (tmo_ms % 1000) * 1000000L };

	return rs_real_ppoll(fds, n, tmo_ms < 0 ? NULL : &ts, how.mask);
}

static int count_ready(const struct pollfd *fds, nfds_t n)
{
	int count = 0;

	for (nfds_t i = 0; i < n; i++)
		count += fds[i].revents != 0;
	return count;
}

/* Whether translating the kernel's answer needs the time. */
static bool needs_time(const struct pwait *w)
{
	for (size_t i = 0; i < w->count; i++)
		if (w->items[i].connecting || w->items[i].expire)
			return true;
	return false;
}

/*
 * The managed wait: waits until something the program asked for happens
 * or its time is up, re-waiting after events that were only internal.
 * now is the time (just read).  After the kernel's wait the clock is read
 * only when it matters: a connect to step, a timeout to report, or
 * nothing to return.
 */
static int poll_loop(struct pwait *w, int64_t now)
{
	for (;;) {
		int64_t next = w->end_ms;
		bool zero = false;

		for (size_t i = 0; i < w->count; i++)
			ready_item(&w->items[i], &w->fds[w->items[i].idx], now,
			    &next, &zero);
		int r = real_wait(w->fds, w->n, zero ? 0 :
		    rs_clock_remaining_ms(next, now), w->how);
		int err = errno;

		restore(w);
		if (r < 0)
			return -err;
		bool timed = r == 0 || needs_time(w);

		if (timed)
			now = rs_clock_now_ms();
		for (size_t i = 0; i < w->count; i++)
			translate_item(&w->items[i], &w->fds[w->items[i].idx],
			    now);
		if ((r = count_ready(w->fds, w->n)) > 0)
			return r;
		if (!timed)
			now = rs_clock_now_ms();
		if (now >= w->end_ms)
			return r;
	}
}

/*
 * The managed wait on fds until end_ms, looking at the involved entries
 * one by one; now is the time.  Out of line: the steady state does not
 * pay for its frame.
 */
static __attribute__((noinline)) int managed_wait(struct pollfd *fds,
    nfds_t n, int64_t end_ms, int64_t now, struct wait_call how)
{
	struct watched stack[STACK_ITEMS];
	struct pwait w = { .fds = fds, .n = n, .end_ms = end_ms,
		.how = how, .items = stack };
	int r;

	w.count = scan(fds, n, stack, STACK_ITEMS);
	if (w.count > STACK_ITEMS) {
		w.items = malloc(w.count * sizeof(*w.items));
		if (!w.items)
			return -ENOMEM;
		w.count = scan(fds, n, w.items, w.count);
	}
	r = poll_loop(&w, now);
	if (w.items != stack)
		free(w.items);
	return r;
}

/*
 * The managed wait on fds until end_ms (RS_NEVER: none), once
 * steady_due() said due at now.  In the steady state (a deadline, not
 * due yet) one real wait on the program's array as it is, until the
 * earliest deadline or the program's end, is the whole of it when the
 * kernel reports something (or fails): poll_loop() would translate
 * nothing.  Else, or when nothing came (a timeout may be due),
 * managed_wait().  Inline, so that a request's wait costs a few loads
 * over the real call.
 */
static inline int timed_wait(struct pollfd *fds, nfds_t n, int64_t due,
    int64_t end_ms, int64_t now, struct wait_call how)
{
	if (due != NOT_TIMED_ONLY) {
		int r = real_wait(fds, n, rs_clock_remaining_ms(
		    rs_clock_min(due, end_ms), now), how);

		if (r != 0)
			return r < 0 ? -errno : r;
		/* Nothing: the program's time is up, or managed_wait()
		   reports the timeouts now due and waits out the rest. */
		now = rs_clock_now_ms();
		if (now >= end_ms)
			return 0;
	}
	return managed_wait(fds, n, end_ms, now, how);
}

bool rs_wait_involved(const struct rs_fd *e, short events)
{
	return involvement(e, events) != RS_NEVER;
}

int rs_wait_poll_common(struct pollfd *fds, nfds_t n, int64_t end_ms,
    bool as_ppoll, const sigset_t *mask)
{
	int64_t now;
	int64_t due = steady_due(fds, n, &now);

	if (due == RS_NEVER)
		now = rs_clock_now_ms();
	return timed_wait(fds, n, due, end_ms, now,
	    (struct wait_call){ as_ppoll, mask });
}

int64_t rs_wait_end_ms(const struct timespec *tmo, int64_t now)
{
	if (!tmo)
		return RS_NEVER;
	if (tmo->tv_sec < 0 || tmo->tv_nsec < 0 || tmo->tv_nsec >= 1000000000L)
		return -1;
	if (tmo->tv_sec > INT32_MAX)
		return RS_NEVER;
	return rs_clock_after(now, rs_clock_timespec_ms(tmo));
}

int rs_wait_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	int64_t now;
	int64_t due = steady_due(fds, n, &now);

	if (due == RS_NEVER) {
		int r = rs_realfast_poll(fds, n, timeout_ms);

		return r < 0 ? -errno : r;
	}
	return timed_wait(fds, n, due, timeout_ms < 0 ? RS_NEVER :
	    rs_clock_after(now, timeout_ms), now,
	    (struct wait_call){ false, NULL });
}

int rs_wait_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask)
{
	int64_t now, end;
	int64_t due = steady_due(fds, n, &now);

	if (due == RS_NEVER || (end = rs_wait_end_ms(tmo, now)) < 0) {
		int r = rs_real_ppoll(fds, n, tmo, mask);

		return r < 0 ? -errno : r;
	}
	return timed_wait(fds, n, due, end, now,
	    (struct wait_call){ true, mask });
}
