/* SPDX-License-Identifier: MIT */
/*
 * inbound.c - a server's TLS plaintext for the inbound deadline tracker
 * (inbound.h).  The session's socket is asked of OpenSSL (SSL_get_fd: a
 * server's session normally has a socket BIO), only for sessions in the
 * server role, only when a descriptor is tracked at all.
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
