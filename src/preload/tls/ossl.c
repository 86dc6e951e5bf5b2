/* SPDX-License-Identifier: MIT */
/*
 * ossl.c - OpenSSL's calls on a session for the engine's transport
 * (tlsmap.h's struct rs_tls_ops), and the making anew of a session for a
 * replay on a new connection.
 */
#include "ossl.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>

#include "io_timeout.h"
#include "sslreal.h"
#include "tlstx.h"

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
		t->want = e == RS_SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
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

static ssize_t read_ossl(struct rs_tls *t, void *buf, size_t n)
{
	errno = 0;
	return rs_tls_result(t, rs_ssl_SSL_read()(t->ssl, buf,
	    n > INT_MAX ? INT_MAX : (int)n));
}

static ssize_t write_ossl(struct rs_tls *t, const void *buf, size_t n)
{
	errno = 0;
	return rs_tls_result(t, rs_ssl_SSL_write()(t->ssl, buf,
	    n > INT_MAX ? INT_MAX : (int)n));
}

bool rs_tls_ossl_held(const struct rs_tls *t)
{
	return rs_ssl_SSL_pending()(t->ssl) > 0;
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

/*
 * One step of t's handshake: 0 once done, -EAGAIN while it waits for
 * the socket (t->want says for what), -EPROTO when it failed.
 */
static int step(struct rs_tls *t)
{
	int w = rs_ssl_SSL_connect()(t->ssl), why;

	if (w == 1)
		return 0;
	why = rs_ssl_SSL_get_error()(t->ssl, w);
	if (why != RS_SSL_ERROR_WANT_READ && why != RS_SSL_ERROR_WANT_WRITE)
		return -EPROTO;
	t->want = why == RS_SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
	return -EAGAIN;
}

/*
 * Starts t's session anew: the previous session is offered for
 * resumption, the rest of the program's settings are the SSL object's
 * own, which SSL_clear keeps (context, server name, verification mode,
 * callback and host check, ALPN).  The old connection ended (the server
 * closed it): marked shut down, so that SSL_clear does not take the
 * session for a broken one.  Returns 0 or -EPROTO.
 */
static int start(struct rs_tls *t)
{
	void *sess = rs_ssl_SSL_get1_session()(t->ssl);
	int r;

	t->was = rs_ssl_peer_cert(t->ssl);
	t->renewing = true;
	rs_ssl_SSL_set_shutdown()(t->ssl, RS_SSL_SENT_SHUTDOWN |
	    RS_SSL_RECEIVED_SHUTDOWN);
	r = rs_ssl_SSL_clear()(t->ssl) == 1 ? 0 : -EPROTO;
	if (sess != NULL) {
		if (r == 0)
			rs_ssl_SSL_set_session()(t->ssl, sess);
		rs_ssl_SSL_SESSION_free()(sess);
	}
	t->off = t->len = 0;
	return r;
}

/*
 * The handshake ended with r (0 or -errno): the replay goes on only when
 * the server showed the very certificate the program accepted, else the
 * response goes to the program as it came (rs_tls_hand_over()).
 */
static int finish(struct rs_tls *t, int r)
{
	void *was = t->was;

	t->was = NULL;
	t->renewing = false;
	if (r == 0)
		return same_cert(was, rs_ssl_peer_cert(t->ssl)) ? 0 :
		    rs_tls_hand_over(t, "the server showed another certificate");
	if (was != NULL)
		rs_ssl_X509_free()(was);
	return r == -EPROTO ? rs_tls_hand_over(t, "the new handshake failed") :
	    r;
}

/*
 * The session anew on the new connection fd (start()), then its
 * handshake: run to its end when block is true, waiting as a read of the
 * program's would (read_timeout, the deadline); else one step, -EAGAIN
 * while it waits for the socket, the next call going on from there.
 *
 * OpenSSL verifies the new certificate as the program asked it to; what
 * a program checks itself after its handshake (curl its host name and
 * pinned keys) is never asked again, so the replay goes on only when the
 * server shows the very certificate the program accepted (finish()).
 */
static int renew(struct rs_tls *t, struct rs_hconn *h, struct rs_fd *e,
    int fd, bool block)
{
	int r = t->renewing ? 0 : start(t), w;

	/* Each round is a handshake step; the waits end it at the read
	   deadline at the latest. */
	while (r == 0 && (r = step(t)) == -EAGAIN && block) {
		w = rs_hconn_wait(e, h, fd, t->want, rs_io_deadline(e, false),
		    RS_NEVER);
		r = w > 0 ? 0 : w == 0 ? -ETIMEDOUT : w;
	}
	return r == -EAGAIN ? r : finish(t, r);
}

void rs_tls_ossl_clear_errors(void)
{
	rs_ssl_ERR_clear_error()();
}

const struct rs_tls_ops rs_tls_openssl = {
	.read = read_ossl,
	.write = write_ossl,
	.held = rs_tls_ossl_held,
	.renew = renew,
	.clear_errors = rs_tls_ossl_clear_errors,
};
