/*
 * epollwait.h - epoll waits that drive the pending connects and report the
 * read/write timeouts of the sockets registered in them.
 *
 * Thread-safe: the record lock is never held across a wait.  All results
 * are counts or -errno.
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
 * Returns whether a wait on epfd must go through rs_ept_wait(); false
 * costs one atomic load when no managed socket needs looking after.
 */
bool rs_ept_busy(int epfd);

/*
 * epoll_pwait until the monotonic time end_ms (RS_NEVER: no timeout),
 * driving the pending connects registered in epfd.
 */
int rs_ept_wait(int epfd, struct epoll_event *ev, int max, int64_t end_ms,
    const sigset_t *mask);

/*
 * After a plain epoll wait that returned n > 0 events: translates tagged
 * events that slipped in (another thread started a connect meanwhile) and
 * drops internal ones.  Returns the new count.
 */
int rs_ept_fixup(int epfd, struct epoll_event *ev, int n);

#endif /* RS_EPOLLWAIT_H */
