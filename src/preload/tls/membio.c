/* SPDX-License-Identifier: MIT */
/*
 * membio.c - a session the program pumps through memory BIOs, for the
 * engine's transport (membio.h): its calls, and the library's own
 * records sent on the socket.
 */
#include "membio.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fdtable.h"
#include "guard.h"
#include "ossl.h"
#include "real.h"
#include "sslreal.h"
#include "tlsprobe.h"

/* Records of the library's own writes waiting for room on the socket. */
#define PEND_CAP 32768

/* Plaintext the library puts into the session in one call of its own. */
#define OWN_WRITE_MAX 8192

/*
 * Moves what the session's write BIO holds behind what is pending
 * (the program's records, if any, come first: the BIO holds them so).
 */
static void fill(struct rs_tls *t)
{
	void *w = rs_ssl_SSL_get_wbio()(t->ssl);
	int got;

	if (t->pend_off == t->pend_len) {
		t->pend_off = t->pend_len = 0;
	} else if (t->pend_off > 0) {
		memmove(t->pend, t->pend + t->pend_off,
		    t->pend_len - t->pend_off);
		t->pend_len -= t->pend_off;
		t->pend_off = 0;
	}
	while (w != NULL && t->pend_len < PEND_CAP &&
	    rs_ssl_BIO_ctrl()(w, RS_BIO_CTRL_PENDING, 0, NULL) > 0 &&
	    (got = rs_ssl_BIO_read()(w, t->pend + t->pend_len,
	    (int)(PEND_CAP - t->pend_len))) > 0)
		t->pend_len += (size_t)got;
}

/*
 * Sends the session's records the library wrote: 0 once the socket took
 * them all, else -1 with errno (EAGAIN: no room, t->want POLLOUT).
 */
static int flush(struct rs_tls *t)
{
	for (int round = 0; round < 64; round++) {
		ssize_t k;

		fill(t);
		if (t->pend_off == t->pend_len)
			return 0;
		k = rs_real_send(t->fd, t->pend + t->pend_off,
		    t->pend_len - t->pend_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			t->pend_off += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			errno = EPIPE;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			break;
		return -1;
	}
	t->want = POLLOUT;
	errno = EAGAIN;
	return -1;
}

static bool pending(const struct rs_tls *t)
{
	return t->pend_off < t->pend_len;
}

/*
 * A read for the engine: only inside the program's own read, when what
 * it fed the session is there; any other time the records are still in
 * the socket, the program's to read: EAGAIN, t->want POLLIN.
 */
static ssize_t read_mem(struct rs_tls *t, void *buf, size_t n)
{
	t->real_failed = false;
	if (pending(t) && flush(t) < 0)
		return -1;
	if (t->prog != RS_TLS_PROG_READ) {
		t->want = POLLIN;
		errno = EAGAIN;
		return -1;
	}
	errno = 0;
	return rs_tls_result(t, rs_ssl_SSL_read()(t->ssl, buf,
	    n > INT_MAX ? INT_MAX : (int)n));
}

/*
 * A write into the session.  The program's own write leaves the records
 * in the BIO for the program to send; the library's own (a resend) sends
 * them itself, at most OWN_WRITE_MAX bytes of plaintext at a time.
 */
static ssize_t write_mem(struct rs_tls *t, const void *buf, size_t n)
{
	bool own = t->prog != RS_TLS_PROG_WRITE;
	ssize_t r;

	t->real_failed = false;
	if (pending(t) && flush(t) < 0)
		return -1;
	if (own && n > OWN_WRITE_MAX)
		n = OWN_WRITE_MAX;
	errno = 0;
	r = rs_tls_result(t, rs_ssl_SSL_write()(t->ssl, buf,
	    n > INT_MAX ? INT_MAX : (int)n));
	/* Taken: records the socket has no room for yet wait in pend, and
	   the next call of the engine's sends them first. */
	if (r > 0 && own && flush(t) < 0 && errno != EAGAIN)
		return -1;
	return r;
}

const struct rs_tls_ops rs_tls_membio = {
	.read = read_mem,
	.write = write_mem,
	.held = rs_tls_ossl_held,	/* OpenSSL's session all the same */
	.renew = NULL,	/* a new handshake would be the program's own */
	.clear_errors = rs_tls_ossl_clear_errors,
};

struct rs_tls *rs_tls_membio_find(void *ssl)
{
	unsigned char random[32];
	struct rs_tls *t;
	const struct rs_fd *e;
	char *pend;
	int fd;

	if (__builtin_expect(__atomic_load_n(&rs_tls_hellos,
	    __ATOMIC_RELAXED) == 0, 1))
		return NULL;
	/* A TLS library without one of the calls this needs: not followed. */
	if (rs_ssl_SSL_get_client_random() == NULL ||
	    rs_ssl_SSL_get_wbio() == NULL || rs_ssl_BIO_ctrl() == NULL ||
	    rs_ssl_BIO_read() == NULL)
		return NULL;
	if (rs_ssl_SSL_get_client_random()(ssl, random, sizeof(random)) !=
	    sizeof(random) || (fd = rs_tls_hello_match(random)) < 0)
		return NULL;
	/* On a blocking socket the retry engine would wait for records that
	   only the program's own read brings: not followed for `http`. */
	if ((e = rs_fd_get(fd)) == NULL || (e->settings->http.enabled &&
	    !e->nonblocking))
		return NULL;
	rs_guard_enter();
	pend = malloc(PEND_CAP);
	rs_guard_leave();
	if (pend == NULL)
		return NULL;
	t = rs_tls_bind(ssl, fd, &rs_tls_membio);
	if (t == NULL || t->pend != NULL) {
		rs_guard_enter();
		free(pend);
		rs_guard_leave();
		return t != NULL && t->membio ? t : NULL;
	}
	t->membio = true;
	t->pend = pend;
	return t;
}
