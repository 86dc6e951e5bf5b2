/* SPDX-License-Identifier: MIT */
/*
 * explain_breaker.c - the `breaker:` part of `resolute explain` (SPEC
 * 12): the rule's breaker settings, each marked with where it comes
 * from, and, for an address target whose policy segment exists, that
 * address's breaker as it stands now.  Read-only.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "breakers.h"
#include "cli.h"
#include "clock.h"
#include "duration.h"
#include "shm.h"

/* The statuses on_status lists, for rs_cli_status_list(). */
static bool fails(const void *set, unsigned status)
{
	return rs_breaker_settings_fails(set, status);
}

/* One address's breaker as the segment tab holds it now. */
static void live_one(struct rs_shm_table *tab, const struct rs_breaker_dest *d)
{
	char addr[RS_BREAKER_ADDR_MAX];
	const struct rs_breaker_slot *sl = rs_breaker_find(&tab->breakers, d,
	    rs_breaker_key(d));
	int64_t now = rs_clock_now_ms();
	uint64_t w = sl ? __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE) : 0;
	struct rs_breaker_view v;
	enum rs_breaker_state st = rs_breaker_state_at(w, now);

	rs_breakers_addr_text(d->family, d->addr, d->port, addr, sizeof(addr));
	rs_breaker_unpack(w, &v);
	if (!sl)
		printf("  live: %s closed (no failure recorded)\n", addr);
	else if (st == RS_BREAKER_CLOSED)
		printf("  live: %s closed, %u failures in a row\n", addr,
		    v.failures);
	else
		printf("  live: %s %s since %lld ms ago (%s), %u ms left\n",
		    addr, rs_breaker_state_name(st),
		    (long long)(now - sl->since_ms), strerror(v.err),
		    rs_breaker_left_ms(w, now));
}

/*
 * The live state of the target's breakers under rule r, if the segment
 * exists: of its address, or of each address its name resolves to here.
 */
static void live(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_target *t)
{
	char path[256], real[RS_SHM_POLICY_MAX];
	struct rs_shm_table *tab;
	struct rs_breaker_dest d = { .rule_key = rs_shm_rule_key(r),
		.family = t->family, .port = t->port };
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;

	if (rs_shm_path(p->path, geteuid(), path, sizeof(path), real,
	    sizeof(real)) < 0 || rs_shm_attach(path, real, false, &tab) < 0) {
		printf("  live: no segment (no connect under this policy yet, "
		    "or not this user's)\n");
		return;
	}
	/* A name's target holds a placeholder address: its own are asked. */
	if (!t->host) {
		memcpy(d.addr, t->addr, sizeof(d.addr));
		live_one(tab, &d);
	} else if (getaddrinfo(t->host, NULL, &hints, &res) == 0) {
		for (struct addrinfo *a = res; a; a = a->ai_next) {
			struct sockaddr_storage ss;

			memcpy(&ss, a->ai_addr, a->ai_addrlen);
			((struct sockaddr_in *)&ss)->sin_port = htons(t->port);
			if (rs_breakers_dest(&d, r, (struct sockaddr *)&ss,
			    a->ai_addrlen))
				live_one(tab, &d);
		}
		freeaddrinfo(res);
	} else {
		printf("  live: %s does not resolve here\n", t->host);
	}
	rs_shm_detach(tab);
}

void rs_cli_explain_breaker(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s, const struct rs_target *t)
{
	const struct rs_breaker_settings *b = &s->breaker;
	char buf[160];

	printf("\nbreaker:\n");
	if (!b->enabled) {
		rs_cli_setting_line(r, RS_KEY_BREAKER, "breaker", "off");
		return;
	}
	snprintf(buf, sizeof(buf), "%u", b->failures);
	rs_cli_setting_line(r, RS_KEY_BREAKER_FAILURES, "breaker.failures", buf);
	rs_cli_setting_line(r, RS_KEY_BREAKER_OPEN_FOR, "breaker.open_for",
	    rs_duration_format(b->open_for_ms, buf, sizeof(buf)));
	rs_cli_setting_line(r, RS_KEY_BREAKER_MAX_OPEN_FOR, "breaker.max_open_for",
	    rs_duration_format(b->max_open_for_ms, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%u", b->probes);
	rs_cli_setting_line(r, RS_KEY_BREAKER_PROBES, "breaker.probes", buf);
	rs_cli_status_list(fails, b, buf, sizeof(buf));
	rs_cli_setting_line(r, RS_KEY_BREAKER_ON_STATUS, "breaker.on_status", buf);
	rs_cli_setting_line(r, RS_KEY_BREAKER_SCOPE, "breaker.scope",
	    b->scope == RS_SCOPE_MACHINE ? "machine" : "process");
	printf("  kept per address and port: %u failed attempts in a row "
	    "open it for open_for (+-10%%),\n  doubled by each failed probe\n",
	    b->failures);
	if (t->family != AF_INET && t->family != AF_INET6 && !t->host)
		return;
	if (b->scope != RS_SCOPE_MACHINE || !t->port)
		printf("  live: %s\n", b->scope != RS_SCOPE_MACHINE ?
		    "kept in each process (scope process)" :
		    "give a port to see an address's breaker");
	else
		live(p, r, t);
}
