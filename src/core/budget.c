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

#include "log.h"
#include "machine.h"
#include "shm.h"

/* The tables. */
static struct rs_shm_table process_table;
static int full_warned;

/* Returns the accounts of a rule: shared when they can be, else ours. */
static struct rs_budget_acct *acct_for(const struct rs_policy *p,
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

void rs_budget_note_connect(const struct rs_policy *p,
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
