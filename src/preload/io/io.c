/* SPDX-License-Identifier: MIT */
/*
 * io.c - read and write timeouts on connected managed sockets (SPEC §6).
 *
 * A blocking call on a socket with a timeout that starts right after the
 * socket's last activity is the plain blocking call under the kernel's
 * timer (ktimeo.h).  Any other first tries the transfer with
 * MSG_DONTWAIT; only when the kernel says EAGAIN does it poll, until
 * read_timeout (write_timeout) after the last activity or the process
 * deadline, and try again.  So data and end of file are never delayed and
 * a call that would not block costs no extra system call.  Everything else
 * (non-blocking sockets, no timeout and no deadline) is the real call.
 *
 * This file decides the path of each call and makes the first try; the
 * waits and retries of the slow path are io_block.c, the timeouts'
 * bookkeeping io_timeout.c.  Thread-safe: nothing here takes a lock.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/time.h>

#include "clock.h"
#include "connect_wait.h"
#include "hot.h"
#include "io_block.h"
#include "io_timeout.h"
#include "ktimeo.h"
#include "learn_io.h"
#include "realfast.h"

/* The real call of a PATH_REAL or PATH_REAL_RECORDING call. */
#define REAL_CALL(path, e, call) \
	((path) == PATH_REAL_RECORDING ? \
	    rs_io_touched((e), RS_NEG_ERRNO(call)) : RS_NEG_ERRNO(call))
/* The same for a read, whose bytes end a wait (learn_io.h). */
#define REAL_CALL_IN(path, e, call) \
	((path) == PATH_REAL_RECORDING ? \
	    rs_io_touched_in((e), RS_NEG_ERRNO(call)) : RS_NEG_ERRNO(call))

/* How a call runs, decided by choose_path(). */
enum io_path {
	PATH_REAL,		/* the real call, nothing else */
	PATH_REAL_RECORDING,	/* the real call, then record the activity */
	PATH_TIMED_BLOCKING,	/* blocking, with a timeout or deadline */
};

/*
 * Decides path a call in direction out with these flags runs, or fails it
 * at once: a pending timeout, or a connect still under way on a socket
 * that must not block.  The common cases come first and cost a few loads.
 */
static inline __attribute__((always_inline)) int choose_path(
    struct rs_fd *e, int fd, bool out, int flags)
{
	const struct rs_settings *s = e->settings;

	/* A read that carries no byte of the stream (ktimeo.h) neither waits
	   nor takes a pending timeout.  The urgent byte is a byte received,
	   so recorded as activity; the error queue is not. */
	if (!out && (flags & RS_IO_OUT_OF_STREAM))
		return (flags & MSG_OOB) && rs_io_timed(e) ?
		    PATH_REAL_RECORDING : PATH_REAL;
	if (rs_io_take_pending(e, out))
		return -ETIMEDOUT;
	enum rs_fd_state st = rs_fd_state(e);

	if (st != RS_FD_CONNECTED) {
		/* A failed connect's error goes to the first read or write,
		   as the kernel's does, unless SO_ERROR took it. */
		if (st != RS_FD_CONNECTING && st != RS_FD_BACKOFF &&
		    st != RS_FD_FAILED)
			return PATH_REAL;
		int r = rs_connect_settle(fd, e,
		    !e->nonblocking && !(flags & MSG_DONTWAIT));

		if (r != 0)
			return r < 0 ? r : PATH_REAL;
	}
	/*
	 * A dup'd socket's O_NONBLOCK may have been cleared through a copy:
	 * such a call takes the timeout path, whose first try does not block
	 * and which reads the flag again before it waits.
	 */
	if ((flags & MSG_DONTWAIT) || (e->nonblocking && !e->shared))
		return rs_io_timed(e) ? PATH_REAL_RECORDING : PATH_REAL;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms;

	if (t == RS_OFF && rs_io_process_deadline() == RS_NEVER)
		return rs_io_timed(e) ? PATH_REAL_RECORDING : PATH_REAL;
	return PATH_TIMED_BLOCKING;
}

/* A first try that settles the call needs no slow path. */
static inline bool first_try_settles(ssize_t r, size_t n, int flags)
{
	if (r < 0)
		return r != -EAGAIN;
	return r == 0 || !(flags & MSG_WAITALL) || (size_t)r == n;
}

/*
 * Whether a readv or writev of cnt elements fails with EINVAL, as the
 * kernel's does: the long way makes it a recvmsg or sendmsg, whose header
 * of no elements would move nothing (and a read wait for it).
 */
static inline bool bad_count(int cnt)
{
	return cnt < 0 || cnt > IOV_MAX;
}

/*
 * The descriptor is not a socket any more: it was closed behind the
 * library's back (a raw system call) and its number reused.  Forget it.
 */
static inline bool no_longer_socket(int fd, ssize_t r)
{
	if (r != -ENOTSOCK)
		return false;
	rs_fd_forget(fd);
	return true;
}

/*
 * A blocking call's first try: whether the kernel times it, and the
 * entry's generation before it, which the slow path compares after each
 * wait (rs_fd_gen()).
 */
struct first_try {
	bool kt;
	uint32_t gen;
};

/*
 * The flags of a blocking call's first try: the program's own when the
 * kernel can time the wait (ktimeo.h: the steady state, no extra system
 * call), else with MSG_DONTWAIT, the slow path following if it would
 * block.  *kt says which.
 */
static inline int first_flags(struct rs_fd *e, int fd, bool out, int flags,
    struct first_try *t)
{
	t->gen = rs_fd_gen(e);
	t->kt = rs_ktimeo_arm(e, fd, out, flags);
	return t->kt ? flags : flags | MSG_DONTWAIT;
}

/*
 * After a kernel-timed first try that failed with *r: returns true when
 * *r is final (the program's own timeout, or a signal it does not restart
 * after, or -EBADF: another thread closed the descriptor while the kernel
 * waited, and the entry may be another connection's now, so its settings
 * cannot say whose timer fired); else *r becomes -EAGAIN and the slow
 * path waits out the rest.
 */
static inline bool kernel_timed_final(struct rs_fd *e, bool out,
    const struct first_try *t, ssize_t *r)
{
	if (!t->kt || (*r != -EAGAIN && *r != -EINTR))
		return false;
	if (rs_fd_closed_since(e, t->gen)) {
		*r = -EBADF;
		return true;
	}
	if (rs_ktimeo_after(e, out, (int)*r) < 0)
		return true;
	*r = -EAGAIN;
	return false;
}

/*
 * What follows the first try of a blocking read (recv: as_plain false)
 * into buf with flags that returned r: the kernel's timer or a failure
 * settled it, the descriptor is no longer a socket (a read only: what
 * replaced it is read plainly), or the slow path waits for the rest.
 */
static ssize_t read_after(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, const struct first_try *ft, ssize_t r, bool as_plain)
{
	if (kernel_timed_final(e, false, ft, &r))
		return r;
	if (as_plain && no_longer_socket(fd, r))
		return RS_NEG_ERRNO(rs_realfast_read(fd, buf, n));
	if (first_try_settles(r, n, flags))
		return rs_io_touched_in(e, r);
	struct iovec v = { buf, n };

	return rs_io_read_rest(e, fd, &v, 1, flags, NULL, r, ft->gen);
}

ssize_t rs_io_read_after(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, ssize_t r, uint32_t gen, bool as_plain)
{
	const struct first_try ft = { true, gen };

	return read_after(e, fd, buf, n, flags, &ft, r, as_plain);
}

RS_HOT ssize_t rs_io_read(struct rs_fd *e, int fd, void *buf, size_t n)
{
	if (rs_ktimeo_steady(e, 0))
		return rs_io_read_steady(e, fd, buf, n, 0, true);
	int path = choose_path(e, fd, false, 0);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL_IN(path, e, rs_realfast_read(fd, buf, n));
	/* On a connected stream socket, read is recv with no flags. */
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_recv(fd, buf, n,
	    first_flags(e, fd, false, 0, &ft)));

	return read_after(e, fd, buf, n, 0, &ft, r, true);
}

/*
 * What follows the first try of a blocking readv (msg NULL) or recvmsg
 * into iov[0..cnt) that returned r: as read_after(), the name, flags and
 * control lengths of msg set by the slow path as the kernel sets them.
 */
static ssize_t readmsg_after(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, const struct first_try *ft,
    ssize_t r)
{
	if (kernel_timed_final(e, false, ft, &r))
		return r;
	if (first_try_settles(r, flags & MSG_WAITALL ?
		rs_io_iov_total(iov, cnt) : 0, flags))
		return rs_io_touched_in(e, r);
	return rs_io_read_rest(e, fd, iov, cnt, flags, msg, r, ft->gen);
}

ssize_t rs_io_readmsg_after(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r, uint32_t gen)
{
	const struct first_try ft = { true, gen };

	return readmsg_after(e, fd, iov, cnt, flags, msg, &ft, r);
}

RS_HOT ssize_t rs_io_readv(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	int path = choose_path(e, fd, false, 0);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL_IN(path, e, rs_realfast_readv(fd, iov, cnt));
	if (bad_count(cnt))
		return -EINVAL;
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
		.msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_recvmsg(fd, &m,
	    first_flags(e, fd, false, 0, &ft)));

	if (no_longer_socket(fd, r))
		return RS_NEG_ERRNO(rs_realfast_readv(fd, iov, cnt));
	return readmsg_after(e, fd, iov, cnt, 0, NULL, &ft, r);
}

RS_HOT ssize_t rs_io_recv(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags)
{
	if (rs_ktimeo_steady(e, flags))
		return rs_io_read_steady(e, fd, buf, n, flags, false);
	int path = choose_path(e, fd, false, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL_IN(path, e, rs_realfast_recv(fd, buf, n, flags));
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_recv(fd, buf, n,
	    first_flags(e, fd, false, flags, &ft)));

	return read_after(e, fd, buf, n, flags, &ft, r, false);
}

RS_HOT ssize_t rs_io_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len)
{
	int path = choose_path(e, fd, false, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL_IN(path, e,
		    rs_realfast_recvfrom(fd, buf, n, flags, sa, len));
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_recvfrom(fd, buf, n,
	    first_flags(e, fd, false, flags, &ft), sa, len));

	if (kernel_timed_final(e, false, &ft, &r))
		return r;

	if (first_try_settles(r, n, flags))
		return rs_io_touched_in(e, r);
	struct iovec v = { buf, n };
	struct msghdr m = { .msg_name = sa, .msg_namelen = len ? *len : 0 };

	r = rs_io_read_rest(e, fd, &v, 1, flags, sa && len ? &m : NULL, r, ft.gen);
	if (r >= 0 && sa && len)
		*len = m.msg_namelen;
	return r;
}

RS_HOT ssize_t rs_io_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg,
    int flags)
{
	int path = choose_path(e, fd, false, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL_IN(path, e, rs_realfast_recvmsg(fd, msg, flags));
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_recvmsg(fd, msg,
	    first_flags(e, fd, false, flags, &ft)));

	return readmsg_after(e, fd, msg->msg_iov, (int)msg->msg_iovlen, flags,
	    msg, &ft, r);
}

int rs_io_recvmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags, struct timespec *tmo)
{
	int path = choose_path(e, fd, false, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return (int)REAL_CALL(path, e,
		    rs_real_recvmmsg(fd, v, n, flags, tmo));
	if (tmo)
		return (int)rs_io_touched(e,
		    RS_NEG_ERRNO(rs_real_recvmmsg(fd, v, n, flags, tmo)));
	uint32_t gen = rs_fd_gen(e);
	int r = RS_NEG_ERRNO(rs_real_recvmmsg(fd, v, n, flags | MSG_DONTWAIT,
	    NULL));
	return rs_io_mmsg_rest(e, fd, false, v, n, flags, r, gen);
}

/*
 * What follows the first try of a blocking write (send: as_plain false)
 * of buf with flags that returned r: done, failed, the descriptor no
 * longer a socket (a write only: what replaced it is written plainly), or
 * the slow path sends the rest.
 */
static ssize_t write_after(struct rs_fd *e, int fd, const void *buf,
    size_t n, int flags, const struct first_try *ft, ssize_t r,
    bool as_plain)
{
	if (kernel_timed_final(e, true, ft, &r))
		return r;
	if (as_plain && no_longer_socket(fd, r))
		return RS_NEG_ERRNO(rs_realfast_write(fd, buf, n));
	if (r >= 0 && (size_t)r == n)
		return rs_io_touched(e, r);
	struct iovec v = { (void *)buf, n };

	return r < 0 && r != -EAGAIN ? r :
	    rs_io_write_rest(e, fd, &v, 1, flags, NULL, r, ft->gen);
}

ssize_t rs_io_write_after(struct rs_fd *e, int fd, const void *buf,
    size_t n, int flags, ssize_t r, uint32_t gen, bool as_plain)
{
	const struct first_try ft = { false, gen };

	return write_after(e, fd, buf, n, flags, &ft, r, as_plain);
}

RS_HOT ssize_t rs_io_write(struct rs_fd *e, int fd, const void *buf, size_t n)
{
	if (rs_io_steady_out(e, 0))
		return rs_io_write_steady(e, fd, buf, n, 0, true);
	int path = choose_path(e, fd, true, 0);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL(path, e, rs_realfast_write(fd, buf, n));
	/*
	 * send without MSG_NOSIGNAL is write on a connected stream socket,
	 * SIGPIPE included.
	 */
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_send(fd, buf, n,
	    first_flags(e, fd, true, 0, &ft)));

	return write_after(e, fd, buf, n, 0, &ft, r, true);
}

/*
 * What follows the first, non-blocking try of a blocking writev (msg
 * NULL, as_plain true: a descriptor no longer a socket is written
 * plainly) or sendmsg of iov[0..cnt) that returned r.
 */
ssize_t rs_io_writemsg_after(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, const struct msghdr *msg, ssize_t r, uint32_t gen,
    bool as_plain)
{
	if (as_plain && no_longer_socket(fd, r))
		return RS_NEG_ERRNO(rs_realfast_writev(fd, iov, cnt));
	if (r < 0 && r != -EAGAIN)
		return r;
	/* The header is only read on a send; the copy keeps it const. */
	struct msghdr m = msg ? *msg : (struct msghdr){ 0 };

	return rs_io_write_rest(e, fd, iov, cnt, flags, msg ? &m : NULL, r,
	    gen);
}

RS_HOT ssize_t rs_io_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	int path = choose_path(e, fd, true, 0);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL(path, e, rs_realfast_writev(fd, iov, cnt));
	if (bad_count(cnt))
		return -EINVAL;
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
		.msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_sendmsg(fd, &m,
	    first_flags(e, fd, true, 0, &ft)));

	if (kernel_timed_final(e, true, &ft, &r))
		return r;
	return rs_io_writemsg_after(e, fd, iov, cnt, 0, NULL, r, ft.gen, true);
}

RS_HOT ssize_t rs_io_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags)
{
	if (rs_io_steady_out(e, flags))
		return rs_io_write_steady(e, fd, buf, n, flags, false);
	int path = choose_path(e, fd, true, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL(path, e, rs_realfast_send(fd, buf, n, flags));
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_send(fd, buf, n,
	    first_flags(e, fd, true, flags, &ft)));

	return write_after(e, fd, buf, n, flags, &ft, r, false);
}

RS_HOT ssize_t rs_io_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len)
{
	int path = choose_path(e, fd, true, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL(path, e,
		    rs_realfast_sendto(fd, buf, n, flags, sa, len));
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_sendto(fd, buf, n,
	    first_flags(e, fd, true, flags, &ft), sa, len));

	if (kernel_timed_final(e, true, &ft, &r))
		return r;

	if (r >= 0 && (size_t)r == n)
		return rs_io_touched(e, r);
	struct iovec v = { (void *)buf, n };
	struct msghdr m = { .msg_name = (void *)sa, .msg_namelen = len };

	return r < 0 && r != -EAGAIN ? r :
	    rs_io_write_rest(e, fd, &v, 1, flags, sa ? &m : NULL, r, ft.gen);
}

RS_HOT ssize_t rs_io_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags)
{
	int path = choose_path(e, fd, true, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return REAL_CALL(path, e, rs_realfast_sendmsg(fd, msg, flags));
	struct first_try ft = { false, 0 };
	ssize_t r = RS_NEG_ERRNO(rs_realfast_sendmsg(fd, msg,
	    first_flags(e, fd, true, flags, &ft)));

	if (kernel_timed_final(e, true, &ft, &r))
		return r;
	return rs_io_writemsg_after(e, fd, msg->msg_iov, (int)msg->msg_iovlen,
	    flags, msg, r, ft.gen, false);
}

int rs_io_sendmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags)
{
	int path = choose_path(e, fd, true, flags);

	if (path < 0)
		return path;
	if (path != PATH_TIMED_BLOCKING)
		return (int)REAL_CALL(path, e,
		    rs_real_sendmmsg(fd, v, n, flags));
	uint32_t gen = rs_fd_gen(e);
	int r = RS_NEG_ERRNO(rs_real_sendmmsg(fd, v, n, flags | MSG_DONTWAIT));
	return rs_io_mmsg_rest(e, fd, true, v, n, flags, r, gen);
}
