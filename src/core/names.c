/*
 * names.c - address -> hostname, learned from the program's own lookups.
 *
 * A small open table scanned linearly: lookups happen once per connect(),
 * and 512 comparisons of 17 bytes cost less than the connect itself.
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

static struct slot slots[RS_NAMES_SLOTS];
static uint64_t clock_stamp;
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

void rs_names_learn(const char *name, int family, const void *addr)
{
	char norm[RS_HOST_MAX];

	if (!name || (family != AF_INET && family != AF_INET6) ||
	    is_numeric(name) || !normalize(name, norm))
		return;
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
	victim->stamp = ++clock_stamp;
	victim->family = family;
	memset(victim->addr, 0, sizeof(victim->addr));
	memcpy(victim->addr, addr, addr_len(family));
	memcpy(victim->name, norm, strlen(norm) + 1);
	pthread_mutex_unlock(&lock);
}

void rs_names_learn_addrinfo(const char *name, const struct addrinfo *res)
{
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (!ai->ai_addr)
			continue;
		if (ai->ai_family == AF_INET)
			rs_names_learn(name, AF_INET,
			    &((struct sockaddr_in *)ai->ai_addr)->sin_addr);
		else if (ai->ai_family == AF_INET6)
			rs_names_learn(name, AF_INET6,
			    &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
	}
}

void rs_names_learn_hostent(const char *name, const struct hostent *h)
{
	if (!h || (h->h_addrtype != AF_INET && h->h_addrtype != AF_INET6))
		return;
	for (char **a = h->h_addr_list; a && *a; a++)
		rs_names_learn(name, h->h_addrtype, *a);
}

bool rs_names_lookup(int family, const void *addr, char *out, size_t len)
{
	bool found = false;

	if (len == 0)
		return false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < RS_NAMES_SLOTS; i++) {
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
