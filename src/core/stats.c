/*
 * stats.c - per-rule counters, summarised in one log line at exit.
 *
 * The array is allocated once at start-up and never freed: a destructor or
 * another thread may still count while the process exits.
 */
#include "stats.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static const struct rs_policy *policy;
static uint64_t (*counters)[RS_STAT_COUNT];

static const char *const names[RS_STAT_COUNT] = {
	"connects", "connect_attempts", "retries", "timeouts", "give_ups",
	"budget_denials", "read_timeouts", "write_timeouts", "failovers",
	"dns_retries", "http_retries", "http_give_ups", "inbound_deadlines",
	"deadline_headers",
};

int rs_stats_init(const struct rs_policy *p)
{
	counters = calloc(p->nrules + 1, sizeof(*counters));
	if (!counters)
		return -12; /* -ENOMEM */
	policy = p;
	return 0;
}

void rs_stats_add(const struct rs_rule *rule, enum rs_stat k)
{
	if (!counters)
		return;
	size_t i = rule ? (size_t)(rule - policy->rules) + 1 : 0;

	__atomic_fetch_add(&counters[i][k], 1, __ATOMIC_RELAXED);
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
