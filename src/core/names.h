/*
 * names.h - address -> hostname, learned from the program's own lookups.
 *
 * Host rules match the name the program resolved for an address.  The
 * resolver wrappers record each (address, name) pair here; connect() asks
 * for the name of its destination.  A fixed table (no allocation), replaced
 * least-recently-learned first; when several names resolve to one address
 * the most recent lookup wins.  Thread-safe (one mutex, never held across a
 * call out of this module).
 */
#ifndef RS_NAMES_H
#define RS_NAMES_H

#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>

/* Longest hostname kept, with its NUL (DNS names are at most 253). */
#define RS_HOST_MAX 256

/* Number of addresses remembered. */
#define RS_NAMES_SLOTS 512

/*
 * Records that name resolved to addr (4 bytes for AF_INET, 16 for
 * AF_INET6).  Numeric names (any literal getaddrinfo() takes for an
 * address), empty names and names longer than 253 characters are ignored.
 * The name is stored lower case, without a trailing dot.
 */
void rs_names_learn(const char *name, int family, const void *addr);

/* Records every AF_INET/AF_INET6 result of a getaddrinfo() answer. */
void rs_names_learn_addrinfo(const char *name, const struct addrinfo *res);

/* Records every address of a hostent (gethostbyname*). */
void rs_names_learn_hostent(const char *name, const struct hostent *h);

/*
 * Copies the name learned for addr into out (len bytes, NUL-terminated,
 * truncated if need be).  Returns true when one was found; false, leaving
 * out untouched, when none was or len is 0.
 */
bool rs_names_lookup(int family, const void *addr, char *out, size_t len);

/* Empties the table (tests). */
void rs_names_clear(void);

/* fork handlers: the child never inherits the table's lock held. */
void rs_names_fork_prepare(void);
void rs_names_fork_parent(void);
void rs_names_fork_child(void);

#endif /* RS_NAMES_H */
