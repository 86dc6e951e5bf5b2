/*
 * io.c - read and write timeouts on connected managed sockets (SPEC §6).
 *
 * A blocking call on a socket with a timeout first tries the transfer with
 * MSG_DONTWAIT; only when the kernel says EAGAIN does it poll, until
 * read_timeout (write_timeout) after the last activity or the process
 * deadline, and try again.  So data and end of file are never delayed and
 * a call that would not block costs no extra system call.  Everything else
 * (non-blocking sockets, no timeout and no deadline) is the real call.
 *
 * A timeout reported by a wait (rs_io_wait_expired) makes the next read
 * (write) fail with ETIMEDOUT once; the flag is then cleared, so that a
 * program that chooses to wait longer can.  Thread-safe: nothing here takes
 * a lock; the flags and last activity are atomics of the entry.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/time.h>

#include "clock.h"
#include "connect.h"
#include "runtime.h"
#include "log.h"
#include "real.h"
#include "stats.h"

/* Turns a real call's -1/errno into -errno. */
#define RET(expr) ({ __typeof__(expr) r_ = (expr); r_ < 0 ? -errno : r_; })

/* The real call of a PLAIN or TOUCH route. */
#define DIRECT(how, e, call) \
	((how) == TOUCH ? touched((e), RET(call)) : RET(call))

/* wait_ready(): the descriptor is no longer the socket of its entry. */
#define NOT_OURS 1

/* How a call runs, decided by route(). */
enum route {
	PLAIN,		/* the real call, nothing else */
	TOUCH,		/* the real call, then record the activity */
	GUARD,		/* blocking, with a timeout or deadline */
};

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
};

/* Whether any activity timeout is set, so activity must be recorded. */
static inline bool timed(const struct rs_settings *s)
{
	return s->read_timeout_ms != RS_OFF || s->write_timeout_ms != RS_OFF;
}

static inline int64_t process_deadline(void)
{
	const struct rs_runtime *rt = rs_runtime_peek();

	return rt ? rt->deadline_ms : RS_NEVER;
}

/*
 * The monotonic time at which a transfer in direction out times out.  The
 * last activity is recorded in whole milliseconds, rounded down, so the
 * timeout ends one millisecond later than their sum: never before
 * read_timeout (write_timeout) has really passed.
 */
static int64_t io_deadline(const struct rs_fd *e, bool out)
{
	const struct rs_settings *s = e->settings;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms;
	int64_t when = process_deadline();

	if (t != RS_OFF)
		when = rs_clock_min(when, rs_fd_last_activity(e) + t + 1);
	return when;
}

/* Records progress for the timeouts when r bytes moved. */
static inline ssize_t touched(struct rs_fd *e, ssize_t r)
{
	if (r > 0)
		rs_fd_touch(e, rs_clock_now_ms());
	return r;
}

/*
 * Counts and logs one timeout at warn level, with the destination when
 * known.  Called once per occurrence.
 */
static void log_timeout(const struct rs_fd *e, bool out, int64_t now)
{
	const struct rs_settings *s = e->settings;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms;
	bool by_deadline = t == RS_OFF || now <= rs_fd_last_activity(e) + t;
	char addr[128], dest[RS_HOST_MAX + 160];

	rs_stats_add(e->rule, out ? RS_STAT_WRITE_TIMEOUTS :
	    RS_STAT_READ_TIMEOUTS);
	if (!rs_log_enabled(RS_LOG_WARN))
		return;
	rs_connect_format_dest(e, addr, sizeof(addr), dest, sizeof(dest));
	struct rs_log_fields f = {
		.event = out ? "write_timeout" : "read_timeout",
		.host = e->host[0] ? e->host : NULL, .addr = addr,
		.attempt = -1, .attempts = -1, .error = "timed out",
		.wait_ms = -1,
	};
	if (by_deadline)
		rs_log(RS_LOG_WARN, &f, "%s %s timed out: process deadline "
		    "passed", out ? "write to" : "read from", dest);
	else
		rs_log(RS_LOG_WARN, &f, "%s %s timed out: no progress for "
		    "%u ms", out ? "write to" : "read from", dest, t);
}

/* Takes a pending timeout reported by a wait; returns whether there was. */
static inline bool take_pending(struct rs_fd *e, bool out)
{
	bool *flag = out ? &e->write_timed_out : &e->read_timed_out;

	return __atomic_load_n(flag, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(flag, false, __ATOMIC_ACQ_REL);
}

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
 * Brings a logical connect under way (CONNECTING, BACKOFF) as far as it can
 * go before a read or write: a non-blocking call takes one step without
 * waiting (the wait that should have driven it may be one the library
 * does not see) and fails with EAGAIN, as the kernel does, while it is
 * still under way; a blocking one waits for its end.  Returns 0 when
 * connected, 1 when the real call should answer (the connect failed and
 * its error was already taken), or -errno.
 */
static int settle_connect(struct rs_fd *e, int fd, int flags)
{
	if (e->nonblocking || (flags & MSG_DONTWAIT)) {
		rs_connect_step(fd, e, 1, rs_clock_now_ms());
	} else {
		int r = rs_connect_wait(fd, e);

		if (r < 0)
			return r;
	}
	switch (rs_fd_state(e)) {
	case RS_FD_CONNECTED:
		return 0;
	case RS_FD_FAILED: {
		int err = rs_connect_take_error(e);

		return err > 0 ? -err : 1;
	}
	default:
		return -EAGAIN;
	}
}

/*
 * Decides how a call in direction out with these flags runs, or fails it
 * at once: a pending timeout, or a connect still under way on a socket
 * that must not block.  The common cases come first and cost a few loads.
 */
static int route(struct rs_fd *e, int fd, bool out, int flags)
{
	const struct rs_settings *s = e->settings;

	if (take_pending(e, out))
		return -ETIMEDOUT;
	enum rs_fd_state st = rs_fd_state(e);

	if (st != RS_FD_CONNECTED) {
		if (st != RS_FD_CONNECTING && st != RS_FD_BACKOFF)
			return PLAIN;
		int r = settle_connect(e, fd, flags);

		if (r != 0)
			return r < 0 ? r : PLAIN;
	}
	/*
	 * A dup'd socket's O_NONBLOCK may have been cleared through a copy:
	 * such a call takes the timeout path, whose first try does not block
	 * and which reads the flag again before it waits.
	 */
	if ((flags & MSG_DONTWAIT) || (e->nonblocking && !e->shared))
		return timed(s) ? TOUCH : PLAIN;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms;

	if (t == RS_OFF && process_deadline() == RS_NEVER)
		return timed(s) ? TOUCH : PLAIN;
	return GUARD;
}

/*
 * The program's own SO_RCVTIMEO (SO_SNDTIMEO), as the time at which the
 * call must give up with EAGAIN as the kernel would, or RS_NEVER.  Asked
 * only when the call is about to wait, so the fast path never pays for it.
 */
static int64_t own_timeout(struct rs_fd *e, int fd, bool out, int64_t now)
{
	/* Cached until the program sets a socket option (interpose.c
	   forgets it then); a dup'd socket may be set through a copy. */
	if (e->shared || !e->own_tmo_known[out]) {
		struct timeval tv = { 0, 0 };
		socklen_t len = sizeof(tv);

		if (rs_real_getsockopt(fd, SOL_SOCKET,
			out ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, &len) < 0)
			tv.tv_sec = tv.tv_usec = 0;
		e->own_tmo_ms[out] = (uint32_t)((int64_t)tv.tv_sec * 1000 +
		    (tv.tv_usec + 999) / 1000);
		e->own_tmo_known[out] = true;
	}
	return e->own_tmo_ms[out] ? now + e->own_tmo_ms[out] : RS_NEVER;
}

/*
 * Waits until the transfer can go on.  Returns 0 when the socket is
 * ready, -ETIMEDOUT when our timeout or the deadline passed, -EAGAIN when
 * the program's own socket timeout did, -EINTR, or NOT_OURS when the
 * descriptor turned out to be another socket (see stranger()).  The
 * deadline is recomputed each turn: another thread's activity on the
 * socket moves it.
 */
static int wait_ready(struct rs_fd *e, const struct xfer *x, int64_t own)
{
	for (;;) {
		int64_t now = rs_clock_now_ms();
		int64_t until = io_deadline(e, x->out);

		if (now >= own && own <= until)
			return -EAGAIN;
		if (now >= until) {
			if (!rs_fd_is(e, x->fd))
				return NOT_OURS;
			log_timeout(e, x->out, now);
			return -ETIMEDOUT;
		}
		int r = poll_until(x->fd, x->out ? POLLOUT : POLLIN,
		    rs_clock_min(until, own), now);

		/* The kernel restarts a blocking read or write after an
		   SA_RESTART handler unless the socket has its own timeout. */
		if (r == -EINTR && own == RS_NEVER &&
		    rs_connect_signals_restart())
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
static ssize_t once(struct xfer *x)
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
 * call it is.
 */
static ssize_t stranger(struct xfer *x)
{
	rs_fd_forget(x->fd);
	x->flags &= ~MSG_DONTWAIT;
	ssize_t r = once(x);

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
		return RET(rs_real_writev(x->fd, x->iov, x->cnt));
	return RET(rs_real_readv(x->fd, x->iov, x->cnt));
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
static ssize_t finish(struct rs_fd *e, struct xfer *x, ssize_t r)
{
	int64_t own = RS_NEVER;
	bool asked = false;

	for (;;) {
		if (r > 0) {
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
			own = own_timeout(e, x->fd, x->out, rs_clock_now_ms());
			asked = true;
		}
		int w = wait_ready(e, x, own);

		if (w == NOT_OURS)
			return stranger(x);
		if (w < 0)
			return partial(e, x, w);
		r = once(x);
	}
}

/* Total length of an iovec array, for MSG_PEEK|MSG_WAITALL. */
static size_t iov_total(const struct iovec *iov, int cnt)
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
	size_t want = iov_total(x->iov, x->cnt);
	ssize_t seen = 0;

	if (r == -EAGAIN && really_nonblocking(e, x->fd))
		return r;
	int64_t own = own_timeout(e, x->fd, false, rs_clock_now_ms());

	for (;;) {
		if (r == 0 || (r > 0 && (size_t)r >= want) ||
		    (r < 0 && r != -EAGAIN))
			return r;
		if (r > seen) {
			seen = r;
			rs_fd_touch(e, rs_clock_now_ms());
		}
		int w = wait_ready(e, x, own);

		if (w == NOT_OURS)
			return stranger(x);
		if (w < 0)
			return seen > 0 && w == -EAGAIN ? seen : w;
		if (seen > 0)
			rs_real_poll(NULL, 0, 5);
		r = once(x);
	}
}

/* Starts the slow path of a read after its first non-blocking try. */
static ssize_t read_rest(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r)
{
	struct xfer x = {
		.fd = fd, .out = false, .all = (flags & MSG_WAITALL) != 0,
		.flags = flags | MSG_DONTWAIT, .msg = msg, .iov = iov,
		.cnt = cnt,
	};

	if (x.all && (flags & MSG_PEEK))
		return peek_all(e, &x, r);
	return finish(e, &x, r);
}

/* Starts the slow path of a write after its first non-blocking try. */
static ssize_t write_rest(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r)
{
	struct xfer x = {
		.fd = fd, .out = true, .all = true,
		.flags = flags | MSG_DONTWAIT, .msg = msg, .iov = iov,
		.cnt = cnt,
	};

	return finish(e, &x, r);
}

/* A first try that settles the call needs no slow path. */
static inline bool settled(ssize_t r, size_t n, int flags)
{
	if (r < 0)
		return r != -EAGAIN;
	return r == 0 || !(flags & MSG_WAITALL) || (size_t)r == n;
}

/*
 * The descriptor is not a socket any more: it was closed behind the
 * library's back (a raw system call) and its number reused.  Forget it.
 */
static inline bool stale(int fd, ssize_t r)
{
	if (r != -ENOTSOCK)
		return false;
	rs_fd_forget(fd);
	return true;
}

ssize_t rs_io_read(struct rs_fd *e, int fd, void *buf, size_t n)
{
	int how = route(e, fd, false, 0);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_read(fd, buf, n));
	/* On a connected stream socket, read is recv with no flags. */
	ssize_t r = RET(rs_real_recv(fd, buf, n, MSG_DONTWAIT));

	if (stale(fd, r))
		return RET(rs_real_read(fd, buf, n));
	if (settled(r, n, 0))
		return touched(e, r);
	struct iovec v = { buf, n };

	return read_rest(e, fd, &v, 1, 0, NULL, r);
}

ssize_t rs_io_readv(struct rs_fd *e, int fd, const struct iovec *iov, int cnt)
{
	int how = route(e, fd, false, 0);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_readv(fd, iov, cnt));
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
		.msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };
	ssize_t r = RET(rs_real_recvmsg(fd, &m, MSG_DONTWAIT));

	if (stale(fd, r))
		return RET(rs_real_readv(fd, iov, cnt));
	if (settled(r, 0, 0))
		return touched(e, r);
	return read_rest(e, fd, iov, cnt, 0, NULL, r);
}

ssize_t rs_io_recv(struct rs_fd *e, int fd, void *buf, size_t n, int flags)
{
	int how = route(e, fd, false, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_recv(fd, buf, n, flags));
	ssize_t r = RET(rs_real_recv(fd, buf, n, flags | MSG_DONTWAIT));

	if (settled(r, n, flags))
		return touched(e, r);
	struct iovec v = { buf, n };

	return read_rest(e, fd, &v, 1, flags, NULL, r);
}

ssize_t rs_io_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len)
{
	int how = route(e, fd, false, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e,
		    rs_real_recvfrom(fd, buf, n, flags, sa, len));
	ssize_t r = RET(rs_real_recvfrom(fd, buf, n, flags | MSG_DONTWAIT, sa,
	    len));

	if (settled(r, n, flags))
		return touched(e, r);
	struct iovec v = { buf, n };
	struct msghdr m = { .msg_name = sa, .msg_namelen = len ? *len : 0 };

	r = read_rest(e, fd, &v, 1, flags, sa && len ? &m : NULL, r);
	if (r >= 0 && sa && len)
		*len = m.msg_namelen;
	return r;
}

ssize_t rs_io_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg, int flags)
{
	int how = route(e, fd, false, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_recvmsg(fd, msg, flags));
	ssize_t r = RET(rs_real_recvmsg(fd, msg, flags | MSG_DONTWAIT));

	if (settled(r, flags & MSG_WAITALL ?
		iov_total(msg->msg_iov, (int)msg->msg_iovlen) : 0, flags))
		return touched(e, r);
	return read_rest(e, fd, msg->msg_iov, (int)msg->msg_iovlen, flags, msg,
	    r);
}

/*
 * recvmmsg and sendmmsg are datagram calls; on a stream socket they are
 * served by one non-blocking try, a wait whenever it would block, and a
 * retry, without continuing a partly moved message.
 */
static int mmsg_rest(struct rs_fd *e, struct xfer *x, int r)
{
	if (r != -EAGAIN || really_nonblocking(e, x->fd))
		return (int)touched(e, r);
	int64_t own = own_timeout(e, x->fd, x->out, rs_clock_now_ms());

	while (r == -EAGAIN) {
		int w = wait_ready(e, x, own);

		if (w == NOT_OURS) {
			rs_fd_forget(x->fd);
			x->flags &= ~MSG_DONTWAIT;
			w = 0;
		}
		if (w < 0)
			return w;
		r = x->out ? RET(rs_real_sendmmsg(x->fd, (void *)x->msg,
		    (unsigned)x->cnt, x->flags)) :
		    RET(rs_real_recvmmsg(x->fd, (void *)x->msg,
		    (unsigned)x->cnt, x->flags, NULL));
	}
	return (int)touched(e, r);
}

int rs_io_recvmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags, struct timespec *tmo)
{
	int how = route(e, fd, false, flags);

	if (how < 0)
		return how;
	if (how != GUARD || tmo)
		return (int)touched(e, RET(rs_real_recvmmsg(fd, v, n, flags,
		    tmo)));
	int r = RET(rs_real_recvmmsg(fd, v, n, flags | MSG_DONTWAIT, NULL));
	struct xfer x = { .fd = fd, .out = false, .msg = (void *)v,
		.cnt = (int)n, .flags = flags | MSG_DONTWAIT };

	return mmsg_rest(e, &x, r);
}

ssize_t rs_io_write(struct rs_fd *e, int fd, const void *buf, size_t n)
{
	int how = route(e, fd, true, 0);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_write(fd, buf, n));
	/*
	 * send without MSG_NOSIGNAL is write on a connected stream socket,
	 * SIGPIPE included.
	 */
	ssize_t r = RET(rs_real_send(fd, buf, n, MSG_DONTWAIT));

	if (stale(fd, r))
		return RET(rs_real_write(fd, buf, n));
	if (r >= 0 && (size_t)r == n)
		return touched(e, r);
	struct iovec v = { (void *)buf, n };

	return r < 0 && r != -EAGAIN ? r : write_rest(e, fd, &v, 1, 0, NULL, r);
}

ssize_t rs_io_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	int how = route(e, fd, true, 0);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_writev(fd, iov, cnt));
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
		.msg_iovlen = cnt > 0 ? (size_t)cnt : 0 };
	ssize_t r = RET(rs_real_sendmsg(fd, &m, MSG_DONTWAIT));

	if (stale(fd, r))
		return RET(rs_real_writev(fd, iov, cnt));
	if (r < 0 && r != -EAGAIN)
		return r;
	return write_rest(e, fd, iov, cnt, 0, NULL, r);
}

ssize_t rs_io_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags)
{
	int how = route(e, fd, true, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_send(fd, buf, n, flags));
	ssize_t r = RET(rs_real_send(fd, buf, n, flags | MSG_DONTWAIT));

	if (r >= 0 && (size_t)r == n)
		return touched(e, r);
	struct iovec v = { (void *)buf, n };

	return r < 0 && r != -EAGAIN ? r :
	    write_rest(e, fd, &v, 1, flags, NULL, r);
}

ssize_t rs_io_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len)
{
	int how = route(e, fd, true, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e,
		    rs_real_sendto(fd, buf, n, flags, sa, len));
	ssize_t r = RET(rs_real_sendto(fd, buf, n, flags | MSG_DONTWAIT, sa,
	    len));

	if (r >= 0 && (size_t)r == n)
		return touched(e, r);
	struct iovec v = { (void *)buf, n };
	struct msghdr m = { .msg_name = (void *)sa, .msg_namelen = len };

	return r < 0 && r != -EAGAIN ? r :
	    write_rest(e, fd, &v, 1, flags, sa ? &m : NULL, r);
}

ssize_t rs_io_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags)
{
	int how = route(e, fd, true, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return DIRECT(how, e, rs_real_sendmsg(fd, msg, flags));
	ssize_t r = RET(rs_real_sendmsg(fd, msg, flags | MSG_DONTWAIT));

	if (r < 0 && r != -EAGAIN)
		return r;
	/* The header is only read on a send; the copy keeps it const. */
	struct msghdr m = *msg;

	return write_rest(e, fd, msg->msg_iov, (int)msg->msg_iovlen, flags, &m,
	    r);
}

int rs_io_sendmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags)
{
	int how = route(e, fd, true, flags);

	if (how < 0)
		return how;
	if (how != GUARD)
		return (int)touched(e, RET(rs_real_sendmmsg(fd, v, n, flags)));
	int r = RET(rs_real_sendmmsg(fd, v, n, flags | MSG_DONTWAIT));
	struct xfer x = { .fd = fd, .out = true, .msg = (void *)v,
		.cnt = (int)n, .flags = flags | MSG_DONTWAIT };

	return mmsg_rest(e, &x, r);
}

/*
 * The time at which direction out of e times out for a wait: at once when
 * a timeout is already pending (the next call fails without blocking, so
 * the socket counts as ready), else io_deadline().
 */
static int64_t wait_until(const struct rs_fd *e, bool out, int64_t now)
{
	const bool *flag = out ? &e->write_timed_out : &e->read_timed_out;

	if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		return now;
	return io_deadline(e, out);
}

int64_t rs_io_wait_deadline(const struct rs_fd *e, short events, int64_t now)
{
	int64_t when = RS_NEVER;

	if (rs_fd_state(e) != RS_FD_CONNECTED)
		return RS_NEVER;
	if (events & POLLIN)
		when = rs_clock_min(when, wait_until(e, false, now));
	if (events & POLLOUT)
		when = rs_clock_min(when, wait_until(e, true, now));
	return when;
}

/* Marks direction out timed out if its time has come; logs it once. */
static bool expire(struct rs_fd *e, bool out, int64_t now)
{
	bool *flag = out ? &e->write_timed_out : &e->read_timed_out;

	if (now < wait_until(e, out, now))
		return false;
	if (!__atomic_exchange_n(flag, true, __ATOMIC_ACQ_REL))
		log_timeout(e, out, now);
	return true;
}

short rs_io_wait_expired(struct rs_fd *e, short events, int64_t now)
{
	short rev = 0;

	if (rs_fd_state(e) != RS_FD_CONNECTED)
		return 0;
	if ((events & POLLIN) && expire(e, false, now))
		rev |= POLLIN;
	if ((events & POLLOUT) && expire(e, true, now))
		rev |= POLLOUT;
	return rev;
}
