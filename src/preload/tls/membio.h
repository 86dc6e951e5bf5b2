/* SPDX-License-Identifier: MIT */
/*
 * membio.h - OpenSSL sessions whose records the program moves itself:
 * it gives the session memory BIOs, writes what the session wrote into
 * one on its socket, and feeds what it reads from the socket into the
 * other before it calls SSL_read (python's asyncio and ssl.MemoryBIO).
 * No TLS call of such a session touches the socket: the socket is
 * learnt from the ClientHello the program wrote on it (tlsprobe.h).
 *
 * Such a session is followed only on a non-blocking socket of an `http`
 * rule, and the engine (httpwait.h) is stepped around the program's
 * pump: the engine reads the session only inside the program's own
 * SSL_read (the only time its records are there to read), the waits
 * never hide the socket's readability (the program's read of it is what
 * brings the records), and the library's own writes -- a resend at the
 * end of Retry-After, from the program's wait -- go into the session and
 * their records onto the socket at once, behind whatever the session's
 * BIO held.  A replay needs the same connection (the response allows
 * keep-alive): a new connection and handshake would have to be the
 * program's own, so a response that closes, or a connection lost, hands
 * the response over as it came.  Thread-safety: one thread per session.
 */
#ifndef RS_MEMBIO_H
#define RS_MEMBIO_H

#include "tlsmap.h"

extern const struct rs_tls_ops rs_tls_membio;

/*
 * A session not followed yet: when its ClientHello was seen on a
 * non-blocking socket of an `http` rule, it is followed from now on
 * (its entry returned), else NULL.  One load while no note waits.
 */
struct rs_tls *rs_tls_membio_find(void *ssl);

#endif /* RS_MEMBIO_H */
