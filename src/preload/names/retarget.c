/* SPDX-License-Identifier: MIT */
/*
 * retarget.c - the next address of a name for a connect retry.
 *
 * The name's addresses are those of the program's own last lookup, in the
 * resolver's order (names.c); the choice is failover.c's.  The socket's
 * IPV6_V6ONLY is read at each retry, as the program may set it at any
 * time before connecting; one getsockopt per retry costs nothing next to
 * the backoff wait before it.
 */
#include "retarget.h"

#include <netinet/in.h>
#include <string.h>

#include "failover.h"
#include "log.h"
#include "names.h"
#include "real.h"
#include "stats.h"

/* Whether the attempts of e take part in failover at all. */
static bool applies(const struct rs_fd *e)
{
	int fam = e->addr.ss_family;

	return e->settings->failover && e->host[0] &&
	    (fam == AF_INET || fam == AF_INET6);
}

static bool v6only(int fd)
{
	int on = 0;
	socklen_t len = sizeof(on);

	return rs_real_getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
	    &len) == 0 && on;
}

static uint32_t window_of(const struct rs_fd *e)
{
	uint32_t b = e->settings->connect_budget_ms;

	return b == RS_OFF ? RS_FAILOVER_DEFAULT_WINDOW_MS : b;
}

void rs_retarget_next(int fd, struct rs_fd *e, int64_t now_ms)
{
	struct rs_name_addr list[RS_NAMES_PER_NAME];
	struct rs_failover_req r = { .addrs = list, .now_ms = now_ms };
	uint32_t scope;
	struct sockaddr_storage next;

	if (!applies(e) || !rs_failover_addr_of((struct sockaddr *)&e->addr,
		e->addrlen, &r.current, &r.port, &scope))
		return;
	r.n = rs_names_addresses(e->host, list, RS_NAMES_PER_NAME);
	if (r.n < 2)
		return;
	r.sock_family = e->addr.ss_family;
	r.v6only = r.sock_family == AF_INET6 && v6only(fd);
	r.window_ms = window_of(e);
	int i = rs_failover_choose(&r);

	if (i < 0 || memcmp(&list[i], &r.current, sizeof(r.current)) == 0)
		return;
	socklen_t len = rs_failover_sockaddr(&list[i], r.sock_family, r.port,
	    scope, &next);

	if (len == 0)
		return;
	memcpy(&e->addr, &next, len);
	e->addrlen = len;
	rs_stats_add(e->rule, RS_STAT_FAILOVERS);
}

bool rs_retarget_has_next(const struct rs_fd *e)
{
	struct rs_name_addr list[RS_NAMES_PER_NAME];

	return applies(e) &&
	    rs_names_addresses(e->host, list, RS_NAMES_PER_NAME) >= 2;
}

void rs_retarget_record(const struct rs_fd *e, int err, int64_t now_ms)
{
	struct rs_name_addr a;
	uint16_t port;
	uint32_t scope;

	if (!applies(e) || !rs_failover_addr_of((struct sockaddr *)&e->addr,
		e->addrlen, &a, &port, &scope))
		return;
	if (err == 0)
		rs_failover_note_success(&a, port);
	else
		rs_failover_note_failure(&a, port, now_ms);
}
