/* SPDX-License-Identifier: MIT */
/*
 * budget_acct.h - the retry budget's accounting on one budget's counters.
 *
 * Pure (the clock is passed in) and lock-free: every update is one atomic
 * operation on one 64-bit word, so the counters can live in shared memory
 * (shm.h) and a process that dies at any instruction leaves them usable.
 */
#ifndef RS_BUDGET_ACCT_H
#define RS_BUDGET_ACCT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

/*
 * Precisely: the window is cut into RS_BUDGET_BUCKETS buckets of
 * window_ms / RS_BUDGET_BUCKETS each (at least 100 ms, as window >= 1s);
 * "the last window" is the current bucket and the RS_BUDGET_BUCKETS - 1
 * before it, so it reaches back between 90% and 100% of `window`.  With C
 * the logical connects and R the retries granted in the last window,
 *
 *	allowed = max(floor(ratio * C), min_per_second * window_ms / 1000)
 *
 * and a retry is granted while R < allowed.  A retry is counted before the
 * check and taken back when the check fails, so concurrent takers can
 * never together exceed `allowed`.
 *
 * Each bucket word holds (bucket number << 32 | count); a word whose
 * bucket number is not within the last window counts as zero and is
 * restarted by the next writer.  The struct lives in shared memory: plain
 * integers, no pointers, only atomic access.  All times are monotonic ms.
 */
#define RS_BUDGET_BUCKETS 10

struct rs_budget_acct {
	uint64_t connects[RS_BUDGET_BUCKETS];
	uint64_t retries[RS_BUDGET_BUCKETS];
	uint64_t total_connects;	/* since the accounts were created */
	uint64_t total_retries;
	uint64_t total_denials;
};

/* What the last window holds, for `resolute stats` and the tests. */
struct rs_budget_usage {
	uint64_t connects;	/* C */
	uint64_t retries;	/* R */
	uint64_t allowed;	/* the formula above */
};

/* Returns `allowed` for b with `connects` connects in the window. */
uint64_t rs_budget_allowed(const struct rs_retry_budget *b,
    uint64_t connects);

/* Counts one logical connect at now_ms. */
void rs_budget_acct_note(struct rs_budget_acct *a,
    const struct rs_retry_budget *b, int64_t now_ms);

/* Grants (true, counted) or denies (false, denial counted) one retry. */
bool rs_budget_acct_take(struct rs_budget_acct *a,
    const struct rs_retry_budget *b, int64_t now_ms);

/* Fills *u with the usage of the window that ends at now_ms. */
void rs_budget_acct_usage(const struct rs_budget_acct *a,
    const struct rs_retry_budget *b, int64_t now_ms,
    struct rs_budget_usage *u);

#endif /* RS_BUDGET_ACCT_H */
