/* SPDX-License-Identifier: MIT */
/*
 * httphook.h - the few lines the exported reads and writes (interpose.c)
 * add for tracked HTTP connections (httpconn.h), kept here so that each
 * wrapper stays a guard, a lookup and a delegation.
 *
 * Costs one relaxed load per call when no policy asks for tracking.
 */
#ifndef RS_HTTPHOOK_H
#define RS_HTTPHOOK_H

#include <errno.h>
#include <sys/socket.h>

#include "guard.h"
#include "httpconn.h"
#include "httpout.h"
#include "tlsprobe.h"

/*
 * The tracked connection of fd, when the library should act, or NULL:
 * not for the records of a TLS call under way on it, or of one whose
 * socket is being learnt (which learns fd then: tlsprobe.h), or of a
 * session the library follows on it (rs_httpconn_records()).
 */
static inline struct rs_httpconn *rs_hook_http(int fd)
{
	struct rs_httpconn *c = rs_guard_active() ? NULL : rs_httpconn_get(fd);

	if (c == NULL || __builtin_expect(rs_tls_probed(fd) ||
	    rs_tls_plain_fd == fd ||
	    __atomic_load_n(&c->records, __ATOMIC_RELAXED) != NULL, 0))
		return NULL;
	return c;
}

/*
 * After a read of r bytes (libc convention) into iov on fd, asked for
 * `want` bytes with flags: feeds them to the tracker.  A peek is seen
 * again by the next read, so it is not fed.  Returns r; errno is kept.
 */
static inline ssize_t rs_hook_readv(int fd, const struct iovec *iov, int cnt,
    size_t want, int flags, ssize_t r)
{
	struct rs_httpconn *c;

	if (r >= 0 && want > 0 && !(flags & MSG_PEEK) &&
	    (c = rs_hook_http(fd)))
		rs_httpconn_read(c, fd, iov, cnt, r);
	return r;
}

static inline ssize_t rs_hook_read(int fd, void *buf, size_t n, int flags,
    ssize_t r)
{
	struct iovec v = { buf, n };

	return rs_hook_readv(fd, &v, 1, n, flags, r);
}

/* A send of one buffer on tracked connection c (-errno on failure). */
static inline ssize_t rs_hook_send(struct rs_httpconn *c, struct rs_fd *e,
    int fd, const void *buf, size_t n, int flags, const struct sockaddr *sa,
    socklen_t len)
{
	struct iovec v = { (void *)buf, n };
	struct msghdr m = { .msg_name = (void *)sa, .msg_namelen = len,
		.msg_iov = &v, .msg_iovlen = 1 };

	return rs_httpconn_send(c, e, fd, &m, flags);
}

#endif /* RS_HTTPHOOK_H */
