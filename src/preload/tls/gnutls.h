/* SPDX-License-Identifier: MIT */
/*
 * gnutls.h - GnuTLS sessions for the engine (gnutls.c): the calls of
 * struct rs_tls_ops.  A GnuTLS session is not made anew for a replay on
 * a new connection: there the response is handed over as it came
 * (documented); replays on the same connection go through the session.
 * Thread-safety: one thread per session, as GnuTLS requires.
 */
#ifndef RS_GNUTLS_H
#define RS_GNUTLS_H

#include "tlsmap.h"

extern const struct rs_tls_ops rs_tls_gnutls;

#endif /* RS_GNUTLS_H */
