/* SPDX-License-Identifier: MIT */
/*
 * gnutls.c - GnuTLS's names this library exports, and GnuTLS's calls
 * for the engine's transport (gnutls.h).  A session is tied to its
 * socket where the program gives it one (gnutls_transport_set_int2, or
 * set_ptr with the descriptor as the pointer, as wget does).  The results
 * the program sees are GnuTLS's: GNUTLS_E_AGAIN while the engine holds a
 * response back on a non-blocking socket.
 */
#include "gnutls.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>

#include "fdtable.h"
#include "sslreal.h"
#include "tlsio.h"

/* GnuTLS's error codes (gnutls.h), stable across its versions. */
#define RS_GNUTLS_E_AGAIN (-28)
#define RS_GNUTLS_E_INTERRUPTED (-52)
#define RS_GNUTLS_E_PUSH_ERROR (-53)
#define RS_GNUTLS_E_PULL_ERROR (-54)
#define RS_GNUTLS_E_PREMATURE_TERMINATION (-110)

#define EXPORT __attribute__((visibility("default")))

EXPORT ssize_t gnutls_record_recv(void *s, void *buf, size_t n);
EXPORT ssize_t gnutls_record_send(void *s, const void *buf, size_t n);
EXPORT size_t gnutls_record_check_pending(void *s);
EXPORT void gnutls_transport_set_int2(void *s, int r, int w);
EXPORT void gnutls_transport_set_ptr(void *s, void *p);
EXPORT void gnutls_transport_set_ptr2(void *s, void *r, void *w);
EXPORT void gnutls_deinit(void *s);

/* A GnuTLS result in libc's convention, noting a failure in t. */
static ssize_t result(struct rs_tls *t, ssize_t r)
{
	t->real_failed = r < 0;
	if (r >= 0)
		return r;
	t->real_ret = (int)r;
	if (r == RS_GNUTLS_E_PREMATURE_TERMINATION)
		return 0;
	errno = r == RS_GNUTLS_E_AGAIN ? EAGAIN : r == RS_GNUTLS_E_INTERRUPTED ?
	    EINTR : EPROTO;
	return -1;
}

static ssize_t read_gnutls(struct rs_tls *t, void *buf, size_t n)
{
	t->want = POLLIN;
	return result(t, rs_ssl_gnutls_record_recv()(t->ssl, buf, n));
}

static ssize_t write_gnutls(struct rs_tls *t, const void *buf, size_t n)
{
	t->want = POLLOUT;
	return result(t, rs_ssl_gnutls_record_send()(t->ssl, buf, n));
}

static bool held(const struct rs_tls *t)
{
	return rs_ssl_gnutls_record_check_pending()(t->ssl) > 0;
}

const struct rs_tls_ops rs_tls_gnutls = {
	.read = read_gnutls,
	.write = write_gnutls,
	.held = held,
};

/*
 * The library's own failure r (-errno) as the program's result: GnuTLS's
 * own when it came from GnuTLS, else E_AGAIN, E_INTERRUPTED, or a pull
 * (push) error with errno set.
 */
static ssize_t failed(struct rs_tls *t, int r, bool out)
{
	if (t->real_failed && r != -ETIMEDOUT)
		return t->real_ret;
	errno = -r;
	return r == -EAGAIN ? RS_GNUTLS_E_AGAIN : r == -EINTR ?
	    RS_GNUTLS_E_INTERRUPTED : out ? RS_GNUTLS_E_PUSH_ERROR :
	    RS_GNUTLS_E_PULL_ERROR;
}

ssize_t gnutls_record_recv(void *s, void *buf, size_t n)
{
	struct rs_tls *t;
	struct rs_fd *e;
	struct rs_hconn *h;
	ssize_t r;

	if (!rs_tls_wanted() || (t = rs_tls_find(s)) == NULL)
		return rs_ssl_gnutls_record_recv()(s, buf, n);
	h = rs_tls_enter(t, &e);
	if (h != NULL && (r = rs_tls_settle(t, h, &e)) < 0) {
		rs_hconn_leave(e, h);
		return failed(t, (int)r, false);
	}
	r = (ssize_t)rs_tls_from_stash(t, buf, n, false);
	if (r == 0 && !t->eof)
		r = rs_ssl_gnutls_record_recv()(s, buf, n);
	rs_tls_done(e, h, buf, r, n);
	return r;
}

ssize_t gnutls_record_send(void *s, const void *buf, size_t n)
{
	struct rs_tls *t;
	struct rs_fd *e;
	struct rs_hconn *h;
	ssize_t r;

	if (!rs_tls_wanted() || (t = rs_tls_find(s)) == NULL || n == 0 ||
	    (h = rs_tls_enter(t, &e)) == NULL)
		return rs_ssl_gnutls_record_send()(s, buf, n);
	enum rs_hr_phase before = h->m.phase;

	r = rs_hconn_write(h, e, t->fd, buf, n, 0);
	rs_tls_leave_write(e, h, t->fd, before);
	return r < 0 ? failed(t, (int)r, true) : r;
}

size_t gnutls_record_check_pending(void *s)
{
	size_t r = rs_ssl_gnutls_record_check_pending()(s);
	const struct rs_tls *t;

	if (rs_tls_wanted() && (t = rs_tls_find(s)) != NULL)
		r += rs_tls_stashed(t);
	return r;
}

void gnutls_transport_set_int2(void *s, int r, int w)
{
	rs_ssl_gnutls_transport_set_int2()(s, r, w);
	if (r == w && rs_tls_wanted())
		rs_tls_bind(s, r, &rs_tls_gnutls);
}

/* A pointer that is a descriptor (GnuTLS's default transport takes it so). */
static void bind_ptr(void *s, void *p)
{
	uintptr_t v = (uintptr_t)p;

	if (v < RS_FD_MAX && rs_tls_wanted())
		rs_tls_bind(s, (int)v, &rs_tls_gnutls);
}

void gnutls_transport_set_ptr(void *s, void *p)
{
	rs_ssl_gnutls_transport_set_ptr()(s, p);
	bind_ptr(s, p);
}

void gnutls_transport_set_ptr2(void *s, void *r, void *w)
{
	rs_ssl_gnutls_transport_set_ptr2()(s, r, w);
	if (r == w)
		bind_ptr(s, r);
}

void gnutls_deinit(void *s)
{
	if (rs_tls_mapped)
		rs_tls_unbind(s);
	rs_ssl_gnutls_deinit()(s);
}
