/* SPDX-License-Identifier: MIT */
/*
 * tlsmap.c - the map from a TLS session to its socket (tlsmap.h): an
 * open-addressed table of RS_TLS_SLOTS pointers, probed linearly from the
 * session's hash.  A removed slot keeps a tombstone so that probes go on
 * past it; tombstones are reused by inserts.
 */
#include "tlsmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fdtable.h"
#include "guard.h"
#include "httpconn.h"
#include "sslreal.h"

#define RS_TLS_SLOTS 4096	/* sessions of HTTP rules open at once */
#define TOMB ((void *)1)

struct slot {
	void *ssl;		/* NULL: never used; TOMB: removed */
	struct rs_tls *t;
};

int rs_tls_mapped;
static struct slot slots[RS_TLS_SLOTS];
static uint32_t lock;

static size_t hash(const void *ssl)
{
	uintptr_t v = (uintptr_t)ssl;

	v ^= v >> 17;
	v *= 0x9e3779b97f4a7c15ull;
	return (size_t)(v >> 20) & (RS_TLS_SLOTS - 1);
}

static void take_lock(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void drop_lock(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

struct rs_tls *rs_tls_find(const void *ssl)
{
	size_t i = hash(ssl);

	if (!__atomic_load_n(&rs_tls_mapped, __ATOMIC_RELAXED))
		return NULL;
	for (size_t n = 0; n < RS_TLS_SLOTS; n++, i = (i + 1) %
	    RS_TLS_SLOTS) {
		void *k = __atomic_load_n(&slots[i].ssl, __ATOMIC_ACQUIRE);

		if (k == NULL)
			return NULL;
		if (k == ssl)
			return __atomic_load_n(&slots[i].t, __ATOMIC_ACQUIRE);
	}
	return NULL;
}

/* Puts t in a free slot; false when the table is full. */
static bool insert(struct rs_tls *t)
{
	size_t i = hash(t->ssl);
	bool ok = false;

	take_lock();
	for (size_t n = 0; n < RS_TLS_SLOTS && !ok; n++, i = (i + 1) %
	    RS_TLS_SLOTS) {
		void *k = slots[i].ssl;

		if (k != NULL && k != TOMB)
			continue;
		__atomic_store_n(&slots[i].t, t, __ATOMIC_RELEASE);
		__atomic_store_n(&slots[i].ssl, t->ssl, __ATOMIC_RELEASE);
		ok = true;
	}
	drop_lock();
	if (ok)
		__atomic_store_n(&rs_tls_mapped, 1, __ATOMIC_RELAXED);
	return ok;
}

struct rs_tls *rs_tls_bind(void *ssl, int fd, const struct rs_tls_ops *ops)
{
	struct rs_fd *e = rs_fd_get(fd);
	struct rs_tls *t = rs_tls_find(ssl);

	if (t != NULL) {
		if (t->fd != fd)
			rs_httpconn_records(t->fd, NULL);
		t->fd = fd;
		rs_httpconn_records(fd, ssl);
		return t;
	}
	if (e == NULL || e->http_off || (!e->settings->http.enabled &&
	    !e->settings->deadline_header[0]))
		return NULL;
	rs_guard_enter();
	t = calloc(1, sizeof(*t));
	rs_guard_leave();
	if (t == NULL)
		return NULL;
	t->ssl = ssl;
	t->ops = ops;
	t->fd = fd;
	t->err = -1;
	if (!insert(t)) {
		free(t);
		return NULL;
	}
	rs_httpconn_records(fd, ssl);
	return t;
}

struct rs_tls *rs_tls_bind_own(void *ssl, int fd,
    const struct rs_tls_ops *ops)
{
	struct rs_tls *t = rs_tls_bind(ssl, fd, ops);

	if (t != NULL)
		t->own_io = true;
	return t;
}

/*
 * The engine state of t's descriptor lets go of t: the connection passes
 * through from now on (whatever the socket carries next is not this
 * session's plaintext).
 */
static void detach(struct rs_tls *t)
{
	struct rs_fd *e = rs_fd_get(t->fd);
	struct rs_hconn *h;

	rs_httpconn_records(t->fd, NULL);
	if (e == NULL)
		return;
	rs_fd_lock(e);
	h = e->http;
	if (h != NULL && h->tx_ctx == t) {
		h->tx_ctx = NULL;
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
	}
	rs_fd_unlock(e);
}

/*
 * A tombstone at i followed by a never-used slot ends no probe that could
 * go further: it becomes never-used too, and so does each tombstone before
 * it, so that a missing session's probe (every TLS call of a session not
 * followed) stays short however many sessions came and went.  Locked.
 */
static void sweep(size_t i)
{
	for (size_t n = 0; n < RS_TLS_SLOTS; n++) {
		if (slots[(i + 1) % RS_TLS_SLOTS].ssl != NULL ||
		    slots[i].ssl != TOMB)
			return;
		__atomic_store_n(&slots[i].ssl, NULL, __ATOMIC_RELEASE);
		i = (i + RS_TLS_SLOTS - 1) % RS_TLS_SLOTS;
	}
}

void rs_tls_unbind(void *ssl)
{
	size_t i = hash(ssl);
	struct rs_tls *t = NULL;

	take_lock();
	for (size_t n = 0; n < RS_TLS_SLOTS; n++, i = (i + 1) %
	    RS_TLS_SLOTS) {
		if (slots[i].ssl == NULL)
			break;
		if (slots[i].ssl != ssl)
			continue;
		t = slots[i].t;
		__atomic_store_n(&slots[i].t, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&slots[i].ssl, TOMB, __ATOMIC_RELEASE);
		sweep(i);
		break;
	}
	drop_lock();
	if (t == NULL)
		return;
	detach(t);
	/* A new handshake the program freed its session in the middle of. */
	if (t->was != NULL)
		rs_ssl_X509_free()(t->was);
	rs_guard_enter();
	free(t->pend);
	free(t);
	rs_guard_leave();
}
