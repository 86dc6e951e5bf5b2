/*
 * interpose_io.c - the exported reads and writes.
 *
 * Each exported name first asks plain(): a descriptor the library does not
 * manage, or a managed socket with nothing to time, record or track, goes
 * straight to libc through realfast.h, a few loads and a jump, no call
 * into the engines and no clock read.  Anything else takes the middle
 * half (*_engine): a socket that is the io engine's alone (io.h) goes to
 * it directly; the rest takes the slow half (*_slow), which guards and
 * delegates to the HTTP engines (httpio.h, httphook.h) or the io engine.
 * Thread-safe: nothing here takes a lock.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fdtable.h"
#include "guard.h"
#include "httphook.h"
#include "httpio.h"
#include "interpose.h"
#include "io.h"
#include "io_block.h"
#include "realfast.h"

/* The fortified reads, which _FORTIFY_SOURCE builds call. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
    struct sockaddr *sa, socklen_t *len);

/*
 * The slow halves stay out of line, so that the fast half needs no stack
 * frame and ends in a jump to libc.
 */
#define SLOW static __attribute__((noinline))

/* The exported names and middle halves sit together (io.c says why). */
#define HOT __attribute__((hot))

/*
 * The engine of a managed call: the HTTP retry engine's when it may have
 * something to do (httpio.h), else the io engine's directly.
 */
#define HIO(name, e, ...) \
	(rs_hio_wanted(e) ? rs_hio_##name(e, __VA_ARGS__) : \
	    rs_io_##name(e, __VA_ARGS__))

/*
 * Whether a transfer on fd, whose entry is e (NULL: unmanaged), is the
 * real call and nothing else: the library does not manage fd or has
 * nothing to do on it (rs_io_plain), and no HTTP tracker follows it
 * (rs_httpconn_get, one load while no policy asks for tracking).  The
 * guard needs no test: under it, calls are real anyway.
 */
static inline __attribute__((always_inline)) bool plain(
    const struct rs_fd *e, int fd)
{
	return __builtin_expect((e == NULL || rs_io_plain(e)) &&
	    rs_httpconn_get(fd) == NULL, 1);
}

/*
 * Whether a transfer on fd, whose entry is e, is the io engine's alone:
 * managed, outside the library, and neither HTTP engine has anything to
 * do with it.  The steady state of a socket with read or write timeouts.
 */
static inline __attribute__((always_inline)) bool engine_only(
    struct rs_fd *e, int fd)
{
	return e != NULL && !rs_guard_active() && !rs_hio_wanted(e) &&
	    rs_httpconn_get(fd) == NULL;
}

/*
 * The libc convention for what a steady call's io.h half returned when
 * the first try did not end the call: r from rs_io_*_after() (-errno on
 * failure); save, the program's errno before the call, is put back on
 * success, as LIBC_RET does.  The steady success needs none of this: a
 * system call and a clock read that succeed leave errno alone.
 */
static ssize_t libc_after(ssize_t r, int save)
{
	int *errp = rs_errno();

	if (r < 0) {
		*errp = (int)-r;
		return -1;
	}
	*errp = save;
	return r;
}

/*
 * engine_only() for a steady call (io.h) on the managed socket e, and
 * what the steady state asks beyond the entry, in a few loads: the HTTP
 * retry engine asked more strictly (no tracking started, none enabled: a
 * dup's http_off is not asked, its calls take the long way), and none of
 * the process's rare features on (runtime.h), so that no deadline can
 * bind the thread and no descriptor is HTTP-tracked.
 */
static inline __attribute__((always_inline)) bool steady_only(
    const struct rs_fd *e)
{
	return e->http == NULL && !e->settings->http.enabled &&
	    !rs_guard_active() && rs_runtime_rare_get() == 0;
}

/*
 * plain() for recvmmsg and sendmmsg, which no HTTP tracker follows (a
 * connection that uses them passes through: httpio.h), so the tracker
 * need not be asked.
 */
static inline __attribute__((always_inline)) bool mmsg_plain(
    const struct rs_fd *e)
{
	return __builtin_expect(e == NULL || rs_io_plain(e), 1);
}

/* ---- the slow halves ---- */

SLOW ssize_t read_slow(struct rs_fd *e, int fd, void *buf, size_t n)
{
	e = acting(e);

	return rs_hook_read(fd, buf, n, 0, e ? LIBC_RET(HIO(read, e, fd, buf,
	    n)) : rs_real_read(fd, buf, n));
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen)
		__chk_fail();
	return read(fd, buf, n);
}

SLOW ssize_t readv_slow(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	e = acting(e);

	return rs_hook_readv(fd, iov, cnt, rs_io_iov_total(iov, cnt), 0, e ?
	    LIBC_RET(HIO(readv, e, fd, iov, cnt)) : rs_real_readv(fd, iov,
	    cnt));
}

SLOW ssize_t recv_slow(struct rs_fd *e, int fd, void *buf, size_t n, int flags)
{
	e = acting(e);

	return rs_hook_read(fd, buf, n, flags, e ? LIBC_RET(HIO(recv, e, fd,
	    buf, n, flags)) : rs_real_recv(fd, buf, n, flags));
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	if (n > buflen)
		__chk_fail();
	return recv(fd, buf, n, flags);
}

SLOW ssize_t recvfrom_slow(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len)
{
	e = acting(e);

	return rs_hook_read(fd, buf, n, flags, e ? LIBC_RET(HIO(recvfrom, e,
	    fd, buf, n, flags, sa, len)) : rs_real_recvfrom(fd, buf, n, flags,
	    sa, len));
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen,
    int flags, struct sockaddr *sa, socklen_t *len)
{
	if (n > buflen)
		__chk_fail();
	return recvfrom(fd, buf, n, flags, sa, len);
}

SLOW ssize_t recvmsg_slow(struct rs_fd *e, int fd, struct msghdr *msg,
    int flags)
{
	e = acting(e);

	ssize_t r = e ? LIBC_RET(HIO(recvmsg, e, fd, msg, flags)) :
	    rs_real_recvmsg(fd, msg, flags);

	return rs_hook_readv(fd, msg->msg_iov, (int)msg->msg_iovlen,
	    rs_io_iov_total(msg->msg_iov, (int)msg->msg_iovlen), flags, r);
}

SLOW int recvmmsg_slow(struct rs_fd *e, int fd, struct mmsghdr *v,
    unsigned n, int flags, struct timespec *tmo)
{
	e = acting(e);
	/* A socket error the HTTP engine holds goes to this call, once. */
	int err = e ? rs_hio_take_error(e) : 0;

	if (err != 0)
		return LIBC_RET(err);
	if (e && rs_hio_wanted(e))
		rs_hio_untracked(e);
	return e ? LIBC_RET(rs_io_recvmmsg(e, fd, v, n, flags, tmo)) :
	    rs_real_recvmmsg(fd, v, n, flags, tmo);
}

EXPORT HOT int recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags,
    struct timespec *tmo)
{
	struct rs_fd *e = rs_fd_get(fd);

	if (mmsg_plain(e))
		return rs_realfast_recvmmsg(fd, v, n, flags, tmo);
	return recvmmsg_slow(e, fd, v, n, flags, tmo);
}

SLOW ssize_t write_slow(struct rs_fd *e, int fd, const void *buf, size_t n)
{
	e = acting(e);
	struct rs_httpconn *c = rs_hook_http(fd);

	if (c)
		return LIBC_RET(rs_hook_send(c, e, fd, buf, n, 0, NULL, 0));

	return e ? LIBC_RET(HIO(write, e, fd, buf, n)) :
	    rs_real_write(fd, buf, n);
}

SLOW ssize_t writev_slow(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	e = acting(e);
	struct rs_httpconn *c = cnt > 0 ? rs_hook_http(fd) : NULL;
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
		.msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };

	if (c)
		return LIBC_RET(rs_httpconn_send(c, e, fd, &m, 0));

	return e ? LIBC_RET(HIO(writev, e, fd, iov, cnt)) :
	    rs_real_writev(fd, iov, cnt);
}

SLOW ssize_t send_slow(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags)
{
	e = acting(e);
	struct rs_httpconn *c = rs_hook_http(fd);

	if (c)
		return LIBC_RET(rs_hook_send(c, e, fd, buf, n, flags, NULL, 0));

	return e ? LIBC_RET(HIO(send, e, fd, buf, n, flags)) :
	    rs_real_send(fd, buf, n, flags);
}

SLOW ssize_t sendto_slow(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len)
{
	e = acting(e);
	struct rs_httpconn *c = rs_hook_http(fd);

	if (c)
		return LIBC_RET(rs_hook_send(c, e, fd, buf, n, flags, sa, len));

	return e ? LIBC_RET(HIO(sendto, e, fd, buf, n, flags, sa, len)) :
	    rs_real_sendto(fd, buf, n, flags, sa, len);
}

SLOW ssize_t sendmsg_slow(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags)
{
	e = acting(e);
	struct rs_httpconn *c = rs_hook_http(fd);

	if (c)
		return LIBC_RET(rs_httpconn_send(c, e, fd, msg, flags));

	return e ? LIBC_RET(HIO(sendmsg, e, fd, msg, flags)) :
	    rs_real_sendmsg(fd, msg, flags);
}

SLOW int sendmmsg_slow(struct rs_fd *e, int fd, struct mmsghdr *v,
    unsigned n, int flags)
{
	e = acting(e);
	/* A socket error the HTTP engine holds goes to this call, once. */
	int err = e ? rs_hio_take_error(e) : 0;

	if (err != 0)
		return LIBC_RET(err);
	if (e && rs_hio_wanted(e))
		rs_hio_untracked(e);
	return e ? LIBC_RET(rs_io_sendmmsg(e, fd, v, n, flags)) :
	    rs_real_sendmmsg(fd, v, n, flags);
}

EXPORT HOT int sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	struct rs_fd *e = rs_fd_get(fd);

	if (mmsg_plain(e))
		return rs_realfast_sendmmsg(fd, v, n, flags);
	return sendmmsg_slow(e, fd, v, n, flags);
}

/*
 * WRAP(name, params, args) defines the exported name and its middle half:
 * the exported one is the fast half (the real call when plain()), then
 * name_engine(): the io engine directly for a socket that is its alone,
 * else name_slow().  The middle half is apart so that the exported name
 * needs no stack frame.  The entry comes after the arguments, so that they
 * stay in their registers (the compiler would otherwise move them about
 * on every path, the real call's too).  WRAP6, for the names of six
 * arguments, passes no entry: a seventh argument would go on the stack,
 * so that the exported name could not jump to its middle half but would
 * call it, with a stack frame on every path; the middle half looks the
 * entry up again instead (a few loads, on the managed path only).
 */
#define WRAP(name, params, args)                                        \
	WRAP_ENGINE(name, params, args)                                 \
	EXPORT HOT ssize_t name params                                  \
	{                                                               \
		struct rs_fd *e = rs_fd_get(fd);                        \
									\
		if (plain(e, fd))                                       \
			return rs_realfast_##name args;                 \
		return name##_engine(RS_UNPAREN args, e);               \
	}
#define WRAP6(name, params, args)                                       \
	SLOW HOT ssize_t name##_engine params                           \
	{                                                               \
		struct rs_fd *e = rs_fd_get(fd);                        \
									\
		if (engine_only(e, fd))                                 \
			return LIBC_RET(rs_io_##name(e, RS_UNPAREN args)); \
		return name##_slow(e, RS_UNPAREN args);                 \
	}                                                               \
	EXPORT HOT ssize_t name params                                  \
	{                                                               \
		if (plain(rs_fd_get(fd), fd))                           \
			return rs_realfast_##name args;                 \
		return name##_engine args;                              \
	}

/*
 * WRAP_IN and WRAP_OUT do the same for the reads and writes that have a
 * steady state (io.h), for a socket that is the io engine's alone: a
 * steady blocking call (asked before plain(), which it never is) goes to
 * name_steady(), which asks the clock and makes the system call and the
 * stamp inline; one that cannot block and only records its activity
 * (asked after plain()) to name_recorded(); the rest goes on as above.
 * Both are apart too, as the compiler would set up their stack frame on
 * every path of the exported name.  A blocking read is recv with no
 * flags on a connected stream socket, a write send.
 */
#define WRAP_IN(name, params, args, flags, as_plain)                    \
	WRAP_STEADY(name, params, args, flags, as_plain, read, r > 0,   \
	    !rs_ktimeo_steady_now(e), rs_ktimeo_steady_entry(e, flags), false)
#define WRAP_OUT(name, params, args, flags, as_plain)                   \
	WRAP_STEADY(name, params, args, flags, as_plain, write,         \
	    r >= 0 && (size_t)r == n, false,                            \
	    rs_io_steady_out_entry(e, flags), true)
/*
 * The halves of both: dir is read or write (io.h's rs_io_<dir>_first and
 * _after), done says the first try ended the call, late that a read
 * starts too long after the last activity for the kernel to time it (it
 * goes the long way), entry the steady test of the entry.
 */
#define WRAP_STEADY(name, params, args, flags, as_plain, dir, done, late, \
    entry, out)                                                         \
	WRAP_ENGINE(name, params, args)                                 \
	WRAP_RECORDED(name, params, args)                               \
	SLOW HOT ssize_t name##_steady(RS_UNPAREN params,              \
	    struct rs_fd *e)                                            \
	{                                                               \
		uint32_t gen;                                           \
									\
		if (late)                                               \
			return LIBC_RET(rs_io_##name(e, RS_UNPAREN args)); \
		int save = *rs_errno();                                 \
		ssize_t r = rs_io_##dir##_first(e, fd, buf, n, flags, &gen); \
									\
		if (__builtin_expect(done, 1))                          \
			return r;                                       \
		return libc_after(rs_io_##dir##_after(e, fd, buf, n, flags, \
		    r < 0 ? -*rs_errno() : r, gen, as_plain), save);    \
	}                                                               \
	WRAP_EXPORT(name, params, args, entry, out)
#define WRAP_ENGINE(name, params, args)                                 \
	SLOW HOT ssize_t name##_engine(RS_UNPAREN params,              \
	    struct rs_fd *e)                                            \
	{                                                               \
		if (engine_only(e, fd))                                 \
			return LIBC_RET(rs_io_##name(e, RS_UNPAREN args)); \
		return name##_slow(e, RS_UNPAREN args);                 \
	}
/* The program's own call, which succeeds or fails as it would bare. */
#define WRAP_RECORDED(name, params, args)                               \
	SLOW HOT ssize_t name##_recorded(RS_UNPAREN params,            \
	    struct rs_fd *e)                                            \
	{                                                               \
		return rs_io_touched(e, rs_realfast_##name args);       \
	}
#define WRAP_EXPORT(name, params, args, steady, out)                    \
	EXPORT HOT ssize_t name params                                  \
	{                                                               \
		struct rs_fd *e = rs_fd_get(fd);                        \
									\
		if (e && (steady) && steady_only(e))                    \
			return name##_steady(RS_UNPAREN args, e);       \
		if (plain(e, fd))                                       \
			return rs_realfast_##name args;                 \
		if (e && rs_io_recording_entry(e, out, FLAGS_##name) && \
		    steady_only(e))                                     \
			return name##_recorded(RS_UNPAREN args, e);     \
		return name##_engine(RS_UNPAREN args, e);               \
	}
#define FLAGS_read 0
#define FLAGS_recv flags
#define FLAGS_write 0
#define FLAGS_send flags
#define RS_UNPAREN(...) __VA_ARGS__

/* ---- the exported names ---- */

WRAP_IN(read, (int fd, void *buf, size_t n), (fd, buf, n), 0, true)
WRAP(readv, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt))
WRAP_IN(recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags),
    flags, false)
WRAP6(recvfrom, (int fd, void *buf, size_t n, int flags,
    struct sockaddr *sa, socklen_t *len), (fd, buf, n, flags, sa, len))
WRAP(recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))
WRAP_OUT(write, (int fd, const void *buf, size_t n), (fd, buf, n), 0, true)
WRAP(writev, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt))
WRAP_OUT(send, (int fd, const void *buf, size_t n, int flags),
    (fd, buf, n, flags), flags, false)
WRAP6(sendto, (int fd, const void *buf, size_t n, int flags,
    const struct sockaddr *sa, socklen_t len), (fd, buf, n, flags, sa, len))
WRAP(sendmsg, (int fd, const struct msghdr *msg, int flags),
    (fd, msg, flags))
