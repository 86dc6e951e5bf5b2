/* SPDX-License-Identifier: MIT */
/*
 * tlsmap.h - the TLS sessions (OpenSSL SSL objects) of HTTP-rule
 * connections, each tied to its socket: what the program's SSL_read and
 * SSL_write need to reach the HTTP retry engine of that descriptor.
 *
 * A session enters the map when its descriptor is known (SSL_set_fd, or
 * learnt by a probe, tlsprobe.h) and is managed by a rule with `http`;
 * every other session is never in it, and costs a lookup in an empty or
 * small open-addressed table.  Inserts and removals take a spin lock;
 * lookups are lock-free.  A session is used by one thread at a time (as
 * OpenSSL requires); its entry lives from its insertion to SSL_free.
 */
#ifndef RS_TLSMAP_H
#define RS_TLSMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "httpretry.h"

struct rs_tls;

/*
 * One TLS library's calls on a session, for the engine's transport
 * (tlstx.h).  read and write follow libc's convention (the count, 0 at
 * the end of the stream, -1 with errno: EAGAIN to wait, EPROTO for a TLS
 * failure) and note a failure of the library's own in the session
 * (real_failed, real_ret), so that the program can be given it as is.
 */
struct rs_tls_ops {
	ssize_t (*read)(struct rs_tls *t, void *buf, size_t n);
	ssize_t (*write)(struct rs_tls *t, const void *buf, size_t n);
	/* Whether plaintext is decrypted already, which no poll reports. */
	bool (*held)(const struct rs_tls *t);
	/*
	 * After a reconnect: the session anew on fd, or the response
	 * handed over (rs_tls_hand_over()); NULL: always handed over.
	 * block false: one step of the handshake, -EAGAIN while it must
	 * wait for the socket (t->want), the next call going on from there.
	 */
	int (*renew)(struct rs_tls *t, struct rs_hconn *h, struct rs_fd *e,
	    int fd, bool block);
	/* Forgets the library's errors of a session the engine gave up. */
	void (*clear_errors)(void);
};

struct rs_tls {
	void *ssl;		/* the program's session (SSL *, gnutls_session_t) */
	const struct rs_tls_ops *ops;	/* its library's */
	int fd;			/* its socket */
	int err;		/* SSL_get_error's answer for the library's own
				   failure of the last call, or -1 */
	bool real_failed;	/* the last call's failure was OpenSSL's own */
	int real_ret;		/* ... and this is what OpenSSL returned */
	bool eof;		/* after the stash, the stream ends */
	short want;		/* POLLIN or POLLOUT: what the library's last
				   EAGAIN waits for (rs_htx's want()) */
	bool renewing;		/* a new handshake is under way (renew) */
	bool own_io;		/* learnt by a probe: the library moves its
				   records through the program's functions
				   (curl's BIO, its GnuTLS pointer) */
	void *was;		/* ... and the certificate the program took */
	bool membio;		/* the program moves its records itself,
				   through memory BIOs (membio.h) */
	uint8_t prog;		/* the program's call under way on it:
				   RS_TLS_PROG_* */
	bool unfed;		/* a read's plaintext went unseen by the
				   engine (tlsio.c's read_lent()) */
	char *pend;		/* membio: records of the library's own
				   writes the socket has not taken yet */
	size_t pend_off, pend_len;
	bool kept_over;		/* the drain took more than kept holds */
	bool keep_anew;		/* a response was looked at since: the next
				   drain keeps it in place of kept */
	size_t kept_len;	/* kept[0..kept_len): what the engine's drain
				   of the last judged response took */
	size_t off, len;	/* stash[off..len): plaintext the engine read
				   ahead, the program's next */
	char stash[RS_HCONN_PEEK];
	char kept[RS_HCONN_PEEK];
};

/* t->prog: which call of the program's is under way on the session. */
enum { RS_TLS_PROG_NONE, RS_TLS_PROG_READ, RS_TLS_PROG_WRITE };

/* Whether any session was ever mapped: one load, for the fast paths. */
extern int rs_tls_mapped;

/* Returns the entry of session ssl, or NULL.  Lock-free. */
struct rs_tls *rs_tls_find(const void *ssl);

/*
 * Maps ssl, a session of the library of ops, to socket fd when fd is a
 * managed descriptor of a rule with `http` (else nothing happens).
 * Returns the entry, or NULL.
 */
struct rs_tls *rs_tls_bind(void *ssl, int fd, const struct rs_tls_ops *ops);

/* As rs_tls_bind(), for a session learnt by a probe (own_io). */
struct rs_tls *rs_tls_bind_own(void *ssl, int fd,
    const struct rs_tls_ops *ops);

/* Removes ssl (SSL_free) and frees its entry; the engine lets go of it. */
void rs_tls_unbind(void *ssl);

/* Plaintext bytes in t's stash not yet given to the program. */
static inline size_t rs_tls_stashed(const struct rs_tls *t)
{
	return t->len - t->off;
}

#endif /* RS_TLSMAP_H */
