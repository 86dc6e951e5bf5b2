/* SPDX-License-Identifier: MIT */
/*
 * inbound.c - a server's TLS plaintext for the inbound deadline tracker
 * (inbound.h).  The session's socket is asked of OpenSSL (SSL_get_fd: a
 * server's session normally has a socket BIO), only for sessions in the
 * server role, only when a descriptor is tracked at all; a GnuTLS
 * session's, of GnuTLS, and it counts only when the program gave the
 * session that accepted socket (rs_tls_in_bind).
 */
#include "inbound.h"

#include <sys/uio.h>

#include "guard.h"
#include "runtime.h"
#include "sslreal.h"
#include "tlsprobe.h"

bool rs_tls_in_begin(const void *ssl, struct rs_httpconn **c, int *fd)
{
	int (*is_server)(const void *);

	if (__builtin_expect(!(rs_runtime_rare_get() & RS_RARE_HTTPCONN), 1) ||
	    rs_guard_active())
		return false;
	is_server = rs_ssl_SSL_is_server();
	if (is_server == NULL || !is_server(ssl))
		return false;
	*fd = rs_ssl_SSL_get_fd()(ssl);
	*c = rs_httpconn_get(*fd);
	if (*c == NULL || !(*c)->inbound)
		return false;
	rs_tls_plain_fd = *fd;
	return true;
}

/* Whether the inbound tracker may be wanted now at all: one load. */
static bool wanted(void)
{
	return __builtin_expect(!!(rs_runtime_rare_get() & RS_RARE_HTTPCONN),
	    0) && !rs_guard_active();
}

void rs_tls_in_bind(const void *s, int fd)
{
	struct rs_httpconn *c;

	if (wanted() && (c = rs_httpconn_get(fd)) != NULL && c->inbound)
		rs_httpconn_records(fd, s);
}

bool rs_tls_in_begin_gnutls(void *s, struct rs_httpconn **c, int *fd)
{
	int r = -1, w = -1;

	if (!wanted())
		return false;
	rs_ssl_gnutls_transport_get_int2()(s, &r, &w);
	*c = rs_httpconn_get(r);
	if (r != w || *c == NULL || !(*c)->inbound ||
	    __atomic_load_n(&(*c)->records, __ATOMIC_RELAXED) != s)
		return false;
	*fd = r;
	rs_tls_plain_fd = r;
	return true;
}

void rs_tls_in_done(struct rs_httpconn *c, int fd, bool out, const void *p,
    long n)
{
	struct iovec v = { (void *)p, n > 0 ? (size_t)n : 0 };

	rs_tls_plain_fd = -1;
	if (n <= 0)
		return;
	if (out)
		rs_httpconn_wrote(c, fd, p, (size_t)n);
	else
		rs_httpconn_read(c, fd, &v, 1, n);
}
