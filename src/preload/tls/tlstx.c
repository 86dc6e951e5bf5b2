/* SPDX-License-Identifier: MIT */
/*
 * tlstx.c - the engine's transport over the program's TLS session, of
 * whichever library (tlstx.h).
 */
#include "tlstx.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "fdtable.h"
#include "httppoll.h"
#include "log.h"
#include "real.h"

/* Whether fd has something to read now (or an end, or an error). */
static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return rs_real_poll(&p, 1, 0) > 0;
}

static bool held(const struct rs_tls *t)
{
	return t->ops->held(t);
}

/*
 * Whether the peer reset t's connection while the library holds nothing
 * of it: its call would only meet the error, through the program's own
 * functions when the session moves its records so (own_io), and those
 * may not take an error outside the program's own call (curl's report
 * it through the transfer whose call they are in: none, in a wait).  No
 * call then; the error stays on the socket for the program's next one.
 */
static bool reset_under(struct rs_tls *t)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN };

	if (!t->own_io || held(t))
		return false;
	if (rs_real_poll(&p, 1, 0) != 1 || !(p.revents & POLLERR))
		return false;
	/* Not the library's failure: an earlier call's is not given. */
	t->real_failed = false;
	errno = ECONNRESET;
	return true;
}

/*
 * A call of the library's that failed (r < 0) on a socket the peer
 * closed or reset is the lost connection the engine looks for (GnuTLS
 * says only "pull error", and wants its session no more): ECONNRESET.
 */
static ssize_t lost(const struct rs_tls *t, ssize_t r)
{
	if (r < 0 && errno == EPROTO && rs_hconn_peer_done(t->fd))
		errno = ECONNRESET;
	return r;
}

/*
 * Whether a read of t's session may go now: on a blocking socket only
 * when it would not block; a non-blocking one says so itself (the
 * library's WANT_READ, E_AGAIN), with no poll of the library's.
 */
static bool may_read(const struct rs_tls *t, int fd, bool block)
{
	const struct rs_fd *e;

	if (block || held(t))
		return true;
	e = rs_fd_get(fd);
	return (e != NULL && e->nonblocking) || readable(fd);
}

/*
 * Reads more plaintext into the stash (moved to its start first), without
 * blocking unless block.  Returns what the read returned (libc's way).
 */
static ssize_t pull(struct rs_tls *t, int fd, bool block)
{
	ssize_t k;

	if (t->off > 0) {
		memmove(t->stash, t->stash + t->off, t->len - t->off);
		t->len -= t->off;
		t->off = 0;
	}
	if (t->len == sizeof(t->stash))
		return 0;
	if (!may_read(t, fd, block)) {
		t->want = POLLIN;
		errno = EAGAIN;
		return -1;
	}
	if (reset_under(t))
		return -1;
	k = lost(t, t->ops->read(t, t->stash + t->len,
	    sizeof(t->stash) - t->len));
	if (k > 0)
		t->len += (size_t)k;
	return k;
}

/*
 * The stash as the queue a peek sees.  Reads on only when the engine has
 * seen all of it (judged), so that a complete response already stashed
 * is never waited past.
 */
static ssize_t peek(struct rs_hconn *h, int fd, char *buf, size_t cap,
    bool block)
{
	struct rs_tls *t = h->tx_ctx;
	ssize_t k = 0;
	size_t n;

	/* A look at a response: a drain that follows keeps it anew.  Until
	   then the last response kept stays, for a hand-over when the look
	   finds the connection ended (the resend met a closed one). */
	t->keep_anew = true;
	if (rs_tls_stashed(t) <= h->m.judged)
		k = pull(t, fd, block);
	n = rs_tls_stashed(t) < cap ? rs_tls_stashed(t) : cap;
	if (n == 0)
		return k;	/* the end, or a failure */
	memcpy(buf, t->stash + t->off, n);
	return (ssize_t)n;
}

/* Keeps what a drain took, for a hand-over (rs_tls_hand_over()). */
static ssize_t keep(struct rs_tls *t, const char *buf, ssize_t n)
{
	if (t->keep_anew) {
		t->keep_anew = false;
		t->kept_len = 0;
		t->kept_over = false;
	}
	if (n > 0 && t->kept_len + (size_t)n <= sizeof(t->kept)) {
		memcpy(t->kept + t->kept_len, buf, (size_t)n);
		t->kept_len += (size_t)n;
	} else if (n > 0) {
		t->kept_over = true;
	}
	return n;
}

static ssize_t recv_tls(struct rs_hconn *h, int fd, char *buf, size_t cap)
{
	struct rs_tls *t = h->tx_ctx;
	size_t n = rs_tls_stashed(t) < cap ? rs_tls_stashed(t) : cap;

	if (n > 0) {
		memcpy(buf, t->stash + t->off, n);
		t->off += n;
		return keep(t, buf, (ssize_t)n);
	}
	if (!may_read(t, fd, false)) {
		t->want = POLLIN;
		errno = EAGAIN;
		return -1;
	}
	if (reset_under(t))
		return keep(t, buf, -1);
	return keep(t, buf, lost(t, t->ops->read(t, buf, cap)));
}

static ssize_t send_tls(struct rs_hconn *h, int fd, const char *p, size_t n)
{
	struct rs_tls *t = h->tx_ctx;

	(void)fd;
	if (reset_under(t))
		return -1;
	return lost(t, t->ops->write(t, p, n));
}

static bool ready(const struct rs_hconn *h)
{
	const struct rs_tls *t = h->tx_ctx;

	return rs_tls_stashed(t) > h->m.judged || held(t);
}

static bool shows(const struct rs_hconn *h)
{
	const struct rs_tls *t = h->tx_ctx;

	/* NULL: the session was freed (rs_tls_unbind()), its stash too.
	   The end after a hand-over is read as well, however often. */
	return t != NULL && (rs_tls_stashed(t) > 0 || t->eof);
}

static short want(const struct rs_hconn *h)
{
	const struct rs_tls *t = h->tx_ctx;

	return t->want == POLLOUT ? POLLOUT : POLLIN;
}

/*
 * The replay cannot go on a new connection: the last retried response
 * the drain kept goes to the program as it came, from the stash; after
 * it the stream ends if `ends` (the session was started anew on another
 * connection), else the program's library reads on from the connection
 * as it now is (its end, or its reset).  Returns -ECANCELED (the engine
 * passes; the read serves the stash), or -ECONNRESET when the response
 * was too large to keep.
 */
static int give(struct rs_tls *t, const char *why, bool ends)
{
	struct rs_log_fields f = { .event = "http_give_up", .attempt = -1,
		.wait_ms = -1 };

	rs_log(RS_LOG_WARN, &f, "https replay on fd %d handed over: %s",
	    t->fd, why);
	if (t->ops->clear_errors != NULL)
		t->ops->clear_errors();
	/* The library's own records not sent (a memory BIO's) belong to
	   the replay given up: never sent now. */
	t->pend_off = t->pend_len = 0;
	if (t->kept_over)
		return -ECONNRESET;
	memcpy(t->stash, t->kept, t->kept_len);
	t->off = 0;
	t->len = t->kept_len;
	t->kept_len = 0;
	t->eof = ends;
	return -ECANCELED;
}

int rs_tls_hand_over(struct rs_tls *t, const char *why)
{
	return give(t, why, true);
}

static const char not_anew[] = "its TLS library's sessions are not made anew";

/* No new connection: the session would have none (renews() false). */
static int hand_over(struct rs_hconn *h)
{
	struct rs_tls *t = h->tx_ctx;

	return give(t, t->membio ? "a new connection would be the program's "
	    "own (its TLS goes through memory BIOs)" : not_anew, false);
}

/* A new connection: the session anew, when its library can. */
static int renew(struct rs_hconn *h, struct rs_fd *e, int fd, bool block)
{
	struct rs_tls *t = h->tx_ctx;

	if (t->ops->renew == NULL)
		return rs_tls_hand_over(t, not_anew);
	return t->ops->renew(t, h, e, fd, block);
}

static bool renews(const struct rs_hconn *h)
{
	const struct rs_tls *t = h->tx_ctx;

	return t->ops->renew != NULL;
}

static bool pumped(const struct rs_hconn *h)
{
	const struct rs_tls *t = h->tx_ctx;

	return t != NULL && t->membio;
}

const struct rs_htx rs_tls_tx = {
	.peek = peek,
	.recv = recv_tls,
	.send = send_tls,
	.ready = ready,
	.want = want,
	.shows = shows,
	.renew = renew,
	.renews = renews,
	.pumped = pumped,
	.hand_over = hand_over,
};
