/* SPDX-License-Identifier: MIT */
/*
 * names.h - address -> hostname, learned from the program's own lookups.
 *
 * Host rules match the name the program resolved for an address.  The
 * resolver wrappers record each (address, name) pair here; connect() asks
 * for the name of its destination.  A fixed table (no allocation), replaced
 * least-recently-learned first; when several names resolve to one address
 * the most recent lookup wins.  Failover (SPEC 5c) also needs the other
 * way round: per name, the addresses of its last lookup in the order the
 * resolver returned them, kept in a second fixed table.  IPv4-mapped IPv6
 * addresses are kept as IPv4.  Thread-safe (one mutex, never held across a
 * call out of this module).
 */
#ifndef RS_NAMES_H
#define RS_NAMES_H

#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest hostname kept, with its NUL (DNS names are at most 253). */
#define RS_HOST_MAX 256

/* Number of addresses remembered. */
#define RS_NAMES_SLOTS 512

/* Names whose address lists are remembered, and addresses kept per name. */
#define RS_NAMES_LISTS 64
#define RS_NAMES_PER_NAME 8

/* One address of a name: 4 bytes for AF_INET, 16 for AF_INET6. */
struct rs_name_addr {
	int family;
	uint8_t addr[16];
};

/*
 * Records that name resolved to addr (4 bytes for AF_INET, 16 for
 * AF_INET6).  Numeric names (any literal getaddrinfo() takes for an
 * address), empty names and names longer than 253 characters are ignored.
 * The name is stored lower case, without a trailing dot.
 */
void rs_names_learn(const char *name, int family, const void *addr);

/*
 * Records every AF_INET/AF_INET6 result of a getaddrinfo() answer, and the
 * answer's addresses, in order and without repeats, as the name's list.
 * asked is the family the program asked for (hints->ai_family): when it is
 * one family, the addresses of the other that an earlier lookup gave are
 * kept after the new ones, as programs often ask for each family apart.
 */
void rs_names_learn_answer(const char *name, int asked,
    const struct addrinfo *res);

/* rs_names_learn_answer() for a lookup of any family (AF_UNSPEC). */
void rs_names_learn_addrinfo(const char *name, const struct addrinfo *res);

/* Records every address of a hostent (gethostbyname*), and its list. */
void rs_names_learn_hostent(const char *name, const struct hostent *h);

/*
 * Records a's n addresses, in that order, as the list of name (asked as
 * for rs_names_learn_answer()); at most RS_NAMES_PER_NAME are kept.
 * Numeric and unusable names are ignored, as by rs_names_learn().
 */
void rs_names_learn_list(const char *name, int asked,
    const struct rs_name_addr *a, size_t n);

/*
 * Copies the list of name (matched as rs_names_learn() stores it) into
 * out, at most max entries.  Returns how many were copied: 0 when the
 * name's addresses are not known.
 */
size_t rs_names_addresses(const char *name, struct rs_name_addr *out,
    size_t max);

/*
 * Copies the name learned for addr into out (len bytes, NUL-terminated,
 * truncated if need be).  Returns true when one was found; false, leaving
 * out untouched, when none was or len is 0.
 */
bool rs_names_lookup_any(int family, const void *addr, char *out,
    size_t len);

/* How many slots hold a name (names.c): 0 in a program that resolved
   none, which every connect asks first. */
extern size_t rs_names_filled __attribute__((visibility("hidden")));

static inline bool rs_names_lookup(int family, const void *addr, char *out,
    size_t len)
{
	if (!__atomic_load_n(&rs_names_filled, __ATOMIC_ACQUIRE))
		return false;
	return rs_names_lookup_any(family, addr, out, len);
}

/* Empties the table (tests). */
void rs_names_clear(void);

/* fork handlers: the child never inherits the table's lock held. */
void rs_names_fork_prepare(void);
void rs_names_fork_parent(void);
void rs_names_fork_child(void);

#endif /* RS_NAMES_H */
