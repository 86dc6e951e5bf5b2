/*
 * epollwait.c - epoll waits on instances that hold records the library
 * looks after: pending connects are stepped before the wait, tagged events
 * are translated back to the program's data after it, and read/write
 * deadlines that passed without an event are reported.
 *
 * The table lock is taken before and after the system call, never across
 * it.
 */
#include "epollwait.h"

#include <errno.h>

#include "clock.h"
#include "epollrec.h"
#include "fdtable.h"
#include "io_timeout.h"
#include "real.h"

bool rs_ept_tracking(void)
{
	return rs_eptrec_count() != 0;
}

bool rs_ept_busy(int epfd)
{
	struct rs_ept_instance *i;
	bool busy;

	if (!rs_eptrec_active())
		return false;
	rs_eptrec_lock();
	busy = (i = rs_eptrec_instance(epfd)) && i->active;
	rs_eptrec_unlock();
	return busy;
}

/*
 * Steps every active record of epfd before a wait.  Failures to report
 * are written to ev (at most max).  Returns their count; *next is when a
 * record next needs a look, *zero asks for a wait that does not block.
 */
static int step_active_records(int epfd, struct epoll_event *ev, int max,
    int64_t now, int64_t *next, bool *zero)
{
	struct rs_ept_instance *i = rs_eptrec_instance(epfd);
	struct rs_ept_record *r, *an;
	int n = 0;

	for (r = i ? i->active : NULL; r && n < max; r = an) {
		an = r->anext;
		uint32_t got = rs_eptrec_sync(r, 0, now, next);

		if (got)
			ev[n++] = (struct epoll_event){ got, r->data };
		*zero |= r->expire;
	}
	*zero |= n > 0 || r != NULL;
	return n;
}

/*
 * Translates one tagged event from the kernel.  Returns the events to
 * report with the program's data, or 0 when it was internal.
 */
static uint32_t translate_one(int epfd, struct epoll_event *e, int64_t now)
{
	int fd = (int)(uint32_t)e->data.u64;
	struct rs_ept_record *r = rs_eptrec_find(epfd, fd);
	struct rs_fd *f = rs_fd_get(fd);
	int64_t next = RS_NEVER;

	if (!r || r->kmode != RS_EPT_TAGGED)
		return 0;
	e->data = r->data;
	if (f && rs_fd_state(f) == RS_FD_CONNECTED && r->kevents == r->events) {
		r->seen = true;
		if (r->events & EPOLLONESHOT)
			r->disarmed = true;
		return e->events;
	}
	return rs_eptrec_sync(r, 1, now, &next);
}

/*
 * Rewrites the kernel's n events in place: tagged ones are translated or
 * dropped.  Then, when expire is true (after a wait this call prepared),
 * reports read/write deadlines that passed without an event.
 * Returns the number of events kept.
 */
static int translate_events(int epfd, struct epoll_event *ev, int n, int max,
    bool expire, int64_t now)
{
	int k = 0;

	for (int j = 0; j < n; j++) {
		struct epoll_event e = ev[j];

		if ((e.data.u64 & RS_EPT_TAG_MASK) == RS_EPT_TAG &&
		    !(e.events = translate_one(epfd, &e, now)))
			continue;
		ev[k++] = e;
	}
	struct rs_ept_instance *i = expire ? rs_eptrec_instance(epfd) : NULL;

	for (struct rs_ept_record *r = i ? i->active : NULL; r && k < max;
	     r = r->anext) {
		struct rs_fd *f = rs_fd_get(r->fd);

		if (!r->expire || r->seen || !f)
			continue;
		r->expire = false;
		ev[k++] = (struct epoll_event){ (uint32_t)rs_io_wait_expired(f,
			rs_eptrec_io_events(r->events), now), r->data };
		if (r->events & EPOLLONESHOT)
			r->disarmed = true;
	}
	return k;
}

int rs_ept_fixup(int epfd, struct epoll_event *ev, int n)
{
	int j;

	if (!rs_eptrec_count())
		return n;
	for (j = 0; j < n && (ev[j].data.u64 & RS_EPT_TAG_MASK) != RS_EPT_TAG;
	     j++)
		;
	if (j == n)
		return n;
	rs_eptrec_lock();
	n = translate_events(epfd, ev, n, n, false, rs_clock_now_ms());
	rs_eptrec_unlock();
	return n;
}

int rs_ept_wait(int epfd, struct epoll_event *ev, int max, int64_t end_ms,
    const sigset_t *mask)
{
	if (max <= 0)
		return -EINVAL;
	for (;;) {
		int64_t now = rs_clock_now_ms(), next = end_ms;
		bool zero = false;

		rs_eptrec_lock();
		int syn = step_active_records(epfd, ev, max, now, &next, &zero);

		rs_eptrec_unlock();
		int tmo = zero ? 0 : rs_clock_remaining_ms(next, now);
		int n = syn < max ? rs_real_epoll_pwait(epfd, ev + syn,
		    max - syn, tmo, mask) : 0;

		if (n < 0)
			return syn ? syn : -errno;
		rs_eptrec_lock();
		now = rs_clock_now_ms();
		n = syn + translate_events(epfd, ev + syn, n, max - syn, true,
		    now);
		rs_eptrec_unlock();
		if (n > 0 || now >= end_ms)
			return n;
	}
}
