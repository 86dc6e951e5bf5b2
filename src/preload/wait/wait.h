/* SPDX-License-Identifier: MIT */
/*
 * wait.h - the program's waits: poll, ppoll, select, pselect, epoll.
 *
 * Waits drive the non-blocking connects of managed sockets (a socket is
 * reported writable only once connected, or with an error after the last
 * attempt) and end waits for data after read_timeout.  Waits that involve
 * no managed descriptor go straight to the kernel.  Every function returns
 * what the real call returns, with -errno instead of -1/errno.
 * Thread-safe.
 */
#ifndef RS_WAIT_H
#define RS_WAIT_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

int rs_wait_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int rs_wait_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask);
int rs_wait_select(int n, fd_set *r, fd_set *w, fd_set *x,
    struct timeval *tmo);
int rs_wait_pselect(int n, fd_set *r, fd_set *w, fd_set *x,
    const struct timespec *tmo, const sigset_t *mask);
/*
 * The monotonic time at which a wait of relative timeout tmo begun at now
 * ends, rounded up: RS_NEVER for none (NULL, or too far to matter), -1
 * for an invalid timespec (the kernel's EINVAL is left to the kernel).
 */
int64_t rs_wait_end_ms(const struct timespec *tmo, int64_t now);

/* epoll (waitepoll.c): the records and waits of epolltrack.h and
   epollwait.h. */
int rs_wait_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
int rs_wait_epoll_wait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms);
int rs_wait_epoll_pwait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms, const sigset_t *mask);
int rs_wait_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask);

/*
 * A connect() on fd has returned: if fd is registered with an epoll
 * instance, its registration is made to follow the connect's state.
 */
void rs_wait_fd_connect(int fd);

/* Forgets what is known of fd's epoll registrations (it is being closed). */
void rs_wait_fd_closed(int fd);

/* The same for every descriptor in [first, last] (close_range). */
void rs_wait_fd_range_closed(unsigned first, unsigned last);

/* fd was just created: anything recorded under its number is stale. */
void rs_wait_fd_reused(int fd);

#endif /* RS_WAIT_H */
