/* SPDX-License-Identifier: MIT */
/*
 * httpio.c - the read and write paths with HTTP/1.x status retries: each
 * call settles the response first (reads) or tracks the request (writes),
 * then goes through io.c as any managed call does.  See httpio.h.
 */
#include "httpio.h"

#include <errno.h>
#include <string.h>

#include "clock.h"
#include "holdcount.h"
#include "httpretry.h"
#include "httpwait.h"
#include "tlsprobe.h"
#include "io_block.h"

/* The waits' hook (rs_hio_on_change), set once, atomically. */
static void (*on_change)(int fd);

void rs_hio_on_change(void (*fn)(int fd))
{
	__atomic_store_n(&on_change, fn, __ATOMIC_RELEASE);
}

static void tell_waits(int fd)
{
	void (*fn)(int) = __atomic_load_n(&on_change, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		fn(fd);
}

void rs_hio_changed(int fd)
{
	tell_waits(fd);
}

void rs_hio_untracked(struct rs_fd *e)
{
	struct rs_hconn *h = rs_hconn_enter(e);

	if (h != NULL) {
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		rs_hconn_leave(e, h);
	}
}

/*
 * A read on a non-blocking socket never waits: the waits drive the retry
 * (httpwait.h).  MSG_DONTWAIT on a blocking socket keeps the blocking
 * path: PHP polls a blocking socket itself, then reads so; its polls go
 * straight to the kernel, and only the read can retry.  A retry that a
 * non-blocking step began (O_NONBLOCK cleared since) is finished first.
 */
static int settle(struct rs_hconn *h, struct rs_fd *e, int fd, int flags)
{
	bool dontwait = (flags & MSG_DONTWAIT) != 0;
	int r;

	if (e->nonblocking)
		return rs_hwait_settle(h, e, fd);
	/* The program's own SO_RCVTIMEO counts from the start of its call,
	   through the finish of a retry and the judgement alike. */
	h->own_until = dontwait ? RS_NEVER :
	    rs_io_own_timeout(e, fd, false, rs_clock_now_ms());
	if (h->m.phase == RS_HR_DRAIN || h->m.phase == RS_HR_WAIT ||
	    h->out_left > 0) {
		r = rs_hwait_finish(h, e, fd);
		if (r < 0)
			return r;
		if ((e = rs_fd_get(fd)) == NULL)
			return -ECONNRESET;
	}
	return rs_hconn_settle(h, e, fd, dontwait);
}

/*
 * Settles the response before a read.  Returns the connection state to
 * feed afterwards (NULL: read the plain way) and in *err an error that
 * ends the call instead (0 for none).
 */
static struct rs_hconn *before_read(struct rs_fd **e, int fd, int flags,
    int *err)
{
	struct rs_hconn *h;

	*err = rs_hio_take_error(*e);
	if (*err != 0 || !rs_hio_wanted(*e) || rs_tls_probed(fd) ||
	    (h = rs_hconn_enter(*e)) == NULL)
		return NULL;
	*err = settle(h, *e, fd, flags);
	/* The finish of a retry may have looked at the response and taken
	   the socket's error: this read is the first to come, and gets it. */
	if (*err == 0)
		*err = rs_hio_take_error(*e);
	/* A reconnect made a new entry for fd (the same slot, or none). */
	struct rs_fd *now = rs_fd_get(fd);

	if (*err != 0 || now == NULL) {
		rs_hconn_leave(*e, h);
		if (now == NULL && *err == 0)
			*err = -ECONNRESET;
		if (*err == RS_HW_RESTEP) {
			/* The read moved the retry on: epoll follows it. */
			tell_waits(fd);
			*err = -EAGAIN;
		}
		return NULL;
	}
	*e = now;
	return h;
}

/*
 * After the program's own read of fd returned r: a socket whose TLS
 * session the program pumps itself (memory BIOs: httpstate.h's pumped())
 * found ended or reset while it carried the library's resend, whose
 * answer never came.  The response the resend replaced is handed over
 * now (the session's next SSL_read gives it), and a reset reads as the
 * end of the stream: at an end such a program reads its session (asyncio,
 * node), at a reset it drops the connection unread.  asked: the bytes
 * the read asked for.  Returns r, or 0.
 */
static ssize_t pumped_end(struct rs_fd *e, size_t asked, ssize_t r)
{
	struct rs_hconn *h;
	bool busy, lost;
	int save = errno;

	/* (A read of nothing returns 0 without an end.) */
	if (__builtin_expect(r > 0, 1) || (r == 0 && asked == 0) ||
	    (r < 0 && errno != ECONNRESET) ||
	    __atomic_load_n(&e->http, __ATOMIC_ACQUIRE) == NULL ||
	    (h = rs_hconn_enter_wait(e, &busy)) == NULL)
		return r;
	lost = h->tx != NULL && h->tx->pumped != NULL && h->tx->pumped(h) &&
	    h->m.phase == RS_HR_AWAIT && h->reused && rs_hr_lost(&h->m);
	if (lost)
		rs_hconn_hand_over(h);
	rs_hconn_leave(e, h);
	errno = save;
	return lost ? 0 : r;
}

/* Feeds what a read returned (r bytes of buf; 0 is end of file). */
static void after_read(struct rs_fd *e, struct rs_hconn *h, const void *buf,
    size_t asked, ssize_t r, int flags)
{
	if (r >= 0 && !(flags & MSG_PEEK) && (r > 0 || asked > 0))
		rs_hr_read(&h->m, buf, (size_t)r);
	rs_hconn_leave(e, h);
}

ssize_t rs_hio_recv(struct rs_fd *e, int fd, void *buf, size_t n, int flags)
{
	int err;
	struct rs_hconn *h = before_read(&e, fd, flags, &err);
	ssize_t r;

	if (err != 0)
		return err;
	r = pumped_end(e, n, rs_io_recv(e, fd, buf, n, flags));
	if (h != NULL)
		after_read(e, h, buf, n, r, flags);
	return r;
}

ssize_t rs_hio_read(struct rs_fd *e, int fd, void *buf, size_t n)
{
	int err;
	struct rs_hconn *h = before_read(&e, fd, 0, &err);
	ssize_t r;

	if (err != 0)
		return err;
	r = pumped_end(e, n, rs_io_read(e, fd, buf, n));
	if (h != NULL)
		after_read(e, h, buf, n, r, 0);
	return r;
}

ssize_t rs_hio_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len)
{
	int err;
	struct rs_hconn *h = before_read(&e, fd, flags, &err);
	ssize_t r;

	if (err != 0)
		return err;
	r = pumped_end(e, n, rs_io_recvfrom(e, fd, buf, n, flags, sa, len));
	if (h != NULL)
		after_read(e, h, buf, n, r, flags);
	return r;
}

/* Feeds the first n bytes that iov[0..cnt) held, buffer by buffer. */
static void each_iov(struct rs_hconn *h, const struct iovec *iov, int cnt,
    size_t n, void (*feed)(struct rs_hr *, const char *, size_t))
{
	for (int i = 0; i < cnt && n > 0; i++) {
		size_t k = iov[i].iov_len < n ? iov[i].iov_len : n;

		feed(&h->m, iov[i].iov_base, k);
		n -= k;
	}
}

static void sent_iov(struct rs_hconn *h, const struct iovec *iov, int cnt,
    size_t n)
{
	each_iov(h, iov, cnt, n, rs_hr_sent);
}

static void read_iov(struct rs_hconn *h, const struct iovec *iov, int cnt,
    size_t n)
{
	each_iov(h, iov, cnt, n, rs_hr_read);
}

/* Feeds what a scattered read returned. */
static void after_readv(struct rs_fd *e, struct rs_hconn *h,
    const struct iovec *iov, int cnt, ssize_t r, int flags)
{
	if (r > 0 && !(flags & MSG_PEEK))
		read_iov(h, iov, cnt, (size_t)r);
	else if (r == 0 && rs_io_iov_total(iov, cnt) > 0 && !(flags & MSG_PEEK))
		rs_hr_read(&h->m, NULL, 0);
	rs_hconn_leave(e, h);
}

ssize_t rs_hio_readv(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	int err;
	struct rs_hconn *h = before_read(&e, fd, 0, &err);
	ssize_t r;

	if (err != 0)
		return err;
	r = rs_io_readv(e, fd, iov, cnt);
	r = pumped_end(e, r == 0 ? rs_io_iov_total(iov, cnt) : 1, r);
	if (h != NULL)
		after_readv(e, h, iov, cnt, r, 0);
	return r;
}

ssize_t rs_hio_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg,
    int flags)
{
	int err;
	struct rs_hconn *h = before_read(&e, fd, flags, &err);
	ssize_t r;

	if (err != 0)
		return err;
	r = rs_io_recvmsg(e, fd, msg, flags);
	r = pumped_end(e, r == 0 ? rs_io_iov_total(msg->msg_iov,
	    (int)msg->msg_iovlen) : 1, r);
	if (h != NULL)
		after_readv(e, h, msg->msg_iov, (int)msg->msg_iovlen, r, flags);
	return r;
}

/*
 * Before the program's write of p[0..n) with h entered: its first bytes
 * on the connection may be the ClientHello of a session the program
 * moves itself (tlsprobe.h).
 */
static void first_write(struct rs_fd *e, struct rs_hconn *h, int fd,
    const void *p, size_t n)
{
	if (__builtin_expect(h->spoke, 1))
		return;
	h->spoke = true;
	rs_tls_hello_note(e, fd, p, n);
}

/*
 * Leaves h after a write.  A request on a non-blocking socket that is now
 * complete awaits its response: its epoll registrations must hide the
 * socket until the response is judged (httpwait.h).
 */
static void after_write(struct rs_fd *e, struct rs_hconn *h, int fd,
    enum rs_hr_phase before)
{
	bool awaits = before != RS_HR_AWAIT && h->m.phase == RS_HR_AWAIT &&
	    e->nonblocking;

	rs_holdcount_note(&h->holder, rs_hr_held(&h->m) > 0 ||
	    h->out_left > 0, fd);
	rs_hconn_leave(e, h);
	if (awaits)
		tell_waits(fd);
}

ssize_t rs_hio_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags)
{
	struct rs_hconn *h;
	ssize_t r;
	int err = rs_hio_take_error(e);

	if (err != 0)
		return err;
	if (!rs_hio_wanted(e) || rs_tls_probed(fd) ||
	    (h = rs_hconn_enter(e)) == NULL)
		return rs_io_send(e, fd, buf, n, flags);
	enum rs_hr_phase before = h->m.phase;

	first_write(e, h, fd, buf, n);
	r = rs_hconn_write(h, e, fd, buf, n, flags);
	after_write(e, h, fd, before);
	return r;
}

ssize_t rs_hio_write(struct rs_fd *e, int fd, const void *buf, size_t n)
{
	struct rs_hconn *h;
	ssize_t r;
	int err = rs_hio_take_error(e);

	if (err != 0)
		return err;
	if (!rs_hio_wanted(e) || rs_tls_probed(fd) ||
	    (h = rs_hconn_enter(e)) == NULL)
		return rs_io_write(e, fd, buf, n);
	enum rs_hr_phase before = h->m.phase;

	first_write(e, h, fd, buf, n);
	r = rs_hconn_write(h, e, fd, buf, n, 0);
	after_write(e, h, fd, before);
	return r;
}

ssize_t rs_hio_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len)
{
	int err = rs_hio_take_error(e);

	if (sa == NULL || err != 0)
		return err != 0 ? err : rs_hio_send(e, fd, buf, n, flags);
	if (rs_hio_wanted(e))
		rs_hio_untracked(e);
	return rs_io_sendto(e, fd, buf, n, flags, sa, len);
}

/*
 * A gathered write while a head is held: each buffer in turn through the
 * holding path, stopping at the first that does not go whole.
 */
static ssize_t write_each(struct rs_hconn *h, struct rs_fd *e, int fd,
    const struct iovec *iov, int cnt, int flags)
{
	ssize_t total = 0, r;

	for (int i = 0; i < cnt; i++) {
		r = rs_hconn_write(h, e, fd, iov[i].iov_base, iov[i].iov_len,
		    flags);
		if (r < 0)
			return total > 0 ? total : r;
		total += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	return total;
}

ssize_t rs_hio_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	struct rs_hconn *h;
	ssize_t r;
	int err = rs_hio_take_error(e);

	if (err != 0)
		return err;
	if (!rs_hio_wanted(e) || rs_tls_probed(fd) ||
	    (h = rs_hconn_enter(e)) == NULL)
		return rs_io_writev(e, fd, iov, cnt);
	enum rs_hr_phase before = h->m.phase;

	if (cnt > 0)
		first_write(e, h, fd, iov[0].iov_base, iov[0].iov_len);
	if (rs_hr_holding(&h->m)) {
		r = write_each(h, e, fd, iov, cnt, 0);
	} else {
		r = rs_io_writev(e, fd, iov, cnt);
		if (r > 0)
			sent_iov(h, iov, cnt, (size_t)r);
	}
	after_write(e, h, fd, before);
	return r;
}

ssize_t rs_hio_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags)
{
	struct rs_hconn *h;
	ssize_t r;
	int err = rs_hio_take_error(e);

	if (err != 0)
		return err;
	if (!rs_hio_wanted(e) || rs_tls_probed(fd) ||
	    (h = rs_hconn_enter(e)) == NULL)
		return rs_io_sendmsg(e, fd, msg, flags);
	enum rs_hr_phase before = h->m.phase;

	if (msg->msg_iovlen > 0)
		first_write(e, h, fd, msg->msg_iov[0].iov_base,
		    msg->msg_iov[0].iov_len);
	if (msg->msg_name != NULL || msg->msg_controllen > 0) {
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		r = rs_io_sendmsg(e, fd, msg, flags);
	} else if (rs_hr_holding(&h->m)) {
		r = write_each(h, e, fd, msg->msg_iov, (int)msg->msg_iovlen,
		    flags);
	} else {
		r = rs_io_sendmsg(e, fd, msg, flags);
		if (r > 0)
			sent_iov(h, msg->msg_iov,
			    (int)msg->msg_iovlen, (size_t)r);
	}
	after_write(e, h, fd, before);
	return r;
}
