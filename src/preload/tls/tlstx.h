/*
 * tlstx.h - the HTTP retry engine's transport over an OpenSSL session:
 * the engine's looks at a response, its drains and its resends go
 * through the program's own SSL object, as plaintext (httpretry.h's
 * struct rs_htx), and a replay on a new connection makes the session
 * anew with the program's own settings (SSL_clear keeps the context,
 * server name, verification mode, callback and host check, and ALPN).
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
 * The libc convention for what an OpenSSL call on t returned (ret; got
 * bytes when ret > 0): the count, 0 at the end of the stream, or -1 with
 * errno (EAGAIN: it wants to wait; EPROTO: a TLS failure, whose details
 * OpenSSL keeps in its error queue).  A failure is noted in t, so that
 * the program's SSL_get_error() asks OpenSSL itself about it.
 */
ssize_t rs_tls_result(struct rs_tls *t, int ret);

#endif /* RS_TLSTX_H */
