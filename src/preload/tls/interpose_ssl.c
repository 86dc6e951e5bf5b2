/* SPDX-License-Identifier: MIT */
/*
 * interpose_ssl.c - the OpenSSL names this library exports (libssl 3 and
 * 1.1 share them): each a guard, a look-up and a delegation to tlsio.h,
 * or straight to OpenSSL when no connection of an HTTP rule was ever
 * made (one load).  A program that never loads libssl never calls them.
 *
 * The types are opaque (no OpenSSL header): an SSL* is a void *.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "alpn.h"
#include "guard.h"
#include "inbound.h"
#include "ossl.h"
#include "sslreal.h"
#include "tlsio.h"
#include "tlsmap.h"

#define EXPORT __attribute__((visibility("default")))

/* Prototypes, for -Wmissing-prototypes: OpenSSL's, with opaque types. */
EXPORT int SSL_read(void *s, void *buf, int n);
EXPORT int SSL_read_ex(void *s, void *buf, size_t n, size_t *got);
EXPORT int SSL_peek(void *s, void *buf, int n);
EXPORT int SSL_peek_ex(void *s, void *buf, size_t n, size_t *got);
EXPORT int SSL_write(void *s, const void *buf, int n);
EXPORT int SSL_write_ex(void *s, const void *buf, size_t n, size_t *put);
EXPORT int SSL_get_error(const void *s, int ret);
EXPORT int SSL_pending(const void *s);
EXPORT int SSL_has_pending(const void *s);
EXPORT int SSL_set_fd(void *s, int fd);
EXPORT int SSL_connect(void *s);
EXPORT int SSL_do_handshake(void *s);
EXPORT void SSL_free(void *s);
EXPORT int SSL_accept(void *s);
EXPORT int SSL_set_alpn_protos(void *s, const unsigned char *p,
    unsigned len);
EXPORT int SSL_CTX_set_alpn_protos(void *c, const unsigned char *p,
    unsigned len);
EXPORT void SSL_CTX_free(void *c);

/*
 * INBOUND(call, p, count, out): on a server's session the inbound
 * tracker follows (inbound.h), the real call, its plaintext fed.
 */
#define INBOUND(call, p, count, out)                                    \
	do {                                                            \
		struct rs_httpconn *c_;                                 \
		int fd_, r_;                                            \
		if (rs_tls_in_begin(s, &c_, &fd_)) {                    \
			r_ = (call);                                    \
			rs_tls_in_done(c_, fd_, out, p, (long)(count)); \
			return r_;                                      \
		}                                                       \
	} while (0)

int SSL_read(void *s, void *buf, int n)
{
	int r;

	INBOUND(r = rs_ssl_SSL_read()(s, buf, n), buf, r, false);
	if (!rs_tls_wanted())
		return rs_ssl_SSL_read()(s, buf, n);
	return rs_tls_read(s, buf, n, false);
}

int SSL_peek(void *s, void *buf, int n)
{
	int r;

	INBOUND(r = rs_ssl_SSL_peek()(s, buf, n), buf, 0, false);
	if (!rs_tls_wanted())
		return rs_ssl_SSL_peek()(s, buf, n);
	return rs_tls_read(s, buf, n, true);
}

/*
 * The _ex forms through the int ones, as OpenSSL's own are, for the
 * sessions the library follows; any other, and a call of 0 bytes (which
 * the _ex forms take as a success, the int ones not), goes to OpenSSL's
 * own _ex function.
 */
static int as_ex(int r, size_t *count)
{
	*count = r > 0 ? (size_t)r : 0;
	return r > 0;
}

static bool own_ex(void *s, size_t n)
{
	return !rs_tls_wanted() || n == 0 || rs_tls_lookup(s) == NULL;
}

static int clamp(size_t n)
{
	return n > INT_MAX ? INT_MAX : (int)n;
}

int SSL_read_ex(void *s, void *buf, size_t n, size_t *got)
{
	int r;

	INBOUND(r = rs_ssl_SSL_read_ex()(s, buf, n, got), buf, r == 1 ? *got :
	    0, false);
	if (own_ex(s, n))
		return rs_ssl_SSL_read_ex()(s, buf, n, got);
	return as_ex(rs_tls_read(s, buf, clamp(n), false), got);
}

int SSL_peek_ex(void *s, void *buf, size_t n, size_t *got)
{
	int r;

	INBOUND(r = rs_ssl_SSL_peek_ex()(s, buf, n, got), buf, 0, false);
	if (own_ex(s, n))
		return rs_ssl_SSL_peek_ex()(s, buf, n, got);
	return as_ex(rs_tls_read(s, buf, clamp(n), true), got);
}

int SSL_write(void *s, const void *buf, int n)
{
	int r;

	INBOUND(r = rs_ssl_SSL_write()(s, buf, n), buf, r, true);
	if (!rs_tls_wanted())
		return rs_ssl_SSL_write()(s, buf, n);
	return rs_tls_write(s, buf, n);
}

int SSL_write_ex(void *s, const void *buf, size_t n, size_t *put)
{
	int r;

	INBOUND(r = rs_ssl_SSL_write_ex()(s, buf, n, put), buf, r == 1 ?
	    *put : 0, true);
	if (own_ex(s, n))
		return rs_ssl_SSL_write_ex()(s, buf, n, put);
	return as_ex(rs_tls_write(s, buf, clamp(n)), put);
}

int SSL_get_error(const void *s, int ret)
{
	if (!rs_tls_wanted())
		return rs_ssl_SSL_get_error()(s, ret);
	return rs_tls_error(s, ret);
}

int SSL_pending(const void *s)
{
	if (!rs_tls_wanted())
		return rs_ssl_SSL_pending()(s);
	return rs_tls_pending(s);
}

int SSL_has_pending(const void *s)
{
	if (!rs_tls_wanted())
		return rs_ssl_SSL_has_pending()(s);
	return rs_tls_has_pending(s);
}

int SSL_set_fd(void *s, int fd)
{
	int r = rs_ssl_SSL_set_fd()(s, fd);

	if (r == 1 && rs_tls_wanted())
		rs_tls_bind(s, fd, &rs_tls_openssl);
	return r;
}

int SSL_connect(void *s)
{
	if (!rs_tls_wanted())
		return rs_ssl_SSL_connect()(s);
	return rs_tls_handshake(s, rs_ssl_SSL_connect());
}

int SSL_do_handshake(void *s)
{
	int r;

	INBOUND(r = rs_ssl_SSL_do_handshake()(s), NULL, 0, false);
	if (!rs_tls_wanted())
		return rs_ssl_SSL_do_handshake()(s);
	return rs_tls_handshake(s, rs_ssl_SSL_do_handshake());
}

int SSL_accept(void *s)
{
	int r;

	INBOUND(r = rs_ssl_SSL_accept()(s), NULL, 0, false);
	return rs_ssl_SSL_accept()(s);
}

void SSL_free(void *s)
{
	if (rs_tls_mapped)
		rs_tls_unbind(s);
	rs_alpn_forget(s);
	rs_ssl_SSL_free()(s);
}

/*
 * The ALPN offers are recorded whatever the policy (a context is often
 * made before the first connect): a few calls per program.  OpenSSL's
 * convention: 0 is success.
 */
int SSL_set_alpn_protos(void *s, const unsigned char *p, unsigned len)
{
	int r = rs_ssl_SSL_set_alpn_protos()(s, p, len);

	if (r == 0 && !rs_guard_active())
		rs_alpn_offered(s, p, len);
	return r;
}

int SSL_CTX_set_alpn_protos(void *c, const unsigned char *p, unsigned len)
{
	int r = rs_ssl_SSL_CTX_set_alpn_protos()(c, p, len);

	if (r == 0 && !rs_guard_active())
		rs_alpn_offered(c, p, len);
	return r;
}

void SSL_CTX_free(void *c)
{
	rs_alpn_forget(c);
	rs_ssl_SSL_CTX_free()(c);
}
