/*
 * httpout.c - the outbound half of SPEC 10: each request head the program
 * writes on a connection whose rule sets deadline_header leaves with that
 * header when the calling thread has a deadline.
 *
 * A head is held (the program's write reports it sent) until it is
 * complete, so the header can be put in before any of it leaves; then the
 * edited head goes out whole, and the bytes after it go as the program
 * wrote them.  Clients write a head in one call as a rule, so holding is
 * rare.  Anything the tracker does not understand (not HTTP, TLS, HTTP/2,
 * pipelining) is flushed as it was and passed through from then on.  The
 * kept head is the one the HTTP retries replay, so a replay carries the
 * header too, and only once.  Called with the entry taken (httpconn.h).
 */
#include "httpconn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "clock.h"
#include "deadline.h"
#include "guard.h"
#include "io_block.h"
#include "log.h"
#include "real.h"
#include "stats.h"
#include "tdeadline.h"

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

/*
 * Sends all len bytes at p (the held head), as the program's call would:
 * blocking unless the socket or the flags say otherwise, in which case it
 * waits for room itself, bounded by the thread's deadline.
 */
static int send_all(struct rs_fd *e, int fd, const char *p, size_t len,
    int flags)
{
	int fl = rs_real_fcntl(fd, F_GETFL, 0);
	bool nb = (flags & MSG_DONTWAIT) || (fl >= 0 && (fl & O_NONBLOCK));
	int64_t until = rs_clock_min(rs_tdeadline_get(),
	    rs_clock_now_ms() + FLUSH_MAX_MS);

	while (len > 0) {
		struct iovec v = { (void *)p, len };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
		ssize_t r = rs_httpconn_raw_send(e, fd, &m, flags);
		int w;

		if (r > 0) {
			p += r;
			len -= (size_t)r;
			continue;
		}
		if (r == -EINTR || (nb && r == -EAGAIN)) {
			if ((w = wait_writable(fd, until)) < 0)
				return w;
			continue;
		}
		return r < 0 ? (int)r : -EIO;
	}
	return 0;
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

ssize_t rs_httpout_send(struct rs_httpconn *c, struct rs_fd *e, int fd,
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
	if (c->h.pass || !at_head) {
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

	c->holding = false;
	c->held = 0;
	if ((rc = send_all(e, fd, head, len, flags)) < 0)
		return rc;
	ssize_t r = k < total ? send_rest(c, e, fd, msg, flags, k) : 0;

	return (ssize_t)k + (r > 0 ? r : 0);
}
