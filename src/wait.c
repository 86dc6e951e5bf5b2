/*
 * wait.c - the program's waits.
 *
 * Provisional: waits pass straight to the kernel until the event-loop
 * engine lands (see the non-blocking connects issue).  Interface is final.
 */
#include "wait.h"

#include <errno.h>

#include "real.h"

#define RET(expr) ({ int r_ = (expr); r_ < 0 ? -errno : r_; })

int rs_wait_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return RET(rs_real_poll(fds, n, timeout_ms));
}

int rs_wait_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask)
{
	return RET(rs_real_ppoll(fds, n, tmo, mask));
}

int rs_wait_select(int n, fd_set *r, fd_set *w, fd_set *x,
    struct timeval *tmo)
{
	return RET(rs_real_select(n, r, w, x, tmo));
}

int rs_wait_pselect(int n, fd_set *r, fd_set *w, fd_set *x,
    const struct timespec *tmo, const sigset_t *mask)
{
	return RET(rs_real_pselect(n, r, w, x, tmo, mask));
}

int rs_wait_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	return RET(rs_real_epoll_ctl(epfd, op, fd, ev));
}

int rs_wait_epoll_wait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms)
{
	return RET(rs_real_epoll_wait(epfd, ev, max, timeout_ms));
}

int rs_wait_epoll_pwait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms, const sigset_t *mask)
{
	return RET(rs_real_epoll_pwait(epfd, ev, max, timeout_ms, mask));
}

int rs_wait_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask)
{
	return RET(rs_real_epoll_pwait2(epfd, ev, max, tmo, mask));
}

void rs_wait_fd_closed(int fd)
{
	(void)fd;
}
