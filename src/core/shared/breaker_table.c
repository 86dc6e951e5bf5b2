/* SPDX-License-Identifier: MIT */
/*
 * breaker_table.c - finding, claiming and updating breaker slots
 * (breaker_table.h).  Lock-free: every update is a bounded CAS loop.
 */
#include "breaker_table.h"

#include <string.h>
#include <sys/socket.h>

/* A CAS that keeps failing means others keep changing the word: their
   updates stand for ours, and the caller goes on. */
#define CAS_TRIES 64

/* One round of a 64-bit mix (splitmix64's finaliser). */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/*
 * A few multiplications over the destination's words, not a byte loop:
 * every connect under a breaker computes it.  The key is the same in
 * every process (no pointer, no seed), as the shared table needs.
 */
uint64_t rs_breaker_key(const struct rs_breaker_dest *d)
{
	uint64_t a, b, h;

	memcpy(&a, d->addr, 8);
	memcpy(&b, d->addr + 8, 8);
	if (d->family == AF_INET)
		b = 0, a &= 0xffffffffull;
	h = mix(d->rule_key ^ ((uint64_t)d->port << 8 | (uint8_t)d->family));
	h = mix(h ^ a);
	h = mix(h ^ b);
	return h ? h : 1;
}

static struct rs_breaker_slot *at(struct rs_breaker_table *t, uint64_t key,
    unsigned i)
{
	return &t->slots[(key + i) % RS_BREAKER_SLOTS];
}

/*
 * A key is claimed at the first free slot of its neighbourhood, or, when
 * none is free, over a closed one; a slot never becomes free again.  So
 * every slot before a key's is taken, and a free slot ends the search: a
 * healthy address, which has no entry, costs a load or two.
 */
struct rs_breaker_slot *rs_breaker_find(struct rs_breaker_table *t,
    const struct rs_breaker_dest *d, uint64_t key)
{
	(void)d;
	for (unsigned i = 0; i < RS_BREAKER_WAYS; i++) {
		struct rs_breaker_slot *sl = at(t, key, i);
		uint64_t k = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);

		if (k == key)
			return sl;
		if (k == 0)
			return NULL;
	}
	return NULL;
}

/* Writes what a display needs of a freshly claimed slot. */
static void fill(struct rs_breaker_slot *sl, const struct rs_breaker_dest *d)
{
	__atomic_store_n(&sl->rule_key, d->rule_key, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->port, d->port, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->family, (uint8_t)d->family, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < 16; i++)
		__atomic_store_n(&sl->addr[i], d->addr[i], __ATOMIC_RELAXED);
}

/* Takes slot sl over from key `old` (0: free); returns whether it did. */
static bool take(struct rs_breaker_slot *sl, uint64_t old, uint64_t key,
    const struct rs_breaker_dest *d)
{
	if (!__atomic_compare_exchange_n(&sl->key, &old, key, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&sl->word, 0, __ATOMIC_RELEASE);
	fill(sl, d);
	return true;
}

/*
 * The closed slot of the neighbourhood least worth keeping: one with no
 * failures, else the one with the fewest.  NULL when all are open.
 */
static struct rs_breaker_slot *victim(struct rs_breaker_table *t,
    uint64_t key, uint64_t *old)
{
	struct rs_breaker_slot *best = NULL;
	unsigned best_failures = ~0u;

	for (unsigned i = 0; i < RS_BREAKER_WAYS; i++) {
		struct rs_breaker_slot *sl = at(t, key, i);
		uint64_t w = __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE);
		struct rs_breaker_view v;

		rs_breaker_unpack(w, &v);
		if (v.state != RS_BREAKER_CLOSED || v.failures >= best_failures)
			continue;
		best = sl;
		best_failures = v.failures;
		*old = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
		if (v.failures == 0)
			break;
	}
	return best;
}

struct rs_breaker_slot *rs_breaker_claim(struct rs_breaker_table *t,
    const struct rs_breaker_dest *d, uint64_t key)
{
	struct rs_breaker_slot *sl = rs_breaker_find(t, d, key);
	uint64_t old = 0;

	if (sl)
		return sl;
	/*
	 * The neighbourhood is scanned in one order by every claimer, so two
	 * that race for one key meet at the same first free slot: the loser
	 * of its CAS finds the winner's key there and shares that slot.
	 */
	for (unsigned i = 0; i < RS_BREAKER_WAYS; i++) {
		uint64_t k;

		sl = at(t, key, i);
		k = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);
		if (k == key)
			return sl;
		if (k != 0)
			continue;
		if (__atomic_compare_exchange_n(&sl->key, &k, key, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			/* A slot never used has its word at 0 already. */
			fill(sl, d);
			return sl;
		}
		if (k == key)
			return sl;
	}
	/* Another thread may have claimed it meanwhile, elsewhere. */
	if ((sl = rs_breaker_find(t, d, key)))
		return sl;
	for (unsigned tries = 0; tries < 4; tries++) {
		sl = victim(t, key, &old);
		if (!sl)
			return NULL;
		if (old != key && take(sl, old, key, d))
			return sl;
		if (old == key)
			return sl;
	}
	return NULL;
}

enum rs_breaker_verdict rs_breaker_slot_admit(struct rs_breaker_slot *sl,
    const struct rs_breaker_settings *s, int64_t now_ms, int *err)
{
	uint64_t w = __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE), next;

	for (unsigned i = 0; i < CAS_TRIES; i++) {
		enum rs_breaker_verdict v = rs_breaker_decide(w, s, now_ms,
		    &next);
		struct rs_breaker_view view;

		if (v == RS_BREAKER_REJECT) {
			rs_breaker_unpack(w, &view);
			*err = view.err;
			return v;
		}
		if (next == w || __atomic_compare_exchange_n(&sl->word, &w,
		    next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return v;
	}
	return RS_BREAKER_PASS;
}

enum rs_breaker_event rs_breaker_slot_record(struct rs_breaker_slot *sl,
    const struct rs_breaker_settings *s, int err, bool probe, int64_t now_ms,
    double u, uint32_t *opens)
{
	uint64_t w = __atomic_load_n(&sl->word, __ATOMIC_ACQUIRE), next;
	enum rs_breaker_event ev = RS_BREAKER_NO_EVENT;
	struct rs_breaker_view v;

	for (unsigned i = 0; i < CAS_TRIES; i++) {
		next = rs_breaker_outcome(w, s, err, probe, now_ms, u, &ev);
		if (next == w || __atomic_compare_exchange_n(&sl->word, &w,
		    next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		ev = RS_BREAKER_NO_EVENT;
	}
	if (ev == RS_BREAKER_OPENED) {
		rs_breaker_unpack(next, &v);
		__atomic_store_n(&sl->since_ms, now_ms, __ATOMIC_RELAXED);
		__atomic_store_n(&sl->open_ms, rs_breaker_left_ms(next,
		    now_ms), __ATOMIC_RELAXED);
		__atomic_store_n(&sl->failures, v.failures, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sl->opens, 1, __ATOMIC_ACQ_REL);
	}
	*opens = __atomic_load_n(&sl->opens, __ATOMIC_ACQUIRE);
	return ev;
}
