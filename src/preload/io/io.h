/* SPDX-License-Identifier: MIT */
/*
 * io.h - read and write timeouts on connected managed sockets (SPEC §6).
 *
 * Called only for descriptors the fdtable manages; e is their entry.  A
 * call that would not block costs no extra system call; one that would
 * block waits at most until read_timeout (write_timeout) after the last
 * activity, or the process deadline, and then fails with ETIMEDOUT.  Data
 * and end of file are never delayed.  Each returns what the real call
 * returns, with -errno instead of -1/errno.  Thread-safe.
 */
#ifndef RS_IO_H
#define RS_IO_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "clock.h"
#include "fdtable.h"
#include "ktimeo.h"
#include "learn_io.h"
#include "realfast.h"
#include "tdeadline.h"

/*
 * Returns true when every read and write on the managed socket e is the
 * real call and nothing else: connected, no read or write timeout (so no
 * activity to record), no HTTP retries, no timeout pending from a wait,
 * and no deadline that could bind a thread.  A handful of loads, for the
 * exported names to test before anything else; false sends the call down
 * the engines' path, which decides the same thing the long way.
 */
static inline bool rs_io_plain(const struct rs_fd *e)
{
	const struct rs_settings *s = e->settings;

	/* Both timeouts are RS_OFF (all ones) exactly when their AND is;
	   the flags are or'ed, so that the common case is a few branches. */
	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) ==
	    RS_FD_CONNECTED &&
	    (s->read_timeout_ms & s->write_timeout_ms) == RS_OFF &&
	    !((int)s->http.enabled | (int)(e->http != NULL) |
		(int)__atomic_load_n(&e->read_timed_out, __ATOMIC_RELAXED) |
		(int)__atomic_load_n(&e->write_timed_out, __ATOMIC_RELAXED)) &&
	    rs_tdeadline_none();
}

/*
 * The steady state of the blocking reads and writes of a socket with
 * timeouts: the common case, in which each call is the system call and
 * the stamp of the activity, with nothing decided between.  The exported
 * names (interpose_io.c) test it first and call these inline, each of
 * rs_io_* below does the same, and whatever does not hold takes the long
 * way, which decides everything anew.
 */

/*
 * The rest of a steady read or write (below) that did not end it: r is
 * what the call returned (-errno), gen the entry's generation before it.
 * as_plain says the program called read (write), not recv (send): a
 * descriptor that turns out not to be a socket any more is then read
 * (written) plainly.  Returns as rs_io_read does.
 */
ssize_t rs_io_read_after(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, ssize_t r, uint32_t gen, bool as_plain);
ssize_t rs_io_write_after(struct rs_fd *e, int fd, const void *buf,
    size_t n, int flags, ssize_t r, uint32_t gen, bool as_plain);

/*
 * The same for the calls that move an array of buffers: iov[0..cnt) of a
 * readv (as_plain true: msg NULL) or recvmsg (msg the program's header,
 * whose name, flags and control lengths the slow path sets as the kernel
 * does), and of a writev or sendmsg, whose first try was sendmsg with
 * MSG_DONTWAIT.  flags are the program's.  Returns as rs_io_readv does.
 */
ssize_t rs_io_readmsg_after(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r, uint32_t gen);
ssize_t rs_io_writemsg_after(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, const struct msghdr *msg, ssize_t r, uint32_t gen,
    bool as_plain);

/*
 * The system call of a blocking read or recv of n bytes with flags, for
 * which rs_ktimeo_steady(e, flags) held: blocking, under our kernel
 * timer, and the stamp of the bytes it got (the fine clock, never earlier
 * than they came).  Returns what the call returned, in the libc
 * convention (-1 and errno); *gen gets the entry's generation before it.
 * A result that is not a count of bytes goes to rs_io_read_after().
 */
static inline __attribute__((always_inline)) ssize_t rs_io_read_first(
    struct rs_fd *e, int fd, void *buf, size_t n, int flags, uint32_t *gen)
{
	*gen = rs_fd_gen(e);
	ssize_t r = rs_realfast_recv(fd, buf, n, flags);

	if (__builtin_expect(r > 0, 1))
		rs_learn_touch_in(e, rs_clock_now_ms());
	return r;
}

/* The whole steady read, as rs_io_read returns it (-errno). */
static inline __attribute__((always_inline)) ssize_t rs_io_read_steady(
    struct rs_fd *e, int fd, void *buf, size_t n, int flags, bool as_plain)
{
	uint32_t gen;
	ssize_t r = rs_io_read_first(e, fd, buf, n, flags, &gen);

	if (__builtin_expect(r > 0, 1))
		return r;
	return rs_io_read_after(e, fd, buf, n, flags, r < 0 ? -errno : 0, gen,
	    as_plain);
}

/*
 * Whether a write with flags on e is in the steady state: connected,
 * blocking and not shared, no timeout pending from a wait, write_timeout
 * set, and no MSG_DONTWAIT (the entry: rs_io_steady_out_entry()), and no
 * deadline that could bind the thread (rs_tdeadline_none(), or a test
 * that implies it).
 */
static inline __attribute__((always_inline)) bool rs_io_steady_out_entry(
    const struct rs_fd *e, int flags)
{
	const uint64_t mask = RS_FD_FLAG(write_timed_out) |
	    RS_FD_FLAG(nonblocking) | RS_FD_FLAG(shared);

	return e->settings->write_timeout_ms != RS_OFF &&
	    (rs_fd_flag_word(e) & mask) == 0 && !(flags & MSG_DONTWAIT) &&
	    rs_fd_state(e) == RS_FD_CONNECTED;
}

static inline __attribute__((always_inline)) bool rs_io_steady_out(
    const struct rs_fd *e, int flags)
{
	return rs_io_steady_out_entry(e, flags) && rs_tdeadline_none();
}

/*
 * Whether e has a read or write timeout (so that it is never plain, and
 * its activity must be recorded).
 */
static inline bool rs_io_timed(const struct rs_fd *e)
{
	return rs_io_settings_timed(e->settings);
}

/*
 * Whether a read (out false) or write with flags on e is one that cannot
 * block and only records its activity (io.c's PATH_REAL_RECORDING): the
 * socket connected and non-blocking, and not shared (or the call has
 * MSG_DONTWAIT), no timeout pending in that direction, and a read or
 * write timeout set.  The program's own call then does it all, and
 * rs_io_touched() after it.  A deadline changes nothing here.
 */
static inline __attribute__((always_inline)) bool rs_io_recording_entry(
    const struct rs_fd *e, bool out, int flags)
{
	uint64_t w = rs_fd_flag_word(e);
	const uint64_t nb = RS_FD_FLAG(nonblocking) | RS_FD_FLAG(shared);

	return rs_io_timed(e) && !(flags & MSG_ERRQUEUE) &&
	    !(w & (out ? RS_FD_FLAG(write_timed_out) :
		RS_FD_FLAG(read_timed_out))) &&
	    ((w & nb) == RS_FD_FLAG_TRUE(nonblocking) ||
		(flags & MSG_DONTWAIT)) &&
	    rs_fd_state(e) == RS_FD_CONNECTED;
}

/*
 * The first try of a blocking write or send for which
 * rs_io_steady_out(e, flags) held: it does not block (send is write on a
 * connected stream socket, SIGPIPE included), and completes the call when
 * the send buffer has room; then the stamp.  Returns as
 * rs_io_read_first() does; a result short of n goes to
 * rs_io_write_after().
 */
static inline __attribute__((always_inline)) ssize_t rs_io_write_first(
    struct rs_fd *e, int fd, const void *buf, size_t n, int flags,
    uint32_t *gen)
{
	*gen = rs_fd_gen(e);
	ssize_t r = rs_realfast_send(fd, buf, n, flags | MSG_DONTWAIT);

	if (__builtin_expect(r > 0 && (size_t)r == n, 1))
		rs_fd_touch(e, rs_clock_now_ms());
	return r;
}

/* The whole steady write, as rs_io_write returns it (-errno). */
static inline __attribute__((always_inline)) ssize_t rs_io_write_steady(
    struct rs_fd *e, int fd, const void *buf, size_t n, int flags,
    bool as_plain)
{
	uint32_t gen;
	ssize_t r = rs_io_write_first(e, fd, buf, n, flags, &gen);

	if (__builtin_expect(r >= 0 && (size_t)r == n, 1))
		return r;
	return rs_io_write_after(e, fd, buf, n, flags, r < 0 ? -errno : r,
	    gen, as_plain);
}

ssize_t rs_io_read(struct rs_fd *e, int fd, void *buf, size_t n);
ssize_t rs_io_readv(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt);
ssize_t rs_io_recv(struct rs_fd *e, int fd, void *buf, size_t n, int flags);
ssize_t rs_io_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len);
ssize_t rs_io_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg,
    int flags);
int rs_io_recvmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags, struct timespec *tmo);
ssize_t rs_io_write(struct rs_fd *e, int fd, const void *buf, size_t n);
ssize_t rs_io_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt);
ssize_t rs_io_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags);
ssize_t rs_io_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len);
ssize_t rs_io_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags);
int rs_io_sendmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags);

#endif /* RS_IO_H */
