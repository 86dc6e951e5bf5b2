/* SPDX-License-Identifier: MIT */
/*
 * tlsio.h - the program's plaintext calls on an OpenSSL session
 * (SSL_read, SSL_write and their kin, interpose_ssl.c), through the HTTP
 * retry engine of the session's socket when its rule has `http`.
 *
 * Results follow SSL_read's and SSL_write's convention: a count > 0, or
 * <= 0 with SSL_get_error() (rs_tls_error()) saying why.  A response the
 * engine holds back is SSL_ERROR_WANT_READ, never a system call error.
 * Thread-safe as the engine is: one thread per session.
 */
#ifndef RS_TLSIO_H
#define RS_TLSIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fdtable.h"
#include "httpretry.h"
#include "tlsmap.h"

/*
 * The program reads (peek: looks at) up to n bytes of session ssl into
 * buf.  real is the call the program made, for when the library has
 * nothing to do: it returns OpenSSL's result.
 */
int rs_tls_read(void *ssl, void *buf, int n, bool peek);

/* The program writes buf[0..n) on session ssl. */
int rs_tls_write(void *ssl, const void *buf, int n);

/*
 * The program writes buf[0..n) (n > 0) on followed session t, of either
 * library: through the deadline tracker of its socket when its rule sets
 * deadline_header (which edits a request head on its way in), and the
 * retry engine when it has `http`.  Returns the bytes taken, or -errno
 * (t notes the TLS library's own failure: real_failed, real_ret).
 */
ssize_t rs_tls_send(struct rs_tls *t, const void *buf, size_t n);

/*
 * The program was given buf[0..n) (n > 0) of session t's plaintext: the
 * deadline tracker of its socket sees the response.
 */
void rs_tls_seen(const struct rs_tls *t, void *buf, size_t n);

/*
 * The entry of session ssl: mapped already, or a session the program
 * pumps through memory BIOs whose socket is now known (membio.h); NULL
 * for a session the library does not follow.
 */
struct rs_tls *rs_tls_lookup(void *ssl);

/* A handshake call (SSL_connect, SSL_do_handshake) on ssl, real one fn. */
int rs_tls_handshake(void *ssl, int (*fn)(void *));

/* SSL_get_error(ssl, ret), agreeing with what the library answered. */
int rs_tls_error(const void *ssl, int ret);

/* SSL_pending(ssl), counting the plaintext the library read ahead. */
int rs_tls_pending(const void *ssl);

/* SSL_has_pending(ssl), likewise. */
int rs_tls_has_pending(const void *ssl);

/* Whether a session may be of an HTTP rule at all: one load. */
bool rs_tls_wanted(void);

/*
 * The pieces the read and write wrappers of each TLS library share.
 * rs_tls_enter: the engine state of t's socket, entered (clears t's
 * noted failure); NULL: go the plain way.
 */
struct rs_hconn *rs_tls_enter(struct rs_tls *t, struct rs_fd **e);

/*
 * Before a read with h entered: settles the response (retrying as the
 * rule allows).  Returns 0 (read on: the stash first), or -errno; *e is
 * the descriptor's entry afterwards.
 */
int rs_tls_settle(struct rs_tls *t, struct rs_hconn *h, struct rs_fd **e);

/*
 * Leaves h after the program's write on fd (phase: before it); a request
 * now whole on a non-blocking socket is the waits' to hide.
 */
void rs_tls_leave_write(struct rs_fd *e, struct rs_hconn *h, int fd,
    enum rs_hr_phase before);

/* Copies up to n stashed bytes to buf (consumed unless peek). */
size_t rs_tls_from_stash(struct rs_tls *t, void *buf, size_t n, bool peek);

/* After a read of r bytes (asked: n) with h entered or NULL: feeds, leaves. */
void rs_tls_done(struct rs_fd *e, struct rs_hconn *h, const void *buf,
    ssize_t r, size_t asked);

#endif /* RS_TLSIO_H */
