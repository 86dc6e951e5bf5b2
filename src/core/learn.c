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

#include "latency.h"
#include "machine.h"

struct cache {
	uint32_t value_ms;		/* 0: not computed yet */
	uint32_t left;			/* samples until the next refresh */
	int64_t until_ms;		/* and the time of it */
};

static const struct rs_policy *policy;
static struct cache (*caches)[RS_LEARN_KINDS];
static struct rs_shm_learn **entries;
static struct rs_shm_learn no_room;

int rs_learn_init(const struct rs_policy *p)
{
	entries = calloc(p->nrules + 1, sizeof(*entries));
	caches = calloc(p->nrules + 1, sizeof(*caches));
	if (!entries || !caches) {
		free(entries);
		free(caches);
		entries = NULL;
		caches = NULL;
		return -12; /* -ENOMEM */
	}
	policy = p;
	return 0;
}

static size_t index_of(const struct rs_rule *rule)
{
	return rule ? (size_t)(rule - policy->rules) + 1 : 0;
}

/* Returns rule i's entry in the segment, or NULL; found once. */
static struct rs_shm_learn *entry_of(size_t i, const struct rs_rule *rule,
    const struct rs_settings *s)
{
	struct rs_shm_learn *l = __atomic_load_n(&entries[i],
	    __ATOMIC_ACQUIRE);
	struct rs_shm_table *t;

	if (l)
		return l == &no_room ? NULL : l;
	t = rs_machine_table(policy);
	if (!t)
		return NULL;
	l = rs_shm_learn(t, rule, s, true);
	__atomic_store_n(&entries[i], l ? l : &no_room, __ATOMIC_RELEASE);
	return l;
}

void rs_learn_record(const struct rs_rule *rule, const struct rs_settings *s,
    enum rs_learn_kind k, int64_t us, int64_t now_ms)
{
	struct rs_shm_learn *l;
	size_t i;

	if (!caches || us < 0)
		return;
	i = index_of(rule);
	if (!(l = entry_of(i, rule, s)))
		return;
	rs_lat_record(&l->hist[k], (uint64_t)us, now_ms,
	    s->auto_timeout.half_life_ms);
	struct cache *c = &caches[i][k];
	uint32_t left = __atomic_load_n(&c->left, __ATOMIC_RELAXED);

	if (left)
		__atomic_store_n(&c->left, left - 1, __ATOMIC_RELAXED);
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
	struct cache *c;
	uint32_t v;
	size_t i;

	if (!caches)
		return s->auto_timeout.max_ms;
	i = index_of(rule);
	c = &caches[i][k];
	v = __atomic_load_n(&c->value_ms, __ATOMIC_RELAXED);
	if (v && __atomic_load_n(&c->left, __ATOMIC_RELAXED) &&
	    now_ms < __atomic_load_n(&c->until_ms, __ATOMIC_RELAXED))
		return v;
	v = compute(entry_of(i, rule, s), s, k, now_ms, &q, &total);
	__atomic_store_n(&c->left, RS_LEARN_REFRESH_SAMPLES,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&c->until_ms, now_ms + RS_LEARN_REFRESH_MS,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&c->value_ms, v, __ATOMIC_RELAXED);
	return v;
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
