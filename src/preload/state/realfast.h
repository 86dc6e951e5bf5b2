/* SPDX-License-Identifier: MIT */
/*
 * realfast.h - inline forwarders to the real reads and writes, for the
 * exported names' fast paths (interpose_io.c) and the io engine's first
 * tries (io.c), to poll for the waits' steady state (wait.c), to
 * epoll_ctl for its express path (epolltrack.c), and to
 * the calls of a connect on a plain socket (connect_step.c, interpose.c).
 *
 * rs_realfast_<name>() loads the pointer real.c resolved for <name> and
 * calls it: no call into real.c, so the wrapper of a descriptor the library
 * leaves alone is a lookup and a jump into libc.  While the pointer is
 * still NULL (before the first resolution) it calls rs_real_<name>(),
 * which resolves it; the engine tests define the pointers NULL for good,
 * so that their scripted rs_real_*() answer.  Thread-safe as real.h.
 */
#ifndef RS_REALFAST_H
#define RS_REALFAST_H

#include <sys/epoll.h>

#include "real.h"

#define RS_REALFAST(ret, name, params, args)                            \
	extern void *rs_real_slot_##name                                \
	    __attribute__((visibility("hidden")));                      \
	static inline ret rs_realfast_##name params                     \
	{                                                               \
		void *p_ = __atomic_load_n(&rs_real_slot_##name,        \
		    __ATOMIC_ACQUIRE);                                  \
		if (__builtin_expect(p_ != NULL, 1))                    \
			return ((ret(*) params)p_) args;                \
		return rs_real_##name args;                             \
	}

RS_REALFAST(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n))
RS_REALFAST(ssize_t, readv, (int fd, const struct iovec *v, int c),
    (fd, v, c))
RS_REALFAST(ssize_t, recv, (int fd, void *b, size_t n, int fl),
    (fd, b, n, fl))
RS_REALFAST(ssize_t, recvfrom,
    (int fd, void *b, size_t n, int fl, struct sockaddr *sa, socklen_t *l),
    (fd, b, n, fl, sa, l))
RS_REALFAST(ssize_t, recvmsg, (int fd, struct msghdr *m, int fl),
    (fd, m, fl))
RS_REALFAST(ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n))
RS_REALFAST(ssize_t, writev, (int fd, const struct iovec *v, int c),
    (fd, v, c))
RS_REALFAST(ssize_t, send, (int fd, const void *b, size_t n, int fl),
    (fd, b, n, fl))
RS_REALFAST(ssize_t, sendto,
    (int fd, const void *b, size_t n, int fl, const struct sockaddr *sa,
	socklen_t l),
    (fd, b, n, fl, sa, l))
RS_REALFAST(ssize_t, sendmsg, (int fd, const struct msghdr *m, int fl),
    (fd, m, fl))
RS_REALFAST(int, recvmmsg,
    (int fd, struct mmsghdr *v, unsigned n, int fl, struct timespec *t),
    (fd, v, n, fl, t))
RS_REALFAST(int, sendmmsg, (int fd, struct mmsghdr *v, unsigned n, int fl),
    (fd, v, n, fl))

/* For the steady state of poll and select (wait.c). */
RS_REALFAST(int, poll, (struct pollfd *f, nfds_t n, int t), (f, n, t))

/* For epoll_ctl's express path (epolltrack.c). */
RS_REALFAST(int, epoll_ctl, (int ep, int op, int fd, struct epoll_event *ev),
    (ep, op, fd, ev))

/* For a managed connect's own calls (connect_step.c, interpose.c): socket,
   the kernel's attempt and its SO_SNDTIMEO pair, close. */
RS_REALFAST(int, socket, (int d, int t, int p), (d, t, p))
RS_REALFAST(int, connect, (int fd, const struct sockaddr *sa, socklen_t len),
    (fd, sa, len))
RS_REALFAST(int, setsockopt,
    (int fd, int lv, int nm, const void *v, socklen_t l), (fd, lv, nm, v, l))
RS_REALFAST(int, close, (int fd), (fd))

#undef RS_REALFAST

#endif /* RS_REALFAST_H */
