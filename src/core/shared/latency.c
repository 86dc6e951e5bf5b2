/* SPDX-License-Identifier: MIT */
/*
 * latency.c - the decaying log-linear histogram of latency.h.
 *
 * Everything a writer does is a few loads and atomic adds, except the
 * first write of an epoch, which zeroes one generation (3.5 KB).  Pure:
 * no clock, no allocation, no system call.
 */
#include "latency.h"

#include <string.h>

const uint64_t rs_lat_le_us[RS_LAT_LE] = {
	500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 30000000, 60000000,
};

unsigned rs_lat_bucket(uint64_t us)
{
	unsigned k;

	if (us < 2 * RS_LAT_SUB)
		return (unsigned)us;
	if (us > RS_LAT_MAX_US)
		us = RS_LAT_MAX_US;
	k = 63u - (unsigned)__builtin_clzll(us);	/* 6 .. 31 */
	return 2 * RS_LAT_SUB + (k - 6) * RS_LAT_SUB +
	    (unsigned)((us >> (k - 5)) & (RS_LAT_SUB - 1));
}

uint64_t rs_lat_bucket_low(unsigned b)
{
	unsigned k, s;

	if (b < 2 * RS_LAT_SUB)
		return b;
	k = 6 + (b - 2 * RS_LAT_SUB) / RS_LAT_SUB;
	s = (b - 2 * RS_LAT_SUB) % RS_LAT_SUB;
	return (uint64_t)(RS_LAT_SUB + s) << (k - 5);
}

/* The middle of the whole microseconds a bucket holds. */
double rs_lat_bucket_mid(unsigned b)
{
	uint64_t lo = rs_lat_bucket_low(b);
	uint64_t width = b < 2 * RS_LAT_SUB ? 1 :
	    rs_lat_bucket_low(b + 1) - lo;

	if (b + 1 >= RS_LAT_BUCKETS)
		width = RS_LAT_MAX_US + 1 - lo;
	return (double)lo + (double)(width - 1) / 2.0;
}

/*
 * Makes g the generation of epoch e, zeroed: claimed busy by CAS, zeroed,
 * published by CAS (a writer that took it over meanwhile, after this one
 * stalled for epochs, wins).  Returns whether g may be written now.
 */
static bool turn(struct rs_lat_gen *g, uint64_t ep, uint64_t e)
{
	uint64_t busy = e | RS_LAT_BUSY;

	if ((ep & ~RS_LAT_BUSY) >= e)
		return false;	/* being zeroed for e, or we are stale */
	if (!__atomic_compare_exchange_n(&g->epoch, &ep, busy, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return false;
	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++)
		__atomic_store_n(&g->count[b], 0, __ATOMIC_RELAXED);
	return __atomic_compare_exchange_n(&g->epoch, &busy, e, false,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* 2^-f for f in [0, 1], by its series (error below 1e-6): no libm in
   the interposer. */
static double half_pow(double f)
{
	double x = -f * 0.6931471805599453, term = 1, sum = 1;

	for (int i = 1; i < 10; i++) {
		term *= x / i;
		sum += term;
	}
	return sum;
}

uint64_t rs_lat_epoch(int64_t now_ms, uint32_t half_life_ms)
{
	return (uint64_t)(now_ms / (half_life_ms ? half_life_ms : 1)) + 1;
}

bool rs_lat_record(struct rs_lat *h, uint64_t us, int64_t now_ms,
    uint32_t half_life_ms)
{
	return rs_lat_add(h, us, rs_lat_epoch(now_ms, half_life_ms));
}

bool rs_lat_add(struct rs_lat *h, uint64_t us, uint64_t e)
{
	struct rs_lat_gen *g = &h->gen[e % RS_LAT_GENS];
	uint64_t ep = __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE);
	unsigned b = rs_lat_bucket(us);

	__atomic_fetch_add(&h->sum_us, us, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->all[b], 1, __ATOMIC_RELAXED);
	if (ep != e && !turn(g, ep, e))
		return false;
	__atomic_fetch_add(&g->count[b], 1, __ATOMIC_RELAXED);
	return true;
}

void rs_lat_view(const struct rs_lat *h, int64_t now_ms,
    uint32_t half_life_ms, struct rs_lat_view *v)
{
	uint32_t hl = half_life_ms ? half_life_ms : 1;
	uint64_t e = (uint64_t)(now_ms / hl) + 1;
	double prev = half_pow((double)(now_ms % hl) / hl);

	memset(v, 0, sizeof(*v));
	for (unsigned i = 0; i < RS_LAT_GENS; i++) {
		const struct rs_lat_gen *g = &h->gen[i];
		uint64_t ep = __atomic_load_n(&g->epoch, __ATOMIC_ACQUIRE);
		double w = ep == e ? 1.0 : ep + 1 == e ? prev : 0.0;

		if (w == 0.0)
			continue;
		for (unsigned b = 0; b < RS_LAT_BUCKETS; b++) {
			uint32_t c = __atomic_load_n(&g->count[b],
			    __ATOMIC_RELAXED);

			if (c) {
				v->w[b] += w * c;
				v->total += w * c;
			}
		}
	}
}

/* The weights of h's generations at now_ms (0: ignored). */
static void weights(const struct rs_lat *h, int64_t now_ms, uint32_t hl,
    double w[RS_LAT_GENS])
{
	uint64_t e = (uint64_t)(now_ms / hl) + 1;
	double prev = half_pow((double)(now_ms % hl) / hl);

	for (unsigned i = 0; i < RS_LAT_GENS; i++) {
		uint64_t ep = __atomic_load_n(&h->gen[i].epoch,
		    __ATOMIC_ACQUIRE);

		w[i] = ep == e ? 1.0 : ep + 1 == e ? prev : 0.0;
	}
}

static double bucket_weight(const struct rs_lat *h, const double w[],
    unsigned b)
{
	double c = 0;

	for (unsigned i = 0; i < RS_LAT_GENS; i++)
		if (w[i] > 0)
			c += w[i] * __atomic_load_n(&h->gen[i].count[b],
			    __ATOMIC_RELAXED);
	return c;
}

double rs_lat_quantile_of(const struct rs_lat *h, int64_t now_ms,
    uint32_t half_life_ms, double q, double *total)
{
	double w[RS_LAT_GENS], acc = 0, target;
	unsigned last = 0;
	uint32_t hl = half_life_ms ? half_life_ms : 1;

	weights(h, now_ms, hl, w);
	*total = 0;
	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++)
		*total += bucket_weight(h, w, b);
	if (*total <= 0)
		return 0;
	target = q * *total - *total * 1e-12;
	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++) {
		double c = bucket_weight(h, w, b);

		if (c <= 0)
			continue;
		acc += c;
		last = b;
		if (acc >= target)
			return rs_lat_bucket_mid(b);
	}
	/* Writers zeroed a generation between the two passes. */
	return rs_lat_bucket_mid(last);
}

void rs_lat_merge(struct rs_lat_view *dst, const struct rs_lat_view *src)
{
	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++)
		dst->w[b] += src->w[b];
	dst->total += src->total;
}

double rs_lat_quantile(const struct rs_lat_view *v, double q)
{
	double target = q * v->total, acc = 0;
	unsigned last = 0;

	if (v->total <= 0)
		return 0;
	/* Rounding must not skip the bucket that holds the rank. */
	target -= v->total * 1e-12;
	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++) {
		if (v->w[b] <= 0)
			continue;
		acc += v->w[b];
		last = b;
		if (q < 1 && acc >= target)
			return rs_lat_bucket_mid(b);
	}
	return rs_lat_bucket_mid(last);
}

void rs_lat_cumulative(const struct rs_lat *h, uint64_t le[RS_LAT_LE + 1])
{
	uint64_t acc = 0;
	unsigned i = 0;

	for (unsigned b = 0; b < RS_LAT_BUCKETS; b++) {
		while (i < RS_LAT_LE && rs_lat_bucket_mid(b) > rs_lat_le_us[i])
			le[i++] = acc;
		acc += __atomic_load_n(&h->all[b], __ATOMIC_RELAXED);
	}
	while (i <= RS_LAT_LE)
		le[i++] = acc;
}

uint32_t rs_lat_auto_ms(const struct rs_lat_view *v, double multiplier,
    double q, uint32_t min_ms, uint32_t max_ms, uint32_t samples)
{
	double ms;

	if (v->total < samples)
		return max_ms;
	ms = multiplier * rs_lat_quantile(v, q) / 1000.0;
	if (ms > (double)(uint64_t)ms)
		ms = (double)((uint64_t)ms + 1);
	if (ms < min_ms)
		return min_ms;
	return ms > max_ms ? max_ms : (uint32_t)ms;
}
