/* SPDX-License-Identifier: MIT */
/*
 * gnutls.c - GnuTLS's names this library exports, and GnuTLS's calls
 * for the engine's transport (gnutls.h).  A session is tied to its
 * socket where the program gives it one (gnutls_transport_set_int2, or
 * set_ptr with the descriptor as the pointer, as wget does), else by the
 * records its handshake moves (tlsprobe.h; curl's pointer).  The results
 * the program sees are GnuTLS's: GNUTLS_E_AGAIN while the engine holds a
 * response back on a non-blocking socket.
 *
 * The library's own sends are gnutls_record_send2's: GnuTLS's
 * gnutls_record_send is a jump to it through its PLT, and its uncork and
 * send_file call gnutls_record_send through theirs, so the wrappers would
 * otherwise see one write twice.  A thread-local depth marks the
 * library's own GnuTLS calls, during which the wrappers only forward.
 */
#include "gnutls.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>

#include "alpn.h"
#include "fdtable.h"
#include "inbound.h"
#include "sslreal.h"
#include "tlsio.h"
#include "tlsprobe.h"

/* GnuTLS's error codes (gnutls.h), stable across its versions. */
#define RS_GNUTLS_E_AGAIN (-28)
#define RS_GNUTLS_E_INTERRUPTED (-52)
#define RS_GNUTLS_E_PUSH_ERROR (-53)
#define RS_GNUTLS_E_PULL_ERROR (-54)
#define RS_GNUTLS_E_PREMATURE_TERMINATION (-110)

#define EXPORT __attribute__((visibility("default")))

EXPORT ssize_t gnutls_record_recv(void *s, void *buf, size_t n);
EXPORT ssize_t gnutls_record_send(void *s, const void *buf, size_t n);
EXPORT ssize_t gnutls_record_send2(void *s, const void *buf, size_t n,
    size_t pad, unsigned flags);
EXPORT int gnutls_record_uncork(void *s, unsigned flags);
EXPORT size_t gnutls_record_check_pending(void *s);
EXPORT int gnutls_handshake(void *s);
EXPORT int gnutls_alpn_set_protocols(void *s, const void *names,
    unsigned count, unsigned flags);
EXPORT void gnutls_transport_set_int2(void *s, int r, int w);
EXPORT void gnutls_transport_set_ptr(void *s, void *p);
EXPORT void gnutls_transport_set_ptr2(void *s, void *r, void *w);
EXPORT void gnutls_deinit(void *s);

/* gnutls_datum_t (gnutls.h). */
struct datum {
	unsigned char *data;
	unsigned int size;
};

/* Depth of the library's own GnuTLS calls on this thread. */
static __thread int inner __attribute__((tls_model("initial-exec")));

/* Whether the program's call may be followed: it is not one of ours. */
static bool ours(void)
{
	return inner == 0 && rs_tls_wanted();
}

/* GnuTLS's own send of buf[0..n), never through the wrappers. */
static ssize_t send_real(void *s, const void *buf, size_t n, size_t pad,
    unsigned flags)
{
	ssize_t (*fn)(void *, const void *, size_t, size_t, unsigned) =
	    rs_ssl_gnutls_record_send2();
	ssize_t r;

	inner++;
	r = fn != NULL ? fn(s, buf, n, pad, flags) :
	    rs_ssl_gnutls_record_send()(s, buf, n);
	inner--;
	return r;
}

static ssize_t recv_real(void *s, void *buf, size_t n)
{
	ssize_t r;

	inner++;
	r = rs_ssl_gnutls_record_recv()(s, buf, n);
	inner--;
	return r;
}

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
	return result(t, recv_real(t->ssl, buf, n));
}

static ssize_t write_gnutls(struct rs_tls *t, const void *buf, size_t n)
{
	t->want = POLLOUT;
	return result(t, send_real(t->ssl, buf, n, 0, 0));
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

/*
 * On a server's session the inbound tracker follows (inbound.h): the
 * real call, its plaintext fed; true when so, with *r its result.
 */
static bool in_recv(void *s, void *buf, size_t n, ssize_t *r)
{
	struct rs_httpconn *c;
	int fd;

	if (!rs_tls_in_begin_gnutls(s, &c, &fd))
		return false;
	*r = recv_real(s, buf, n);
	rs_tls_in_done(c, fd, false, buf, (long)*r);
	return true;
}

static bool in_send(void *s, const void *buf, size_t n, size_t pad,
    unsigned flags, ssize_t *r)
{
	struct rs_httpconn *c;
	int fd;

	if (!rs_tls_in_begin_gnutls(s, &c, &fd))
		return false;
	*r = send_real(s, buf, n, pad, flags);
	rs_tls_in_done(c, fd, true, buf, (long)*r);
	return true;
}

/* The program's read on followed session t: the engine's, then its. */
static ssize_t recv_bound(struct rs_tls *t, void *buf, size_t n)
{
	struct rs_fd *e;
	struct rs_hconn *h;
	ssize_t r;

	h = rs_tls_enter(t, &e);
	if (h != NULL && (r = rs_tls_settle(t, h, &e)) < 0) {
		rs_hconn_leave(e, h);
		return failed(t, (int)r, false);
	}
	r = (ssize_t)rs_tls_from_stash(t, buf, n, false);
	if (r == 0 && !t->eof)
		r = recv_real(t->ssl, buf, n);
	rs_tls_done(e, h, buf, r, n);
	return r;
}

ssize_t gnutls_record_recv(void *s, void *buf, size_t n)
{
	struct rs_tls *t;
	ssize_t r;

	if (inner == 0 && in_recv(s, buf, n, &r))
		return r;
	if (!ours() || (t = rs_tls_find(s)) == NULL)
		return rs_ssl_gnutls_record_recv()(s, buf, n);
	/* The session's records on its socket are not the trackers'. */
	rs_tls_plain_fd = t->fd;
	r = recv_bound(t, buf, n);
	rs_tls_plain_fd = -1;
	if (r > 0)
		rs_tls_seen(t, buf, (size_t)r);
	return r;
}

ssize_t gnutls_record_send(void *s, const void *buf, size_t n)
{
	return gnutls_record_send2(s, buf, n, 0, 0);
}

/*
 * A send with padding or flags (corking) is GnuTLS's alone: the session
 * passes through from then on, as one never followed.
 */
ssize_t gnutls_record_send2(void *s, const void *buf, size_t n, size_t pad,
    unsigned flags)
{
	struct rs_tls *t;
	ssize_t r;

	if (inner == 0 && in_send(s, buf, n, pad, flags, &r))
		return r;
	if (!ours() || (t = rs_tls_find(s)) == NULL || n == 0)
		return send_real(s, buf, n, pad, flags);
	if (pad != 0 || flags != 0) {
		rs_tls_unbind(s);
		return send_real(s, buf, n, pad, flags);
	}
	r = rs_tls_send(t, buf, n);
	return r < 0 ? failed(t, (int)r, true) : r;
}

/* A corked session's data goes out through gnutls_record_send: as is. */
int gnutls_record_uncork(void *s, unsigned flags)
{
	int r;

	inner++;
	r = rs_ssl_gnutls_record_uncork()(s, flags);
	inner--;
	return r;
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
	if (r != w)
		return;
	rs_tls_in_bind(s, r);
	if (rs_tls_wanted())
		rs_tls_bind(s, r, &rs_tls_gnutls);
}

/* A pointer that is a descriptor (GnuTLS's default transport takes it so). */
static void bind_ptr(void *s, void *p)
{
	uintptr_t v = (uintptr_t)p;

	if (v >= RS_FD_MAX)
		return;
	rs_tls_in_bind(s, (int)v);
	if (rs_tls_wanted())
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

/*
 * An offer of h2 and http/1.1 becomes http/1.1 alone as the program makes
 * it, when the rule of the session's socket asks (alpn.h): bound already,
 * else the http-rule socket the thread connected last (the programs seen
 * connect, then make the session).  Later, GnuTLS would only append.
 */
static bool narrows(void *s, const struct datum *d, unsigned count)
{
	const struct rs_tls *t = rs_tls_find(s);
	unsigned char wire[8 * 256];
	unsigned len = 0;

	for (unsigned i = 0; i < count && i < 8; i++) {
		if (d[i].size == 0 || d[i].size > 255)
			return false;
		wire[len] = (unsigned char)d[i].size;
		memcpy(wire + len + 1, d[i].data, d[i].size);
		len += 1 + d[i].size;
	}
	return count <= 8 && rs_alpn_narrows(wire, len, t != NULL ? t->fd :
	    rs_tls_connect_fd);
}

/* GnuTLS's success is 0. */
int gnutls_alpn_set_protocols(void *s, const void *names, unsigned count,
    unsigned flags)
{
	static const struct datum h1 = { (unsigned char *)"http/1.1", 8 };

	if (ours() && names != NULL && narrows(s, names, count))
		return rs_ssl_gnutls_alpn_set_protocols()(s, &h1, 1, flags);
	return rs_ssl_gnutls_alpn_set_protocols()(s, names, count, flags);
}

/* After the handshake of t: what it agreed on (alpn.h). */
static void agreed(struct rs_tls *t)
{
	struct datum p = { NULL, 0 };

	if (rs_ssl_gnutls_alpn_get_selected_protocol()(t->ssl, &p) != 0)
		p.size = 0;
	rs_alpn_agreed(t, p.data, p.size);
}

/*
 * The handshake of a session whose transport the program did not give as
 * a descriptor (a pointer of its own, with its own push and pull
 * functions: curl's): the socket of an HTTP rule its records go through
 * during the call is its socket (tlsprobe.h), and it is followed from
 * then on as one tied by gnutls_transport_set_int2.  A non-blocking
 * handshake's first call writes the ClientHello, so the first call
 * learns it.
 */
static int probed(void *s, struct rs_tls **t)
{
	int r, fd;

	rs_tls_probe_begin();
	inner++;
	r = rs_ssl_gnutls_handshake()(s);
	inner--;
	fd = rs_tls_probe_end();
	*t = fd >= 0 ? rs_tls_bind_own(s, fd, &rs_tls_gnutls) : NULL;
	return r;
}

/*
 * The handshake of a followed session: its records on the socket are not
 * the trackers', and a protocol other than HTTP/1.x agreed makes it pass
 * through.  GnuTLS's success is 0.
 */
int gnutls_handshake(void *s)
{
	struct rs_tls *t;
	int r;

	if (!ours())
		return rs_ssl_gnutls_handshake()(s);
	if ((t = rs_tls_find(s)) == NULL) {
		r = probed(s, &t);
	} else {
		rs_tls_plain_fd = t->fd;
		inner++;
		r = rs_ssl_gnutls_handshake()(s);
		inner--;
		rs_tls_plain_fd = -1;
	}
	if (r == 0 && t != NULL)
		agreed(t);
	return r;
}
