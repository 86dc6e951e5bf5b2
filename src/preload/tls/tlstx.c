/*
 * tlstx.c - the engine's transport over the program's OpenSSL session
 * (tlstx.h).
 */
#include "tlstx.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "io_timeout.h"
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

	if (rs_tls_stashed(t) <= h->m.judged)
		k = pull(t, fd, block);
	n = rs_tls_stashed(t) < cap ? rs_tls_stashed(t) : cap;
	if (n == 0)
		return k;	/* the end, or a failure */
	memcpy(buf, t->stash + t->off, n);
	return (ssize_t)n;
}

static ssize_t recv_tls(struct rs_hconn *h, int fd, char *buf, size_t cap)
{
	struct rs_tls *t = h->tx_ctx;
	size_t n = rs_tls_stashed(t) < cap ? rs_tls_stashed(t) : cap;

	if (n > 0) {
		memcpy(buf, t->stash + t->off, n);
		t->off += n;
		return (ssize_t)n;
	}
	if (!held(t) && !readable(fd)) {
		errno = EAGAIN;
		return -1;
	}
	errno = 0;
	return rs_tls_result(t, rs_ssl_SSL_read()(t->ssl, buf,
	    cap > (size_t)INT32_MAX ? INT32_MAX : (int)cap));
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
 * The session anew on the new connection fd: the previous session is
 * offered for resumption, the rest of the program's settings are the
 * SSL object's own, which SSL_clear keeps.  The old connection ended
 * (the server closed it): marked shut down, so that SSL_clear does not
 * take the session for a broken one.  The handshake waits as a read of
 * the program's would (read_timeout, the deadline).  A failure (a
 * certificate that does not verify) is -EPROTO, with OpenSSL's error
 * queue as the handshake left it.
 */
static int renew(struct rs_hconn *h, struct rs_fd *e, int fd)
{
	struct rs_tls *t = h->tx_ctx;
	void *sess = rs_ssl_SSL_get1_session()(t->ssl);
	int r, w;

	rs_ssl_SSL_set_shutdown()(t->ssl, RS_SSL_SENT_SHUTDOWN |
	    RS_SSL_RECEIVED_SHUTDOWN);
	if (rs_ssl_SSL_clear()(t->ssl) != 1)
		r = -EPROTO;
	else
		r = 0;
	if (sess != NULL) {
		if (r == 0)
			rs_ssl_SSL_set_session()(t->ssl, sess);
		rs_ssl_SSL_SESSION_free()(sess);
	}
	t->off = t->len = 0;
	while (r == 0 && (w = rs_ssl_SSL_connect()(t->ssl)) != 1) {
		int why = rs_ssl_SSL_get_error()(t->ssl, w);
		short ev = why == RS_SSL_ERROR_WANT_READ ? POLLIN :
		    why == RS_SSL_ERROR_WANT_WRITE ? POLLOUT : 0;

		if (ev == 0)
			return why == RS_SSL_ERROR_SSL ? -EPROTO : -ECONNRESET;
		r = rs_hconn_wait(e, h, fd, ev, rs_io_deadline(e, false),
		    RS_NEVER);
		r = r > 0 ? 0 : r == 0 ? -ETIMEDOUT : r;
	}
	return r;
}

const struct rs_htx rs_tls_tx = {
	.peek = peek,
	.recv = recv_tls,
	.send = send_tls,
	.ready = ready,
	.renew = renew,
};
