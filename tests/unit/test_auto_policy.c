/* SPDX-License-Identifier: MIT */
/*
 * test_auto_policy.c - `auto` timeouts in a policy (SPEC 13): which
 * timeouts are auto, that each holds auto_timeout.max until learned, that
 * a host rule inherits and overrides both, and the defaults of
 * auto_timeout; then the learned value as a new process sees it, from a
 * segment-shaped entry filled by hand; suggest's rounding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "learn.h"
#include "policy.h"
#include "policy_yaml.h"

static struct rs_policy *load(const char *text)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;

	assert_int_equal(rs_policy_load_buffer("t.yaml", text, strlen(text),
	    &p, &d), 0);
	rs_diags_free(&d);
	return p;
}

static void test_auto_keys(void **state)
{
	struct rs_policy *p = load("version: 1\n"
	    "defaults:\n"
	    "  read_timeout: auto\n"
	    "  connect_timeout: auto\n"
	    "  auto_timeout:\n"
	    "    max: 2s\n"
	    "    multiplier: 2.5\n"
	    "hosts:\n"
	    "  - match: a.internal\n"
	    "    read_timeout: 5s\n"
	    "  - match: b.internal\n"
	    "    auto_timeout: { max: 700ms, half_life: 1m }\n"
	    "  - match: c.internal\n"
	    "    write_timeout: auto\n"
	    "    connect_timeout: 1s\n");
	const struct rs_settings *d = &p->defaults;

	(void)state;
	assert_int_equal(d->auto_mask, RS_AUTO_READ | RS_AUTO_CONNECT);
	assert_int_equal(d->read_timeout_ms, 2000);
	assert_int_equal(d->connect_timeout_ms, 2000);
	assert_int_equal(d->write_timeout_ms, RS_OFF);
	assert_true(d->auto_timeout.multiplier == 2.5);
	assert_true(d->auto_timeout.quantile == 0.99);
	assert_int_equal(d->auto_timeout.min_ms, 100);
	assert_int_equal(d->auto_timeout.samples, 200);
	assert_int_equal(d->auto_timeout.half_life_ms, 600000);
	/* A number overrides the inherited auto. */
	assert_int_equal(p->rules[0].settings.auto_mask, RS_AUTO_CONNECT);
	assert_int_equal(p->rules[0].settings.read_timeout_ms, 5000);
	/* The rule's own max bounds the inherited autos. */
	assert_int_equal(p->rules[1].settings.read_timeout_ms, 700);
	assert_int_equal(p->rules[1].settings.connect_timeout_ms, 700);
	assert_int_equal(p->rules[1].settings.auto_timeout.half_life_ms, 60000);
	assert_int_equal(p->rules[2].settings.auto_mask,
	    RS_AUTO_READ | RS_AUTO_WRITE);
	assert_int_equal(p->rules[2].settings.write_timeout_ms, 2000);
	assert_int_equal(p->rules[2].settings.connect_timeout_ms, 1000);
	rs_policy_free(p);
}

/* What `auto` stands for from an entry: max before `samples`, then
   clamp(multiplier x quantile, min, max). */
static void test_auto_value(void **state)
{
	struct rs_policy *p = load("version: 1\ndefaults:\n"
	    "  read_timeout: auto\n"
	    "  auto_timeout: { min: 10ms, max: 2s, samples: 100 }\n");
	struct rs_shm_learn *l = calloc(1, sizeof(*l));
	struct rs_learn_stat st;

	(void)state;
	l->half_life_ms = p->defaults.auto_timeout.half_life_ms;
	for (int i = 0; i < 99; i++)
		rs_lat_record(&l->hist[RS_LEARN_READ], 32000, 1000, 600000);
	rs_learn_stat(l, RS_LEARN_READ, &p->defaults, 1000, &st);
	assert_int_equal(st.auto_ms, 2000);
	rs_lat_record(&l->hist[RS_LEARN_READ], 32000, 1000, 600000);
	rs_learn_stat(l, RS_LEARN_READ, &p->defaults, 1000, &st);
	assert_true(st.auto_ms >= 96 && st.auto_ms <= 98);
	assert_true(st.samples > 99.9);
	rs_learn_stat(NULL, RS_LEARN_READ, &p->defaults, 1000, &st);
	assert_int_equal(st.auto_ms, 2000);
	free(l);
	rs_policy_free(p);
}

/* suggest's rounding: up, to two significant digits, in whole ms. */
static void test_round(void **state)
{
	static const struct {
		double in;
		uint32_t out;
	} rows[] = {
		{ 0, 1 }, { 0.2, 1 }, { 2.1, 3 }, { 9.3, 10 }, { 99.1, 100 },
		{ 100, 100 }, { 101, 110 }, { 105.9, 110 }, { 1234, 1300 },
		{ 1200, 1200 }, { 45001, 46000 }, { 1e12, 86400000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(rs_learn_round_ms(rows[i].in), rows[i].out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round),
		cmocka_unit_test(test_auto_keys),
		cmocka_unit_test(test_auto_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
