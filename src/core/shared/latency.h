/* SPDX-License-Identifier: MIT */
/*
 * latency.h - a decaying latency histogram that many processes update at
 * once in shared memory (SPEC 13).
 *
 * Log-linear buckets, as in HdrHistogram: microseconds below 64 each have
 * a bucket; above, every power of two is split into 32 equal sub-buckets,
 * so a bucket's middle is within 1/64 (1.6%) of any value in it, up to
 * 2^32 us (71 minutes; larger values land in the last bucket).
 *
 * Decay works by epochs of half_life: a histogram keeps RS_LAT_GENS
 * generations, the one of epoch e in gen[e % RS_LAT_GENS].  A reader
 * weighs the current epoch's counts 1 and the previous one's 2^-f, f the
 * fraction of the current epoch gone (so weights are continuous at an
 * epoch's turn), and ignores older ones.  The first writer of a new epoch
 * claims its generation with a CAS on the epoch word (marked busy), zeroes
 * it and publishes it; a writer that finds it busy drops its sample.  So
 * there is no lock and nothing a killed process can leave held: at worst a
 * generation stays busy until the next time its slot turns (two epochs),
 * and a few samples are lost around a turn.  Counts are 32-bit atomic
 * adds.  All samples ever are counted too, per bucket (64-bit) with their
 * sum, for Prometheus, whose buckets and sum must never decay; its
 * RS_LAT_LE boundaries are read from those buckets, a bucket counting
 * below a boundary when its middle is (so to 1.6%, as the quantiles).  No allocation, no system call, no clock: callers pass the
 * time (monotonic ms).  Thread- and process-safe.
 */
#ifndef RS_LATENCY_H
#define RS_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#define RS_LAT_SUB 32			/* sub-buckets per power of two */
#define RS_LAT_BUCKETS 896		/* 64 + 26 powers (2^6 .. 2^31) * 32 */
#define RS_LAT_MAX_US 0xffffffffull	/* larger values are clamped */
#define RS_LAT_GENS 3
#define RS_LAT_LE 16			/* export boundaries, +Inf apart */
#define RS_LAT_BUSY (1ull << 63)	/* a generation being zeroed */

struct rs_lat_gen {
	uint64_t epoch;			/* epoch + 1; 0 never used; atomic */
	uint32_t count[RS_LAT_BUCKETS];
};

struct rs_lat {
	uint64_t sum_us;			/* all samples ever */
	uint64_t all[RS_LAT_BUCKETS];		/* all samples ever */
	struct rs_lat_gen gen[RS_LAT_GENS];
};

/* A histogram's weighted counts at one moment, for reading. */
struct rs_lat_view {
	double w[RS_LAT_BUCKETS];
	double total;
};

/* The export boundaries, in microseconds, ascending. */
extern const uint64_t rs_lat_le_us[RS_LAT_LE];

/* Returns the bucket of a value in microseconds (clamped to the range). */
unsigned rs_lat_bucket(uint64_t us);

/* Returns the lowest value of bucket b, and the value that stands for it
   (its middle; the value itself below 64 us). */
uint64_t rs_lat_bucket_low(unsigned b);
double rs_lat_bucket_mid(unsigned b);

/*
 * Records one sample of us microseconds at monotonic time now_ms, in
 * epochs of half_life_ms (>= 1).  Returns false when the sample was
 * dropped (a generation being zeroed by another writer).
 */
bool rs_lat_record(struct rs_lat *h, uint64_t us, int64_t now_ms,
    uint32_t half_life_ms);

/* The epoch of monotonic time now_ms (see above), and rs_lat_record()
   with it, for a caller that keeps the epoch rather than divide. */
uint64_t rs_lat_epoch(int64_t now_ms, uint32_t half_life_ms);
bool rs_lat_add(struct rs_lat *h, uint64_t us, uint64_t epoch);

/* Fills v with h's weighted counts at now_ms (see above).  h may be
   read-only and written meanwhile. */
void rs_lat_view(const struct rs_lat *h, int64_t now_ms,
    uint32_t half_life_ms, struct rs_lat_view *v);

/*
 * The q quantile (us) of h at now_ms, as rs_lat_view() and
 * rs_lat_quantile() would give it, without the view's 7 KB (this runs on
 * the program's threads, whose stacks may be small); *total gets the
 * weighted count of samples.
 */
double rs_lat_quantile_of(const struct rs_lat *h, int64_t now_ms,
    uint32_t half_life_ms, double q, double *total);

/* Adds src's counts to dst (histograms of several processes or rules). */
void rs_lat_merge(struct rs_lat_view *dst, const struct rs_lat_view *src);

/* Returns the value (us) at quantile q in [0, 1] of v, the highest
   non-empty bucket's for q = 1; 0 when v is empty. */
double rs_lat_quantile(const struct rs_lat_view *v, double q);

/* Returns the count of samples at or below each export boundary, and all
   (cumulative, never decaying), into le[RS_LAT_LE + 1]. */
void rs_lat_cumulative(const struct rs_lat *h, uint64_t le[RS_LAT_LE + 1]);

/*
 * Returns clamp(multiplier x the q quantile of v, min_ms, max_ms) in whole
 * ms, rounded up; max_ms while v holds fewer than `samples` samples.
 */
uint32_t rs_lat_auto_ms(const struct rs_lat_view *v, double multiplier,
    double q, uint32_t min_ms, uint32_t max_ms, uint32_t samples);

#endif /* RS_LATENCY_H */
