/* SPDX-License-Identifier: MIT */
/*
 * stats.c - per-rule counters: this process's, summarised in one log line
 * at exit, and the machine-wide ones in the shared segment of the policy.
 *
 * The arrays are allocated once at start-up and never freed: a destructor
 * or another thread may still count while the process exits.  The shared
 * counters of a rule are found on its first count (the segment is mapped
 * then, machine.h) and remembered in `shared`; a rule for which the
 * segment has no room left is remembered as `no_room`, so that it is not
 * searched for again.
 */
#include "stats.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hot.h"
#include "log.h"
#include "machine.h"
#include "shm.h"
#include "single.h"

_Static_assert(RS_STAT_COUNT <= RS_SHM_COUNTERS,
    "the shared segment has no room for every counter");

static const struct rs_policy *policy;
static uint64_t (*counters)[RS_STAT_COUNT];
static struct rs_shm_metric **shared;
static struct rs_shm_metric no_room;

static const char *const names[RS_STAT_COUNT] = {
	"connects", "connect_attempts", "retries", "timeouts", "give_ups",
	"budget_denials", "read_timeouts", "write_timeouts", "failovers",
	"dns_retries", "http_retries", "http_give_ups", "inbound_deadlines",
	"deadline_headers",
	"breaker_opens",
	"breaker_rejects",
};

const char *rs_stats_name(enum rs_stat k)
{
	return (unsigned)k < RS_STAT_COUNT ? names[k] : NULL;
}

int rs_stats_init(const struct rs_policy *p)
{
	shared = calloc(p->nrules + 1, sizeof(*shared));
	counters = calloc(p->nrules + 1, sizeof(*counters));
	if (!counters || !shared) {
		free(shared);
		free(counters);
		shared = NULL;
		counters = NULL;
		return -12; /* -ENOMEM */
	}
	policy = p;
	return 0;
}

/*
 * Returns rule i's counters in the shared segment, or NULL.  Two threads
 * may both look a rule up the first time; they find the same slot.
 */
static RS_HOT struct rs_shm_metric *shared_of(size_t i,
    const struct rs_rule *rule)
{
	struct rs_shm_metric *m = __atomic_load_n(&shared[i],
	    __ATOMIC_ACQUIRE);
	struct rs_shm_table *t;

	if (m)
		return m == &no_room ? NULL : m;
	t = rs_machine_table(policy);
	if (!t)
		return NULL;
	m = rs_shm_metric(t, rule);
	__atomic_store_n(&shared[i], m ? m : &no_room, __ATOMIC_RELEASE);
	return m;
}

/*
 * Counts a, and b when two, for rule: in this process and in the machine's
 * shared table.  Inline in both callers, so that each makes one look-up of
 * the rule's counters and no test of `two` at run time.
 */
static inline void add(const struct rs_rule *rule, enum rs_stat a,
    enum rs_stat b, bool two)
{
	struct rs_shm_metric *m;

	if (!counters)
		return;
	size_t i = rule ? (size_t)(rule - policy->rules) + 1 : 0;

	rs_count_add(&counters[i][a], 1);
	if (two)
		rs_count_add(&counters[i][b], 1);
	if ((m = shared_of(i, rule))) {
		__atomic_fetch_add(&m->count[a], 1, __ATOMIC_RELAXED);
		if (two)
			__atomic_fetch_add(&m->count[b], 1, __ATOMIC_RELAXED);
	}
}

void rs_stats_add(const struct rs_rule *rule, enum rs_stat k)
{
	add(rule, k, k, false);
}

RS_HOT void rs_stats_add_pair(const struct rs_rule *rule, enum rs_stat a,
    enum rs_stat b)
{
	add(rule, a, b, true);
}

/*
 * Formats the counters of rule i as "connects=3 attempts=5 ..." (json 0) or
 * "\"connects\":3,\"attempts\":5,..." (json 1).  Returns whether any is
 * non-zero.
 */
static int format_counts(size_t i, int json, char *buf, size_t len)
{
	size_t pos = 0;
	int any = 0;

	for (int k = 0; k < RS_STAT_COUNT && pos < len; k++) {
		uint64_t v = __atomic_load_n(&counters[i][k], __ATOMIC_RELAXED);

		any |= v != 0;
		pos += (size_t)snprintf(buf + pos, len - pos,
		    json ? "%s\"%s\":%llu" : "%s%s=%llu",
		    k ? (json ? "," : " ") : "", names[k],
		    (unsigned long long)v);
	}
	return any;
}

void rs_stats_log_summary(void)
{
	char line[640], json[640];

	if (!counters || !rs_log_enabled(RS_LOG_INFO))
		return;
	for (size_t i = 0; i <= policy->nrules; i++) {
		if (!format_counts(i, 0, line, sizeof(line)))
			continue;
		format_counts(i, 1, json, sizeof(json));
		const char *rule = i ? policy->rules[i - 1].match.text :
		    "defaults";
		char extra[720];

		snprintf(extra, sizeof(extra), "\"rule\":\"%s\",%s", rule, json);
		struct rs_log_fields f = { .event = "summary", .attempt = -1,
			.wait_ms = -1, .json_extra = extra };

		rs_log(RS_LOG_INFO, &f, "summary %s: %s", rule, line);
	}
}
