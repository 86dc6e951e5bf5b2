/*
 * tlstx.c - the engine's transport over the program's OpenSSL session
 * (tlstx.h).
 */
#include "tlstx.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "io_timeout.h"
#include "log.h"
#include "real.h"
#include "sslreal.h"

ssize_t rs_tls_result(struct rs_tls *t, int ret)
{
	int e, save = errno;

	t->real_failed = ret <= 0;
	if (ret > 0)
		return ret;
	t->real_ret = ret;
	e = rs_ssl_SSL_get_error()(t->ssl, ret);
	switch (e) {
	case RS_SSL_ERROR_WANT_READ:
	case RS_SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case RS_SSL_ERROR_ZERO_RETURN:
		return 0;
	case RS_SSL_ERROR_SYSCALL:
		/* No errno: the peer closed without close_notify. */
		if (save == 0 || ret == 0)
			return 0;
		errno = save;
		return -1;
	default:
		errno = EPROTO;
		return -1;
	}
}

/* Whether fd has something to read now (or an end, or an error). */
static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return rs_real_poll(&p, 1, 0) > 0;
}

/* Plaintext OpenSSL holds decrypted already, which no poll reports. */
static bool held(const struct rs_tls *t)
{
	return rs_ssl_SSL_pending()(t->ssl) > 0;
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
	if (!block && !held(t) && !readable(fd)) {
		errno = EAGAIN;
		return -1;
	}
	errno = 0;
	k = rs_tls_result(t, rs_ssl_SSL_read()(t->ssl, t->stash + t->len,
	    (int)(sizeof(t->stash) - t->len)));
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

	/* A look at a response: a drain that follows keeps it anew. */
	t->kept_len = 0;
	t->kept_over = false;
	if (rs_tls_stashed(t) <= h->m.judged)
		k = pull(t, fd, block);
	n = rs_tls_stashed(t) < cap ? rs_tls_stashed(t) : cap;
	if (n == 0)
		return k;	/* the end, or a failure */
	memcpy(buf, t->stash + t->off, n);
	return (ssize_t)n;
}

/* Keeps what a drain took, for a hand-over (renew()). */
static ssize_t keep(struct rs_tls *t, const char *buf, ssize_t n)
{
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
	if (!held(t) && !readable(fd)) {
		errno = EAGAIN;
		return -1;
	}
	errno = 0;
	return keep(t, buf, rs_tls_result(t, rs_ssl_SSL_read()(t->ssl, buf,
	    cap > (size_t)INT32_MAX ? INT32_MAX : (int)cap)));
}

static ssize_t send_tls(struct rs_hconn *h, int fd, const char *p, size_t n)
{
	struct rs_tls *t = h->tx_ctx;

	(void)fd;
	errno = 0;
	return rs_tls_result(t, rs_ssl_SSL_write()(t->ssl, p,
	    n > (size_t)INT32_MAX ? INT32_MAX : (int)n));
}

static bool ready(const struct rs_hconn *h)
{
	const struct rs_tls *t = h->tx_ctx;

	return rs_tls_stashed(t) > h->m.judged || held(t);
}

/*
 * The replay cannot go on the new connection (its handshake failed, or
 * the server showed another certificate than the one the program took):
 * the retried response goes to the program as it came, from the stash,
 * and the stream ends after it, as the server's close had ended it.
 * Returns -ECANCELED (the engine passes; the read serves the stash), or
 * -ECONNRESET when the response was too large to keep.
 */
static int hand_over(struct rs_tls *t, const char *why)
{
	struct rs_log_fields f = { .event = "http_give_up", .attempt = -1,
		.wait_ms = -1 };

	rs_log(RS_LOG_WARN, &f, "https replay on fd %d handed over: %s",
	    t->fd, why);
	rs_ssl_ERR_clear_error()();
	if (t->kept_over)
		return -ECONNRESET;
	memcpy(t->stash, t->kept, t->kept_len);
	t->off = 0;
	t->len = t->kept_len;
	t->eof = true;
	return -ECANCELED;
}

/* Whether certificates a and b (either may be NULL) are one. */
static bool same_cert(void *a, void *b)
{
	bool same = a != NULL && b != NULL && rs_ssl_X509_cmp()(a, b) == 0;

	if (a != NULL)
		rs_ssl_X509_free()(a);
	if (b != NULL)
		rs_ssl_X509_free()(b);
	return same;
}

/* Runs the handshake of t's session on fd to its end: 0 or -errno. */
static int handshake(struct rs_hconn *h, struct rs_fd *e, int fd)
{
	struct rs_tls *t = h->tx_ctx;
	int r = 0, w;

	while (r == 0 && (w = rs_ssl_SSL_connect()(t->ssl)) != 1) {
		int why = rs_ssl_SSL_get_error()(t->ssl, w);
		short ev = why == RS_SSL_ERROR_WANT_READ ? POLLIN :
		    why == RS_SSL_ERROR_WANT_WRITE ? POLLOUT : 0;

		if (ev == 0)
			return -EPROTO;
		r = rs_hconn_wait(e, h, fd, ev, rs_io_deadline(e, false),
		    RS_NEVER);
		r = r > 0 ? 0 : r == 0 ? -ETIMEDOUT : r;
	}
	return r;
}

/*
 * The session anew on the new connection fd: the previous session is
 * offered for resumption, the rest of the program's settings are the
 * SSL object's own, which SSL_clear keeps (context, server name,
 * verification mode, callback and host check, ALPN).  The old connection
 * ended (the server closed it): marked shut down, so that SSL_clear does
 * not take the session for a broken one.  The handshake waits as a read
 * of the program's would (read_timeout, the deadline).
 *
 * OpenSSL verifies the new certificate as the program asked it to; what
 * a program checks itself after its handshake (curl its host name and
 * pinned keys) is never asked again, so the replay goes on only when the
 * server shows the very certificate the program accepted.  Otherwise the
 * response goes to the program as it came (hand_over()).
 */
static int renew(struct rs_hconn *h, struct rs_fd *e, int fd)
{
	struct rs_tls *t = h->tx_ctx;
	void *sess = rs_ssl_SSL_get1_session()(t->ssl);
	void *was = rs_ssl_peer_cert(t->ssl);
	int r;

	rs_ssl_SSL_set_shutdown()(t->ssl, RS_SSL_SENT_SHUTDOWN |
	    RS_SSL_RECEIVED_SHUTDOWN);
	r = rs_ssl_SSL_clear()(t->ssl) == 1 ? 0 : -EPROTO;
	if (sess != NULL) {
		if (r == 0)
			rs_ssl_SSL_set_session()(t->ssl, sess);
		rs_ssl_SSL_SESSION_free()(sess);
	}
	t->off = t->len = 0;
	if (r == 0)
		r = handshake(h, e, fd);
	if (r == 0)
		return same_cert(was, rs_ssl_peer_cert(t->ssl)) ? 0 :
		    hand_over(t, "the server showed another certificate");
	if (was != NULL)
		rs_ssl_X509_free()(was);
	return r == -EPROTO ? hand_over(t, "the new handshake failed") : r;
}

const struct rs_htx rs_tls_tx = {
	.peek = peek,
	.recv = recv_tls,
	.send = send_tls,
	.ready = ready,
	.renew = renew,
};
