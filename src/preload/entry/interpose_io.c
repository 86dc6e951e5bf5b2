/* SPDX-License-Identifier: MIT */
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
#include <limits.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fdtable.h"
#include "guard.h"
#include "learn_io.h"
#include "hot.h"
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
	e = reading(e, fd);

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
	e = reading(e, fd);

	return rs_hook_readv(fd, iov, cnt, rs_io_iov_total(iov, cnt), 0, e ?
	    LIBC_RET(HIO(readv, e, fd, iov, cnt)) : rs_real_readv(fd, iov,
	    cnt));
}

/* A read that carries no byte of the stream (RS_IO_OUT_OF_STREAM, ktimeo.h)
   goes to the io engine, or is the real call: no HTTP engine sees it. */
#define OUT_OF_STREAM(flags, e, io_call, real_call) \
	do { \
		if (__builtin_expect((flags) & RS_IO_OUT_OF_STREAM, 0)) \
			return e ? LIBC_RET(io_call) : real_call; \
	} while (0)

SLOW ssize_t recv_slow(struct rs_fd *e, int fd, void *buf, size_t n, int flags)
{
	e = reading(e, fd);
	OUT_OF_STREAM(flags, e, rs_io_recv(e, fd, buf, n, flags),
	    rs_real_recv(fd, buf, n, flags));

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
	e = reading(e, fd);
	OUT_OF_STREAM(flags, e, rs_io_recvfrom(e, fd, buf, n, flags, sa, len),
	    rs_real_recvfrom(fd, buf, n, flags, sa, len));

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
	e = reading(e, fd);
	OUT_OF_STREAM(flags, e, rs_io_recvmsg(e, fd, msg, flags),
	    rs_real_recvmsg(fd, msg, flags));

	ssize_t r = e ? LIBC_RET(HIO(recvmsg, e, fd, msg, flags)) :
	    rs_real_recvmsg(fd, msg, flags);

	return rs_hook_readv(fd, msg->msg_iov, (int)msg->msg_iovlen,
	    rs_io_iov_total(msg->msg_iov, (int)msg->msg_iovlen), flags, r);
}

SLOW int recvmmsg_slow(struct rs_fd *e, int fd, struct mmsghdr *v,
    unsigned n, int flags, struct timespec *tmo)
{
	e = reading(e, fd);
	OUT_OF_STREAM(flags, e, rs_io_recvmmsg(e, fd, v, n, flags, tmo),
	    rs_real_recvmmsg(fd, v, n, flags, tmo));
	/* A socket error the HTTP engine holds goes to this call, once. */
	int err = e ? rs_hio_take_error(e) : 0;

	if (err != 0)
		return LIBC_RET(err);
	if (e && rs_hio_wanted(e))
		rs_hio_untracked(e);
	return e ? LIBC_RET(rs_io_recvmmsg(e, fd, v, n, flags, tmo)) :
	    rs_real_recvmmsg(fd, v, n, flags, tmo);
}

EXPORT RS_HOT int recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags,
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

EXPORT RS_HOT int sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	struct rs_fd *e = rs_fd_get(fd);

	if (mmsg_plain(e))
		return rs_realfast_sendmmsg(fd, v, n, flags);
	return sendmmsg_slow(e, fd, v, n, flags);
}

/*
 * Every exported name is a fast half (the real call when plain()), then
 * name_engine(): the io engine directly for a socket that is its alone,
 * else name_slow().  The middle half is apart so that the exported name
 * needs no stack frame.  The entry comes after the arguments, so that they
 * stay in their registers (the compiler would otherwise move them about
 * on every path, the real call's too).  The engine half of a name of six
 * arguments (ENGINE6) takes no entry: a seventh argument would go on the
 * stack, so that the exported name could not jump to its middle half but
 * would call it, with a stack frame on every path; it looks the entry up
 * again instead (a few loads, on the managed path only).
 */
#define ENGINE(name, params, args)                                      \
	SLOW RS_HOT ssize_t name##_engine(RS_UNPAREN params,            \
	    struct rs_fd *e)                                            \
	{                                                               \
		if (engine_only(e, fd))                                 \
			return LIBC_RET(rs_io_##name(e, RS_UNPAREN args)); \
		return name##_slow(e, RS_UNPAREN args);                 \
	}
#define ENGINE6(name, params, args)                                     \
	SLOW RS_HOT ssize_t name##_engine params                        \
	{                                                               \
		struct rs_fd *e = rs_fd_get(fd);                        \
									\
		if (engine_only(e, fd))                                 \
			return LIBC_RET(rs_io_##name(e, RS_UNPAREN args)); \
		return name##_slow(e, RS_UNPAREN args);                 \
	}

/*
 * For a socket that is the io engine's alone, the reads and writes have a
 * steady state (io.h): a steady blocking call (asked before plain(),
 * which it never is) goes to name_steady(), which makes the system call
 * and the stamp inline; one that cannot block and only records its
 * activity (asked after plain()) to name_recorded(), the program's own
 * call and the stamp; the rest goes on as above.  Both are apart too, as
 * the compiler would set up their stack frame on every path of the
 * exported name.  The halves take hparams, the arguments that matter on
 * that path: recvfrom and sendto take them only with no address (a
 * connected stream socket), as recv and send, in registers.
 *
 * EXPORT_STEADY(name, params, args, hargs, steady, rec, engine): steady
 * and rec are the tests of the entry e for the two halves, engine the
 * call of the middle half.
 */
#define EXPORT_STEADY(name, params, args, hargs, steady, rec, engine)   \
	EXPORT RS_HOT ssize_t name params                               \
	STEADY_BODY(name, args, hargs, steady, rec, engine)
/* The body of both: plain_args are the arguments of the plain call. */
#define STEADY_BODY(name, plain_args, hargs, steady, rec, engine)       \
	{                                                               \
		struct rs_fd *e = rs_fd_get(fd);                        \
									\
		if (e && (steady) && steady_only(e))                    \
			return name##_steady(RS_UNPAREN hargs, e);      \
		if (plain(e, fd))                                       \
			return rs_realfast_##name plain_args;           \
		if (e && (rec) && steady_only(e))                       \
			return name##_recorded(RS_UNPAREN hargs, e);    \
		return engine;                                          \
	}
/*
 * The same for a name of six arguments, whose last two are an address
 * (sa): with none, name_noaddr(hparams) is the exported name of four
 * arguments, whose plain call is name noaddr (with no address and no
 * length); with one, name_addr() is the fast half and name_engine()
 * (ENGINE6) the middle one, apart, so that neither path's registers
 * crowd the other's (the compiler would save one on every call).
 */
#define EXPORT6(name, params, args, hparams, hargs, noaddr, steady, rec) \
	static inline __attribute__((always_inline)) ssize_t            \
	    name##_noaddr hparams                                       \
	STEADY_BODY(name, noaddr, hargs, steady, rec,                   \
	    name##_engine noaddr)                                       \
	SLOW RS_HOT ssize_t name##_addr params                          \
	{                                                               \
		if (plain(rs_fd_get(fd), fd))                           \
			return rs_realfast_##name args;                 \
		return name##_engine args;                              \
	}                                                               \
	EXPORT RS_HOT ssize_t name params                               \
	{                                                               \
		if (__builtin_expect(sa == NULL, 1))                    \
			return name##_noaddr hargs;                     \
		return name##_addr args;                                \
	}
/* The program's own call, which succeeds or fails as it would bare;
   touched is rs_io_touched, or _in for a read (learn_io.h). */
#define RECORDED_BY(touched, name, hparams, call)                       \
	SLOW RS_HOT ssize_t name##_recorded(RS_UNPAREN hparams,         \
	    struct rs_fd *e) { return touched(e, call); }
#define RECORDED(...) RECORDED_BY(rs_io_touched, __VA_ARGS__)
#define RECORDED_IN(...) RECORDED_BY(rs_io_touched_in, __VA_ARGS__)

/*
 * The steady half of the one-buffer names: dir is read or write (io.h's
 * rs_io_<dir>_first and _after), done says the first try ended the call,
 * late that a read starts too long after the last activity for the
 * kernel to time it (it goes the long way, slow).  A blocking read is
 * recv with no flags on a connected stream socket, a write send.
 */
#define STEADY1(name, hparams, flags, as_plain, dir, done, late, slow)  \
	SLOW RS_HOT ssize_t name##_steady(RS_UNPAREN hparams,           \
	    struct rs_fd *e)                                            \
	{                                                               \
		uint32_t gen;                                           \
									\
		if (late)                                               \
			return LIBC_RET(slow);                          \
		int save = *rs_errno();                                 \
		ssize_t r = rs_io_##dir##_first(e, fd, buf, n, flags, &gen); \
									\
		if (__builtin_expect(done, 1))                          \
			return r;                                       \
		return libc_after(rs_io_##dir##_after(e, fd, buf, n, flags, \
		    r < 0 ? -*rs_errno() : r, gen, as_plain), save);    \
	}
#define IN1(name, hparams, flags, as_plain, slow)                       \
	STEADY1(name, hparams, flags, as_plain, read, r > 0,            \
	    !rs_ktimeo_steady_now(e), slow)
#define OUT1(name, hparams, flags, as_plain, slow)                      \
	STEADY1(name, hparams, flags, as_plain, write,                  \
	    r >= 0 && (size_t)r == n, false, slow)

/*
 * The steady half of readv and recvmsg: first is the program's own call,
 * blocking under our kernel timer (ktimeo.h), into iov[0..cnt) (msg: the
 * header the slow path completes); slow the long way of a late call.
 */
#define STEADY_VIN(name, hparams, first, iov, cnt, flags, msg, slow)    \
	SLOW RS_HOT ssize_t name##_steady(RS_UNPAREN hparams,           \
	    struct rs_fd *e)                                            \
	{                                                               \
		if (!rs_ktimeo_steady_now(e))                           \
			return LIBC_RET(slow);                          \
		int save = *rs_errno();                                 \
		uint32_t gen = rs_fd_gen(e);                            \
		ssize_t r = first;                                      \
									\
		if (__builtin_expect(r > 0, 1)) {                       \
			rs_learn_touch_in(e, rs_clock_now_ms());        \
			return r;                                       \
		}                                                       \
		return libc_after(rs_io_readmsg_after(e, fd, iov, cnt,  \
		    flags, msg, r < 0 ? -*rs_errno() : 0, gen), save);  \
	}
/*
 * The steady half of writev and sendmsg: the header hdr sent with
 * MSG_DONTWAIT, which completes the call when the send buffer has room
 * (rs_io_write_first() says why), else the slow path sends the rest.
 */
#define STEADY_VOUT(name, hparams, hdr, flags, msg, as_plain)           \
	SLOW RS_HOT ssize_t name##_steady(RS_UNPAREN hparams,           \
	    struct rs_fd *e)                                            \
	{                                                               \
		int save = *rs_errno();                                 \
		uint32_t gen = rs_fd_gen(e);                            \
		const struct msghdr *h = hdr;                           \
		ssize_t r = rs_realfast_sendmsg(fd, h, flags | MSG_DONTWAIT); \
									\
		if (__builtin_expect(r >= 0 && (size_t)r ==             \
			rs_io_iov_total(h->msg_iov, (int)h->msg_iovlen), 1)) \
			return rs_io_touched(e, r);                     \
		return libc_after(rs_io_writemsg_after(e, fd, h->msg_iov, \
		    (int)h->msg_iovlen, flags, msg,                     \
		    r < 0 ? -*rs_errno() : r, gen, as_plain), save);    \
	}

#define RS_UNPAREN(...) __VA_ARGS__
/* The steady tests of a read or write with flags. */
#define IN_ENTRY(flags) rs_ktimeo_steady_entry(e, flags)
#define OUT_ENTRY(flags) rs_io_steady_out_entry(e, flags)
#define REC(out, flags) rs_io_recording_entry(e, out, flags)

/* ---- the exported names ---- */

#define P_READ (int fd, void *buf, size_t n)
ENGINE(read, P_READ, (fd, buf, n))
RECORDED_IN(read, P_READ, rs_realfast_read(fd, buf, n))
IN1(read, P_READ, 0, true, rs_io_read(e, fd, buf, n))
EXPORT_STEADY(read, P_READ, (fd, buf, n), (fd, buf, n), IN_ENTRY(0),
    REC(false, 0), read_engine(fd, buf, n, e))

#define P_RECV (int fd, void *buf, size_t n, int flags)
ENGINE(recv, P_RECV, (fd, buf, n, flags))
RECORDED_IN(recv, P_RECV, rs_realfast_recv(fd, buf, n, flags))
IN1(recv, P_RECV, flags, false, rs_io_recv(e, fd, buf, n, flags))
EXPORT_STEADY(recv, P_RECV, (fd, buf, n, flags), (fd, buf, n, flags),
    IN_ENTRY(flags), REC(false, flags), recv_engine(fd, buf, n, flags, e))

/*
 * recvfrom with no address is recv: its halves take recv's arguments, and
 * the exported name is recvfrom_noaddr() then, in which the kernel
 * ignores the length (so that the address registers are free, and the
 * plain path needs no stack frame); with one it is recvfrom_addr().
 */
#define P_RECVFROM (int fd, void *buf, size_t n, int flags, \
    struct sockaddr *sa, socklen_t *len)
#define A_RECVFROM (fd, buf, n, flags, sa, len)
ENGINE6(recvfrom, P_RECVFROM, A_RECVFROM)
RECORDED_IN(recvfrom, P_RECV, rs_realfast_recvfrom(fd, buf, n, flags, NULL,
    NULL))
IN1(recvfrom, P_RECV, flags, false, rs_io_recvfrom(e, fd, buf, n, flags,
    NULL, NULL))
EXPORT6(recvfrom, P_RECVFROM, A_RECVFROM, P_RECV, (fd, buf, n, flags),
    (fd, buf, n, flags, NULL, NULL), IN_ENTRY(flags), REC(false, flags))

#define P_VEC (int fd, const struct iovec *iov, int cnt)
ENGINE(readv, P_VEC, (fd, iov, cnt))
RECORDED_IN(readv, P_VEC, rs_realfast_readv(fd, iov, cnt))
STEADY_VIN(readv, P_VEC, rs_realfast_readv(fd, iov, cnt), iov, cnt, 0, NULL,
    rs_io_readv(e, fd, iov, cnt))
EXPORT_STEADY(readv, P_VEC, (fd, iov, cnt), (fd, iov, cnt), IN_ENTRY(0),
    REC(false, 0), readv_engine(fd, iov, cnt, e))

/*
 * A recvmsg with room for control data (SCM_RIGHTS) takes the long way;
 * one from the error queue is the real call (RS_IO_OUT_OF_STREAM).
 */
#define P_RECVMSG (int fd, struct msghdr *msg, int flags)
ENGINE(recvmsg, P_RECVMSG, (fd, msg, flags))
RECORDED_IN(recvmsg, P_RECVMSG, rs_realfast_recvmsg(fd, msg, flags))
STEADY_VIN(recvmsg, P_RECVMSG, rs_realfast_recvmsg(fd, msg, flags),
    msg->msg_iov, (int)msg->msg_iovlen, flags, msg,
    rs_io_recvmsg(e, fd, msg, flags))
EXPORT_STEADY(recvmsg, P_RECVMSG, (fd, msg, flags), (fd, msg, flags),
    IN_ENTRY(flags) && msg != NULL && msg->msg_controllen == 0,
    REC(false, flags),
    recvmsg_engine(fd, msg, flags, e))

#define P_WRITE (int fd, const void *buf, size_t n)
ENGINE(write, P_WRITE, (fd, buf, n))
RECORDED(write, P_WRITE, rs_realfast_write(fd, buf, n))
OUT1(write, P_WRITE, 0, true, 0)
EXPORT_STEADY(write, P_WRITE, (fd, buf, n), (fd, buf, n), OUT_ENTRY(0),
    REC(true, 0), write_engine(fd, buf, n, e))

#define P_SEND (int fd, const void *buf, size_t n, int flags)
ENGINE(send, P_SEND, (fd, buf, n, flags))
RECORDED(send, P_SEND, rs_realfast_send(fd, buf, n, flags))
OUT1(send, P_SEND, flags, false, 0)
EXPORT_STEADY(send, P_SEND, (fd, buf, n, flags), (fd, buf, n, flags),
    OUT_ENTRY(flags), REC(true, flags), send_engine(fd, buf, n, flags, e))

/* sendto with no address is send, as recvfrom's is recv. */
#define P_SENDTO (int fd, const void *buf, size_t n, int flags, \
    const struct sockaddr *sa, socklen_t len)
#define A_SENDTO (fd, buf, n, flags, sa, len)
ENGINE6(sendto, P_SENDTO, A_SENDTO)
RECORDED(sendto, P_SEND, rs_realfast_sendto(fd, buf, n, flags, NULL, 0))
OUT1(sendto, P_SEND, flags, false, 0)
EXPORT6(sendto, P_SENDTO, A_SENDTO, P_SEND, (fd, buf, n, flags),
    (fd, buf, n, flags, NULL, 0), OUT_ENTRY(flags), REC(true, flags))

/*
 * A writev of no buffers or more than the kernel takes takes the long
 * way, which answers as writev does.
 */
ENGINE(writev, P_VEC, (fd, iov, cnt))
RECORDED(writev, P_VEC, rs_realfast_writev(fd, iov, cnt))
STEADY_VOUT(writev, P_VEC, (&(struct msghdr){ .msg_iov = (struct iovec *)iov,
    .msg_iovlen = (size_t)cnt }), 0, NULL, true)
EXPORT_STEADY(writev, P_VEC, (fd, iov, cnt), (fd, iov, cnt),
    OUT_ENTRY(0) && (unsigned)cnt - 1 < IOV_MAX, REC(true, 0),
    writev_engine(fd, iov, cnt, e))

#define P_SENDMSG (int fd, const struct msghdr *msg, int flags)
ENGINE(sendmsg, P_SENDMSG, (fd, msg, flags))
RECORDED(sendmsg, P_SENDMSG, rs_realfast_sendmsg(fd, msg, flags))
STEADY_VOUT(sendmsg, P_SENDMSG, msg, flags, msg, false)
EXPORT_STEADY(sendmsg, P_SENDMSG, (fd, msg, flags), (fd, msg, flags),
    OUT_ENTRY(flags) && msg != NULL, REC(true, flags),
    sendmsg_engine(fd, msg, flags, e))
