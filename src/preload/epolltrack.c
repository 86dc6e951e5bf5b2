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
#include "httpwait.h"
#include "io_timeout.h"
#include "real.h"
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
 * The kernel reported the completion of r's connect to us, in a wait: the
 * program must see it in this same wait, with its own mask, whatever else
 * is ready (for EPOLLET and EPOLLONESHOT too: the edge will not come
 * again).  A one-shot that fires is withdrawn until the program re-arms.
 */
static uint32_t report_connected(struct rs_ept_instance *i,
    struct rs_ept_record *r)
{
	uint32_t rev = rs_connect_kernel_events(r->fd, r->events);

	if (rev && (r->events & EPOLLONESHOT)) {
		r->disarmed = true;
		rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
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
static bool timer_covers(const struct rs_ept_record *r,
    const struct rs_fd *e, short io)
{
	return rs_heap_queued(&r->timer) && r->key_settings == e->settings &&
	    !(io & ~r->key_io) &&
	    !__atomic_load_n(&e->read_timed_out, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&e->write_timed_out, __ATOMIC_RELAXED) &&
	    rs_io_process_deadline() == RS_NEVER;
}

/* The timer of a connected socket: its read or write deadline. */
static void sync_timer(struct rs_ept_instance *i, struct rs_ept_record *r,
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
	if (!rs_heap_queued(&r->timer))
		return;
	/* The timer is due no later than the deadline of each direction it
	   was kept or moved for (a deadline only moves later). */
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

/* rs_ept_sync() for the entry e of r's fd (NULL: unmanaged). */
static uint32_t sync_fd(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, int ready, bool in_wait, int64_t now, int64_t *next)
{
	uint32_t rev = 0;

	if (steady(r, e)) {
		sync_timer(i, r, e, now);
		return 0;
	}
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
			rev = report_connected(i, r);
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
 * EPOLL_CTL_ADD of a descriptor that needs no record.  A record the
 * instance still has for its number describes a file closed behind our
 * back (the kernel accepted the ADD): it must not act on this one.
 */
static int add_unrecorded(int epfd, int fd, struct epoll_event *ev)
{
	struct rs_ept_instance *i = rs_epi_find(epfd);
	int r = rs_epi_kctl(epfd, EPOLL_CTL_ADD, fd, ev->events, ev->data);
	struct rs_ept_record *g;

	if (r < 0 || !i || !__atomic_load_n(&i->nrecords, __ATOMIC_ACQUIRE))
		return r;
	rs_epi_lock(i);
	if ((g = rs_epi_record(i, fd)))
		rs_epi_drop(i, g);
	rs_epi_unlock(i);
	return r;
}

/* EPOLL_CTL_ADD: the kernel decides, then the record follows. */
static int ctl_add(int epfd, int fd, struct epoll_event *ev)
{
	struct rs_ept_instance *i;
	struct rs_fd *e = NULL;
	int64_t next = RS_NEVER;

	if (!worth_recording(fd, &e))
		return add_unrecorded(epfd, fd, ev);
	if (!(i = rs_epi_find(epfd)) && !(i = rs_epi_get(epfd)))
		return rs_epi_kctl(epfd, EPOLL_CTL_ADD, fd, ev->events,
		    ev->data);
	rs_epi_lock(i);
	int r = rs_epi_kctl(epfd, EPOLL_CTL_ADD, fd, ev->events, ev->data);
	struct rs_ept_record *g;

	/* A record kept after a DEL, or left from a number closed behind
	   our back, is reused. */
	if (r == 0 && (g = rs_epi_add(i, fd))) {
		g->events = ev->events;
		g->data = ev->data;
		g->kmode = RS_EPT_PROGRAM;
		sync_fd(i, g, e, 0, false, RS_EPT_NOW_UNREAD, &next);
	}
	rs_epi_unlock(i);
	return r;
}

/*
 * EPOLL_CTL_MOD and DEL of a recorded fd: while the library holds the
 * kernel registration, only the record changes.
 */
static int ctl_recorded(struct rs_ept_instance *i, struct rs_ept_record *g,
    int op, struct epoll_event *ev)
{
	int64_t next = RS_NEVER;
	int r = 0;

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
	g->disarmed = g->reported = g->restore = false;
	rs_ept_sync(i, g, 0, false, RS_EPT_NOW_UNREAD, &next);
	if (useless(g))
		rs_epi_drop(i, g);
	return r;
}

/*
 * With i locked: the epoll_ctl calls of a request on a connected socket
 * with a read or write timeout, whose record comes and goes with the
 * program's registration (ADD after DEL reuses it) and needs nothing but
 * its timer: the kernel call, the record's fields, the timer (lazily).
 * Returns whether it took the call, with its result in *res; the general
 * path (ctl_add(), ctl_recorded()) does the same in these cases, with
 * more looking.
 */
static bool express(struct rs_ept_instance *i, int op, int fd,
    const struct epoll_event *ev, int *res)
{
	const struct rs_runtime *rt = rs_runtime_peek();
	struct rs_ept_record *g = rs_epi_record(i, fd);
	struct rs_fd *e;

	if (!g || g->pending || g->restore || g->disarmed || g->reported ||
	    (rt && !rt->active) || !(e = rs_fd_get(fd)) ||
	    rs_fd_state(e) != RS_FD_CONNECTED || rs_hwait_wanted(e) ||
	    rs_ept_idle_socket(e))
		return false;
	if (op == EPOLL_CTL_DEL) {
		if (!g->live || g->kmode != RS_EPT_PROGRAM)
			return false;
		*res = rs_epi_kctl(i->epfd, op, fd, 0, g->data);
		*res = *res == -ENOENT ? 0 : *res;
		rs_epi_idle(i, g);
		return true;
	}
	if (op == EPOLL_CTL_ADD ? g->live : !g->live ||
	    g->kmode != RS_EPT_PROGRAM)
		return false;
	if ((*res = rs_epi_kctl(i->epfd, op, fd, ev->events, ev->data)) < 0)
		return true;
	g->events = ev->events;
	g->data = ev->data;
	g->live = true;
	g->kmode = RS_EPT_PROGRAM;
	sync_timer(i, g, e, RS_EPT_NOW_UNREAD);
	return true;
}

int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct rs_ept_instance *i;
	struct rs_ept_record *g;
	int r;

	if (!ev && op != EPOLL_CTL_DEL)
		return -EFAULT;
	if ((i = rs_epi_find(epfd)) &&
	    __atomic_load_n(&i->nrecords, __ATOMIC_ACQUIRE)) {
		rs_epi_lock(i);
		bool done = express(i, op, fd, ev, &r);

		rs_epi_unlock(i);
		if (done)
			return r;
	}
	if (op == EPOLL_CTL_ADD)
		return ctl_add(epfd, fd, ev);
	if (!rs_epi_total() || !(i = rs_epi_find(epfd)) ||
	    !__atomic_load_n(&i->nrecords, __ATOMIC_ACQUIRE))
		return rs_epi_kctl(epfd, op, fd, ev ? ev->events : 0,
		    ev ? ev->data : (epoll_data_t){ 0 });
	rs_epi_lock(i);
	r = (g = rs_epi_record(i, fd)) && g->live ?
	    ctl_recorded(i, g, op, ev) :
	    rs_epi_kctl(epfd, op, fd, ev ? ev->events : 0,
		ev ? ev->data : (epoll_data_t){ 0 });

	rs_epi_unlock(i);
	return r;
}

/* ---- connect() and close() ---- */

void rs_ept_fd_changed(int fd)
{
	int64_t next = RS_NEVER;
	int save = errno;

	if (!rs_epi_total())
		return;
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

void rs_ept_fd_closed(int fd)
{
	if (rs_epi_total())
		drop_range((unsigned)fd, (unsigned)fd, true);
}

void rs_ept_fd_range_closed(unsigned first, unsigned last)
{
	if (rs_epi_total())
		drop_range(first, last, true);
}

void rs_ept_fd_reused(int fd)
{
	if (rs_epi_total())
		drop_range((unsigned)fd, (unsigned)fd, false);
}
