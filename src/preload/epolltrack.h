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

#include "epollinst.h"

/* epoll_ctl, recording registrations of unconnected or managed sockets. */
int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev);

/*
 * Returns whether epoll_ctl(epfd, op, fd) is the plain system call: the
 * instance has no records and, for an ADD, fd is a connected socket the
 * waits have nothing to do for (the default policy's steady state).  A
 * few loads, no lock, no system call.
 */
bool rs_ept_ctl_plain(int epfd, int op, int fd);

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
