/* SPDX-License-Identifier: MIT */
/*
 * failover.c - the next address of a name, and recent failures.
 *
 * The failure memory is keyed by address and port (one host may serve one
 * port and not another), scanned linearly: it is consulted only when an
 * attempt has failed, and 128 comparisons cost nothing next to the wait
 * that follows.  The oldest entry gives way to a new failure.
 */
#include "failover.h"

#include <netinet/in.h>
#include <pthread.h>
#include <string.h>

struct failure {
	int64_t at_ms;		/* 0: empty */
	struct rs_name_addr a;
	uint16_t port;
};

static struct failure failures[RS_FAILOVER_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void rs_failover_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void rs_failover_fork_release(void)
{
	pthread_mutex_unlock(&lock);
}

static void take_lock(void)
{
	pthread_mutex_lock(&lock);
}

static bool same(const struct rs_name_addr *x, const struct rs_name_addr *y)
{
	return x->family == y->family &&
	    memcmp(x->addr, y->addr, x->family == AF_INET ? 4 : 16) == 0;
}

/* The entry of (a, port), or NULL; called with the lock held. */
static struct failure *find(const struct rs_name_addr *a, uint16_t port)
{
	for (size_t i = 0; i < RS_FAILOVER_SLOTS; i++) {
		struct failure *f = &failures[i];

		if (f->at_ms && f->port == port && same(&f->a, a))
			return f;
	}
	return NULL;
}

void rs_failover_note_failure(const struct rs_name_addr *a, uint16_t port,
    int64_t now_ms)
{
	take_lock();
	struct failure *f = find(a, port);

	if (!f) {
		f = &failures[0];
		for (size_t i = 1; i < RS_FAILOVER_SLOTS && f->at_ms; i++)
			if (failures[i].at_ms < f->at_ms)
				f = &failures[i];
		f->a = *a;
		f->port = port;
	}
	/* 0 marks an empty entry; a monotonic clock is above 0 anyway. */
	f->at_ms = now_ms > 0 ? now_ms : 1;
	pthread_mutex_unlock(&lock);
}

void rs_failover_note_success(const struct rs_name_addr *a, uint16_t port)
{
	take_lock();
	struct failure *f = find(a, port);

	if (f)
		f->at_ms = 0;
	pthread_mutex_unlock(&lock);
}

bool rs_failover_failed_lately(const struct rs_name_addr *a, uint16_t port,
    int64_t now_ms, uint32_t window_ms)
{
	take_lock();
	const struct failure *f = find(a, port);
	bool lately = f && now_ms - f->at_ms < (int64_t)window_ms;

	pthread_mutex_unlock(&lock);
	return lately;
}

void rs_failover_clear(void)
{
	take_lock();
	memset(failures, 0, sizeof(failures));
	pthread_mutex_unlock(&lock);
}

/* Whether a socket of this family can connect to a. */
static bool reachable(const struct rs_failover_req *r,
    const struct rs_name_addr *a)
{
	if (r->sock_family == AF_INET)
		return a->family == AF_INET;
	return r->sock_family == AF_INET6 &&
	    (a->family == AF_INET6 || !r->v6only);
}

int rs_failover_choose(const struct rs_failover_req *r)
{
	size_t cur = r->n;
	int fallback = -1;

	for (size_t i = 0; i < r->n; i++)
		if (same(&r->addrs[i], &r->current))
			cur = i;
	if (cur == r->n)
		return -1;
	for (size_t k = 1; k <= r->n; k++) {
		size_t i = (cur + k) % r->n;

		if (!reachable(r, &r->addrs[i]))
			continue;
		if (!rs_failover_failed_lately(&r->addrs[i], r->port,
			r->now_ms, r->window_ms))
			return (int)i;
		if (fallback < 0)
			fallback = (int)i;
	}
	return fallback;
}

socklen_t rs_failover_sockaddr(const struct rs_name_addr *a, int sock_family,
    uint16_t port, uint32_t scope_id, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (sock_family == AF_INET && a->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)out;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a->addr, 4);
		return sizeof(*in);
	}
	if (sock_family != AF_INET6)
		return 0;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	if (a->family == AF_INET) {
		in6->sin6_addr.s6_addr[10] = 0xff;
		in6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&in6->sin6_addr.s6_addr[12], a->addr, 4);
	} else {
		memcpy(&in6->sin6_addr, a->addr, 16);
		in6->sin6_scope_id = scope_id;
	}
	return sizeof(*in6);
}

bool rs_failover_addr_of(const struct sockaddr *sa, socklen_t len,
    struct rs_name_addr *a, uint16_t *port, uint32_t *scope_id)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(a, 0, sizeof(*a));
	*scope_id = 0;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		a->family = AF_INET;
		memcpy(a->addr, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
		return true;
	}
	if (sa->sa_family != AF_INET6 || len < sizeof(struct sockaddr_in6))
		return false;
	const struct sockaddr_in6 *in6 = (const void *)sa;

	*port = ntohs(in6->sin6_port);
	if (memcmp(&in6->sin6_addr, mapped, 12) == 0) {
		a->family = AF_INET;
		memcpy(a->addr, &in6->sin6_addr.s6_addr[12], 4);
		return true;
	}
	a->family = AF_INET6;
	memcpy(a->addr, &in6->sin6_addr, 16);
	*scope_id = in6->sin6_scope_id;
	return true;
}
