/* SPDX-License-Identifier: MIT */
/*
 * alpn.c - the ALPN offers of TLS programs, and their rewriting for
 * `alpn: http/1.1` rules (alpn.h).  An offer is kept as two bits per
 * object in an open-addressed table of RS_ALPN_SLOTS; a full table
 * records nothing more (the offers then stay as the program made them).
 */
#include "alpn.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fdtable.h"
#include "httpretry.h"
#include "log.h"
#include "sslreal.h"
#include "tlsmap.h"
#include "tlstx.h"

#define RS_ALPN_SLOTS 1024
#define TOMB ((const void *)1)
#define HAS_H2 1u
#define HAS_H1 2u

struct slot {
	const void *obj;	/* NULL: never used; TOMB: removed */
	unsigned bits;
};

static struct slot slots[RS_ALPN_SLOTS];
static uint32_t lock;
static int any;

static size_t hash(const void *p)
{
	uintptr_t v = (uintptr_t)p;

	v ^= v >> 17;
	v *= 0x9e3779b97f4a7c15ull;
	return (size_t)(v >> 22) & (RS_ALPN_SLOTS - 1);
}

/* The slot of obj, or NULL; with make, a new one if needed (locked). */
static struct slot *find(const void *obj, bool make)
{
	size_t i = hash(obj);
	struct slot *free_slot = NULL;

	for (size_t n = 0; n < RS_ALPN_SLOTS; n++, i = (i + 1) %
	    RS_ALPN_SLOTS) {
		const void *k = __atomic_load_n(&slots[i].obj,
		    __ATOMIC_ACQUIRE);

		if (k == obj)
			return &slots[i];
		if (k == TOMB && free_slot == NULL)
			free_slot = &slots[i];
		if (k == NULL) {
			if (free_slot == NULL)
				free_slot = &slots[i];
			break;
		}
	}
	return make ? free_slot : NULL;
}

/* The bits of an offer in wire format (length-prefixed names). */
static unsigned offer_bits(const unsigned char *p, unsigned len)
{
	unsigned bits = 0;

	for (unsigned i = 0; i < len && i + 1 + p[i] <= len; i += 1 + p[i]) {
		if (p[i] == 2 && !memcmp(p + i + 1, "h2", 2))
			bits |= HAS_H2;
		if (p[i] == 8 && !memcmp(p + i + 1, "http/1.1", 8))
			bits |= HAS_H1;
	}
	return bits;
}

static void set_bits(const void *obj, unsigned bits)
{
	struct slot *s;

	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	if ((s = find(obj, true)) != NULL) {
		__atomic_store_n(&s->bits, bits, __ATOMIC_RELEASE);
		__atomic_store_n(&s->obj, obj, __ATOMIC_RELEASE);
		__atomic_store_n(&any, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

void rs_alpn_offered(const void *obj, const unsigned char *p, unsigned len)
{
	set_bits(obj, p != NULL ? offer_bits(p, len) : 0);
}

void rs_alpn_forget(const void *obj)
{
	struct slot *s;

	if (!__atomic_load_n(&any, __ATOMIC_RELAXED))
		return;
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	if ((s = find(obj, false)) != NULL)
		__atomic_store_n(&s->obj, TOMB, __ATOMIC_RELEASE);
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* The offer of ssl: its own, else its context's; 0 when none is known. */
static unsigned offer_of(void *ssl)
{
	const struct slot *s = find(ssl, false);
	void *(*ctx_of)(const void *) = rs_ssl_SSL_get_SSL_CTX();

	if (s == NULL && ctx_of != NULL)
		s = find(ctx_of(ssl), false);
	return s != NULL ? __atomic_load_n(&s->bits, __ATOMIC_ACQUIRE) : 0;
}

/* Whether fd's rule has `http` with `alpn: http/1.1`. */
static bool rule_narrows(int fd)
{
	struct rs_fd *e = rs_fd_get(fd);

	return e != NULL && e->settings->http.enabled &&
	    e->settings->http.alpn != RS_HTTP_ALPN_KEEP;
}

void rs_alpn_before(void *ssl, int fd)
{
	static const unsigned char h1[] = "\x08http/1.1";

	if (!__atomic_load_n(&any, __ATOMIC_RELAXED) || !rule_narrows(fd))
		return;
	if (offer_of(ssl) != (HAS_H2 | HAS_H1))
		return;
	if (rs_ssl_SSL_set_alpn_protos()(ssl, h1, sizeof(h1) - 1) == 0)
		set_bits(ssl, HAS_H1);
}

bool rs_alpn_narrows(const unsigned char *p, unsigned len, int fd)
{
	return rule_narrows(fd) && offer_bits(p, len) == (HAS_H2 | HAS_H1);
}

/* Whether the protocol p[0..len) is HTTP/1.x (or none was agreed). */
static bool is_h1(const unsigned char *p, unsigned len)
{
	return len == 0 || (len == 8 && (!memcmp(p, "http/1.1", 8) ||
	    !memcmp(p, "http/1.0", 8)));
}

void rs_alpn_agreed(struct rs_tls *t, const unsigned char *p, unsigned len)
{
	static int logged;
	struct rs_fd *e = t != NULL ? rs_fd_get(t->fd) : NULL;
	struct rs_hconn *h;

	if (e == NULL || is_h1(p, len))
		return;
	if ((h = rs_hconn_enter_tx(e, &rs_tls_tx, t)) != NULL) {
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		rs_hconn_leave(e, h);
	}
	if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
		rs_log(RS_LOG_WARN, NULL, "http retries off: %.*s negotiated "
		    "on fd %d (and any later such connection)", (int)len, p,
		    t->fd);
}

void rs_alpn_after(void *ssl)
{
	const unsigned char *p = NULL;
	unsigned len = 0;
	struct rs_tls *t = rs_tls_find(ssl);

	if (t == NULL || rs_fd_get(t->fd) == NULL)
		return;
	rs_ssl_SSL_get0_alpn_selected()(ssl, &p, &len);
	rs_alpn_agreed(t, p, len);
}
