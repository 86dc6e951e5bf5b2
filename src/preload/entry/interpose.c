/* SPDX-License-Identifier: MIT */
/*
 * interpose.c - the exported libc names: guard, look up, delegate.
 *
 * Each wrapper is a few lines.  Calls on descriptors the library does not
 * manage go to the real function after one table lookup; calls made while
 * the library itself is working (the guard) go straight through.  This is
 * the one place where the engines' -errno results become -1 and errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>

#include "born.h"
#include "connect.h"
#include "connect_step.h"
#include "epolltrack.h"
#include "fdtable.h"
#include "guard.h"
#include "hot.h"
#include "interpose.h"
#include "httphold.h"
#include "httphook.h"
#include "httpio.h"
#include "io.h"
#include "ktimeo.h"
#include "real.h"
#include "realfast.h"
#include "resolve.h"
#include "vfork.h"
#include "wait.h"

/*
 * A vfork child runs on its parent's memory with a descriptor table of its
 * own (vfork.h): its close(), dup2() or socket() change its table, not the
 * parent's, so they must leave alone every record the library keeps of the
 * parent's descriptors -- the epoll records, the HTTP trackers, the
 * plain-socket bits and the descriptor table.  (A child's close() of a
 * socket the parent waited on in epoll made the parent's wait forget it:
 * its read_timeout never came.)  Seen on x86-64, where the library's own
 * vfork() marks the child; elsewhere the descriptor table alone is kept
 * apart, by the pid (fdtable.c).
 */
static inline bool vfork_child(void)
{
	return __builtin_expect(rs_vfork_child(), 0);
}

/* The fortified waits, which _FORTIFY_SOURCE builds call. */
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask, size_t fdslen);

__thread int *rs_errno_at __attribute__((tls_model("initial-exec")));

/* ---- connect and descriptor bookkeeping ---- */

RS_HOT EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	if (rs_guard_active())
		return rs_real_connect(fd, sa, len);
	struct rs_fd *e;

	/* A disconnect hands the socket back: the program's timeouts too.
	   (The family first: most connects are none, and need no look-up.) */
	if (sa && len >= sizeof(sa_family_t) && sa->sa_family == AF_UNSPEC &&
	    (e = rs_fd_get(fd)))
		rs_ktimeo_release(e, fd);
	int r = rs_connect(fd, sa, len);

	rs_wait_fd_connect(fd);
	rs_httpconn_connecting(fd, rs_fd_get(fd));
	return LIBC_RET(r);
}

/* A new descriptor may reuse the number of one closed behind our back. */
static int fresh(int fd)
{
	if (fd >= 0 && !vfork_child()) {
		rs_born_forget(fd);
		rs_fd_forget(fd);
		rs_wait_fd_reused(fd);
		rs_httpconn_forget(fd);
	}
	return fd;
}

/* An accepted connection: followed only for inbound deadlines (SPEC 10). */
static int accepted(int fd)
{
	if (fresh(fd) >= 0 && !rs_guard_active())
		rs_httpconn_accepted(fd);
	return fd;
}

RS_HOT EXPORT int socket(int domain, int type, int protocol)
{
	int fd = fresh(rs_realfast_socket(domain, type, protocol));

	if (fd >= 0 && !vfork_child())
		rs_born_note(fd, domain, type);
	return fd;
}

EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	int r = rs_real_socketpair(domain, type, protocol, sv);

	if (r == 0) {
		fresh(sv[0]);
		fresh(sv[1]);
	}
	return r;
}

EXPORT int accept(int fd, struct sockaddr *sa, socklen_t *len)
{
	return accepted(rs_real_accept(fd, sa, len));
}

EXPORT int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	return accepted(rs_real_accept4(fd, sa, len, flags));
}

RS_HOT EXPORT int close(int fd)
{
	if (vfork_child())
		return rs_real_close(fd);
	/* What the program was told it sent goes before the end. */
	rs_hold_fd(fd);
	/* Also for unmanaged fds: they may be epoll fds or recorded sockets. */
	rs_wait_fd_closed(fd);
	rs_born_forget(fd);
	rs_fd_forget(fd);
	rs_httpconn_forget(fd);
	return rs_realfast_close(fd);
}

EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (vfork_child())
		return rs_real_close_range(first, last, flags);
	if (!(flags & CLOSE_RANGE_CLOEXEC) && rs_holdcount_any())
		rs_hold_release_range(first, last);
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		rs_wait_fd_range_closed(first, last);
	int r = rs_real_close_range(first, last, flags);

	/* CLOSE_RANGE_CLOEXEC only marks them; they stay open. */
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) {
		rs_born_forget_range(first, last);
		rs_fd_forget_range(first, last);
		rs_httpconn_forget_range(first, last);
	}
	return r;
}

/*
 * After a successful dup, the copy is managed like the original.  Copies
 * share the socket and its options, so the kernel gets the program's own
 * timeouts back (ktimeo.h); shared sockets take the exact path.
 */
static int copied(int from, int to)
{
	struct rs_fd *e;

	if (to < 0)
		return to;
	/* A vfork child's copy is of a socket the parent shares: its
	   timeouts go back too, if from still names the entry's socket. */
	if (vfork_child()) {
		if ((e = rs_fd_get(from)) && rs_fd_same_socket(e, from))
			rs_ktimeo_release(e, from);
		return to;
	}
	/* Either copy may change the flags or options of both. */
	rs_born_forget(from);
	rs_born_forget(to);
	if ((e = rs_fd_get(from)))
		rs_ktimeo_release(e, from);
	rs_fd_copy(from, to);
	rs_httpconn_forget(to);
	return to;
}

EXPORT int dup(int fd)
{
	return copied(fd, rs_real_dup(fd));
}

/* dup2 and dup3 close fd2 first when it is open. */
EXPORT int dup2(int fd, int fd2)
{
	if (fd != fd2 && !vfork_child()) {
		rs_hold_fd(fd2);
		rs_wait_fd_closed(fd2);
	}
	return copied(fd, rs_real_dup2(fd, fd2));
}

EXPORT int dup3(int fd, int fd2, int flags)
{
	if (fd != fd2 && !vfork_child()) {
		rs_hold_fd(fd2);
		rs_wait_fd_closed(fd2);
	}
	return copied(fd, rs_real_dup3(fd, fd2, flags));
}

/* A shutdown of the sending side: what was held goes before it. */
EXPORT int shutdown(int fd, int how)
{
	if (how != SHUT_RD && !vfork_child())
		rs_hold_fd(fd);
	return rs_real_shutdown(fd, how);
}

/* Keeps the copy of O_NONBLOCK that the io engine reads. */
static void note_flags(int fd, int cmd, uintptr_t arg)
{
	struct rs_fd *e = rs_fd_get(fd);

	if (cmd == F_SETFL && (arg & O_NONBLOCK))
		rs_born_forget(fd);
	if (e && cmd == F_SETFL)
		e->nonblocking = (arg & O_NONBLOCK) != 0;
}

static int after_fcntl(int fd, int cmd, uintptr_t arg, int r)
{
	if (r < 0)
		return r;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return copied(fd, r);
	note_flags(fd, cmd, arg);
	return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;

	va_start(ap, cmd);
	uintptr_t arg = va_arg(ap, uintptr_t);
	va_end(ap);
	return after_fcntl(fd, cmd, arg, rs_real_fcntl(fd, cmd, arg));
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;

	va_start(ap, cmd);
	uintptr_t arg = va_arg(ap, uintptr_t);
	va_end(ap);
	return after_fcntl(fd, cmd, arg, rs_real_fcntl64(fd, cmd, arg));
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;

	va_start(ap, req);
	uintptr_t arg = va_arg(ap, uintptr_t);
	va_end(ap);
	int r = rs_real_ioctl(fd, req, arg);
	struct rs_fd *e;

	if (r == 0 && req == FIONBIO && arg)
		rs_born_forget(fd);
	if (r == 0 && req == FIONBIO && arg && (e = rs_fd_get(fd)))
		e->nonblocking = *(const int *)arg != 0;
	return r;
}

/* Which direction a socket timeout option is, or -1 for another option. */
static int timeo_dir(int level, int name)
{
	if (level != SOL_SOCKET)
		return -1;
	if (name == SO_RCVTIMEO || name == SO_SNDTIMEO)
		return name == SO_SNDTIMEO;
#if defined(SO_RCVTIMEO_NEW) && SO_RCVTIMEO_NEW != SO_RCVTIMEO
	if (name == SO_RCVTIMEO_NEW || name == SO_SNDTIMEO_NEW)
		return (name == SO_SNDTIMEO_NEW) + 2;
#endif
	return -1;
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct rs_fd *e = managed(fd);
	int err, dir = timeo_dir(level, name);
	struct timeval tv;

	/*
	 * SO_ERROR: the connect engine's answer while it is in charge; then
	 * a socket error the HTTP engine's look took from the kernel, once,
	 * when SO_ERROR comes before a read or write (httpio.h).
	 */
	if (e && level == SOL_SOCKET && name == SO_ERROR && val && len &&
	    *len >= sizeof(int) && ((err = rs_connect_so_error(fd, e)) >= 0 ||
		(err = -rs_hio_take_error(e)) != 0)) {
		*(int *)val = err;
		*len = sizeof(int);
		return 0;
	}
	/* The program sees its own timeouts, never the library's. */
	if (e && (dir == 0 || dir == 1) && val && len && *len >= sizeof(tv) &&
	    rs_ktimeo_own(e, dir, &tv)) {
		memcpy(val, &tv, sizeof(tv));
		*len = sizeof(tv);
		return 0;
	}
	return rs_real_getsockopt(fd, level, name, val, len);
}

/*
 * The program's own SO_RCVTIMEO and SO_SNDTIMEO are kept by the io engine
 * (ktimeo.h): the kernel holds them again once set, until the engine
 * merges its own in.  A 64-bit variant is read back from the kernel.
 */
RS_HOT EXPORT int setsockopt(int fd, int level, int name, const void *val,
    socklen_t len)
{
	int r = rs_realfast_setsockopt(fd, level, name, val, len);
	int dir = timeo_dir(level, name);
	struct rs_fd *e;

	if (r == 0 && dir >= 0 && (dir & 1))
		rs_born_forget(fd);
	else if (r == 0 && dir >= 0)
		rs_born_rcvtimeo_set(fd);
	if (r == 0 && dir >= 0 && (e = rs_fd_get(fd)))
		rs_ktimeo_set_by_program(e, dir & 1, dir < 2 &&
		    len >= sizeof(struct timeval) ? val : NULL);
	return r;
}

/* ---- waits ---- */

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	if (rs_guard_active())
		return rs_real_poll(fds, n, timeout_ms);
	if (rs_holdcount_any())
		rs_hold_polled(fds, n);
	return LIBC_RET(rs_wait_poll(fds, n, timeout_ms));
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms,
    size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return poll(fds, n, timeout_ms);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask)
{
	if (rs_guard_active())
		return rs_real_ppoll(fds, n, tmo, mask);
	if (rs_holdcount_any())
		rs_hold_polled(fds, n);
	return LIBC_RET(rs_wait_ppoll(fds, n, tmo, mask));
}

EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n,
    const struct timespec *tmo, const sigset_t *mask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return ppoll(fds, n, tmo, mask);
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *tmo)
{
	if (rs_guard_active())
		return rs_real_select(n, r, w, x, tmo);
	if (rs_holdcount_any())
		rs_hold_selected(n, r);
	return LIBC_RET(rs_wait_select(n, r, w, x, tmo));
}

EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *x,
    const struct timespec *tmo, const sigset_t *mask)
{
	if (rs_guard_active())
		return rs_real_pselect(n, r, w, x, tmo, mask);
	if (rs_holdcount_any())
		rs_hold_selected(n, r);
	return LIBC_RET(rs_wait_pselect(n, r, w, x, tmo, mask));
}

EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (rs_guard_active())
		return rs_real_epoll_ctl(epfd, op, fd, ev);
	return rs_ept_epoll_ctl(epfd, op, fd, ev);
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int tmo)
{
	if (rs_guard_active())
		return rs_real_epoll_wait(epfd, ev, max, tmo);
	rs_hold_mine();
	return LIBC_RET(rs_wait_epoll_wait(epfd, ev, max, tmo));
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int tmo,
    const sigset_t *mask)
{
	if (rs_guard_active())
		return rs_real_epoll_pwait(epfd, ev, max, tmo, mask);
	rs_hold_mine();
	return LIBC_RET(rs_wait_epoll_pwait(epfd, ev, max, tmo, mask));
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask)
{
	if (rs_guard_active())
		return rs_real_epoll_pwait2(epfd, ev, max, tmo, mask);
	rs_hold_mine();
	return LIBC_RET(rs_wait_epoll_pwait2(epfd, ev, max, tmo, mask));
}

/* ---- name resolution: learned from, retried when transient ---- */

EXPORT int getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res)
{
	return rs_resolve_getaddrinfo(node, service, hints, res);
}

EXPORT struct hostent *gethostbyname(const char *name)
{
	return rs_resolve_gethostbyname(name);
}

EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	return rs_resolve_gethostbyname2(name, af);
}

EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf,
    size_t len, struct hostent **result, int *h_errnop)
{
	return rs_resolve_gethostbyname_r(name, ret, buf, len, result,
	    h_errnop);
}

EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret,
    char *buf, size_t len, struct hostent **result, int *h_errnop)
{
	return rs_resolve_gethostbyname2_r(name, af, ret, buf, len, result,
	    h_errnop);
}
