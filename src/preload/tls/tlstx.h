/* SPDX-License-Identifier: MIT */
/*
 * tlstx.h - the HTTP retry engine's transport over an OpenSSL session:
 * the engine's looks at a response, its drains and its resends go
 * through the program's own session, as plaintext (httpretry.h's struct
 * rs_htx), by its library's calls (struct rs_tls_ops: ossl.h, gnutls.h),
 * and a replay on a new connection makes the session anew where that
 * library can (OpenSSL), else hands the response over.
 *
 * The engine reads ahead into the session's stash (tlsmap.h): a response
 * it judged and shows is given to the program from there first.
 * Thread-safety: the engine's, one thread per connection.
 */
#ifndef RS_TLSTX_H
#define RS_TLSTX_H

#include "httpretry.h"
#include "tlsmap.h"

extern const struct rs_htx rs_tls_tx;

/*
 * The replay cannot go on the new connection made for it: t's last
 * retried response goes to the program as it came, the end of the stream
 * after it; why is logged.
 * Returns -ECANCELED (or -ECONNRESET when it was too large to keep).
 */
int rs_tls_hand_over(struct rs_tls *t, const char *why);

#endif /* RS_TLSTX_H */
