/* SPDX-License-Identifier: MIT */
/*
 * budget_acct.c - sliding-window accounting of connects and retries.
 *
 * Pure (the clock is passed in) and lock-free: see budget_acct.h.
 */
#include "budget_acct.h"

#include "hot.h"

/* Bucket words: the bucket number in the high half, the count in the low. */
#define STAMP(w) ((uint32_t)((w) >> 32))
#define COUNT(w) ((uint32_t)(w))

static uint32_t stamp_of(const struct rs_retry_budget *b, int64_t now_ms)
{
	uint32_t ms = b->window_ms / RS_BUDGET_BUCKETS;

	return (uint32_t)((uint64_t)(now_ms < 0 ? 0 : now_ms) / (ms ? ms : 1));
}

/* Sums the counts of the words that fall in the window ending at cur. */
static uint64_t window_sum(const uint64_t *words, uint32_t cur)
{
	uint64_t sum = 0;

	for (int i = 0; i < RS_BUDGET_BUCKETS; i++) {
		uint64_t w = __atomic_load_n(&words[i], __ATOMIC_ACQUIRE);

		if ((uint32_t)(cur - STAMP(w)) < RS_BUDGET_BUCKETS)
			sum += COUNT(w);
	}
	return sum;
}

/*
 * Adds one to bucket cur.  A word still holding an older bucket restarts
 * at 1; one already holding a newer bucket (a caller whose clock reading
 * is a whole window old) takes the event there rather than erase it.
 * Counts saturate instead of wrapping into the bucket number.
 */
static inline void bump(uint64_t *words, uint32_t cur)
{
	uint64_t *w = &words[cur % RS_BUDGET_BUCKETS];
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), new;

	do {
		if ((int32_t)(STAMP(old) - cur) < 0)
			new = (uint64_t)cur << 32 | 1;
		else if (COUNT(old) == UINT32_MAX)
			return;
		else
			new = old + 1;
	} while (!__atomic_compare_exchange_n(w, &old, new, true,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

/* Takes back one count of bucket cur, if that bucket still holds it. */
static void unbump(uint64_t *words, uint32_t cur)
{
	uint64_t *w = &words[cur % RS_BUDGET_BUCKETS];
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);

	do {
		if (STAMP(old) != cur || COUNT(old) == 0)
			return;
	} while (!__atomic_compare_exchange_n(w, &old, old - 1, true,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

/*
 * The product is nudged up by a relative 1e-12 before it is truncated, so
 * that decimal ratios such as 0.29 * 100 (28.999999999999996 in binary
 * floating point) give the 29 a reader of the policy expects.
 */
uint64_t rs_budget_allowed(const struct rs_retry_budget *b,
    uint64_t connects)
{
	double by_ratio = b->ratio * (double)connects * (1.0 + 1e-12);
	uint64_t floor_n = (uint64_t)b->min_per_second * b->window_ms / 1000;
	uint64_t r = by_ratio >= 1.8e19 ? UINT64_MAX : (uint64_t)by_ratio;

	return r > floor_n ? r : floor_n;
}

RS_HOT void rs_budget_acct_note(struct rs_budget_acct *a,
    const struct rs_retry_budget *b, int64_t now_ms)
{
	bump(a->connects, stamp_of(b, now_ms));
	__atomic_fetch_add(&a->total_connects, 1, __ATOMIC_RELAXED);
}

/*
 * Counts first, checks second: the n-th of several concurrent takers sees
 * at least n new retries, so no more than `allowed` can all pass.  Two
 * racing takers may both fail where one alone would have passed; the
 * budget errs on the side of fewer retries.  A taker killed between count
 * and take-back leaves one phantom retry, gone after one window.
 */
bool rs_budget_acct_take(struct rs_budget_acct *a,
    const struct rs_retry_budget *b, int64_t now_ms)
{
	uint32_t cur = stamp_of(b, now_ms);

	bump(a->retries, cur);
	if (window_sum(a->retries, cur) <=
	    rs_budget_allowed(b, window_sum(a->connects, cur))) {
		__atomic_fetch_add(&a->total_retries, 1, __ATOMIC_RELAXED);
		return true;
	}
	unbump(a->retries, cur);
	__atomic_fetch_add(&a->total_denials, 1, __ATOMIC_RELAXED);
	return false;
}

void rs_budget_acct_usage(const struct rs_budget_acct *a,
    const struct rs_retry_budget *b, int64_t now_ms,
    struct rs_budget_usage *u)
{
	uint32_t cur = stamp_of(b, now_ms);

	u->connects = window_sum(a->connects, cur);
	u->retries = window_sum(a->retries, cur);
	u->allowed = rs_budget_allowed(b, u->connects);
}
