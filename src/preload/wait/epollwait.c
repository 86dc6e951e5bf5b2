/* SPDX-License-Identifier: MIT */
/*
 * epollwait.c - epoll waits over the records of epollinst.h.
 *
 * Before the kernel wait, under the instance's lock: the pending connects
 * are stepped (their failures reported), and the timers that fell due
 * are looked at, earliest first, until one is not due.  A due timer is
 * checked against its socket's last activity (activity only ever moves a
 * timeout later, so the heap is updated lazily) and against the socket's
 * readiness (one zero-timeout poll, only then): data that arrived but was
 * not read yet is progress, not a timeout.  After the wait, tagged events
 * (a pending connect's attempt) are translated.  Connected sockets keep
 * the program's registration, so their events need no translation.
 */
#include "epollwait.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>

#include "clock.h"
#include "connect_step.h"
#include "epollinst.h"
#include "epolltrack.h"
#include "fdtable.h"
#include "httpwait.h"
#include "io_timeout.h"
#include "real.h"

bool rs_ept_tracking(void)
{
	return rs_epi_total() != 0;
}

bool rs_ept_busy(int epfd)
{
	struct rs_ept_instance *i;

	if (!rs_epi_total() || !(i = rs_epi_find(epfd)))
		return false;
	return __atomic_load_n(&i->nbusy, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&i->ntagged, __ATOMIC_ACQUIRE);
}

static struct rs_ept_record *of_timer(struct rs_heap_node *t)
{
	return (struct rs_ept_record *)((char *)t -
	    offsetof(struct rs_ept_record, timer));
}

/* Whether fd is ready now for events (a zero-timeout poll). */
static bool ready_now(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int save = errno, n = rs_real_poll(&p, 1, 0);

	errno = save;
	return n > 0;
}

/*
 * Looks at r, whose timer fell due at now.  Returns the events to report
 * (a timeout), or 0 after moving the timer on.
 */
static uint32_t timer_due(struct rs_ept_instance *i, struct rs_ept_record *r,
    int64_t now)
{
	struct rs_fd *e = rs_fd_get(r->fd);
	short io = (short)(r->events & (EPOLLIN | EPOLLOUT));
	int64_t next = RS_NEVER;

	/* Left queued by an EPOLL_CTL_DEL (rs_epi_idle()). */
	if (!r->live) {
		rs_epi_timer(i, r, RS_NEVER);
		return 0;
	}
	if (!e || rs_fd_state(e) != RS_FD_CONNECTED) {
		/* Only a connected socket is timed; the timer may have been
		   kept across a DEL and ADD (rs_epi_idle()) while the socket
		   reconnected, and the sync need not move it. */
		rs_epi_timer(i, r, RS_NEVER);
		rs_ept_sync(i, r, 0, false, now, &next);
		return 0;
	}
	uint32_t rev = 0;

	if (rs_hwait_wanted(e) && rs_hwait_ept(i, r, e, 0, true, now, &next,
	    &rev))
		return rev;
	int64_t dl = rs_io_wait_deadline(e, io, now);

	if (dl > now) {
		rs_epi_timer(i, r, dl);
		return 0;
	}
	if (ready_now(r->fd, io) && rs_fd_same_socket(e, r->fd)) {
		/* Bytes arrived (or room did): progress, reported by the
		   kernel itself. */
		rs_fd_touch(e, now);
		rs_epi_timer(i, r, rs_io_wait_deadline(e, io, now));
		return 0;
	}
	rev = (uint32_t)rs_io_wait_expired(e, io, now);

	if (r->events & (EPOLLONESHOT | EPOLLET)) {
		/* Reported once; the program re-arms with EPOLL_CTL_MOD. */
		r->disarmed = (r->events & EPOLLONESHOT) != 0;
		if (r->disarmed)
			rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
		rs_epi_timer(i, r, RS_NEVER);
	} else {
		/* Level-triggered: reported by every wait until read. */
		rs_epi_timer(i, r, now + 1);
	}
	return rev;
}

/*
 * Before a wait: steps the pending records and reports due timers into ev
 * (at most max).  Returns the count; *next is when a record next needs a
 * look.
 */
static int prepare(struct rs_ept_instance *i, struct epoll_event *ev, int max,
    int64_t now, int64_t *next)
{
	struct rs_ept_record *r, *rn;
	struct rs_heap_node *t;
	int n = 0;

	for (r = i->pend; r && n < max; r = rn) {
		rn = r->pnext;
		uint32_t got = rs_ept_sync(i, r, 0, true, now, next);

		if (got)
			ev[n++] = (struct epoll_event){ got, r->data };
	}
	while (n < max && (t = rs_heap_top(&i->timers)) && t->key <= now) {
		r = of_timer(t);
		uint32_t got = timer_due(i, r, now);

		if (got)
			ev[n++] = (struct epoll_event){ got, r->data };
	}
	if ((t = rs_heap_top(&i->timers)))
		*next = rs_clock_min(*next, t->key);
	return n;
}

/*
 * Rewrites the kernel's n events in place: tagged ones are translated or
 * dropped.  Returns the number kept.
 */
static int translate(struct rs_ept_instance *i, struct epoll_event *ev, int n,
    int64_t now)
{
	int64_t next = RS_NEVER;
	int k = 0;

	for (int j = 0; j < n; j++) {
		struct epoll_event e = ev[j];

		if ((e.data.u64 & RS_EPT_TAG_MASK) == RS_EPT_TAG) {
			struct rs_ept_record *r = i ? rs_epi_record(i,
			    (int)(uint32_t)e.data.u64) : NULL;

			if (!r || !rs_epi_tagged(r->kmode) ||
			    !(e.events = rs_ept_sync(i, r, (int)e.events, true,
				now, &next)))
				continue;
			e.data = r->data;
		}
		ev[k++] = e;
	}
	return k;
}

/* Whether any of the n events carries a tag. */
static bool any_tagged(const struct epoll_event *ev, int n)
{
	for (int j = 0; j < n; j++)
		if ((ev[j].data.u64 & RS_EPT_TAG_MASK) == RS_EPT_TAG)
			return true;
	return false;
}

int rs_ept_fixup(int epfd, struct epoll_event *ev, int n)
{
	struct rs_ept_instance *i;

	if (!rs_epi_tagged_total() || !any_tagged(ev, n))
		return n;
	if (!(i = rs_epi_find(epfd)))
		return translate(NULL, ev, n, 0);
	rs_epi_lock(i);
	n = translate(i, ev, n, rs_clock_now_ms());
	rs_epi_unlock(i);
	return n;
}

/*
 * Folds the kernel's k events at ev[n..] into the n the library reported
 * before the wait (prepare()), where they are of the same registration:
 * a record reported there (a response the library held, now the
 * program's: its registration just went back to the kernel) is one
 * event, never two in one wait.  Returns the kernel's events kept.
 */
static int fold(struct epoll_event *ev, int n, int k)
{
	int kept = 0;

	for (int j = n; j < n + k; j++) {
		int m = 0;

		while (m < n && ev[m].data.u64 != ev[j].data.u64)
			m++;
		if (m < n)
			ev[m].events |= ev[j].events;
		else
			ev[n + kept++] = ev[j];
	}
	return kept;
}

int rs_ept_wait(int epfd, struct epoll_event *ev, int max, int64_t end_ms,
    int64_t now, const sigset_t *mask)
{
	struct rs_ept_instance *i = rs_epi_find(epfd);

	if (max <= 0)
		return -EINVAL;
	for (;;) {
		int64_t next = end_ms;
		int n = 0;

		if (i) {
			rs_epi_lock(i);
			n = prepare(i, ev, max, now, &next);
			rs_epi_unlock(i);
		}
		int tmo = n ? 0 : rs_clock_remaining_ms(next, now);
		int k = n < max ? rs_real_epoll_pwait(epfd, ev + n, max - n,
		    tmo, mask) : 0;

		if (k < 0)
			return n ? n : -errno;
		bool tagged = k > 0 && i && __atomic_load_n(&i->ntagged,
		    __ATOMIC_ACQUIRE) && any_tagged(ev + n, k);

		/* The clock is read again only when it matters: events to
		   translate, or none to return (the next round needs it). */
		if (tagged || n + k == 0)
			now = rs_clock_now_ms();
		if (tagged) {
			rs_epi_lock(i);
			k = translate(i, ev + n, k, now);
			rs_epi_unlock(i);
		}
		if (n > 0)
			k = fold(ev, n, k);
		n += k;
		if (n > 0 || now >= end_ms)
			return n;
	}
}
