/* SPDX-License-Identifier: MIT */
/*
 * epolltrack.h - epoll registrations of sockets whose connect or timeouts
 * the library looks after.
 *
 * epoll_ctl registrations of sockets that are or may become managed are
 * recorded per epoll instance (epollinst.h).  The kernel holds the
 * program's own registration, except while a managed connect is pending:
 * then it holds nothing during a backoff (an unconnected TCP socket polls
 * as POLLOUT|POLLHUP, so a level-triggered registration would spin) and
 * EPOLLOUT with a tagged data word during an attempt; the program's
 * registration is put back once the connect is over.  A connected socket
 * with a read or write timeout keeps the program's registration and gets a
 * timer in its instance, so a request costs the program's epoll_ctl calls
 * and no more.  Thread-safe (per-instance locks).  Results are counts or
 * -errno.
 */
#ifndef RS_EPOLLTRACK_H
#define RS_EPOLLTRACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "clock.h"
#include "epollinst.h"
#include "fdtable.h"
#include "io_timeout.h"
#include "tdeadline.h"

/*
 * epoll_ctl in libc's convention (-1 and errno), for the exported name:
 * the plain system call (rs_ept_ctl_plain()), the express path of a
 * request on a managed socket with a timeout, or the general path, which
 * records registrations of unconnected or managed sockets.
 */
int rs_ept_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);

/* The same, returning 0 or -errno and leaving errno alone. */
int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev);

/*
 * Returns whether e is a connected socket the waits have nothing to do
 * for: no read or write timeout, no HTTP rule, no deadline.  Its
 * registrations need no record (the default policy's steady state).
 */
static inline bool rs_ept_idle_socket(const struct rs_fd *e)
{
	const struct rs_settings *s = e->settings;

	return rs_fd_state(e) == RS_FD_CONNECTED &&
	    s->read_timeout_ms == RS_OFF && s->write_timeout_ms == RS_OFF &&
	    !s->http.enabled && rs_io_process_deadline() == RS_NEVER;
}

/* The instance of epfd when any instance has records, else NULL. */
static inline struct rs_ept_instance *rs_ept_instance_of(int epfd)
{
	return rs_epi_total() ? rs_epi_find(epfd) : NULL;
}

/* Whether instance i (or NULL) has records; an atomic load. */
static inline bool rs_ept_has_records(const struct rs_ept_instance *i)
{
	return i && __atomic_load_n(&i->nrecords, __ATOMIC_ACQUIRE);
}

/*
 * Returns whether epoll_ctl(op, fd) on instance i (or NULL) is the plain
 * system call: the instance has no records and, for an ADD, fd is a
 * connected socket the waits have nothing to do for.  A few loads, no
 * lock, no system call.
 */
static inline bool rs_ept_plain_in(const struct rs_ept_instance *i, int op,
    int fd)
{
	struct rs_fd *e;

	/* Records of the instance may need updating (or, for an ADD,
	   dropping: they would be stale). */
	if (rs_ept_has_records(i))
		return false;
	if (op != EPOLL_CTL_ADD)
		return true;
	/* An unmanaged fd may be a socket whose connect is yet to come.
	   rs_ept_idle_socket(), but a thread that may have a deadline goes
	   the general way: so the plain call makes no call of its own. */
	if (!(e = rs_fd_get(fd)) || !rs_tdeadline_none())
		return false;
	const struct rs_settings *s = e->settings;

	return rs_fd_state(e) == RS_FD_CONNECTED &&
	    s->read_timeout_ms == RS_OFF && s->write_timeout_ms == RS_OFF &&
	    !s->http.enabled;
}

/* rs_ept_plain_in() for epfd's instance. */
static inline bool rs_ept_ctl_plain(int epfd, int op, int fd)
{
	return rs_ept_plain_in(rs_ept_instance_of(epfd), op, fd);
}

/* For rs_ept_sync(): the caller has not read the clock (epoll_ctl on a
   connected socket needs none, so a request pays for none). */
#define RS_EPT_NOW_UNREAD (-1)

/*
 * With i locked: brings record r in line with its socket's state, stepping
 * a pending connect (ready: the kernel reported the attempt, so the event
 * was taken from the program), and sets its timer.  When in_wait is true
 * the caller is a wait that can report: returns the events to report to
 * the program now (a connect's completion or failure), else 0.  Outside a
 * wait a failure stays pending for the next one.  Lowers *next to when r
 * next needs a look.
 */
uint32_t rs_ept_sync(struct rs_ept_instance *i, struct rs_ept_record *r,
    int ready, bool in_wait, int64_t now, int64_t *next);

/* fd's connect state changed (a connect() call): re-check its records. */
void rs_ept_fd_changed(int fd);

/* fd is being closed: forget its records, and all of them if an epfd. */
void rs_ept_fd_closed(int fd);

/* Before close_range(): as rs_ept_fd_closed() for each of them. */
void rs_ept_fd_range_closed(unsigned first, unsigned last);

/* fd names a new file (socket(), accept()): stale records are dropped. */
void rs_ept_fd_reused(int fd);

#endif /* RS_EPOLLTRACK_H */
