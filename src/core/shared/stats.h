/* SPDX-License-Identifier: MIT */
/*
 * stats.h - per-rule counters, summarised in one log line at exit and
 * kept machine-wide in the user's shared segment of the policy file
 * (SPEC 11), which `resolute stats` reads.
 *
 * Counters are indexed by rule: 0 for the defaults, i + 1 for host rule i.
 * Updates are relaxed atomic increments, safe from any thread and from
 * many processes.  rs_stats_add() may map the segment on its first call
 * (a few system calls), so it is called only where the caller has just
 * paid system calls anyway: connects, their attempts and timeouts, never
 * reads or writes that do not time out.  The enum only grows at its end:
 * its order is the layout of the shared counters.
 */
#ifndef RS_STATS_H
#define RS_STATS_H

#include "policy.h"

enum rs_stat {
	RS_STAT_CONNECTS,	/* logical connects */
	RS_STAT_ATTEMPTS,	/* kernel connect attempts */
	RS_STAT_RETRIES,
	RS_STAT_TIMEOUTS,	/* connect attempts that timed out */
	RS_STAT_GIVE_UPS,	/* logical connects that failed */
	RS_STAT_BUDGET_DENIALS,
	RS_STAT_READ_TIMEOUTS,
	RS_STAT_WRITE_TIMEOUTS,
	RS_STAT_FAILOVERS,	/* attempts sent to another address (SPEC 5c) */
	RS_STAT_DNS_RETRIES,	/* lookups retried after EAI_AGAIN (5d) */
	RS_STAT_HTTP_RETRIES,	/* requests replayed after 429/503 (9) */
	RS_STAT_HTTP_GIVE_UPS,	/* retryable responses handed over (9) */
	RS_STAT_INBOUND_DEADLINES,	/* requests whose deadline a thread took (10) */
	RS_STAT_DEADLINE_HEADERS,	/* requests sent with our deadline header (10) */
	RS_STAT_BREAKER_OPENS,	/* breakers opened, or reopened by a probe (12) */
	RS_STAT_BREAKER_REJECTS,	/* attempts a breaker failed at once (12) */
	RS_STAT_COUNT
};

/*
 * Prepares counters for policy p (called once at start-up).  Returns 0 or
 * -ENOMEM (counting is then skipped).
 */
int rs_stats_init(const struct rs_policy *p);

/* Adds one to counter k of rule (NULL: the defaults), in this process
   and in the shared segment. */
void rs_stats_add(const struct rs_rule *rule, enum rs_stat k);

/* The same for counters a and b of one rule at once (a connect and its
   first attempt): the rule's counters are found once. */
void rs_stats_add_pair(const struct rs_rule *rule, enum rs_stat a,
    enum rs_stat b);

/* Returns the name of counter k ("connects", ...), or NULL. */
const char *rs_stats_name(enum rs_stat k);

/* Logs one info line per rule that saw traffic (the exit summary). */
void rs_stats_log_summary(void);

#endif /* RS_STATS_H */
