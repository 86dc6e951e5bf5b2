/* SPDX-License-Identifier: MIT */
/*
 * explain_names.c - the parts of `resolute explain` about names: where
 * failover would send the retries of a connect to a name (SPEC 5c), and
 * the schedule of DNS retries (5d).
 *
 * The name is resolved here, now, with the system's resolver, as the
 * program would resolve it; the order printed is the resolver's.
 */
#include "cli.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "backoff.h"
#include "duration.h"
#include "failover.h"
#include "names.h"

/* Resolves host like a program would; returns the count of addresses. */
static size_t resolve(const char *host, struct rs_name_addr *out, size_t max,
    int *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	size_t n = 0;

	*err = getaddrinfo(host, NULL, &hints, &res);
	if (*err)
		return 0;
	for (const struct addrinfo *ai = res; ai && n < max; ai = ai->ai_next) {
		struct rs_name_addr a;
		uint16_t port;
		uint32_t scope;
		bool dup = false;

		if (!rs_failover_addr_of(ai->ai_addr, ai->ai_addrlen, &a,
			&port, &scope))
			continue;
		for (size_t i = 0; i < n; i++)
			dup |= memcmp(&out[i], &a, sizeof(a)) == 0;
		if (!dup)
			out[n++] = a;
	}
	freeaddrinfo(res);
	return n;
}

static const char *text_of(const struct rs_name_addr *a, char *buf,
    size_t len)
{
	return inet_ntop(a->family, a->addr, buf, (socklen_t)len);
}

/* Prints the attempts of a connect to the first address, in order. */
static void print_attempts(const struct rs_name_addr *list, size_t n,
    const struct rs_settings *s)
{
	struct rs_failover_req r = { .addrs = list, .n = n,
		.current = list[0], .sock_family = AF_INET6 };
	char ip[INET6_ADDRSTRLEN];

	printf("  a connect to %s from an IPv6 socket tries, in turn:",
	    text_of(&list[0], ip, sizeof(ip)));
	for (unsigned k = 1; k <= s->attempts; k++) {
		printf(" %s", text_of(&r.current, ip, sizeof(ip)));
		int i = rs_failover_choose(&r);

		if (i >= 0)
			r.current = list[i];
	}
	printf("\n  (an IPv4 socket skips the IPv6 addresses; one with "
	    "IPV6_V6ONLY, the IPv4 ones)\n");
}

void rs_cli_explain_failover(const char *host, const struct rs_settings *s)
{
	struct rs_name_addr list[RS_NAMES_PER_NAME];
	char ip[INET6_ADDRSTRLEN], win[32];
	int err;

	printf("\nfailover: %s\n", s->failover ? "on" : "off");
	if (!s->failover) {
		printf("  every attempt goes to the program's own address\n");
		return;
	}
	if (!host || !*host) {
		printf("  applies to names the program resolves; this target "
		    "is an address\n");
		return;
	}
	size_t n = resolve(host, list, RS_NAMES_PER_NAME, &err);

	if (n == 0) {
		printf("  %s cannot be resolved here now (%s); retries go to "
		    "the next of the addresses\n  the program itself gets "
		    "for it\n", host, err ? gai_strerror(err) : "no address");
		return;
	}
	printf("  %s resolves here now to, in the resolver's order:\n", host);
	for (size_t i = 0; i < n; i++)
		printf("    %zu  %s\n", i + 1, text_of(&list[i], ip, sizeof(ip)));
	rs_duration_format(s->connect_budget_ms == RS_OFF ?
	    RS_FAILOVER_DEFAULT_WINDOW_MS : s->connect_budget_ms, win,
	    sizeof(win));
	printf("  a retry goes to the next address, round-robin, skipping "
	    "those that failed\n  within the last %s\n", win);
	if (n > 1)
		print_attempts(list, n, s);
}

void rs_cli_explain_dns(const struct rs_settings *s)
{
	char lo[32], hi[32], at[32], b[32];
	uint64_t total = 0;

	printf("\nDNS retries: ");
	if (!(s->retry_on & RS_CLASS_DNS)) {
		printf("off (dns is not in retry_on): a lookup's EAI_AGAIN or "
		    "TRY_AGAIN is returned at once\n");
		return;
	}
	printf("a lookup failing with EAI_AGAIN or TRY_AGAIN is made again, "
	    "at most %u lookups;\n  \"no such name\" is returned at once\n",
	    s->attempts);
	printf("  lookup   wait before (lo\u2013hi)   cumulative worst case\n");
	printf("  1        -                     0ms\n");
	for (unsigned k = 2; k <= s->attempts; k++) {
		uint32_t l, h;

		rs_backoff_bounds_ms(&s->backoff, k - 2, &l, &h);
		total += h;
		if (s->connect_budget_ms != RS_OFF &&
		    total >= s->connect_budget_ms) {
			printf("  the wait before lookup %u would end after the "
			    "%s connect_budget: the failure is returned\n", k,
			    rs_duration_format(s->connect_budget_ms, b,
				sizeof(b)));
			return;
		}
		rs_duration_format(l, lo, sizeof(lo));
		rs_duration_format(h, hi, sizeof(hi));
		rs_duration_format((uint32_t)total, at, sizeof(at));
		printf("  %-8u %s\u2013%-*s %s\n", k, lo,
		    (int)(20 - strlen(lo)), hi, at);
	}
}
