/* SPDX-License-Identifier: MIT */
/*
 * test_dnsretry.c - unit tests for dnsretry.c: which lookups are retried,
 * under which rule, with which waits, and where the retries stop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netdb.h>
#include <string.h>

#include "clock.h"
#include "dnsretry.h"
#include "policy.h"

static struct rs_rule rules[2];
static struct rs_policy pol;

/* defaults: dns retried, 3 lookups, 100 ms doubling, no jitter;
 * rule 0: db.test:5432 with 5 lookups; rule 1: off.test without dns. */
static int setup(void **state)
{
	const char *why;

	(void)state;
	memset(&pol, 0, sizeof(pol));
	pol.path = "/test.yaml";
	rs_settings_init(&pol.defaults);
	pol.defaults.backoff.jitter = RS_JITTER_NONE;
	pol.defaults.budget.scope = RS_SCOPE_PROCESS;
	pol.defaults.budget.min_per_second = 100000;
	for (int i = 0; i < 2; i++)
		rules[i].settings = pol.defaults;
	assert_int_equal(rs_match_parse(&rules[0].match, "db.test:5432", &why),
	    0);
	rules[0].settings.attempts = 5;
	assert_int_equal(rs_match_parse(&rules[1].match, "off.test", &why), 0);
	rules[1].settings.retry_on &= ~(unsigned)RS_CLASS_DNS;
	pol.rules = rules;
	pol.nrules = 2;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rs_match_free(&rules[0].match);
	rs_match_free(&rules[1].match);
	return 0;
}

static void test_transient_classes(void **state)
{
	(void)state;
	assert_true(rs_dnsretry_gai_transient(EAI_AGAIN));
	assert_false(rs_dnsretry_gai_transient(EAI_NONAME));
	assert_false(rs_dnsretry_gai_transient(EAI_FAIL));
	assert_false(rs_dnsretry_gai_transient(0));
	assert_true(rs_dnsretry_h_transient(TRY_AGAIN));
	assert_false(rs_dnsretry_h_transient(HOST_NOT_FOUND));
	assert_false(rs_dnsretry_h_transient(NO_DATA));
	assert_false(rs_dnsretry_h_transient(NO_RECOVERY));
}

static void test_schedule_defaults(void **state)
{
	struct rs_dnsretry d;

	(void)state;
	assert_true(rs_dnsretry_begin(&d, &pol, "web.test", "http", 1000,
	    RS_NEVER));
	assert_null(d.rule);
	assert_int_equal(rs_dnsretry_next(&d, "temporary failure", 1000), 100);
	rs_dnsretry_lookup_made(&d, false);
	assert_int_equal(rs_dnsretry_next(&d, "temporary failure", 1100), 200);
	rs_dnsretry_lookup_made(&d, false);
	/* Three lookups made: attempts used up. */
	assert_int_equal(rs_dnsretry_next(&d, "temporary failure", 1300), -1);
}

/* The rule is matched by name, and by port only for a numeric service. */
static void test_rule_by_name_and_port(void **state)
{
	struct rs_dnsretry d;

	(void)state;
	assert_true(rs_dnsretry_begin(&d, &pol, "DB.test.", "5432", 0,
	    RS_NEVER));
	assert_ptr_equal(d.rule, &rules[0]);
	assert_true(rs_dnsretry_begin(&d, &pol, "db.test", "5433", 0,
	    RS_NEVER));
	assert_null(d.rule);
	assert_true(rs_dnsretry_begin(&d, &pol, "db.test", "postgresql", 0,
	    RS_NEVER));
	assert_null(d.rule);
	assert_true(rs_dnsretry_begin(&d, &pol, "db.test", NULL, 0, RS_NEVER));
	assert_null(d.rule);
	assert_false(rs_dnsretry_begin(&d, &pol, "off.test", NULL, 0,
	    RS_NEVER));
	assert_false(rs_dnsretry_begin(&d, &pol, "", NULL, 0, RS_NEVER));
	assert_false(rs_dnsretry_begin(&d, NULL, "x.test", NULL, 0, RS_NEVER));
}

/* Address rules never match a lookup: there is no address yet. */
static void test_address_rules_ignored(void **state)
{
	struct rs_rule any;
	struct rs_policy p = pol;
	struct rs_dnsretry d;
	const char *why;

	(void)state;
	any.settings = pol.defaults;
	any.settings.passthrough = true;
	assert_int_equal(rs_match_parse(&any.match, "0.0.0.0/0", &why), 0);
	p.rules = &any;
	p.nrules = 1;
	assert_true(rs_dnsretry_begin(&d, &p, "web.test", NULL, 0, RS_NEVER));
	assert_null(d.rule);
	rs_match_free(&any.match);
}

static void test_budget_and_deadline(void **state)
{
	struct rs_dnsretry d;

	(void)state;
	/* connect_budget 10 s from the first failure. */
	assert_true(rs_dnsretry_begin(&d, &pol, "web.test", NULL, 0,
	    RS_NEVER));
	assert_int_equal(rs_dnsretry_next(&d, "x", 9950), -1);
	/* The process deadline is earlier. */
	assert_true(rs_dnsretry_begin(&d, &pol, "web.test", NULL, 0, 150));
	assert_int_equal(rs_dnsretry_next(&d, "x", 0), 100);
	rs_dnsretry_lookup_made(&d, false);
	assert_int_equal(rs_dnsretry_next(&d, "x", 100), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transient_classes),
		cmocka_unit_test(test_schedule_defaults),
		cmocka_unit_test(test_rule_by_name_and_port),
		cmocka_unit_test(test_address_rules_ignored),
		cmocka_unit_test(test_budget_and_deadline),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
