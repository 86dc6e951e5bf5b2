/* SPDX-License-Identifier: MIT */
/*
 * report_breaker.c - the circuit breakers in `resolute stats` (SPEC 12):
 * the text lists those that are not closed (rule, address, state, since,
 * failures), JSON lists them too, Prometheus has resolute_breaker_open
 * for every breaker the segment holds (1 open or half-open, 0 closed).
 *
 * A breaker's rule is named by the counters' label of its rule key; one
 * whose rule has no counters yet (it cannot happen for long: every
 * connect counts) is shown as "?".  Read-only.
 */
#include "report_breaker.h"

#include <stdio.h>
#include <string.h>

#include "breakers.h"
#include "clock.h"
#include "export.h"

/* One breaker as read now; returns false for a free slot. */
struct seen {
	char rule[RS_SHM_LABEL_MAX + 1];
	char addr[RS_BREAKER_ADDR_MAX];
	enum rs_breaker_state state;
	unsigned failures;
	int64_t ago_ms;
	uint32_t left_ms;
};

static bool look(const struct rs_shm_table *t, unsigned i, int64_t now,
    struct seen *s)
{
	const struct rs_breaker_slot *sl = &t->breakers.slots[i];
	uint64_t w = __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE);
	uint8_t addr[16];
	const struct rs_shm_metric *m;

	if (!__atomic_load_n(&sl->key, __ATOMIC_ACQUIRE))
		return false;
	m = rs_shm_metric_find(t, __atomic_load_n(&sl->rule_key,
	    __ATOMIC_RELAXED));
	snprintf(s->rule, sizeof(s->rule), "%.*s", RS_SHM_LABEL_MAX,
	    m && __atomic_load_n(&m->ready, __ATOMIC_ACQUIRE) ? m->rule : "?");
	memcpy(addr, sl->addr, sizeof(addr));
	rs_breakers_addr_text(sl->family, addr, sl->port, s->addr,
	    sizeof(s->addr));
	s->state = rs_breaker_state_at(w, now);
	s->failures = __atomic_load_n(&sl->failures, __ATOMIC_RELAXED);
	s->ago_ms = now - __atomic_load_n(&sl->since_ms, __ATOMIC_RELAXED);
	s->left_ms = rs_breaker_left_ms(w, now);
	return true;
}

void rs_report_text_breakers(FILE *f, const struct rs_shm_table *t)
{
	int64_t now = rs_clock_now_ms();
	struct seen s;
	int shown = 0;

	for (unsigned i = 0; i < RS_BREAKER_SLOTS; i++) {
		if (!look(t, i, now, &s) || s.state == RS_BREAKER_CLOSED)
			continue;
		if (!shown++)
			fprintf(f, "  breakers not closed:\n    %-24s %-24s "
			    "%-9s %-14s %s\n", "rule", "address", "state",
			    "since", "failures");
		fprintf(f, "    %-24s %-24s %-9s %-14lld %u\n", s.rule, s.addr,
		    rs_breaker_state_name(s.state), (long long)s.ago_ms / 1000,
		    s.failures);
	}
	if (shown)
		fprintf(f, "    (since: seconds since it opened)\n");
}

void rs_report_json_breakers(FILE *f, const struct rs_shm_table *t)
{
	int64_t now = rs_clock_now_ms();
	struct seen s;
	int first = 1;

	fputs(",\"breakers\":[", f);
	for (unsigned i = 0; i < RS_BREAKER_SLOTS; i++) {
		if (!look(t, i, now, &s) || s.state == RS_BREAKER_CLOSED)
			continue;
		fputs(first ? "{\"rule\":" : ",{\"rule\":", f);
		first = 0;
		rs_export_json_string(f, s.rule, sizeof(s.rule));
		fprintf(f, ",\"addr\":\"%s\",\"state\":\"%s\",\"since_ms\":%lld,"
		    "\"failures\":%u}", s.addr, rs_breaker_state_name(s.state),
		    (long long)s.ago_ms, s.failures);
	}
	fputc(']', f);
}

void rs_report_prom_breaker_family(FILE *f)
{
	rs_export_family(f, "resolute_breaker_open", "gauge", "Whether the "
	    "circuit breaker of a rule and address is open or half-open (1) "
	    "or closed (0).");
}

void rs_report_prom_breakers(FILE *f, const struct rs_shm_table *t)
{
	int64_t now = rs_clock_now_ms();
	struct seen s;
	char policy[RS_SHM_POLICY_MAX + 1];
	const char *labels[] = { "policy", policy, "rule", s.rule, "addr",
		s.addr };

	snprintf(policy, sizeof(policy), "%.*s", RS_SHM_POLICY_MAX, t->policy);
	for (unsigned j = 0; j < RS_BREAKER_SLOTS; j++)
		if (look(t, j, now, &s))
			rs_export_sample(f, "resolute_breaker_open", labels, 3,
			    s.state != RS_BREAKER_CLOSED);
}
