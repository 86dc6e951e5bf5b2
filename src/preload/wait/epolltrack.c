/* SPDX-License-Identifier: MIT */
/*
 * epolltrack.c - epoll_ctl and the descriptor lifecycle for the records
 * of epollinst.h, and the one function that brings a record in line with
 * its socket's state (used by the waits too).
 */
#include "epolltrack.h"

#include <errno.h>
#include <sys/socket.h>

#include "clock.h"
#include "connect_events.h"
#include "connect_step.h"
#include "fdtable.h"
#include "hot.h"
#include "httpwait.h"
#include "io_timeout.h"
#include "real.h"
#include "realfast.h"
#include "runtime.h"

/* The poll events a program's epoll registration waits for. */
static short io_events(uint32_t events)
{
	return (short)(events & (EPOLLIN | EPOLLOUT));
}

/*
 * Returns whether the program's registration must stay out of the kernel:
 * a one-shot that fired, or an edge-triggered one whose failure was
 * reported (its edge has been delivered).
 */
static bool withdrawn(const struct rs_ept_record *r)
{
	return r->disarmed || (r->reported && (r->events & EPOLLET));
}

/* A pending connect: the kernel watches for its attempt, or nothing. */
static void sync_pending(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, enum rs_connect_want w, int64_t *next)
{
	r->reported = false;
	rs_epi_set_kernel(i, r, w == RS_WANT_WRITABLE ? RS_EPT_TAGGED :
	    RS_EPT_ABSENT);
	rs_epi_timer(i, r, RS_NEVER);
	rs_epi_pend(i, r);
	*next = rs_clock_min(*next, rs_connect_next_ms(e));
}

/*
 * Reports the failure of r's connect, once.  The kernel registration
 * stays away until the next wait, so that this one does not report the
 * dead socket twice; then a level-triggered one goes back and goes on
 * reporting it from the kernel, as Linux does.
 */
static uint32_t report_failure(struct rs_ept_instance *i,
    struct rs_ept_record *r)
{
	r->reported = true;
	r->disarmed = (r->events & EPOLLONESHOT) != 0;
	rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
	r->restore = !withdrawn(r);
	if (r->restore)
		rs_epi_pend(i, r);
	else
		rs_epi_unpend(i, r);
	return rs_connect_failed_events(r->events);
}

/*
 * The kernel reported the completion of r's connect to us, in a wait,
 * with the events got: the program must see it in this same wait, with
 * its own mask, whatever else is ready (for EPOLLET and EPOLLONESHOT too:
 * the edge will not come again).  The tagged registration asked for the
 * program's read events too (epollinst.c), so got is what the kernel
 * reports to the program without the library; only when the program asked
 * for more since is the kernel asked again.  A one-shot that fires is
 * withdrawn until the program re-arms.
 */
static uint32_t report_connected(struct rs_ept_instance *i,
    struct rs_ept_record *r, uint32_t got)
{
	uint32_t want = (r->events & 0xffffu) | EPOLLERR | EPOLLHUP;
	uint32_t rev = (r->events & 0xffffu & ~r->tag_events) ?
	    rs_connect_kernel_events(r->fd, r->events) : got & want;

	if (rev && (r->events & EPOLLONESHOT)) {
		r->disarmed = true;
		rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
	} else if (rev && rs_epi_relay(r)) {
		/* Edge-triggered: the edge is the program's now, and the
		   kernel's registration stays as it is (rs_epi_relay()). */
	} else if (!withdrawn(r)) {
		rs_epi_set_kernel(i, r, RS_EPT_PROGRAM);
	}
	return rev;
}

/*
 * Whether r's queued timer is due no later than e's deadline for io
 * could be: it was set for these directions (key_io) under these
 * settings, and a deadline only moves later as activity comes -- unless a
 * timeout is pending (due at once) or the thread has a deadline, which a
 * new request may have brought forward.  Then the deadline need not be
 * worked out again: a request's ADD after its DEL costs no more.
 */
static inline bool timer_covers(const struct rs_ept_record *r,
    const struct rs_fd *e, short io)
{
	return rs_heap_queued(&r->timer) && r->key_settings == e->settings &&
	    !(io & ~r->key_io) &&
	    !__atomic_load_n(&e->read_timed_out, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&e->write_timed_out, __ATOMIC_RELAXED) &&
	    rs_io_process_deadline() == RS_NEVER;
}

/* Whether settings s give a socket something to time (see
   rs_ept_idle_socket()). */
static bool timed_settings(const struct rs_settings *s)
{
	return s->read_timeout_ms != RS_OFF || s->write_timeout_ms != RS_OFF ||
	    s->http.enabled;
}

/* The timer of a connected socket: its read or write deadline. */
static __attribute__((noinline)) void sync_timer(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, int64_t now)
{
	short io = io_events(r->events);

	if (!e || rs_fd_state(e) != RS_FD_CONNECTED || !io || r->disarmed) {
		rs_epi_timer(i, r, RS_NEVER);
		return;
	}
	if (timer_covers(r, e, io))
		return;
	/* An unread clock counts as 0: a timeout already reported is then
	   due at once, as it should be. */
	rs_epi_timer_by(i, r, rs_io_wait_deadline(e, io, now < 0 ? 0 : now));
	/* The timer is due no later than the deadline of each direction it
	   was kept or moved for (a deadline only moves later).  Only noted
	   under settings with a timeout: a timer that came from a thread's
	   deadline alone is worked out again, and timer_covers() then also
	   says that the socket is not idle (rs_ept_idle_socket()). */
	if (!rs_heap_queued(&r->timer) || !timed_settings(e->settings))
		return;
	if (r->key_settings != e->settings)
		r->key_io = 0;
	r->key_io |= io;
	r->key_settings = e->settings;
}

/*
 * Whether r only needs its timer kept: a connected socket whose record
 * holds the program's registration in the kernel with nothing pending or
 * withdrawn -- every epoll_ctl of a request's steady state.
 */
static bool steady(const struct rs_ept_record *r, const struct rs_fd *e)
{
	return e && r->kmode == RS_EPT_PROGRAM && !r->pending &&
	    !r->restore && !withdrawn(r) &&
	    rs_fd_state(e) == RS_FD_CONNECTED && !rs_hwait_wanted(e);
}

/*
 * Whether r's relayed registration (rs_epi_relay()) still stands for the
 * program's: its socket connected, its responses not being judged.
 */
static bool relayed(const struct rs_ept_record *r, const struct rs_fd *e)
{
	return r->kmode == RS_EPT_RELAY && e && !r->unsettled &&
	    rs_fd_state(e) == RS_FD_CONNECTED && !rs_hwait_wanted(e);
}

/* rs_ept_sync() for the entry e of r's fd (NULL: unmanaged). */
static uint32_t sync_fd(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, int ready, bool in_wait, int64_t now, int64_t *next)
{
	uint32_t rev = 0;

	if (steady(r, e)) {
		sync_timer(i, r, e, now);
		return 0;
	}
	/* The kernel's events are the program's, under our data word (its
	   mask may have EPOLLOUT more, for a connect). */
	if (relayed(r, e))
		return in_wait ? (uint32_t)ready & ((r->events & 0xffffu) |
		    EPOLLERR | EPOLLHUP) : 0;
	/* A response being judged or retried: the HTTP engine's (for a
	   reconnect's steps too). */
	if (e && rs_hwait_wanted(e) && rs_hwait_ept(i, r, e, ready, in_wait,
	    now == RS_EPT_NOW_UNREAD ? rs_clock_now_ms() : now, next, &rev))
		return rev;
	enum rs_fd_state st = e ? rs_fd_state(e) : RS_FD_NONE;

	if (st == RS_FD_CONNECTING || st == RS_FD_BACKOFF) {
		if (now == RS_EPT_NOW_UNREAD)
			now = rs_clock_now_ms();
		enum rs_connect_want w = rs_connect_step(r->fd, e, ready, now);

		if (w != RS_WANT_NOTHING) {
			sync_pending(i, r, e, w, next);
			return 0;
		}
		st = rs_fd_state(e);
		if (st == RS_FD_CONNECTED && ready && in_wait)
			rev = report_connected(i, r, (uint32_t)ready);
	}
	if (st == RS_FD_FAILED && !r->reported && e->final_error) {
		if (in_wait)
			return report_failure(i, r);
		/* Held for the next wait; meanwhile the kernel's registration
		   stays away (a one-shot would fire on the dead socket and be
		   spent, a level-triggered one report it without EPOLLERR). */
		rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
		rs_epi_pend(i, r);
		return 0;
	}
	if (r->restore && !in_wait)
		return 0;
	r->restore = false;
	rs_epi_unpend(i, r);
	if (!rev)
		rs_epi_set_kernel(i, r, withdrawn(r) ? RS_EPT_ABSENT :
		    RS_EPT_PROGRAM);
	sync_timer(i, r, e, now);
	return rev;
}

uint32_t rs_ept_sync(struct rs_ept_instance *i, struct rs_ept_record *r,
    int ready, bool in_wait, int64_t now, int64_t *next)
{
	return sync_fd(i, r, rs_fd_get(r->fd), ready, in_wait, now, next);
}

/* ---- epoll_ctl ---- */

/* A record whose socket needs nothing from the waits any more. */
static bool useless(const struct rs_ept_record *r)
{
	struct rs_fd *e = rs_fd_get(r->fd);

	return e && rs_ept_idle_socket(e) && r->kmode == RS_EPT_PROGRAM &&
	    !r->pending && !rs_heap_queued(&r->timer);
}

/*
 * Returns whether fd is worth recording: managed already, or a socket
 * that is not connected yet (a later connect() may be managed).  One
 * getpeername per registration of an unmanaged descriptor; connected and
 * non-socket ones are left out.
 */
static bool worth_recording(int fd, struct rs_fd **ep)
{
	const struct rs_runtime *rt = rs_runtime_peek();
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int save;
	bool yes;

	if (rt && !rt->active)
		return false;
	if ((*ep = rs_fd_get(fd)))
		return !rs_ept_idle_socket(*ep);
	save = errno;
	yes = getpeername(fd, (struct sockaddr *)&ss, &len) < 0 &&
	    errno == ENOTCONN;
	errno = save;
	return yes;
}

/*
 * With i locked: EPOLL_CTL_ADD, the kernel deciding and the record
 * following: made or reused (a record kept after a DEL, or left from a
 * number closed behind our back) when record is true; else a record the
 * instance still has for the number describes a file closed behind our
 * back (the kernel accepted the ADD), and must not act on this one.
 */
static int add_locked(struct rs_ept_instance *i, int fd,
    struct epoll_event *ev, struct rs_fd *e, bool record)
{
	int r = rs_epi_kctl(i->epfd, EPOLL_CTL_ADD, fd, ev->events, ev->data);
	struct rs_ept_record *g;
	int64_t next = RS_NEVER;

	if (r < 0)
		return r;
	if (!record) {
		if ((g = rs_epi_record(i, fd)))
			rs_epi_drop(i, g);
	} else if ((g = rs_epi_add(i, fd))) {
		g->events = ev->events;
		g->data = ev->data;
		g->kmode = RS_EPT_PROGRAM;
		sync_fd(i, g, e, 0, false, RS_EPT_NOW_UNREAD, &next);
	}
	return r;
}

/*
 * EPOLL_CTL_ADD on the general path; i is epfd's instance or NULL.  The
 * getpeername of worth_recording() is made before the lock is taken.
 */
static int ctl_add(int epfd, struct rs_ept_instance *i, int fd,
    struct epoll_event *ev, struct rs_fd *e)
{
	bool record = worth_recording(fd, &e);
	int r;

	if (record && !i)
		i = rs_epi_get(epfd);
	if (!i || (!record && !rs_ept_has_records(i)))
		return rs_epi_kctl(epfd, EPOLL_CTL_ADD, fd, ev->events,
		    ev->data);
	rs_epi_lock(i);
	r = add_locked(i, fd, ev, e, record);
	rs_epi_unlock(i);
	return r;
}

/*
 * With i locked: EPOLL_CTL_MOD and DEL on the general path.  While the
 * library holds the kernel registration of a recorded fd, only the record
 * changes.
 */
static int ctl_locked(struct rs_ept_instance *i, struct rs_ept_record *g,
    int op, int fd, struct epoll_event *ev)
{
	int64_t next = RS_NEVER;
	int r = 0;

	if (!g || !g->live)
		return rs_epi_kctl(i->epfd, op, fd, ev ? ev->events : 0,
		    ev ? ev->data : (epoll_data_t){ 0 });
	if (op == EPOLL_CTL_DEL) {
		if (g->kmode != RS_EPT_ABSENT)
			r = rs_epi_kctl(i->epfd, op, g->fd, 0, g->data);
		rs_epi_idle(i, g);
		return r == -ENOENT ? 0 : r;
	}
	if (g->kmode == RS_EPT_PROGRAM &&
	    (r = rs_epi_kctl(i->epfd, op, g->fd, ev->events, ev->data)) < 0)
		return r;
	g->events = ev->events;
	g->data = ev->data;
	/* The program's MOD of a relayed registration puts its own back,
	   re-arming it as the kernel would without the library. */
	if (g->kmode == RS_EPT_RELAY)
		r = rs_epi_set_kernel(i, g, RS_EPT_PROGRAM);
	g->disarmed = g->reported = g->restore = false;
	rs_ept_sync(i, g, 0, false, RS_EPT_NOW_UNREAD, &next);
	if (useless(g))
		rs_epi_drop(i, g);
	return r;
}

/*
 * Whether the express path may take op on record g of connected socket
 * e: nothing pending, withdrawn or being judged by the HTTP engine, and
 * the program's registration in the kernel (not registered, for an ADD
 * after a DEL).  A few loads from one cache line of each.
 */
static inline bool express_ok(const struct rs_ept_record *g,
    const struct rs_fd *e, int op)
{
	if (g->unsettled || rs_fd_state(e) != RS_FD_CONNECTED ||
	    rs_hwait_wanted(e))
		return false;
	return op == EPOLL_CTL_ADD ? !g->live :
	    g->live && g->kmode == RS_EPT_PROGRAM;
}

/*
 * With i locked: the epoll_ctl calls of a request on a connected socket
 * with a read or write timeout, once express_ok(): the kernel call made
 * as the program made it, the record's fields, and the timer only when
 * timer_covers() cannot keep it.  Returns 0, or -1 with the real call's
 * errno (libc's convention), or 1 when it declines: an ADD or MOD of a
 * socket left with no timeout, whose record the general path drops.  The
 * general path does the same in the other cases, with more looking.
 */
static inline int express(struct rs_ept_instance *i,
    struct rs_ept_record *g, struct rs_fd *e, int op,
    struct epoll_event *ev)
{
	if (op == EPOLL_CTL_DEL) {
		int save = errno;

		/* A registration the kernel lost (its file closed behind
		   our back) is gone all the same. */
		if (rs_realfast_epoll_ctl(i->epfd, op, g->fd, ev) < 0) {
			if (errno != ENOENT)
				return -1;
			errno = save;
		}
		/* rs_epi_idle(), of which nothing else applies here; the
		   timer stays for the next ADD. */
		g->live = false;
		g->kmode = RS_EPT_ABSENT;
		g->events = 0;
		g->data.u64 = 0;
		return 0;
	}
	short io = io_events(ev->events);
	/* A timer kept also says the socket has a timeout (sync_timer()). */
	bool keep = io && timer_covers(g, e, io);

	if (!keep && rs_ept_idle_socket(e))
		return 1;
	if (rs_realfast_epoll_ctl(i->epfd, op, g->fd, ev) < 0)
		return -1;
	g->events = ev->events;
	g->data = ev->data;
	g->live = true;
	g->kmode = RS_EPT_PROGRAM;
	if (!keep)
		sync_timer(i, g, e, RS_EPT_NOW_UNREAD);
	return 0;
}

/* An engine result (-errno on failure) in libc's convention; the engine
   leaves errno alone on success. */
static int libc_ret(int r)
{
	if (r >= 0)
		return r;
	errno = -r;
	return -1;
}

/*
 * With i locked: the general path of a call on an instance with records,
 * in libc's convention.  Out of line, like the other general paths, so
 * that the express path stays short.
 */
static __attribute__((noinline)) int ctl_general(struct rs_ept_instance *i,
    struct rs_ept_record *g, struct rs_fd *e, int op, int fd,
    struct epoll_event *ev)
{
	if (op == EPOLL_CTL_ADD)
		return libc_ret(add_locked(i, fd, ev, e,
		    !rs_ept_idle_socket(e)));
	return libc_ret(ctl_locked(i, g, op, fd, ev));
}

/*
 * The general path of every call the express path does not look at: an
 * instance without records, an unmanaged fd (whose ADD may need a record:
 * the getpeername of worth_recording() is made before the lock is taken),
 * a NULL event.
 */
static __attribute__((noinline)) int ctl_unlocked(int epfd,
    struct rs_ept_instance *i, int op, int fd, struct epoll_event *ev)
{
	struct rs_fd *e = rs_fd_get(fd);
	int r;

	if (!ev && op != EPOLL_CTL_DEL)
		return libc_ret(-EFAULT);
	if (op == EPOLL_CTL_ADD && (!e || !rs_ept_has_records(i)))
		return libc_ret(ctl_add(epfd, i, fd, ev, e));
	if (!rs_ept_has_records(i))
		return libc_ret(rs_epi_kctl(epfd, op, fd, ev ? ev->events : 0,
		    ev ? ev->data : (epoll_data_t){ 0 }));
	rs_epi_lock(i);
	r = ctl_general(i, rs_epi_record(i, fd), e, op, fd, ev);
	rs_epi_unlock(i);
	return r;
}

/*
 * rs_ept_epoll_ctl() on an instance with records: the express path, else
 * the general one.  Out of line, so that the plain call saves none of its
 * registers.
 */
static __attribute__((noinline)) int ctl_managed(struct rs_ept_instance *i,
    int epfd, int op, int fd, struct epoll_event *ev)
{
	struct rs_ept_record *g;
	struct rs_fd *e;
	int r;

	/* The records may have gone since rs_ept_epoll_ctl() looked: the
	   look-up under the lock then finds none, and the general path
	   decides. */
	if (!(e = rs_fd_get(fd)) || (!ev && op != EPOLL_CTL_DEL))
		return ctl_unlocked(epfd, i, op, fd, ev);
	rs_epi_lock(i);
	g = rs_epi_record(i, fd);
	if (!g || !express_ok(g, e, op) ||
	    (r = express(i, g, e, op, ev)) > 0)
		r = ctl_general(i, g, e, op, fd, ev);
	rs_epi_unlock(i);
	return r;
}

int rs_ept_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct rs_ept_instance *i = rs_ept_instance_of(epfd);

	if (rs_ept_has_records(i))
		return ctl_managed(i, epfd, op, fd, ev);
	if (rs_ept_plain_in(i, op, fd))
		return rs_realfast_epoll_ctl(epfd, op, fd, ev);
	return ctl_unlocked(epfd, i, op, fd, ev);
}

int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int save = errno, r = rs_ept_epoll_ctl(epfd, op, fd, ev);

	if (r < 0)
		r = -errno;
	errno = save;
	return r;
}

/* ---- connect() and close() ---- */

RS_HOT void rs_ept_fd_changed(int fd)
{
	/* Most connects are made in processes with no epoll set at all. */
	if (!rs_epi_total())
		return;
	int64_t next = RS_NEVER;
	int save = errno;

	for (struct rs_ept_instance *i = rs_epi_all(); i; i = i->next) {
		if (!__atomic_load_n(&i->nrecords, __ATOMIC_ACQUIRE))
			continue;
		rs_epi_lock(i);
		struct rs_ept_record *r = rs_epi_record(i, fd);

		if (r && r->live)
			rs_ept_sync(i, r, 0, false, rs_clock_now_ms(), &next);
		rs_epi_unlock(i);
	}
	errno = save;
}

/*
 * Drops record r.  When restore is true its number still names the file
 * the record describes, about to be closed: the program's own
 * registration is put back first, since a dup'd copy may keep the file,
 * and with it the registration, alive -- a tagged one would then leak the
 * library's data to the program.  When false, the number was reused
 * behind our back and the kernel is not touched.
 */
static void release(struct rs_ept_instance *i, struct rs_ept_record *r,
    bool restore)
{
	if (restore && r->live && r->kmode != RS_EPT_PROGRAM)
		rs_epi_set_kernel(i, r, withdrawn(r) ? RS_EPT_ABSENT :
		    RS_EPT_PROGRAM);
	rs_epi_drop(i, r);
}

/* Releases the records of [first, last] and the instances among them. */
static void drop_range(unsigned first, unsigned last, bool restore)
{
	int save = errno;

	for (struct rs_ept_instance *i = rs_epi_all(); i; i = i->next) {
		if (!__atomic_load_n(&i->nrecords, __ATOMIC_ACQUIRE))
			continue;
		rs_epi_lock(i);
		if ((unsigned)i->epfd >= first && (unsigned)i->epfd <= last)
			rs_epi_clear(i);
		for (unsigned fd = first; fd <= last && fd < i->cap; fd++)
			if (i->by_fd[fd])
				release(i, i->by_fd[fd], restore);
		rs_epi_unlock(i);
	}
	errno = save;
}

RS_HOT void rs_ept_fd_closed(int fd)
{
	if (rs_epi_total())
		drop_range((unsigned)fd, (unsigned)fd, true);
}

void rs_ept_fd_range_closed(unsigned first, unsigned last)
{
	if (rs_epi_total())
		drop_range(first, last, true);
}

RS_HOT void rs_ept_fd_reused(int fd)
{
	if (rs_epi_total())
		drop_range((unsigned)fd, (unsigned)fd, false);
}
