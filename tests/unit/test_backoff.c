/* SPDX-License-Identifier: MIT */
/*
 * test_backoff.c - backoff waits: the SPEC table, bounds, distributions
 * of 10,000 seeded draws per retry index for every jitter mode, overflow.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backoff.h"
#include "rng.h"

#define DRAWS 10000
#define RETRIES 12

static const struct rs_backoff spec = { 100, 30000, 2.0, RS_JITTER_EQUAL };

static void test_spec_table(void **state)
{
	static const struct {
		unsigned n;
		uint32_t lo, hi;
	} rows[] = {
		{ 0, 50, 100 }, { 1, 100, 200 }, { 2, 200, 400 },
		{ 3, 400, 800 }, { 6, 3200, 6400 }, { 9, 15000, 30000 },
		{ 20, 15000, 30000 },
	};
	uint32_t lo, hi;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		rs_backoff_bounds_ms(&spec, rows[i].n, &lo, &hi);
		assert_int_equal(lo, rows[i].lo);
		assert_int_equal(hi, rows[i].hi);
	}
}

/* The ceiling v = min(cap, base * multiplier^n), in double. */
static double ceiling(const struct rs_backoff *b, unsigned n)
{
	double v = b->base_ms;

	for (unsigned i = 0; i < n && v < b->cap_ms; i++)
		v *= b->multiplier;
	return v < b->cap_ms ? v : b->cap_ms;
}

/* The expected mean of retry n's wait (floored to whole ms), or -1. */
static double expected_mean(const struct rs_backoff *b, unsigned n)
{
	double v = ceiling(b, n);

	switch (b->jitter) {
	case RS_JITTER_EQUAL:
		return v * 0.75 - 0.5;
	case RS_JITTER_FULL:
		return v * 0.5 - 0.5;
	case RS_JITTER_NONE:
		return v;
	default:
		/* Decorrelated: only the first retry is a plain uniform. */
		return n == 0 ? 2.0 * b->base_ms - 0.5 : -1;
	}
}

struct stats {
	uint32_t min, max;
	double sum;
};

/* Draws DRAWS sequences of RETRIES waits, chaining prev as a caller would. */
static void sample(const struct rs_backoff *b, struct stats *st)
{
	for (unsigned n = 0; n < RETRIES; n++)
		st[n] = (struct stats){ UINT32_MAX, 0, 0 };
	rs_rng_seed(42);
	for (int k = 0; k < DRAWS; k++) {
		uint32_t prev = 0;

		for (unsigned n = 0; n < RETRIES; n++) {
			uint32_t w = rs_backoff_wait_ms(b, n, rs_rng_uniform(),
			    prev);

			st[n].min = w < st[n].min ? w : st[n].min;
			st[n].max = w > st[n].max ? w : st[n].max;
			st[n].sum += w;
			prev = w;
		}
	}
}

static void check_mode(enum rs_jitter j)
{
	struct rs_backoff b = spec;
	struct stats st[RETRIES];

	b.jitter = j;
	sample(&b, st);
	for (unsigned n = 0; n < RETRIES; n++) {
		uint32_t lo, hi;
		double span, mean = st[n].sum / DRAWS;
		double want = expected_mean(&b, n);

		rs_backoff_bounds_ms(&b, n, &lo, &hi);
		span = hi - lo;
		assert_true(st[n].min >= lo);
		assert_true(st[n].max <= hi);
		assert_true(st[n].max <= b.cap_ms);
		/* 10,000 uniform draws reach within 1% of each end. */
		if (j != RS_JITTER_DECORRELATED || n == 0) {
			assert_true(st[n].min <= lo + span * 0.01 + 1);
			assert_true(st[n].max + span * 0.01 + 1 >= hi);
		}
		if (want >= 0 && (mean < want - ceiling(&b, n) * 0.02 - 1 ||
		    mean > want + ceiling(&b, n) * 0.02 + 1))
			fail_msg("jitter %s retry %u: mean %.1f, want %.1f",
			    rs_jitter_name(j), n, mean, want);
	}
}

static void test_equal(void **state)
{
	(void)state;
	check_mode(RS_JITTER_EQUAL);
}

static void test_full(void **state)
{
	(void)state;
	check_mode(RS_JITTER_FULL);
}

static void test_decorrelated(void **state)
{
	(void)state;
	check_mode(RS_JITTER_DECORRELATED);
}

static void test_none(void **state)
{
	(void)state;
	check_mode(RS_JITTER_NONE);
}

/* Decorrelated waits stay within [base, 3 * previous] and under cap. */
static void test_decorrelated_step(void **state)
{
	struct rs_backoff b = spec;
	uint32_t prev = 0;

	(void)state;
	b.jitter = RS_JITTER_DECORRELATED;
	rs_rng_seed(7);
	for (int k = 0; k < DRAWS; k++) {
		uint32_t w = rs_backoff_wait_ms(&b, 0, rs_rng_uniform(), prev);
		uint32_t top = prev ? prev * 3 : b.base_ms * 3;

		assert_true(w >= b.base_ms);
		assert_true(w <= (top < b.cap_ms ? top : b.cap_ms));
		prev = w;
	}
}

static void test_no_overflow(void **state)
{
	static const unsigned ns[] = { 31, 32, 64, 1000, 100000, UINT_MAX };
	struct rs_backoff b = { 100, 30000, 10.0, RS_JITTER_EQUAL };
	uint32_t lo, hi;

	(void)state;
	for (int j = RS_JITTER_EQUAL; j <= RS_JITTER_NONE; j++) {
		b.jitter = (enum rs_jitter)j;
		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
			rs_backoff_bounds_ms(&b, ns[i], &lo, &hi);
			assert_true(lo <= hi);
			assert_int_equal(hi, 30000);
			assert_true(rs_backoff_wait_ms(&b, ns[i], 0.999999,
			    30000) <= 30000);
			assert_true(rs_backoff_wait_ms(&b, ns[i], 0.0, 0) <=
			    30000);
		}
	}
	b = (struct rs_backoff){ UINT32_MAX - 1, UINT32_MAX - 1, 10.0,
		RS_JITTER_NONE };
	assert_int_equal(rs_backoff_wait_ms(&b, 1000, 0.5, 0), UINT32_MAX - 1);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(rs_jitter_name(RS_JITTER_EQUAL), "equal");
	assert_string_equal(rs_jitter_name(RS_JITTER_FULL), "full");
	assert_string_equal(rs_jitter_name(RS_JITTER_DECORRELATED),
	    "decorrelated");
	assert_string_equal(rs_jitter_name(RS_JITTER_NONE), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_table),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_decorrelated),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_decorrelated_step),
		cmocka_unit_test(test_no_overflow),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
