/* SPDX-License-Identifier: MIT */
/*
 * learn.c - samples into the shared histograms, and `auto` timeouts read
 * back from them through a per-process cache (see learn.h).
 *
 * The arrays are allocated once at start-up and never freed, as stats.c's:
 * a destructor or another thread may still record while the process
 * exits.  A rule whose entry the segment has no room for is remembered as
 * `no_room` and learns nothing.
 */
#include "learn.h"

#include <stdlib.h>
#include <string.h>

#include "hot.h"
#include "latency.h"
#include "machine.h"

#define RS_COLD __attribute__((cold, noinline))

struct cache {
	uint32_t value_ms;		/* 0: not computed yet */
	uint32_t left;			/* samples until the next refresh */
	int64_t until_ms;		/* and the time of it */
};

/*
 * A rule's state in this process: its entry in the segment, the current
 * epoch of its histograms and when that ends (so that a sample needs no
 * division), and the cache of its `auto` values.  Written by any thread:
 * each field is an atomic word, and racing writers store the same values.
 */
struct rule_state {
	struct rs_shm_learn *entry;	/* NULL: not looked up yet */
	uint64_t epoch;
	int64_t epoch_end_ms;		/* 0: no epoch yet */
	struct cache caches[RS_LEARN_KINDS];
};

static const struct rs_policy *policy;
static struct rule_state *states;
static struct rs_shm_learn no_room;

int rs_learn_init(const struct rs_policy *p)
{
	states = calloc(p->nrules + 1, sizeof(*states));
	if (!states)
		return -12; /* -ENOMEM */
	policy = p;
	return 0;
}

static size_t index_of(const struct rs_rule *rule)
{
	return rule ? (size_t)(rule - policy->rules) + 1 : 0;
}

/* Looks up (once) a rule's entry in the segment: mapped on first use. */
static RS_COLD struct rs_shm_learn *find_entry(struct rule_state *st,
    const struct rs_rule *rule, const struct rs_settings *s)
{
	struct rs_shm_table *t = rs_machine_table(policy);
	struct rs_shm_learn *l = t ? rs_shm_learn(t, rule, s, true) : NULL;

	if (t)
		__atomic_store_n(&st->entry, l ? l : &no_room,
		    __ATOMIC_RELEASE);
	return l;
}

/* Returns a rule's entry in the segment, or NULL. */
static inline struct rs_shm_learn *entry_of(struct rule_state *st,
    const struct rs_rule *rule, const struct rs_settings *s)
{
	struct rs_shm_learn *l = __atomic_load_n(&st->entry,
	    __ATOMIC_ACQUIRE);

	if (__builtin_expect(l != NULL, 1))
		return l == &no_room ? NULL : l;
	return find_entry(st, rule, s);
}

/* The epoch of now_ms, divided out once per epoch. */
static inline uint64_t epoch_of(struct rule_state *st, int64_t now_ms,
    uint32_t half_life_ms)
{
	uint64_t e;

	if (__builtin_expect(now_ms < __atomic_load_n(&st->epoch_end_ms,
	    __ATOMIC_RELAXED), 1))
		return __atomic_load_n(&st->epoch, __ATOMIC_RELAXED);
	e = rs_lat_epoch(now_ms, half_life_ms);
	__atomic_store_n(&st->epoch, e, __ATOMIC_RELAXED);
	__atomic_store_n(&st->epoch_end_ms, (int64_t)e * half_life_ms,
	    __ATOMIC_RELAXED);
	return e;
}

static inline void record(const struct rs_rule *rule,
    const struct rs_settings *s, enum rs_learn_kind k, uint64_t us,
    int64_t now_ms)
{
	struct rule_state *st;
	struct rs_shm_learn *l;

	if (!states)
		return;
	st = &states[index_of(rule)];
	if (!(l = entry_of(st, rule, s)))
		return;
	rs_lat_add(&l->hist[k], us, epoch_of(st, now_ms,
	    s->auto_timeout.half_life_ms));
	struct cache *c = &st->caches[k];
	uint32_t left = __atomic_load_n(&c->left, __ATOMIC_RELAXED);

	if (left)
		__atomic_store_n(&c->left, left - 1, __ATOMIC_RELAXED);
}

void rs_learn_record(const struct rs_rule *rule, const struct rs_settings *s,
    enum rs_learn_kind k, int64_t us, int64_t now_ms)
{
	if (us >= 0)
		record(rule, s, k, (uint64_t)us, now_ms);
}

RS_HOT void rs_learn_wait(const struct rs_rule *rule,
    const struct rs_settings *s, enum rs_learn_kind k, int64_t ms,
    int64_t now_ms)
{
	if (__builtin_expect(ms >= 0, 1))
		record(rule, s, k, (uint64_t)ms * 1000, now_ms);
}

/* Computes `auto` of kind k from l (NULL: nothing learned). */
static uint32_t compute(const struct rs_shm_learn *l,
    const struct rs_settings *s, enum rs_learn_kind k, int64_t now_ms,
    double *q_us, double *total)
{
	const struct rs_auto_timeout *a = &s->auto_timeout;
	double ms;

	*q_us = 0;
	*total = 0;
	if (l)
		*q_us = rs_lat_quantile_of(&l->hist[k], now_ms,
		    a->half_life_ms, a->quantile, total);
	if (*total < a->samples)
		return a->max_ms;
	ms = a->multiplier * *q_us / 1000.0;
	if (ms > (double)(uint64_t)ms)
		ms = (double)((uint64_t)ms + 1);
	if (ms < a->min_ms)
		return a->min_ms;
	return ms > a->max_ms ? a->max_ms : (uint32_t)ms;
}

uint32_t rs_learn_auto_ms(const struct rs_rule *rule,
    const struct rs_settings *s, enum rs_learn_kind k, int64_t now_ms)
{
	double q, total;
	struct rule_state *st;
	struct cache *c;
	uint32_t v;

	if (!states)
		return s->auto_timeout.max_ms;
	st = &states[index_of(rule)];
	c = &st->caches[k];
	v = __atomic_load_n(&c->value_ms, __ATOMIC_RELAXED);
	if (v && __atomic_load_n(&c->left, __ATOMIC_RELAXED) &&
	    now_ms < __atomic_load_n(&c->until_ms, __ATOMIC_RELAXED))
		return v;
	v = compute(entry_of(st, rule, s), s, k, now_ms, &q, &total);
	__atomic_store_n(&c->left, RS_LEARN_REFRESH_SAMPLES,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&c->until_ms, now_ms + RS_LEARN_REFRESH_MS,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&c->value_ms, v, __ATOMIC_RELAXED);
	return v;
}

uint32_t rs_learn_round_ms(double ms)
{
	double scale = 1;
	uint64_t v;

	if (!(ms >= 1))
		return 1;
	if (ms >= 86400000)
		return 86400000;
	while (ms / scale >= 100)
		scale *= 10;
	v = (uint64_t)(ms / scale);
	if ((double)v * scale < ms)
		v++;
	return (uint32_t)(v * (uint64_t)scale);
}

void rs_learn_stat(const struct rs_shm_learn *l, enum rs_learn_kind k,
    const struct rs_settings *s, int64_t now_ms, struct rs_learn_stat *st)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
	double *out[] = { &st->p50_us, &st->p90_us, &st->p99_us,
		&st->p999_us, &st->max_us };
	uint32_t hl = s->auto_timeout.half_life_ms;

	memset(st, 0, sizeof(*st));
	st->auto_ms = compute(l, s, k, now_ms, &st->q_us, &st->samples);
	if (!l)
		return;
	hl = l->half_life_ms;
	for (size_t j = 0; j < sizeof(qs) / sizeof(qs[0]); j++) {
		double total;

		*out[j] = rs_lat_quantile_of(&l->hist[k], now_ms, hl, qs[j],
		    &total);
	}
}
