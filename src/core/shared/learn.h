/* SPDX-License-Identifier: MIT */
/*
 * learn.h - this process's part in learning each rule's latency (SPEC 13):
 * samples go into the rule's histograms in the machine-wide segment
 * (shm.h, latency.h), and `auto` timeouts are read back from them.
 *
 * A rule's `auto` value is cached in the process and computed afresh from
 * the segment at most every RS_LEARN_REFRESH_SAMPLES samples the process
 * records for the rule, or RS_LEARN_REFRESH_MS after the last time (a
 * computation reads the rule's three generations, ~2,700 words, about a
 * microsecond or two); a process's first wait computes it.  Nothing here
 * reads a clock or makes a system call but the segment's mapping on
 * first use, which a connect has made already.  Thread-safe: the cache's
 * fields are atomics, and racing refreshes compute the same value.
 */
#ifndef RS_LEARN_H
#define RS_LEARN_H

#include <stdint.h>

#include "policy.h"
#include "shm.h"

#define RS_LEARN_REFRESH_SAMPLES 4096
#define RS_LEARN_REFRESH_MS 1000

/* Prepares the cache for policy p (start-up).  Returns 0 or -ENOMEM
   (nothing is then learned, and `auto` stands for its max). */
int rs_learn_init(const struct rs_policy *p);

/*
 * Records a sample of `us` microseconds of kind k for rule (NULL: the
 * defaults) under settings s, at monotonic now_ms.
 */
void rs_learn_record(const struct rs_rule *rule, const struct rs_settings *s,
    enum rs_learn_kind k, int64_t us, int64_t now_ms);

/* rs_learn_record() of a wait of ms milliseconds (the read and write
   paths' stamps are ms): the one call a sample makes there. */
void rs_learn_wait(const struct rs_rule *rule, const struct rs_settings *s,
    enum rs_learn_kind k, int64_t ms, int64_t now_ms);

/* The value `auto` of kind k stands for now, in ms (see above). */
uint32_t rs_learn_auto_ms(const struct rs_rule *rule,
    const struct rs_settings *s, enum rs_learn_kind k, int64_t now_ms);

/*
 * Returns the timeout t of kind k under s, as it stands: t itself unless
 * that timeout is `auto` (one test of a word of s: inline).
 */
static inline uint32_t rs_learn_timeout_ms(const struct rs_rule *rule,
    const struct rs_settings *s, enum rs_learn_kind k, uint32_t t,
    int64_t now_ms)
{
	if (__builtin_expect(!(s->auto_mask & (1u << k)), 1))
		return t;
	return rs_learn_auto_ms(rule, s, k, now_ms);
}

/*
 * Returns ms rounded up to two significant digits, in whole ms (at least
 * 1, at most a day): what `resolute suggest` writes for multiplier x p99.
 */
uint32_t rs_learn_round_ms(double ms);

/* What one histogram says now, for `resolute stats`, explain, suggest. */
struct rs_learn_stat {
	double samples;			/* weighted by decay */
	double p50_us, p90_us, p99_us, p999_us, max_us;
	double q_us;			/* at auto_timeout.quantile */
	uint32_t auto_ms;		/* what `auto` stands for */
};

/*
 * Fills *st from l's histogram of kind k (l NULL: nothing learned) at
 * monotonic now_ms, with `auto` computed under settings s.
 */
void rs_learn_stat(const struct rs_shm_learn *l, enum rs_learn_kind k,
    const struct rs_settings *s, int64_t now_ms, struct rs_learn_stat *st);

#endif /* RS_LEARN_H */
