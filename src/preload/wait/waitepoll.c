/* SPDX-License-Identifier: MIT */
/*
 * waitepoll.c - the program's epoll calls (wait.h): the records are
 * epolltrack.c's, the waits epollwait.c's; this is what the exported
 * names call, and the descriptor lifecycle they are told of.
 */
#include "wait.h"

#include <errno.h>
#include <stdbool.h>

#include "clock.h"
#include "epolltrack.h"
#include "epollwait.h"
#include "hot.h"
#include "httpio.h"
#include "real.h"

int rs_wait_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	return rs_ept_ctl(epfd, op, fd, ev);
}

int rs_wait_epoll_wait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms)
{
	return rs_wait_epoll_pwait(epfd, ev, max, timeout_ms, NULL);
}

/*
 * After a plain epoll wait: events of a connect that another thread began
 * meanwhile are translated or dropped; when nothing is left for the
 * program, the managed wait takes over for the rest of its time (end_ms
 * is 0 when nothing was recorded before the wait: that race returns 0).
 */
static int epoll_after(int epfd, struct epoll_event *ev, int max, int r,
    int64_t end_ms, const sigset_t *mask)
{
	int64_t now;

	if (r <= 0)
		return r < 0 ? -errno : r;
	r = rs_ept_fixup(epfd, ev, r);
	if (r > 0 || (now = rs_clock_now_ms()) >= end_ms)
		return r;
	return rs_ept_wait(epfd, ev, max, end_ms, now, mask);
}

int rs_wait_epoll_pwait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms, const sigset_t *mask)
{
	/* The clock is only read when some socket's registration is known. */
	bool known = rs_ept_tracking();
	int64_t now = known ? rs_clock_now_ms() : 0;
	int64_t end = timeout_ms < 0 ? RS_NEVER : known ?
	    rs_clock_after(now, timeout_ms) : 0;

	if (!rs_ept_busy(epfd))
		return epoll_after(epfd, ev, max, rs_real_epoll_pwait(epfd, ev,
		    max, timeout_ms, mask), end, mask);
	return rs_ept_wait(epfd, ev, max, end, known ? now :
	    rs_clock_now_ms(), mask);
}

int rs_wait_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask)
{
	bool known = rs_ept_tracking();
	int64_t now = known ? rs_clock_now_ms() : 0;
	int64_t end = known ? rs_wait_end_ms(tmo, now) : 0;

	if (end < 0 || !rs_ept_busy(epfd))
		return epoll_after(epfd, ev, max, rs_real_epoll_pwait2(epfd, ev,
		    max, tmo, mask), end < 0 ? 0 : end, mask);
	return rs_ept_wait(epfd, ev, max, end, known ? now :
	    rs_clock_now_ms(), mask);
}

RS_HOT void rs_wait_fd_connect(int fd)
{
	rs_ept_fd_changed(fd);
}

/* The HTTP engine, below the waits, tells them of a change through this
   hook; registered at load, before any request is made. */
__attribute__((constructor)) static void wait_register(void)
{
	rs_hio_on_change(rs_wait_fd_connect);
}

RS_HOT void rs_wait_fd_closed(int fd)
{
	rs_ept_fd_closed(fd);
}

void rs_wait_fd_range_closed(unsigned first, unsigned last)
{
	rs_ept_fd_range_closed(first, last);
}

RS_HOT void rs_wait_fd_reused(int fd)
{
	rs_ept_fd_reused(fd);
}
