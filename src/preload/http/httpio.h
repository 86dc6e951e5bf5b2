/* SPDX-License-Identifier: MIT */
/*
 * httpio.h - the read and write paths of managed sockets, with HTTP/1.x
 * status retries (httpretry.h) on connections whose rule enables them.
 *
 * Each function has the signature and the result of its rs_io_*
 * counterpart (io.h), which it calls.  On a connection without `http` the
 * cost is one test (rs_hio_wanted) before going to rs_io_* directly.
 * recvmmsg and sendmmsg are not followed: they make the connection pass
 * through.  Thread-safe as httpretry.h says.
 */
#ifndef RS_HTTPIO_H
#define RS_HTTPIO_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "fdtable.h"
#include "io.h"

/*
 * Whether the HTTP engine may have anything to do with e: it follows the
 * connection, or holds a socket error for the program's next call
 * (rs_hio_take_error), which a dup that stopped the following
 * (http_off) must not lose.  The error is asked only then, so that an
 * entry of no HTTP rule costs no load more.
 */
static inline bool rs_hio_wanted(const struct rs_fd *e)
{
	if (e->http_off)
		return __atomic_load_n(&e->http_err, __ATOMIC_RELAXED) != 0;
	return e->http != NULL || e->settings->http.enabled;
}

ssize_t rs_hio_read(struct rs_fd *e, int fd, void *buf, size_t n);
ssize_t rs_hio_readv(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt);
ssize_t rs_hio_recv(struct rs_fd *e, int fd, void *buf, size_t n, int flags);
ssize_t rs_hio_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len);
ssize_t rs_hio_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg,
    int flags);
ssize_t rs_hio_write(struct rs_fd *e, int fd, const void *buf, size_t n);
ssize_t rs_hio_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt);
ssize_t rs_hio_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags);
ssize_t rs_hio_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len);
ssize_t rs_hio_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags);

/*
 * A socket error that the engine's look at a response took from the
 * kernel in a wait (httpwait.c), as -errno, once; 0 when none is held.
 * Linux reports a pending error once, to whichever comes first of a read,
 * a write and getsockopt(SO_ERROR): each of them asks here first, so the
 * held error goes to the same one.  One load when none is held.
 */
static inline int rs_hio_take_error(struct rs_fd *e)
{
	if (__builtin_expect(!__atomic_load_n(&e->http_err, __ATOMIC_RELAXED),
	    1))
		return 0;
	return -__atomic_exchange_n(&e->http_err, 0, __ATOMIC_ACQ_REL);
}

/* recvmmsg/sendmmsg (and anything else not followed): pass through. */
void rs_hio_untracked(struct rs_fd *e);

/*
 * Registers fn, which the engine calls when what the program's waits must
 * see of fd changed under them (a request now awaits its response, a read
 * moved a retry on): the waits, above this layer, re-read fd's state
 * (epoll follows it).  Once per request at most, never per byte.  NULL
 * (the default) tells no one.
 */
void rs_hio_on_change(void (*fn)(int fd));

/* Tells the waits that what they must see of fd changed (the hook). */
void rs_hio_changed(int fd);

#endif /* RS_HTTPIO_H */
