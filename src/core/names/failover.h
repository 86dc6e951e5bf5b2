/* SPDX-License-Identifier: MIT */
/*
 * failover.h - which of a name's addresses the next connect attempt tries
 * (SPEC 5c), and which addresses failed lately.
 *
 * The choice is pure: the caller passes the name's addresses (names.h),
 * the one just tried and what the socket accepts.  The memory of recent
 * failures is a fixed table (no allocation) behind one mutex that is never
 * held across a call out of this module; safe from any thread, and a fork
 * child never inherits it held (init.c's fork handlers call the hooks
 * below, as for names.h).
 */
#ifndef RS_FAILOVER_H
#define RS_FAILOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "names.h"

/* Addresses whose failures are remembered at once. */
#define RS_FAILOVER_SLOTS 128

/* How long a failure is remembered when connect_budget is off. */
#define RS_FAILOVER_DEFAULT_WINDOW_MS 10000

/* One choice: the name's list, the address just tried, the socket. */
struct rs_failover_req {
	const struct rs_name_addr *addrs;	/* in the resolver's order */
	size_t n;
	struct rs_name_addr current;	/* IPv4-mapped given as IPv4 */
	int sock_family;		/* AF_INET or AF_INET6 */
	bool v6only;			/* IPV6_V6ONLY is set */
	uint16_t port;			/* host byte order */
	int64_t now_ms;			/* monotonic */
	uint32_t window_ms;		/* failures this recent are skipped */
};

/*
 * Returns the index in r->addrs of the address the next attempt goes to:
 * the first one after r->current, round-robin, that the socket can reach
 * and that has not failed (on this port) within the window; when every
 * reachable one has, the first reachable one after r->current.  Returns -1
 * when r->current is not in the list or nothing is reachable: the attempt
 * then stays on the program's address.
 */
int rs_failover_choose(const struct rs_failover_req *r);

/* Records that a connect to (a, port) failed at now_ms. */
void rs_failover_note_failure(const struct rs_name_addr *a, uint16_t port,
    int64_t now_ms);

/* Forgets the failures of (a, port): it has just answered. */
void rs_failover_note_success(const struct rs_name_addr *a, uint16_t port);

/* Returns whether (a, port) failed within window_ms before now_ms. */
bool rs_failover_failed_lately(const struct rs_name_addr *a, uint16_t port,
    int64_t now_ms, uint32_t window_ms);

/*
 * Writes the socket address of a on port for a socket of sock_family into
 * out: an IPv4 address becomes IPv4-mapped for AF_INET6; scope_id is kept
 * for an IPv6 destination.  Returns its length, or 0 when a cannot be
 * reached from such a socket.
 */
socklen_t rs_failover_sockaddr(const struct rs_name_addr *a, int sock_family,
    uint16_t port, uint32_t scope_id, struct sockaddr_storage *out);

/*
 * Reads a socket address: *a gets its address (IPv4-mapped IPv6 as IPv4),
 * *port its port (host order), *scope_id the IPv6 scope (0 otherwise).
 * Returns false for other families or a short address.
 */
bool rs_failover_addr_of(const struct sockaddr *sa, socklen_t len,
    struct rs_name_addr *a, uint16_t *port, uint32_t *scope_id);

/*
 * fork handlers: prepare takes the table's lock, release frees it in the
 * parent and in the child alike.
 */
void rs_failover_fork_prepare(void);
void rs_failover_fork_release(void);

/* Empties the failure memory (tests). */
void rs_failover_clear(void);

#endif /* RS_FAILOVER_H */
