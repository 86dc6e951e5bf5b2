/* SPDX-License-Identifier: MIT */
/*
 * breakers.c - the breakers of a policy: the table that holds each, the
 * log lines and the counters (breakers.h).
 *
 * scope: machine breakers live in the user's shared segment for the
 * policy file (machine.h); when it cannot be used, in this process's
 * table, as budgets do.  Each process logs an opening once: it remembers,
 * per slot, the opening count it last logged.  Lock-free throughout.
 */
#include "breakers.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "machine.h"
#include "rng.h"
#include "shm.h"
#include "stats.h"

static struct rs_breaker_table process_table;

/*
 * Initial-exec TLS, as budget.c's: a dynamically allocated TLS block may
 * call malloc on first access, never welcome inside a connect().
 */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/*
 * The rule keys each thread found last: a key hashes the rule's match
 * text, which costs more than the rest of a breaker's look-up.  A policy
 * is immutable, so an entry holds until a policy is freed.
 */
#define CACHED 4

struct rule_key {
	unsigned generation;
	const struct rs_rule *rule;
	uint64_t key;			/* 0: entry unused */
};

static TLS struct rule_key keys[CACHED];

static uint64_t rule_key_of(const struct rs_rule *rule)
{
	struct rule_key *k = &keys[((uintptr_t)rule >> 4) % CACHED];
	unsigned gen = rs_policy_generation();

	if (k->key && k->generation == gen && k->rule == rule)
		return k->key;
	*k = (struct rule_key){ gen, rule, rs_shm_rule_key(rule) };
	return k->key;
}

/* Per slot of each table, the opening count this process last logged. */
static uint32_t logged[2][RS_BREAKER_SLOTS];

bool rs_breakers_dest(struct rs_breaker_dest *d, const struct rs_rule *rule,
    const struct sockaddr *sa, socklen_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff };

	memset(d, 0, sizeof(*d));
	d->rule_key = rule_key_of(rule);
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		d->family = AF_INET;
		memcpy(d->addr, &in->sin_addr, 4);
		d->port = ntohs(in->sin_port);
		return true;
	}
	if (sa->sa_family != AF_INET6 || len < sizeof(struct sockaddr_in6))
		return false;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

	d->port = ntohs(in6->sin6_port);
	if (memcmp(&in6->sin6_addr, mapped, 12) == 0) {
		d->family = AF_INET;
		memcpy(d->addr, (const uint8_t *)&in6->sin6_addr + 12, 4);
	} else {
		d->family = AF_INET6;
		memcpy(d->addr, &in6->sin6_addr, 16);
	}
	return true;
}

char *rs_breakers_addr_text(int family, const uint8_t *addr, uint16_t port,
    char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, ip, sizeof(ip));
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
	    (unsigned)port);
	return buf;
}

/* The table of a rule's breakers, and which of `logged` goes with it. */
static struct rs_breaker_table *table_of(const struct rs_policy *p,
    const struct rs_settings *s, unsigned *which)
{
	struct rs_shm_table *t = NULL;

	if (s->breaker.scope == RS_SCOPE_MACHINE && p && p->path)
		t = rs_machine_table(p);
	*which = t != NULL;
	return t ? &t->breakers : &process_table;
}

/* Logs an opening that this process has not logged yet. */
static void log_open(const struct rs_breaker_slot *sl, unsigned which,
    size_t i, uint32_t opens, const struct rs_breaker_dest *d)
{
	uint32_t seen = __atomic_load_n(&logged[which][i], __ATOMIC_RELAXED);
	char addr[RS_BREAKER_ADDR_MAX], extra[64], why[64];
	struct rs_log_fields f = { .event = "breaker_open", .attempt = -1,
		.wait_ms = -1, .json_extra = extra };
	struct rs_breaker_view v;
	uint32_t open_ms = __atomic_load_n(&sl->open_ms, __ATOMIC_RELAXED);
	unsigned failures = __atomic_load_n(&sl->failures, __ATOMIC_RELAXED);

	if (seen == opens || !__atomic_compare_exchange_n(&logged[which][i],
	    &seen, opens, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	rs_breaker_unpack(__atomic_load_n(&sl->word, __ATOMIC_RELAXED), &v);
	f.addr = rs_breakers_addr_text(d->family, d->addr, d->port, addr,
	    sizeof(addr));
	snprintf(why, sizeof(why), "%s", strerror(v.err ? v.err : 110));
	why[0] = (char)tolower((unsigned char)why[0]);
	f.error = why;
	snprintf(extra, sizeof(extra), "\"failures\":%u,\"open_ms\":%u",
	    failures, open_ms);
	if (v.doublings)
		rs_log(RS_LOG_WARN, &f, "connect %s: breaker open again: its "
		    "probe failed (%s); connects to it fail at once for %u ms",
		    addr, why, open_ms);
	else
		rs_log(RS_LOG_WARN, &f, "connect %s: breaker open after %u "
		    "failure%s in a row (%s); connects to it fail at once for "
		    "%u ms", addr, failures, failures == 1 ? "" : "s", why,
		    open_ms);
}

static void log_close(const struct rs_breaker_dest *d)
{
	char addr[RS_BREAKER_ADDR_MAX];
	struct rs_log_fields f = { .event = "breaker_close", .attempt = -1,
		.wait_ms = -1 };

	if (!rs_log_enabled(RS_LOG_INFO))
		return;
	f.addr = rs_breakers_addr_text(d->family, d->addr, d->port, addr,
	    sizeof(addr));
	rs_log(RS_LOG_INFO, &f, "connect %s: breaker closed: it answered",
	    addr);
}

static enum rs_breaker_verdict decide(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s,
    const struct sockaddr *sa, socklen_t len, int64_t now_ms, int *err,
    bool count)
{
	struct rs_breaker_dest d;
	unsigned which;
	struct rs_breaker_table *t;
	struct rs_breaker_slot *sl;

	if (!rs_breakers_on(s) || !rs_breakers_dest(&d, rule, sa, len))
		return RS_BREAKER_ABSENT;
	t = table_of(p, s, &which);
	/* A healthy address has no slot: only a failure claims one. */
	sl = rs_breaker_find(t, &d, rs_breaker_key(&d));
	if (!sl)
		return RS_BREAKER_ABSENT;
	enum rs_breaker_verdict v = rs_breaker_slot_admit(sl, &s->breaker,
	    now_ms, err);

	if (v == RS_BREAKER_REJECT && count) {
		rs_stats_add(rule, RS_STAT_BREAKER_REJECTS);
		log_open(sl, which, (size_t)(sl - t->slots),
		    __atomic_load_n(&sl->opens, __ATOMIC_ACQUIRE), &d);
	}
	return v;
}

enum rs_breaker_verdict rs_breakers_admit(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s,
    const struct sockaddr *sa, socklen_t len, int64_t now_ms, int *err)
{
	return decide(p, rule, s, sa, len, now_ms, err, true);
}

enum rs_breaker_verdict rs_breakers_peek(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s,
    const struct sockaddr *sa, socklen_t len, int64_t now_ms, int *err)
{
	return decide(p, rule, s, sa, len, now_ms, err, false);
}

bool rs_breakers_record(const struct rs_policy *p, const struct rs_rule *rule,
    const struct rs_settings *s, const struct sockaddr *sa, socklen_t len,
    int err, bool probe, int64_t now_ms)
{
	struct rs_breaker_dest d;
	unsigned which;
	uint64_t key;
	uint32_t opens;
	struct rs_breaker_table *t;
	struct rs_breaker_slot *sl;

	if (!rs_breakers_on(s) || !rs_breakers_dest(&d, rule, sa, len))
		return false;
	t = table_of(p, s, &which);
	key = rs_breaker_key(&d);
	sl = err ? rs_breaker_claim(t, &d, key) : rs_breaker_find(t, &d, key);
	if (!sl)
		return false;
	enum rs_breaker_event ev = rs_breaker_slot_record(sl, &s->breaker,
	    err, probe, now_ms, rs_rng_uniform(), &opens);

	if (ev == RS_BREAKER_OPENED) {
		rs_stats_add(rule, RS_STAT_BREAKER_OPENS);
		log_open(sl, which, (size_t)(sl - t->slots), opens, &d);
	} else if (ev == RS_BREAKER_CLOSED_EV) {
		log_close(&d);
	}
	return rs_breaker_state_at(__atomic_load_n(&sl->word,
	    __ATOMIC_ACQUIRE), now_ms) == RS_BREAKER_OPEN;
}

void rs_breakers_clear_process(void)
{
	memset(&process_table, 0, sizeof(process_table));
	memset(logged, 0, sizeof(logged));
}
