/* SPDX-License-Identifier: MIT */
/*
 * inbound.h - inbound deadlines (SPEC 10) for servers that read their
 * requests through OpenSSL or GnuTLS: on an accepted connection the
 * tracker follows (httpconn.h, a policy with inbound_deadline), the
 * plaintext of the server's SSL_read and SSL_write (gnutls_record_recv
 * and _send) is fed to it, and the records its calls move on the socket
 * are not (tlsprobe.h's rs_tls_plain_fd; for GnuTLS, whose other calls
 * move records too, httpconn.h's rs_httpconn_records()).
 *
 * Costs a server without inbound_deadline one load per TLS call.
 * Thread-safe as the tracker is.
 */
#ifndef RS_INBOUND_H
#define RS_INBOUND_H

#include <stdbool.h>
#include <stddef.h>

#include "httpconn.h"

/*
 * Whether ssl is a server's session on an inbound connection the tracker
 * follows: then *c and *fd are set, and the socket's records are marked
 * as not the tracker's until rs_tls_in_done().
 */
bool rs_tls_in_begin(const void *ssl, struct rs_httpconn **c, int *fd);

/*
 * The program gave GnuTLS session s the socket fd: when fd is an accepted
 * connection the tracker follows, its records are s's from now on.
 */
void rs_tls_in_bind(const void *s, int fd);

/*
 * rs_tls_in_begin() for GnuTLS session s: one given its socket as an
 * accepted connection the tracker follows (rs_tls_in_bind()).
 */
bool rs_tls_in_begin_gnutls(void *s, struct rs_httpconn **c, int *fd);

/*
 * After the call: n bytes of plaintext at p were read (out: written), or
 * none; feeds them to the tracker.
 */
void rs_tls_in_done(struct rs_httpconn *c, int fd, bool out, const void *p,
    long n);

#endif /* RS_INBOUND_H */
