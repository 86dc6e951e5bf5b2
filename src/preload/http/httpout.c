/* SPDX-License-Identifier: MIT */
/*
 * httpout.c - the outbound half of SPEC 10: each request head the program
 * writes on a connection whose rule sets deadline_header leaves with that
 * header when the calling thread has a deadline.
 *
 * A head that begins while a deadline applies to the calling thread is
 * held (the program's write reports it sent) until it is complete, so
 * the header can be put in before any of it leaves; then the edited head
 * goes out whole, and the bytes after it go as the program wrote them.
 * Any other head goes as it comes: with no header to add there is
 * nothing to hold.  A held head goes as it is when the connection ends
 * or the program waits for the answer (rs_httpout_release()).  Clients
 * write a head in one call as a rule, so holding is rare.  Anything the tracker does not understand (not HTTP, TLS, HTTP/2,
 * pipelining) is flushed as it was and passed through from then on.  The
 * kept head is the one the HTTP retries replay, so a replay carries the
 * header too, and only once.  Called with the entry taken (httpconn.h).
 */
#include "httpout.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "clock.h"
#include "deadline.h"
#include "guard.h"
#include "holdcount.h"
#include "io_block.h"
#include "io_timeout.h"
#include "log.h"
#include "real.h"
#include "sotimeo.h"
#include "stats.h"
#include "tdeadline.h"
#include "tlsprobe.h"

/* A non-blocking socket gets this long at most to take a held head. */
#define FLUSH_MAX_MS 10000

/* Waits until fd is writable or `until` passes; -ETIMEDOUT then. */
static int wait_writable(int fd, int64_t until)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int64_t now = rs_clock_now_ms();

	if (now >= until)
		return -ETIMEDOUT;
	int r = rs_real_poll(&p, 1, rs_clock_remaining_ms(until, now));

	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/* Whether the program's call on fd does not block (flags or O_NONBLOCK). */
static bool nonblocking(int fd, int flags)
{
	int fl = rs_real_fcntl(fd, F_GETFL, 0);

	return (flags & MSG_DONTWAIT) || (fl >= 0 && (fl & O_NONBLOCK));
}

/*
 * The program's own SO_SNDTIMEO for a blocking call starting now, as the
 * time the call must end by, or RS_NEVER (none, or a call that does not
 * block).
 */
static int64_t own_until(struct rs_fd *e, int fd, bool nb)
{
	int64_t now = rs_clock_now_ms(), ms;

	if (nb)
		return RS_NEVER;
	/* A managed socket's value is the io engine's to keep. */
	if (e)
		return rs_io_own_timeout(e, fd, true, now);
	ms = rs_sotimeo_ms(fd, true);
	return ms > 0 ? rs_clock_after(now, ms) : RS_NEVER;
}

/*
 * After a first blocking try that moved some bytes: waits for room until
 * own, or the socket's write deadline (then -ETIMEDOUT, counted and
 * logged as the io engine's would be).  0: try again; -EAGAIN: own came.
 */
static int wait_own(struct rs_fd *e, int fd, int64_t own)
{
	int64_t dl = e ? rs_io_deadline(e, true) : RS_NEVER;
	int w = wait_writable(fd, rs_clock_min(own, dl));

	if (w != -ETIMEDOUT)
		return w;
	if (own <= dl)
		return -EAGAIN;
	rs_io_log_timeout(e, true, rs_clock_now_ms());
	return -ETIMEDOUT;
}

/*
 * Sends up to len bytes at p (the held head), as the program's call would:
 * blocking unless the socket or the flags say otherwise, in which case it
 * waits for room itself, bounded by the thread's deadline.  A blocking
 * call stops at own, the program's own SO_SNDTIMEO from its start
 * (RS_NEVER: none): the first try blocks under the io engine's timing of
 * it, later ones wait here only until own.  Returns the bytes sent (fewer
 * than len: own came), or -errno.
 */
static ssize_t send_upto(struct rs_fd *e, int fd, const char *p, size_t len,
    int flags, bool nb, int64_t own)
{
	int64_t until = rs_clock_min(rs_tdeadline_get(),
	    rs_clock_now_ms() + FLUSH_MAX_MS);
	size_t done = 0;
	int more = 0, w;

	while (done < len) {
		struct iovec v = { (void *)(p + done), len - done };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
		ssize_t r = rs_httpconn_raw_send(e, fd, &m, flags | more);

		if (r > 0) {
			done += (size_t)r;
			more = own == RS_NEVER || nb ? 0 : MSG_DONTWAIT;
			continue;
		}
		if (r == -EINTR || ((nb || more) && r == -EAGAIN)) {
			w = more ? wait_own(e, fd, own) : wait_writable(fd,
			    until);
			if (w == -EAGAIN)
				return (ssize_t)done;
			if (w < 0)
				return w;
			continue;
		}
		if (r == -EAGAIN && done > 0)
			return (ssize_t)done;
		return r < 0 ? r : -EIO;
	}
	return (ssize_t)done;
}

/* Sends all len bytes at p, as send_upto() does with no time of its own. */
static int send_all(struct rs_fd *e, int fd, const char *p, size_t len,
    int flags)
{
	ssize_t r = send_upto(e, fd, p, len, flags, nonblocking(fd, flags),
	    RS_NEVER);

	return r < 0 ? (int)r : 0;
}

/* Byte i of the bytes msg carries. */
static char byte_at(const struct msghdr *msg, size_t i)
{
	for (size_t j = 0; j < msg->msg_iovlen; j++) {
		if (i < msg->msg_iov[j].iov_len)
			return ((const char *)msg->msg_iov[j].iov_base)[i];
		i -= msg->msg_iov[j].iov_len;
	}
	return 0;
}

/*
 * The program's own SO_SNDTIMEO ended the flush of the head (len bytes at
 * head, the edited copy of the k bytes this call gave) after `sent`
 * bytes.  The call returns, as the kernel's would, how many of its bytes
 * are out, and the connection passes through from here: the program goes
 * on with the rest of its bytes as they are.  Its bytes map onto the
 * edited head through what the two have in common: before the edit (the
 * deadline header) byte for byte, after it from the end.  A cut inside
 * the edit finishes the edit first, and so does a head with bytes from
 * earlier calls (held, reported as sent): those cannot be given back.
 */
static ssize_t cut_short(struct rs_httpconn *c, struct rs_fd *e, int fd,
    const struct msghdr *msg, size_t k, size_t before, const char *head,
    size_t len, size_t sent, int flags)
{
	size_t pre = 0, suf = 0, most = k < len ? k : len;
	int rc;

	rs_http_pass(&c->h, RS_HTTP_WHY_CUT);
	if (before > 0) {
		rc = send_all(e, fd, head + sent, len - sent, flags);
		return rc < 0 ? rc : (ssize_t)k;
	}
	while (pre < most && head[pre] == byte_at(msg, pre))
		pre++;
	while (suf < most - pre &&
	    head[len - 1 - suf] == byte_at(msg, k - 1 - suf))
		suf++;
	if (sent <= pre)
		return sent > 0 ? (ssize_t)sent : -EAGAIN;
	if (sent < len - suf) {
		rc = send_all(e, fd, head + sent, len - suf - sent, flags);
		if (rc < 0)
			return rc;
		sent = len - suf;
	}
	return (ssize_t)(k - (len - sent));
}

/* Puts the thread's deadline into the kept head, unless it has an earlier. */
static void add_header(struct rs_httpconn *c, int fd)
{
	char text[RS_DEADLINE_TEXT_MAX];
	int64_t ours = rs_tdeadline_epoch();

	if (ours == RS_NEVER)
		return;
	if (c->h.req.has_watch && !rs_deadline_replaces(c->h.req.watch, ours))
		return;
	rs_deadline_format(ours, text);
	rs_guard_enter();
	int rc = rs_http_head_put(&c->h, c->header, text, true);

	rs_guard_leave();
	if (rc < 0)
		return;
	rs_stats_add(c->rule, RS_STAT_DEADLINE_HEADERS);
	rs_log(RS_LOG_DEBUG, NULL, "%s: %s on fd %d (%lld ms left)",
	    c->h.req.target, c->header, fd,
	    (long long)(ours - rs_clock_epoch_ms()));
}

/* Gave up on the connection: what earlier writes gave goes out as it was. */
static int flush_held(struct rs_httpconn *c, struct rs_fd *e, int fd,
    int flags)
{
	size_t len;
	const char *kept = rs_http_kept(&c->h, &len);
	int rc = 0;

	if (c->holding && kept && c->held <= len)
		rc = send_all(e, fd, kept, c->held, flags);
	c->holding = false;
	c->held = 0;
	return rc;
}

/*
 * Points m at the program's vector less its first skip bytes (at most 64
 * pieces: a shorter send, which the program continues).  Returns the
 * number of pieces left.
 */
static size_t skip_bytes(const struct msghdr *msg, size_t skip,
    struct iovec v[64], struct msghdr *m)
{
	size_t n = 0;

	*m = *msg;
	if (skip == 0)
		return msg->msg_iovlen;
	for (size_t i = 0; i < msg->msg_iovlen && n < 64; i++) {
		const struct iovec *s = &msg->msg_iov[i];

		if (skip >= s->iov_len) {
			skip -= s->iov_len;
			continue;
		}
		v[n].iov_base = (char *)s->iov_base + skip;
		v[n++].iov_len = s->iov_len - skip;
		skip = 0;
	}
	m->msg_iov = v;
	m->msg_iovlen = n;
	return n;
}

/* Sends what follows the head in this call, and feeds what went. */
static ssize_t send_rest(struct rs_httpconn *c, struct rs_fd *e, int fd,
    const struct msghdr *msg, int flags, size_t skip)
{
	struct iovec v[64];
	struct msghdr m;
	enum rs_http_event ev;

	if (skip_bytes(msg, skip, v, &m) == 0)
		return 0;
	ssize_t r = rs_httpconn_raw_send(e, fd, &m, flags);

	if (r > 0 && !c->h.pass)
		rs_httpconn_feed(c, fd, RS_HTTP_REQ, m.msg_iov,
		    (int)m.msg_iovlen, (size_t)r, false, &ev);
	return r;
}

int rs_httpout_release(struct rs_httpconn *c, struct rs_fd *e, int fd)
{
	return flush_held(c, e, fd, 0);
}

/*
 * Whether this call's bytes go as they are (fed to the tracker after):
 * nothing is held, and either a head goes so already (it began with no
 * deadline, or its held part was released) or a new one begins with no
 * deadline that applies to the thread, so no header to put in.
 */
static bool unheld(const struct rs_httpconn *c)
{
	if (c->holding)
		return false;
	if (!c->h.req.head_done && c->h.req_seen > 0)
		return true;
	return rs_tdeadline_epoch() == RS_NEVER;
}

/* The outbound half of rs_httpconn_send(). */
static ssize_t send_out(struct rs_httpconn *c, struct rs_fd *e, int fd,
    const struct msghdr *msg, int flags)
{
	size_t total = rs_io_iov_total(msg->msg_iov, (int)msg->msg_iovlen),
	    k, len;
	bool at_head = !c->h.req.head_done || c->h.req.done;
	enum rs_http_event ev;
	int rc;

	/* Ancillary data cannot be held with the bytes it goes with. */
	if (msg->msg_controllen > 0)
		rs_http_pass(&c->h, RS_HTTP_WHY_MALFORMED);
	if (c->h.pass || !at_head || unheld(c)) {
		if ((rc = flush_held(c, e, fd, flags)) < 0)
			return rc;
		return send_rest(c, e, fd, msg, flags, 0);
	}
	rs_guard_enter();
	k = rs_httpconn_feed(c, fd, RS_HTTP_REQ, msg->msg_iov,
	    (int)msg->msg_iovlen, total, true, &ev);
	rs_guard_leave();
	if (ev == RS_HTTP_EV_PASS) {
		if ((rc = flush_held(c, e, fd, flags)) < 0)
			return rc;
		return send_rest(c, e, fd, msg, flags, 0);
	}
	if (ev != RS_HTTP_EV_HEAD) {
		c->holding = true;
		c->held += total;
		return (ssize_t)total;
	}
	add_header(c, fd);
	const char *head = rs_http_kept(&c->h, &len);
	size_t before = c->held;
	bool nb = nonblocking(fd, flags);
	ssize_t sent = send_upto(e, fd, head, len, flags, nb,
	    own_until(e, fd, nb));

	c->holding = false;
	c->held = 0;
	/* Own passed before any of it went: a cut at 0 (earlier calls'
	   bytes, reported sent, still go; this call's get EAGAIN). */
	if (sent == -EAGAIN && !nb)
		sent = 0;
	if (sent < 0)
		return sent;
	if ((size_t)sent < len)
		return cut_short(c, e, fd, msg, k, before, head, len,
		    (size_t)sent, flags);
	ssize_t r = k < total ? send_rest(c, e, fd, msg, flags, k) : 0;

	return (ssize_t)k + (r > 0 ? r : 0);
}

/*
 * The program's bytes on outbound c are the ClientHello of a session it
 * moves itself through memory BIOs (tlsprobe.h): noted for that session,
 * and from now on the socket carries records, never the tracker's (the
 * session's plaintext is fed by tls/ once it is followed).  Not for the
 * plaintext a TLS write of the library's sends (a sink is set then).
 */
static bool hello(struct rs_httpconn *c, const struct rs_fd *e, int fd,
    const struct msghdr *msg)
{
	if (e == NULL || rs_tls_sink_now != NULL || msg->msg_iovlen == 0 ||
	    !rs_tls_hello_note(e, fd, msg->msg_iov[0].iov_base,
	    msg->msg_iov[0].iov_len))
		return false;
	__atomic_store_n(&c->records, RS_HTTPCONN_RECORDS_UNNAMED,
	    __ATOMIC_RELAXED);
	return true;
}

ssize_t rs_httpconn_send(struct rs_httpconn *c, struct rs_fd *e, int fd,
    const struct msghdr *msg, int flags)
{
	enum rs_http_event ev;
	ssize_t r;

	if (!rs_httpconn_try(c))
		return rs_httpconn_raw_send(e, fd, msg, flags);
	rs_httpconn_lost(c);
	if (!c->inbound && hello(c, e, fd, msg)) {
		r = rs_httpconn_raw_send(e, fd, msg, flags);
	} else if (!c->inbound) {
		r = send_out(c, e, fd, msg, flags);
		rs_holdcount_note(&c->holder, c->holding && c->held > 0, fd);
	} else {
		r = rs_httpconn_raw_send(e, fd, msg, flags);
		if (r > 0 && !c->h.pass)
			rs_httpconn_feed(c, fd, RS_HTTP_RES, msg->msg_iov,
			    (int)msg->msg_iovlen, (size_t)r, false, &ev);
	}
	rs_httpconn_put(c);
	return r;
}
