/* SPDX-License-Identifier: MIT */
/*
 * ossl.h - OpenSSL sessions for the engine (ossl.c): their calls, and a
 * session made anew for a replay on a new connection.  Thread-safety:
 * one thread per session, as OpenSSL requires.
 */
#ifndef RS_OSSL_H
#define RS_OSSL_H

#include <stdbool.h>

#include "tlsmap.h"

extern const struct rs_tls_ops rs_tls_openssl;

/*
 * The libc convention for what an OpenSSL call on t returned (ret): the
 * count, 0 at the end of the stream, or -1 with errno (EAGAIN: it wants
 * to wait; EPROTO: a TLS failure, whose details OpenSSL keeps in its
 * error queue).  A failure is noted in t, so that the program's
 * SSL_get_error() asks OpenSSL itself about it.  The caller zeroes errno
 * before the call.
 */
ssize_t rs_tls_result(struct rs_tls *t, int ret);

/* Whether OpenSSL holds plaintext of t decrypted already (no poll shows it). */
bool rs_tls_ossl_held(const struct rs_tls *t);

/* Forgets OpenSSL's errors of a session the engine gave up. */
void rs_tls_ossl_clear_errors(void);

#endif /* RS_OSSL_H */
