/* SPDX-License-Identifier: MIT */
/*
 * tlsio.c - the program's SSL_read and SSL_write through the HTTP retry
 * engine (tlsio.h).  The engine is the plaintext one (httpretry.c), fed
 * by the session's transport (tlstx.h); this file only enters it, serves
 * reads from what it read ahead, and says what OpenSSL would say.
 */
#include "tlsio.h"

#include <errno.h>
#include <string.h>

#include "alpn.h"
#include "clock.h"
#include "fdtable.h"
#include "guard.h"
#include "holdcount.h"
#include "httpconn.h"
#include "httpout.h"
#include "httpio.h"
#include "httpwait.h"
#include "io.h"
#include "io_block.h"
#include "membio.h"
#include "ossl.h"
#include "runtime.h"
#include "sslreal.h"
#include "tlsmap.h"
#include "tlsprobe.h"
#include "tlstx.h"

bool rs_tls_wanted(void)
{
	return (rs_runtime_rare_get() & RS_RARE_HTTPRULE) &&
	    !rs_guard_active();
}

/*
 * Calls fn(ssl) for a session not mapped yet, learning its socket from
 * the records the call moves (tlsprobe.h), and maps it when that socket
 * is of an HTTP rule.
 */
static int probed(void *ssl, int (*fn)(void *, void *, int), void *buf,
    int n)
{
	int r, fd;

	rs_tls_probe_begin();
	r = fn(ssl, buf, n);
	fd = rs_tls_probe_end();
	if (fd >= 0)
		rs_tls_bind_own(ssl, fd, &rs_tls_openssl);
	return r;
}

struct rs_hconn *rs_tls_enter(struct rs_tls *t, struct rs_fd **e)
{
	struct rs_hconn *h;

	t->err = -1;
	t->real_failed = false;
	*e = rs_fd_get(t->fd);
	h = *e != NULL ? rs_hconn_enter_tx(*e, &rs_tls_tx, t) : NULL;
	/* This thread drives the session now: its waits may step it. */
	if (h != NULL)
		h->driver = rs_hconn_me();
	/* Plaintext a read gave the program unseen (read_lent()): the
	   engine no longer knows where the exchange stands. */
	if (h != NULL && t->unfed)
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
	t->unfed = false;
	return h;
}

void rs_tls_leave_write(struct rs_fd *e, struct rs_hconn *h, int fd,
    enum rs_hr_phase before)
{
	bool awaits = before != RS_HR_AWAIT && h->m.phase == RS_HR_AWAIT &&
	    e->nonblocking;

	rs_hconn_leave(e, h);
	/* The request is whole: epoll's records hide fd from now on. */
	if (awaits)
		rs_hio_changed(fd);
}

/*
 * The library's own failure r (-errno) as the program's result: OpenSSL's
 * own when it came from OpenSSL, else SSL_get_error() will say
 * WANT_READ (WANT_WRITE for a write) for -EAGAIN, SSL_ERROR_SSL for a
 * TLS failure, SSL_ERROR_SYSCALL with errno for the rest.
 */
static int failed(struct rs_tls *t, int r, bool out)
{
	if (t->real_failed && r != -ETIMEDOUT)
		return t->real_ret;
	t->err = r == -EAGAIN ? (out ? RS_SSL_ERROR_WANT_WRITE :
	    RS_SSL_ERROR_WANT_READ) : r == -EPROTO ? RS_SSL_ERROR_SSL :
	    RS_SSL_ERROR_SYSCALL;
	errno = -r;
	return -1;
}

int rs_tls_settle(struct rs_tls *t, struct rs_hconn *h, struct rs_fd **e)
{
	bool mid = h->m.phase == RS_HR_DRAIN || h->m.phase == RS_HR_WAIT ||
	    h->out_left > 0;
	int r = 0;

	if (h->m.phase != RS_HR_AWAIT && !mid)
		return 0;
	if (t->membio && !(*e)->nonblocking) {
		/* Made blocking since: the engine cannot wait for records
		   the program's own read brings (membio.h). */
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return 0;
	}
	if ((*e)->nonblocking) {
		/* Stepped as the waits step it, never blocking: nothing yet
		   is WANT_READ (E_AGAIN). */
		r = rs_hwait_settle(h, *e, t->fd);
		if (r == RS_HW_RESTEP) {
			rs_hio_changed(t->fd);
			r = -EAGAIN;
		}
	} else {
		/* A retry a non-blocking step began is finished first, as
		   httpio.c does. */
		h->own_until = rs_io_own_timeout(*e, t->fd, false,
		    rs_clock_now_ms());
		if (mid)
			r = rs_hwait_finish(h, *e, t->fd);
		if (r == 0 && (*e = rs_fd_get(t->fd)) == NULL)
			r = -ECONNRESET;
		if (r == 0)
			r = rs_hconn_settle(h, *e, t->fd, false);
	}
	/* The response is handed over as it came: it is in the stash. */
	if (r == -ECANCELED)
		r = 0;
	if (r == 0 && (*e = rs_fd_get(t->fd)) == NULL)
		r = -ECONNRESET;
	return r;
}

size_t rs_tls_from_stash(struct rs_tls *t, void *buf, size_t n, bool peek)
{
	size_t k = rs_tls_stashed(t);

	if (k > n)
		k = n;
	memcpy(buf, t->stash + t->off, k);
	if (!peek)
		t->off += k;
	return k;
}

void rs_tls_done(struct rs_fd *e, struct rs_hconn *h, const void *buf,
    ssize_t r, size_t asked)
{
	if (h == NULL)
		return;
	if (r > 0)
		rs_hr_read(&h->m, buf, (size_t)r);
	else if (r == 0 && asked > 0)
		rs_hr_read(&h->m, NULL, 0);
	rs_hconn_leave(e, h);
}

/* The deadline tracker of t's socket (outbound), or NULL. */
static struct rs_httpconn *outbound(const struct rs_tls *t)
{
	struct rs_httpconn *c = rs_httpconn_get(t->fd);

	return c != NULL && !c->inbound ? c : NULL;
}

static int read_bound(struct rs_tls *t, void *buf, int n, bool peek);

struct rs_tls *rs_tls_lookup(void *ssl)
{
	struct rs_tls *t = rs_tls_find(ssl);

	return t != NULL ? t : rs_tls_membio_find(ssl);
}

int rs_tls_read(void *ssl, void *buf, int n, bool peek)
{
	struct rs_tls *t = rs_tls_lookup(ssl);
	int r;

	if (t == NULL)
		return probed(ssl, peek ? rs_ssl_SSL_peek() : rs_ssl_SSL_read(),
		    buf, n);
	/* The session's records on its socket are not the trackers'.  (A
	   call of the program's may come inside another: both restored.) */
	int plain = rs_tls_plain_fd;
	uint8_t prog = t->prog;

	rs_tls_plain_fd = t->fd;
	t->prog = RS_TLS_PROG_READ;
	r = read_bound(t, buf, n, peek);
	t->prog = prog;
	rs_tls_plain_fd = plain;
	if (r > 0 && !peek)
		rs_tls_seen(t, buf, (size_t)r);
	return r;
}

void rs_tls_seen(const struct rs_tls *t, void *buf, size_t n)
{
	struct rs_httpconn *c = outbound(t);
	struct iovec v = { buf, n };

	if (c != NULL)
		rs_httpconn_read(c, t->fd, &v, 1, (ssize_t)n);
}

/*
 * The session's library's own read, with its own result: OpenSSL's
 * return value when it failed (SSL_get_error asks OpenSSL about it).
 */
static int read_real(struct rs_tls *t, void *buf, int n)
{
	ssize_t k = t->ops->read(t, buf, (size_t)(n > 0 ? n : 0));

	return k > 0 ? (int)k : t->real_failed ? t->real_ret : 0;
}

/*
 * The session's own read (or peek) for the program, the engine's work
 * done, with *h entered or NULL.  A session the program pumps through
 * memory BIOs runs the program's callbacks inside that read (node writes
 * its request from the end of the handshake, inside SSL_read): the
 * engine's state is let go meanwhile, so that such a call enters it as
 * any other, and taken again to follow what the read brought (*h and *e
 * afterwards; bytes it could not follow make the engine pass at its next
 * entry).
 */
static int read_lent(struct rs_tls *t, struct rs_fd **e, struct rs_hconn **h,
    void *buf, int n, bool peek)
{
	int r;

	if (*h == NULL || !t->membio)
		return peek ? rs_ssl_SSL_peek()(t->ssl, buf, n) :
		    read_real(t, buf, n);
	rs_hconn_leave(*e, *h);
	*h = NULL;
	r = peek ? rs_ssl_SSL_peek()(t->ssl, buf, n) : read_real(t, buf, n);
	if (r < 0 || peek)
		return r;
	if ((*e = rs_fd_get(t->fd)) != NULL)
		*h = rs_hconn_enter_tx(*e, &rs_tls_tx, t);
	t->unfed = *h == NULL && r > 0;
	return r;
}

static int read_bound(struct rs_tls *t, void *buf, int n, bool peek)
{
	struct rs_fd *e;
	struct rs_hconn *h;
	int r;

	h = rs_tls_enter(t, &e);
	/* A peek, too, sees only a response the program may see. */
	if (h != NULL && (r = rs_tls_settle(t, h, &e)) < 0) {
		rs_hconn_leave(e, h);
		return failed(t, r, false);
	}
	r = n > 0 ? (int)rs_tls_from_stash(t, buf, (size_t)n, peek) : 0;
	if (r == 0 && t->eof)
		t->err = RS_SSL_ERROR_ZERO_RETURN;
	else if (r == 0)
		r = read_lent(t, &e, &h, buf, n, peek);
	if (peek && h != NULL)
		rs_hconn_leave(e, h);
	else
		rs_tls_done(e, h, buf, r, (size_t)(n > 0 ? n : 0));
	return r;
}

/*
 * Sends p[0..n) of the program's on session t: through the retry engine
 * when its rule has `http`, else OpenSSL's own.  Returns the bytes taken
 * or -errno (t notes OpenSSL's own failure).
 */
static ssize_t write_bound(void *ctx, const void *p, size_t n)
{
	struct rs_tls *t = ctx;
	struct rs_fd *e;
	struct rs_hconn *h = rs_tls_enter(t, &e);
	ssize_t r;

	if (h != NULL) {
		enum rs_hr_phase before = h->m.phase;

		r = rs_hconn_write(h, e, t->fd, p, n, 0);
		rs_tls_leave_write(e, h, t->fd, before);
		return r;
	}
	r = t->ops->write(t, p, n);
	return r < 0 ? -errno : r;
}

ssize_t rs_tls_send(struct rs_tls *t, const void *buf, size_t n)
{
	struct rs_tls_sink sink = { write_bound, t };
	struct rs_httpconn *c;
	ssize_t r;
	int plain = rs_tls_plain_fd;

	t->err = -1;
	t->real_failed = false;
	rs_tls_plain_fd = t->fd;
	if ((c = outbound(t)) != NULL) {
		/* The deadline tracker edits the head on its way in. */
		struct iovec v = { (void *)buf, n };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

		rs_tls_sink_now = &sink;
		r = rs_httpconn_send(c, NULL, t->fd, &m, 0);
		rs_tls_sink_now = NULL;
		/*
		 * A head it still holds goes into the session with the
		 * program's next write, never by the release of held heads
		 * (httphold.h) at a close, a wait or the exit: that would
		 * put plaintext on the socket, between TLS records.
		 */
		rs_holdcount_note(&c->holder, false, t->fd);
	} else {
		r = write_bound(t, buf, n);
	}
	rs_tls_plain_fd = plain;
	return r;
}

int rs_tls_write(void *ssl, const void *buf, int n)
{
	struct rs_tls *t = rs_tls_lookup(ssl);
	ssize_t r;

	if (t == NULL)
		return probed(ssl, (int (*)(void *, void *, int))
		    rs_ssl_SSL_write(), (void *)buf, n);
	if (n <= 0)
		return rs_ssl_SSL_write()(ssl, buf, n);
	uint8_t prog = t->prog;

	t->prog = RS_TLS_PROG_WRITE;
	r = rs_tls_send(t, buf, (size_t)n);
	t->prog = prog;
	return r < 0 ? failed(t, (int)r, true) : (int)r;
}

int rs_tls_handshake(void *ssl, int (*fn)(void *))
{
	struct rs_tls *t = rs_tls_lookup(ssl);
	int r, fd;

	rs_alpn_before(ssl, t != NULL ? t->fd : rs_tls_connect_fd);
	if (t != NULL) {
		rs_tls_plain_fd = t->fd;
		r = fn(ssl);
		rs_tls_plain_fd = -1;
	} else {
		rs_tls_probe_begin();
		r = fn(ssl);
		fd = rs_tls_probe_end();
		if (fd >= 0)
			rs_tls_bind_own(ssl, fd, &rs_tls_openssl);
	}
	if (r == 1)
		rs_alpn_after(ssl);
	return r;
}

int rs_tls_error(const void *ssl, int ret)
{
	const struct rs_tls *t = rs_tls_find(ssl);

	if (t != NULL && t->err >= 0 && ret <= 0)
		return t->err;
	return rs_ssl_SSL_get_error()(ssl, ret);
}

int rs_tls_pending(const void *ssl)
{
	const struct rs_tls *t = rs_tls_find(ssl);
	int r = rs_ssl_SSL_pending()(ssl);

	return t != NULL ? r + (int)rs_tls_stashed(t) : r;
}

int rs_tls_has_pending(const void *ssl)
{
	const struct rs_tls *t = rs_tls_find(ssl);

	if (t != NULL && rs_tls_stashed(t) > 0)
		return 1;
	return rs_ssl_SSL_has_pending()(ssl);
}
