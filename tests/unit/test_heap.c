/* SPDX-License-Identifier: MIT */
/*
 * test_heap.c - the timer heap: order, re-keying, removal from any slot,
 * against a brute-force model over seeded random operations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "heap.h"

#define N 500

static struct rs_heap_node nodes[N];

/* The smallest key among queued nodes, by looking at all of them. */
static int64_t model_min(void)
{
	int64_t m = INT64_MAX;

	for (int i = 0; i < N; i++)
		if (rs_heap_queued(&nodes[i]) && nodes[i].key < m)
			m = nodes[i].key;
	return m;
}

static void test_order(void **state)
{
	struct rs_heap h = { 0 };
	int64_t prev = INT64_MIN;

	(void)state;
	for (int i = 0; i < N; i++)
		assert_int_equal(rs_heap_set(&h, &nodes[i], (i * 7919) % 1000),
		    0);
	while (rs_heap_top(&h)) {
		struct rs_heap_node *t = rs_heap_top(&h);

		assert_true(t->key >= prev);
		prev = t->key;
		rs_heap_remove(&h, t);
		assert_false(rs_heap_queued(t));
	}
	rs_heap_free(&h);
}

static void test_random_against_model(void **state)
{
	struct rs_heap h = { 0 };
	unsigned seed = 12345;

	(void)state;
	for (int step = 0; step < 20000; step++) {
		struct rs_heap_node *x = &nodes[rand_r(&seed) % N];

		if (rand_r(&seed) % 3 == 0)
			rs_heap_remove(&h, x);
		else
			assert_int_equal(rs_heap_set(&h, x,
			    rand_r(&seed) % 100000), 0);
		struct rs_heap_node *t = rs_heap_top(&h);

		assert_int_equal(t ? t->key : INT64_MAX, model_min());
	}
	for (int i = 0; i < N; i++)
		rs_heap_remove(&h, &nodes[i]);
	assert_null(rs_heap_top(&h));
	rs_heap_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_random_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
