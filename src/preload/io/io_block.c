/* SPDX-License-Identifier: MIT */
/*
 * io_block.c - the slow path of a blocking read or write with a timeout:
 * wait while the kernel says EAGAIN, move what it takes, until the call is
 * satisfied, fails, or times out.
 *
 * Each try is a non-blocking system call on the rest of the program's own
 * buffers (never copied); a partial transfer returns what moved, as the
 * kernel does, and a timeout after some progress is reported by the next
 * call.  Thread-safe: no locks; the entry's flags are atomics.
 */
#include "io_block.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "clock.h"
#include "io_timeout.h"
#include "ktimeo.h"
#include "learn_io.h"
#include "real.h"
#include "sigrestart.h"

/* wait_ready(): the descriptor is no longer the socket of its entry. */
#define REUSED_NUMBER 1

/*
 * The rest of a transfer that the slow path continues: the data not yet
 * moved is iov[0] from byte skip onwards, then iov[1 .. cnt-1].
 */
struct xfer {
	int fd;
	bool out;			/* a write */
	bool all;			/* move every byte (writes, WAITALL) */
	int flags;			/* the program's, plus MSG_DONTWAIT */
	struct msghdr *msg;		/* name and control; NULL for none */
	const struct iovec *iov;
	int cnt;
	size_t skip;
	size_t done;			/* bytes moved so far */
	uint32_t gen;			/* the entry's, as the call began */
};

/*
 * Polls fd for want until ready or the time `until`; returns 1 when
 * ready, 0 on time, or -errno (EINTR for a signal).
 */
static int poll_until(int fd, short want, int64_t until, int64_t now)
{
	struct pollfd p = { .fd = fd, .events = want };
	int n = rs_real_poll(&p, 1, rs_clock_remaining_ms(until, now));

	return n < 0 ? -errno : n > 0;
}

/*
 * The program's own SO_RCVTIMEO (SO_SNDTIMEO), as the time at which the
 * call must give up with EAGAIN as the kernel would, or RS_NEVER.  Asked
 * only when the call is about to wait, so the fast path never pays for it.
 */
int64_t rs_io_own_timeout(struct rs_fd *e, int fd, bool out, int64_t now)
{
	uint32_t ms = rs_ktimeo_own_ms(e, fd, out);

	return ms ? rs_clock_after(now, ms) : RS_NEVER;
}

/*
 * Waits until the transfer can go on.  Returns 0 when the socket is
 * ready, -ETIMEDOUT when our timeout or the deadline passed, -EAGAIN when
 * the program's own socket timeout did, -EINTR, or REUSED_NUMBER when the
 * descriptor turned out to be another socket (see serve_reused_number()).  The
 * deadline is recomputed each turn: another thread's activity on the
 * socket moves it.
 */
static int wait_ready(struct rs_fd *e, const struct xfer *x, int64_t own)
{
	for (;;) {
		int64_t now = rs_clock_now_ms();
		int64_t until = rs_io_deadline(e, x->out);

		if (now >= own && own <= until)
			return -EAGAIN;
		if (now >= until) {
			if (!rs_fd_same_socket(e, x->fd))
				return REUSED_NUMBER;
			rs_io_log_timeout(e, x->out, now);
			return -ETIMEDOUT;
		}
		int r = poll_until(x->fd, x->out ? POLLOUT : POLLIN,
		    rs_clock_min(until, own), now);

		/* Closed by another thread while this call waited (and the
		   number perhaps another socket's now): not ours to go on. */
		if (rs_fd_closed_since(e, x->gen))
			return -EBADF;
		/* The kernel restarts a blocking read or write after an
		   SA_RESTART handler unless the socket has its own timeout. */
		if (r == -EINTR && own == RS_NEVER &&
		    rs_signals_restart())
			continue;
		if (r != 0)
			return r < 0 ? r : 0;
	}
}

/*
 * A descriptor that was dup'd shares its O_NONBLOCK flag with its copies,
 * which may have changed it through a number whose entry is another: the
 * flag is read again before a first wait, so that a socket that is in fact
 * non-blocking gets the kernel's EAGAIN rather than a wait, and one that
 * is in fact blocking gets its timeout.
 */
static bool really_nonblocking(struct rs_fd *e, int fd)
{
	if (!e->shared)
		return e->nonblocking;
	int fl = rs_real_fcntl(fd, F_GETFL, 0);

	if (fl >= 0)
		e->nonblocking = (fl & O_NONBLOCK) != 0;
	return e->nonblocking;
}

/* Moves the cursor of x past r more bytes. */
static void advance(struct xfer *x, size_t r)
{
	x->done += r;
	while (x->cnt > 0) {
		size_t left = x->iov[0].iov_len - x->skip;

		if (r < left) {
			x->skip += r;
			return;
		}
		r -= left;
		x->iov++;
		x->cnt--;
		x->skip = 0;
	}
}

/*
 * One non-blocking system call for the rest of x.  A partly moved element
 * goes alone, so that the program's iovec array never needs copying; the
 * control data goes with the first bytes only.
 */
static ssize_t try_once(struct xfer *x)
{
	struct msghdr m = { 0 };
	struct iovec head;

	if (x->msg) {
		m.msg_name = x->msg->msg_name;
		m.msg_namelen = x->msg->msg_namelen;
		if (x->done == 0) {
			m.msg_control = x->msg->msg_control;
			m.msg_controllen = x->msg->msg_controllen;
		}
	}
	if (x->skip) {
		head.iov_base = (char *)x->iov[0].iov_base + x->skip;
		head.iov_len = x->iov[0].iov_len - x->skip;
		m.msg_iov = &head;
		m.msg_iovlen = 1;
	} else {
		m.msg_iov = (struct iovec *)x->iov;
		m.msg_iovlen = (size_t)x->cnt;
	}
	ssize_t r = x->out ? rs_real_sendmsg(x->fd, &m, x->flags) :
	    rs_real_recvmsg(x->fd, &m, x->flags);

	if (r >= 0 && x->msg && !x->out) {
		x->msg->msg_namelen = m.msg_namelen;
		x->msg->msg_flags = m.msg_flags;
		if (x->done == 0)
			x->msg->msg_controllen = m.msg_controllen;
	}
	return r < 0 ? -errno : r;
}

/*
 * A descriptor closed behind the library's back and reused for another
 * socket, by a call the library does not see (a descriptor received with
 * SCM_RIGHTS, a raw system call), must not get our timeout.  Checking the
 * inode costs an fstat, so it is done only when a timeout would be
 * reported: the wait before it is what the blocking call would have done.
 * The entry is forgotten, and the call is finished as the plain blocking
 * call it is, after the library's SO_RCVTIMEO is taken back off that
 * socket (ktimeo.h: it may have been set before the reuse was seen).
 */
static ssize_t serve_reused_number(struct rs_fd *e, struct xfer *x)
{
	rs_ktimeo_release(e, x->fd);
	rs_fd_forget(x->fd);
	x->flags &= ~MSG_DONTWAIT;
	ssize_t r = try_once(x);

	if (r < 0)
		return x->done ? (ssize_t)x->done : r;
	return (ssize_t)x->done + r;
}

/*
 * The number is not a socket any more (closed behind the library's back
 * and reused for a pipe or a file): the entry is forgotten and the call
 * runs plainly.
 */
static ssize_t not_a_socket(struct xfer *x)
{
	rs_fd_forget(x->fd);
	if (x->out)
		return RS_NEG_ERRNO(rs_real_writev(x->fd, x->iov, x->cnt));
	return RS_NEG_ERRNO(rs_real_readv(x->fd, x->iov, x->cnt));
}

/*
 * Ends the transfer after the failure err (-errno): what moved already is
 * returned, as the kernel returns a partial count; a timeout after some
 * progress is kept pending so that the next call reports it.
 */
static ssize_t partial(struct rs_fd *e, const struct xfer *x, ssize_t err)
{
	if (x->done == 0)
		return err;
	if (err == -ETIMEDOUT)
		__atomic_store_n(x->out ? &e->write_timed_out :
		    &e->read_timed_out, true, __ATOMIC_RELEASE);
	return (ssize_t)x->done;
}

/*
 * The slow path of a blocking transfer, given r, the result of the first
 * non-blocking try: waits whenever the kernel says EAGAIN, until the call
 * is satisfied, fails, or times out.  MSG_PEEK with MSG_WAITALL cannot
 * advance and is served by peek_all() instead.
 */
static ssize_t continue_blocking(struct rs_fd *e, struct xfer *x, ssize_t r)
{
	int64_t own = RS_NEVER;
	bool asked = false;

	for (;;) {
		if (r > 0) {
			/* Bytes read end a wait; a write's, only when it
			   had to wait for room (learn_io.h). */
			if (!x->out)
				rs_learn_touch_in(e, rs_clock_now_ms());
			else if (asked)
				rs_learn_touch_out(e, rs_clock_now_ms());
			else
				rs_fd_touch(e, rs_clock_now_ms());
			advance(x, (size_t)r);
			if (!x->all || x->cnt == 0)
				return (ssize_t)x->done;
		} else if (r == 0) {
			return (ssize_t)x->done;
		} else if (r == -ENOTSOCK && x->done == 0) {
			return not_a_socket(x);
		} else if (r != -EAGAIN) {
			return partial(e, x, r);
		}
		if (!asked) {
			if (really_nonblocking(e, x->fd))
				return partial(e, x, r);
			own = rs_io_own_timeout(e, x->fd, x->out, rs_clock_now_ms());
			asked = true;
		}
		int w = wait_ready(e, x, own);

		if (w == REUSED_NUMBER)
			return serve_reused_number(e, x);
		if (w < 0)
			return partial(e, x, w);
		r = try_once(x);
	}
}

size_t rs_io_iov_total(const struct iovec *iov, int cnt)
{
	size_t n = 0;

	for (int i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

/*
 * MSG_PEEK|MSG_WAITALL waits until the whole length can be peeked.  Poll
 * reports a socket with any data readable, so a partial peek is retried
 * after a short sleep; new bytes count as progress for the timeout.
 */
static ssize_t peek_all(struct rs_fd *e, struct xfer *x, ssize_t r)
{
	size_t want = rs_io_iov_total(x->iov, x->cnt);
	ssize_t seen = 0;

	if (r == -EAGAIN && really_nonblocking(e, x->fd))
		return r;
	int64_t own = rs_io_own_timeout(e, x->fd, false, rs_clock_now_ms());

	for (;;) {
		if (r == 0 || (r > 0 && (size_t)r >= want) ||
		    (r < 0 && r != -EAGAIN))
			return r;
		if (r > seen) {
			seen = r;
			rs_fd_touch(e, rs_clock_now_ms());
		}
		int w = wait_ready(e, x, own);

		if (w == REUSED_NUMBER)
			return serve_reused_number(e, x);
		if (w < 0)
			return seen > 0 && w == -EAGAIN ? seen : w;
		if (seen > 0)
			rs_real_poll(NULL, 0, 5);
		r = try_once(x);
	}
}

ssize_t rs_io_read_rest(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r, uint32_t gen)
{
	struct xfer x = {
		.fd = fd, .out = false, .all = (flags & MSG_WAITALL) != 0,
		.flags = flags | MSG_DONTWAIT, .msg = msg, .iov = iov,
		.cnt = cnt, .gen = gen,
	};

	if (x.all && (flags & MSG_PEEK))
		return peek_all(e, &x, r);
	return continue_blocking(e, &x, r);
}

ssize_t rs_io_write_rest(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r, uint32_t gen)
{
	struct xfer x = {
		.fd = fd, .out = true, .all = true,
		.flags = flags | MSG_DONTWAIT, .msg = msg, .iov = iov,
		.cnt = cnt, .gen = gen,
	};

	return continue_blocking(e, &x, r);
}

/*
 * Whether a sendmmsg that returned r left undone what the blocking call
 * would have done: nothing sent yet (EAGAIN), a message sent in part, or
 * messages not tried.
 */
static bool send_unfinished(const struct mmsghdr *v, unsigned n, int r)
{
	if (r <= 0)
		return r == -EAGAIN;
	const struct msghdr *h = &v[r - 1].msg_hdr;

	return (unsigned)r < n || v[r - 1].msg_len <
	    rs_io_iov_total(h->msg_iov, (int)h->msg_iovlen);
}

/*
 * Finishes the message v (sent in part) as a blocking sendmsg would;
 * returns whether it went whole.  The kernel's blocking sendmmsg sends
 * each message whole before the next, so a byte stream never gets the
 * next message's bytes after half of this one.
 */
static bool finish_message(struct rs_fd *e, const struct xfer *x,
    struct mmsghdr *v, int flags)
{
	struct msghdr h = v->msg_hdr;
	size_t want = rs_io_iov_total(h.msg_iov, (int)h.msg_iovlen);

	if (v->msg_len >= want)
		return true;
	ssize_t w = rs_io_write_rest(e, x->fd, h.msg_iov, (int)h.msg_iovlen,
	    flags, &h, (ssize_t)v->msg_len, x->gen);

	if (w > (ssize_t)v->msg_len)
		v->msg_len = (unsigned)w;
	return w >= 0 && (size_t)w >= want;
}

/*
 * The messages from done on, sent by the plain blocking call once the
 * descriptor turned out to be another socket (its entry is gone, and
 * must not be touched again); returns the count for the whole call.
 */
static int send_plainly(int fd, struct mmsghdr *v, unsigned n, int flags,
    unsigned done)
{
	int r = RS_NEG_ERRNO(rs_real_sendmmsg(fd, v + done, n - done, flags));

	if (r > 0)
		return (int)done + r;
	return done ? (int)done : r;
}

/*
 * The slow path of a blocking sendmmsg, given r, the first non-blocking
 * try: every message is sent, each one whole, as the kernel's blocking
 * call does; a failure or timeout after some messages returns how many
 * went (the last one perhaps in part), as the kernel's does.
 */
static int send_messages(struct rs_fd *e, struct xfer *x, struct mmsghdr *v,
    unsigned n, int flags, int r)
{
	int64_t own = rs_io_own_timeout(e, x->fd, true, rs_clock_now_ms());
	unsigned done = 0;

	for (;;) {
		if (r > 0) {
			rs_fd_touch(e, rs_clock_now_ms());
			done += (unsigned)r;
			if (!finish_message(e, x, &v[done - 1], flags) ||
			    done == n)
				return (int)done;
			/* Finishing it may have found the number reused. */
			if (rs_fd_get(x->fd) != e)
				return send_plainly(x->fd, v, n, flags, done);
		} else if (r != -EAGAIN) {
			return done ? (int)done : r;
		} else {
			int w = wait_ready(e, x, own);

			if (w == REUSED_NUMBER) {
				rs_fd_forget(x->fd);
				return send_plainly(x->fd, v, n, flags, done);
			}
			if (w < 0)
				return done ? (int)done : w;
		}
		r = RS_NEG_ERRNO(rs_real_sendmmsg(x->fd, v + done, n - done,
		    x->flags));
	}
}

int rs_io_mmsg_rest(struct rs_fd *e, int fd, bool out, struct mmsghdr *v,
    unsigned n, int flags, int r, uint32_t gen)
{
	struct xfer xf = { .fd = fd, .out = out, .msg = (void *)v,
		.cnt = (int)n, .flags = flags | MSG_DONTWAIT, .gen = gen };
	struct xfer *x = &xf;

	if (out && send_unfinished(v, n, r) && !really_nonblocking(e, fd))
		return send_messages(e, x, v, n, flags, r);
	if (out || r != -EAGAIN || really_nonblocking(e, x->fd))
		return (int)rs_io_touched(e, r);
	int64_t own = rs_io_own_timeout(e, x->fd, x->out, rs_clock_now_ms());

	while (r == -EAGAIN) {
		int w = wait_ready(e, x, own);

		if (w == REUSED_NUMBER) {
			/* Another socket's now: the plain blocking call. */
			rs_fd_forget(x->fd);
			return RS_NEG_ERRNO(rs_real_recvmmsg(fd, v, n, flags,
			    NULL));
		}
		if (w < 0)
			return w;
		r = RS_NEG_ERRNO(rs_real_recvmmsg(fd, v, n, x->flags, NULL));
	}
	return (int)rs_io_touched(e, r);
}
