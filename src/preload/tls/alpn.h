/* SPDX-License-Identifier: MIT */
/*
 * alpn.h - the `alpn` setting of http rules over TLS (SPEC 9): a program
 * that offers both h2 and http/1.1 offers http/1.1 alone on connections
 * of a rule with `alpn: http/1.1`, so that its requests stay visible; a
 * connection that negotiated anything but HTTP/1.x passes through, said
 * once in the log.
 *
 * The offer is recorded where the program makes it (SSL_CTX_set_alpn_protos,
 * SSL_set_alpn_protos) and rewritten on the session just before its
 * handshake, when the socket (and so the rule) is known: bound by
 * SSL_set_fd, else the http-rule socket the thread connected last
 * (tlsprobe.h), which for a program that connects and then starts its
 * handshake (curl) is the session's.  A GnuTLS offer is narrowed as the
 * program makes it, for its socket known the same way (gnutls.c).
 * Thread-safe: a lock-free table of offers, written under a spin lock.
 */
#ifndef RS_ALPN_H
#define RS_ALPN_H

#include <stdbool.h>

#include "tlsmap.h"

/*
 * The program sets the offer p[0..len) (wire format) on obj (an SSL or
 * an SSL_CTX); records what it holds.
 */
void rs_alpn_offered(const void *obj, const unsigned char *p, unsigned len);

/* obj (an SSL or an SSL_CTX) is freed: its record goes. */
void rs_alpn_forget(const void *obj);

/*
 * Before a handshake call on ssl, for socket fd (-1: unknown): makes the
 * offer http/1.1 alone when the rule asks it and the offer held both h2
 * and http/1.1.
 */
void rs_alpn_before(void *ssl, int fd);

/*
 * Whether the offer p[0..len) (wire format) is to become http/1.1 alone
 * on socket fd: fd's rule has `http` with `alpn: http/1.1`, and the offer
 * holds both h2 and http/1.1.  For GnuTLS, whose offer cannot be replaced
 * once made (gnutls_alpn_set_protocols appends), so it is narrowed as the
 * program makes it (gnutls.c).
 */
bool rs_alpn_narrows(const unsigned char *p, unsigned len, int fd);

/*
 * Followed session t agreed on protocol p[0..len) (none: len 0): one
 * other than HTTP/1.x makes its connection pass through, logged once per
 * process.
 */
void rs_alpn_agreed(struct rs_tls *t, const unsigned char *p, unsigned len);

/*
 * After a handshake of ssl completed: a protocol other than HTTP/1.x
 * makes its connection pass through, logged once per process.
 */
void rs_alpn_after(void *ssl);

#endif /* RS_ALPN_H */
