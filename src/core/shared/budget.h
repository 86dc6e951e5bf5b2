/* SPDX-License-Identifier: MIT */
/*
 * budget.h - the retry budget (SPEC §5b): retries may add at most `ratio`
 * to the connects of the last `window`, with a floor of min_per_second.
 *
 * scope: process keeps the accounts in this process; scope: machine shares
 * them among the processes of one user that use the same policy file.
 * Thread-safe and lock-free: every update is one atomic operation on one
 * 64-bit word, so a thread or process that dies at any instruction leaves
 * the accounts usable.
 */
#ifndef RS_BUDGET_H
#define RS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "budget_acct.h"
#include "policy.h"

/*
 * Records one logical connect (its first attempt) under the rule that
 * applies (NULL: the defaults).  now_ms is monotonic.
 */
void rs_budget_note_connect(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s, int64_t now_ms);

/*
 * Asks for one retry under that rule.  Returns true and spends it when the
 * budget allows, false (and counts a denial) when it is spent.
 */
bool rs_budget_take_retry(const struct rs_policy *p,
    const struct rs_rule *rule, const struct rs_settings *s, int64_t now_ms);

#endif /* RS_BUDGET_H */
