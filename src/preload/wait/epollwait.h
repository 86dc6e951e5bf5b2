/* SPDX-License-Identifier: MIT */
/*
 * epollwait.h - epoll waits that drive the pending connects and report the
 * read/write timeouts of the sockets registered in them.
 *
 * A wait costs O(ready + expired + pending connects) of the instance,
 * never O(registered): timeouts sit in the instance's timer heap.  Waits
 * on instances with nothing to look after are the plain system call.
 * Thread-safe: the instance's lock is never held across the wait.  All
 * results are counts or -errno.
 */
#ifndef RS_EPOLLWAIT_H
#define RS_EPOLLWAIT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

/* Returns whether any registration is recorded (one atomic load). */
bool rs_ept_tracking(void);

/*
 * Returns whether a wait on epfd must go through rs_ept_wait(); a few
 * atomic loads, no lock.
 */
bool rs_ept_busy(int epfd);

/*
 * epoll_pwait until the monotonic time end_ms (RS_NEVER: no timeout),
 * driving the pending connects registered in epfd and reporting the
 * timeouts that fall due; now is the monotonic time (just read).
 */
int rs_ept_wait(int epfd, struct epoll_event *ev, int max, int64_t end_ms,
    int64_t now, const sigset_t *mask);

/*
 * After a plain epoll wait that returned n > 0 events: translates tagged
 * events that slipped in (another thread started a connect meanwhile) and
 * drops internal ones.  Returns the new count.
 */
int rs_ept_fixup(int epfd, struct epoll_event *ev, int n);

#endif /* RS_EPOLLWAIT_H */
