/* SPDX-License-Identifier: MIT */
/*
 * budget.c - the retry budget: the choice of the table that holds a rule's
 * accounts (the accounting itself is budget_acct.c).
 *
 * scope: machine accounts live in the user's shared segment for the policy
 * file (shm.h, machine.h), mapped at the first connect; when it cannot be
 * used (owned by someone else, wrong mode, full...) a warning is logged
 * once and the accounts of this process are used instead, which still
 * bounds retries.
 * scope: process accounts live in a static table of this process; a fork
 * child starts with a copy of its parent's counts.  Lock-free throughout.
 */
#include "budget.h"

#include <string.h>

#include "hot.h"
#include "log.h"
#include "machine.h"
#include "shm.h"

/* The tables. */
static struct rs_shm_table process_table;
static int full_warned;

/*
 * Initial-exec TLS: a dynamically allocated TLS block may call malloc on
 * first access, which must never happen inside someone else's connect().
 */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/*
 * The accounts each thread found last, a few rules at a time: finding a
 * slot hashes the rule's match text and budget, which cost more than all
 * the rest of a connect's bookkeeping.  A policy is immutable, and a slot
 * keeps its key for the life of its table (the machine table, once
 * published, is never unmapped), so an entry holds for as long as no
 * policy has been freed (rs_policy_generation()).  Per thread, so that no
 * entry is ever read half written.
 */
#define CACHED 4

struct found {
	unsigned generation;
	const struct rs_rule *rule;
	const struct rs_settings *settings;
	struct rs_budget_acct *acct;	/* NULL: entry unused */
};

static TLS struct found cache[CACHED];

/* Returns the accounts of a rule: shared when they can be, else ours. */
static struct rs_budget_acct *find_acct(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s)
{
	struct rs_shm_table *t = NULL;
	struct rs_shm_slot *slot = NULL;

	if (s->budget.scope == RS_SCOPE_MACHINE && p && p->path)
		t = rs_machine_table(p);
	if (t && !(slot = rs_shm_slot(t, rule, &s->budget)) &&
	    !__atomic_exchange_n(&full_warned, 1, __ATOMIC_RELAXED))
		rs_log(RS_LOG_WARN, NULL, "retry budget: all %d shared slots "
		    "are taken; further rules are budgeted per process",
		    RS_SHM_SLOTS);
	if (!slot)
		slot = rs_shm_slot(&process_table, rule, &s->budget);
	return slot ? &slot->acct : NULL;
}

/*
 * find_acct(), cached.  A rule without accounts (every table full) is not
 * cached: it asks again each time, as before.
 */
static inline struct rs_budget_acct *acct_for(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s)
{
	size_t i = rule && p ? (size_t)(rule - p->rules) + 1 : 0;
	struct found *f = &cache[i % CACHED];
	unsigned gen = rs_policy_generation();

	if (f->acct && f->generation == gen && f->rule == rule &&
	    f->settings == s)
		return f->acct;
	struct rs_budget_acct *a = find_acct(p, rule, s);

	if (a)
		*f = (struct found){ gen, rule, s, a };
	return a;
}

RS_HOT void rs_budget_note_connect(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s, int64_t now_ms)
{
	struct rs_budget_acct *a = acct_for(p, rule, s);

	if (a)
		rs_budget_acct_note(a, &s->budget, now_ms);
}

/*
 * With even the process table full (more than RS_SHM_SLOTS rules), a rule
 * has no accounts and its retries are not limited: the budget is a
 * safeguard, and refusing every retry would break the per-rule policy.
 */
bool rs_budget_take_retry(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s, int64_t now_ms)
{
	struct rs_budget_acct *a = acct_for(p, rule, s);

	return a ? rs_budget_acct_take(a, &s->budget, now_ms) : true;
}
