/* SPDX-License-Identifier: MIT */
/*
 * names.c - address -> hostname, learned from the program's own lookups.
 *
 * Two small tables scanned linearly: address lookups happen once per
 * connect(), and 512 comparisons of 17 bytes cost less than the connect
 * itself; name lookups only when a connect is retried.  Both share one
 * mutex and are replaced least-recently-learned first.
 */
#include "names.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>


struct slot {
	uint64_t stamp;		/* 0: empty; larger: learned later */
	int family;
	uint8_t addr[16];
	char name[RS_HOST_MAX];
};

/* The addresses of one name, in the resolver's order. */
struct list {
	uint64_t stamp;		/* 0: empty; larger: learned later */
	size_t n;
	struct rs_name_addr a[RS_NAMES_PER_NAME];
	char name[RS_HOST_MAX];
};

static struct slot slots[RS_NAMES_SLOTS];
static struct list lists[RS_NAMES_LISTS];
static uint64_t clock_stamp;
/*
 * Slots fill in order (an empty one is always the oldest, and the first
 * empty one is taken), so only slots[0..filled) can match: a program that
 * connects by address alone pays no scan and no lock on its connects.
 */
size_t rs_names_filled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/*
 * Returns whether name is an address literal, which names nothing.  It must
 * recognise every literal getaddrinfo() resolves without a lookup: besides
 * dotted quads, inet_aton()'s short and hex forms ("127.1", "0x7f.1",
 * "2130706433") and IPv6 literals with a "%scope" suffix ("fe80::1%eth0"),
 * or those strings would be taken for host names.
 */
static bool is_numeric(const char *name)
{
	char v6[INET6_ADDRSTRLEN];
	const char *pct = strchr(name, '%');
	size_t n = pct ? (size_t)(pct - name) : strlen(name);
	struct in_addr in;
	uint8_t buf[16];

	if (inet_aton(name, &in))
		return true;
	if (n >= sizeof(v6))
		return false;
	memcpy(v6, name, n);
	v6[n] = '\0';
	return inet_pton(AF_INET6, v6, buf) == 1;
}

/* Copies name lower case without a trailing dot; false if unusable. */
static bool normalize(const char *name, char *out)
{
	size_t n = strlen(name);

	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	out[n] = '\0';
	return true;
}

/*
 * Fills *out from (family, addr), an IPv4-mapped IPv6 address becoming
 * IPv4 as connect() sees it; false for other families.
 */
static bool make_addr(int family, const void *addr, struct rs_name_addr *out)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(out, 0, sizeof(*out));
	if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
		out->family = AF_INET;
		memcpy(out->addr, (const uint8_t *)addr + 12, 4);
		return true;
	}
	if (family != AF_INET && family != AF_INET6)
		return false;
	out->family = family;
	memcpy(out->addr, addr, addr_len(family));
	return true;
}

static bool same_addr(const struct rs_name_addr *x,
    const struct rs_name_addr *y)
{
	return x->family == y->family &&
	    memcmp(x->addr, y->addr, addr_len(x->family)) == 0;
}

/* Whether name can be recorded; its stored form goes to norm. */
static bool usable(const char *name, char *norm)
{
	return name && !is_numeric(name) && normalize(name, norm);
}

void rs_names_learn(const char *name, int given_family, const void *given)
{
	char norm[RS_HOST_MAX];
	struct rs_name_addr na;

	if (!make_addr(given_family, given, &na) || !usable(name, norm))
		return;
	int family = na.family;
	const uint8_t *addr = na.addr;

	pthread_mutex_lock(&lock);
	struct slot *victim = &slots[0];

	for (size_t i = 0; i < RS_NAMES_SLOTS; i++) {
		struct slot *s = &slots[i];

		if (s->stamp && s->family == family &&
		    memcmp(s->addr, addr, addr_len(family)) == 0) {
			victim = s;
			break;
		}
		if (s->stamp < victim->stamp)
			victim = s;
	}
	if (!victim->stamp)
		__atomic_store_n(&rs_names_filled, rs_names_filled + 1,
		    __ATOMIC_RELEASE);
	victim->stamp = ++clock_stamp;
	victim->family = family;
	memset(victim->addr, 0, sizeof(victim->addr));
	memcpy(victim->addr, addr, addr_len(family));
	memcpy(victim->name, norm, strlen(norm) + 1);
	pthread_mutex_unlock(&lock);
}

/* Appends na to a list of n entries unless it is there; returns n. */
static size_t add_unique(struct rs_name_addr *list, size_t n,
    const struct rs_name_addr *na)
{
	for (size_t i = 0; i < n; i++)
		if (same_addr(&list[i], na))
			return n;
	if (n < RS_NAMES_PER_NAME)
		list[n++] = *na;
	return n;
}

void rs_names_learn_answer(const char *name, int asked,
    const struct addrinfo *res)
{
	struct rs_name_addr list[RS_NAMES_PER_NAME], na;
	size_t n = 0;

	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		const void *a;

		if (!ai->ai_addr)
			continue;
		if (ai->ai_family == AF_INET)
			a = &((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		else if (ai->ai_family == AF_INET6)
			a = &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		else
			continue;
		rs_names_learn(name, ai->ai_family, a);
		if (make_addr(ai->ai_family, a, &na))
			n = add_unique(list, n, &na);
	}
	rs_names_learn_list(name, asked, list, n);
}

void rs_names_learn_addrinfo(const char *name, const struct addrinfo *res)
{
	rs_names_learn_answer(name, AF_UNSPEC, res);
}

void rs_names_learn_hostent(const char *name, const struct hostent *h)
{
	struct rs_name_addr list[RS_NAMES_PER_NAME], na;
	size_t n = 0;

	if (!h || (h->h_addrtype != AF_INET && h->h_addrtype != AF_INET6))
		return;
	for (char **a = h->h_addr_list; a && *a; a++) {
		rs_names_learn(name, h->h_addrtype, *a);
		if (make_addr(h->h_addrtype, *a, &na))
			n = add_unique(list, n, &na);
	}
	rs_names_learn_list(name, h->h_addrtype, list, n);
}

/* The list of name (normalised), or NULL; called with the lock held. */
static struct list *find_list(const char *norm)
{
	for (size_t i = 0; i < RS_NAMES_LISTS; i++)
		if (lists[i].stamp && strcmp(lists[i].name, norm) == 0)
			return &lists[i];
	return NULL;
}

/* The list to overwrite for a new name; called with the lock held. */
static struct list *oldest_list(void)
{
	struct list *victim = &lists[0];

	for (size_t i = 1; i < RS_NAMES_LISTS; i++)
		if (lists[i].stamp < victim->stamp)
			victim = &lists[i];
	return victim;
}

/*
 * A lookup of one family says nothing about the other: the addresses of
 * the other family that the old list had are kept after the new ones.
 */
static size_t keep_other_family(struct rs_name_addr *out, size_t n,
    const struct list *old, int asked)
{
	if (!old || asked == AF_UNSPEC)
		return n;
	for (size_t i = 0; i < old->n; i++)
		if (old->a[i].family != asked)
			n = add_unique(out, n, &old->a[i]);
	return n;
}

void rs_names_learn_list(const char *name, int asked,
    const struct rs_name_addr *a, size_t n)
{
	char norm[RS_HOST_MAX];
	struct rs_name_addr merged[RS_NAMES_PER_NAME];
	size_t m = 0;

	if (n == 0 || !usable(name, norm))
		return;
	for (size_t i = 0; i < n; i++)
		m = add_unique(merged, m, &a[i]);
	pthread_mutex_lock(&lock);
	struct list *l = find_list(norm);

	m = keep_other_family(merged, m, l, asked);
	if (!l) {
		l = oldest_list();
		memcpy(l->name, norm, strlen(norm) + 1);
	}
	memcpy(l->a, merged, m * sizeof(merged[0]));
	l->n = m;
	l->stamp = ++clock_stamp;
	pthread_mutex_unlock(&lock);
}

size_t rs_names_addresses(const char *name, struct rs_name_addr *out,
    size_t max)
{
	char norm[RS_HOST_MAX];
	size_t n = 0;

	if (!usable(name, norm))
		return 0;
	pthread_mutex_lock(&lock);
	const struct list *l = find_list(norm);

	if (l) {
		n = l->n < max ? l->n : max;
		memcpy(out, l->a, n * sizeof(out[0]));
	}
	pthread_mutex_unlock(&lock);
	return n;
}

bool rs_names_lookup_any(int given_family, const void *given, char *out,
    size_t len)
{
	bool found = false;
	struct rs_name_addr na;

	/* rs_names_lookup() (names.h) has asked whether any slot is filled. */
	if (len == 0 || !make_addr(given_family, given, &na))
		return false;
	int family = na.family;
	const uint8_t *addr = na.addr;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < rs_names_filled; i++) {
		struct slot *s = &slots[i];

		if (s->stamp && s->family == family &&
		    memcmp(s->addr, addr, addr_len(family)) == 0) {
			size_t n = strlen(s->name);

			if (n >= len)
				n = len - 1;
			memcpy(out, s->name, n);
			out[n] = '\0';
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

void rs_names_clear(void)
{
	pthread_mutex_lock(&lock);
	memset(slots, 0, sizeof(slots));
	memset(lists, 0, sizeof(lists));
	__atomic_store_n(&rs_names_filled, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
}

void rs_names_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void rs_names_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

void rs_names_fork_child(void)
{
	pthread_mutex_unlock(&lock);
}
