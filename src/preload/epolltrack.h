/*
 * epolltrack.h - epoll registrations of sockets whose connect the library
 * drives.
 *
 * epoll_ctl registrations of sockets that may become managed are recorded
 * by (epoll fd, fd).  While a managed connect is pending, the kernel
 * registration is replaced: removed during a backoff (an unconnected TCP
 * socket polls as POLLOUT|POLLHUP, so a level-triggered registration would
 * spin), EPOLLOUT with a tagged data word during an attempt; the program's
 * own registration (events and data) is put back once the connect is over.
 * Connected sockets with read/write timeouts stay tagged so that a wait can
 * tell which descriptor an event belongs to.  Thread-safe: one mutex, never
 * held across a wait.  All results are counts or -errno.
 */
#ifndef RS_EPOLLTRACK_H
#define RS_EPOLLTRACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

/* epoll_ctl, recording registrations of unconnected or managed sockets. */
int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev);

/* fd's connect state changed (a connect() call): re-check its records. */
void rs_ept_fd_changed(int fd);

/* fd is being closed: forget its records, and all of them if an epfd. */
void rs_ept_fd_closed(int fd);

/* Before close_range(): as rs_ept_fd_closed() for each of them. */
void rs_ept_fd_range_closed(unsigned first, unsigned last);

/* fd names a new file (socket(), accept()): stale records are dropped. */
void rs_ept_fd_reused(int fd);

#endif /* RS_EPOLLTRACK_H */
