/* SPDX-License-Identifier: MIT */
/*
 * test_names_list.c - unit tests for the per-name address lists of
 * names.c (the order failover follows, SPEC 5c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "names.h"

static int reset(void **state)
{
	(void)state;
	rs_names_clear();
	return 0;
}

/* Parses "1.2.3.4" or "::1" into *a. */
static struct rs_name_addr addr_of(const char *s)
{
	struct rs_name_addr a = { 0 };

	a.family = strchr(s, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(a.family, s, a.addr), 1);
	return a;
}

/* Asserts that name's list is exactly want (NULL-terminated). */
static void expect_list(const char *name, const char *const *want)
{
	struct rs_name_addr got[RS_NAMES_PER_NAME + 2];
	size_t n = rs_names_addresses(name, got, RS_NAMES_PER_NAME + 2);
	size_t i = 0;

	for (; want[i]; i++) {
		struct rs_name_addr w = addr_of(want[i]);

		assert_true(i < n);
		assert_int_equal(got[i].family, w.family);
		assert_memory_equal(got[i].addr, w.addr,
		    w.family == AF_INET ? 4 : 16);
	}
	assert_int_equal(n, i);
}

/* An addrinfo chain of sockaddrs, as getaddrinfo returns it. */
struct chain {
	struct addrinfo ai[12];
	struct sockaddr_storage ss[12];
	size_t n;
};

static void chain_add(struct chain *c, const char *s)
{
	struct rs_name_addr a = addr_of(s);
	struct addrinfo *ai = &c->ai[c->n];

	memset(ai, 0, sizeof(*ai));
	ai->ai_family = a.family;
	ai->ai_addr = (struct sockaddr *)&c->ss[c->n];
	if (a.family == AF_INET) {
		struct sockaddr_in *in = (void *)&c->ss[c->n];

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, a.addr, 4);
		ai->ai_addrlen = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)&c->ss[c->n];

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, a.addr, 16);
		ai->ai_addrlen = sizeof(*in6);
	}
	if (c->n > 0)
		c->ai[c->n - 1].ai_next = ai;
	c->n++;
}

static void test_order_kept_repeats_dropped(void **state)
{
	struct chain c = { .n = 0 };
	const char *const want[] = { "127.0.0.21", "127.0.0.22", "::1",
		"127.0.0.23", NULL };

	(void)state;
	/* getaddrinfo without a socket type repeats each address. */
	chain_add(&c, "127.0.0.21");
	chain_add(&c, "127.0.0.21");
	chain_add(&c, "127.0.0.22");
	chain_add(&c, "::1");
	chain_add(&c, "127.0.0.22");
	chain_add(&c, "127.0.0.23");
	rs_names_learn_addrinfo("Multi.Test.", c.ai);
	expect_list("multi.test", want);
	expect_list("MULTI.TEST", want);
}

static void test_new_lookup_replaces(void **state)
{
	struct chain a = { .n = 0 }, b = { .n = 0 };
	const char *const want[] = { "10.0.0.9", NULL };

	(void)state;
	chain_add(&a, "10.0.0.1");
	chain_add(&a, "10.0.0.2");
	rs_names_learn_addrinfo("db.internal", a.ai);
	chain_add(&b, "10.0.0.9");
	rs_names_learn_addrinfo("db.internal", b.ai);
	expect_list("db.internal", want);
}

/* A lookup of one family keeps what an earlier one said of the other. */
static void test_one_family_keeps_other(void **state)
{
	struct chain a = { .n = 0 }, b = { .n = 0 };
	const char *const want[] = { "2001:db8::2", "10.0.0.1", NULL };

	(void)state;
	chain_add(&a, "10.0.0.1");
	chain_add(&a, "2001:db8::1");
	rs_names_learn_addrinfo("db.internal", a.ai);
	chain_add(&b, "2001:db8::2");
	rs_names_learn_answer("db.internal", AF_INET6, b.ai);
	expect_list("db.internal", want);
}

static void test_mapped_kept_as_ipv4(void **state)
{
	struct chain c = { .n = 0 };
	const char *const want[] = { "127.0.0.21", "127.0.0.22", NULL };
	struct rs_name_addr v4 = addr_of("127.0.0.21");
	char out[RS_HOST_MAX];

	(void)state;
	chain_add(&c, "::ffff:127.0.0.21");
	chain_add(&c, "127.0.0.22");
	rs_names_learn_answer("m.test", AF_INET6, c.ai);
	expect_list("m.test", want);
	assert_true(rs_names_lookup(AF_INET, v4.addr, out, sizeof(out)));
	assert_string_equal(out, "m.test");
}

static void test_hostent_list(void **state)
{
	struct rs_name_addr a = addr_of("10.1.0.1"), b = addr_of("10.1.0.2");
	char *list[] = { (char *)a.addr, (char *)b.addr, NULL };
	struct hostent h = { .h_name = "h.test", .h_addrtype = AF_INET,
		.h_length = 4, .h_addr_list = list };
	const char *const want[] = { "10.1.0.1", "10.1.0.2", NULL };

	(void)state;
	rs_names_learn_hostent("h.test", &h);
	expect_list("h.test", want);
}

static void test_bounded(void **state)
{
	struct rs_name_addr many[RS_NAMES_PER_NAME + 4];
	struct rs_name_addr out[RS_NAMES_PER_NAME + 4];
	char name[32];

	(void)state;
	for (size_t i = 0; i < RS_NAMES_PER_NAME + 4; i++) {
		char s[32];

		snprintf(s, sizeof(s), "10.2.0.%zu", i + 1);
		many[i] = addr_of(s);
	}
	rs_names_learn_list("big.test", AF_UNSPEC, many, RS_NAMES_PER_NAME + 4);
	assert_int_equal(rs_names_addresses("big.test", out,
	    RS_NAMES_PER_NAME + 4), RS_NAMES_PER_NAME);
	assert_int_equal(rs_names_addresses("big.test", out, 2), 2);
	/* More names than lists: the least recently learned go first. */
	for (int i = 0; i < RS_NAMES_LISTS; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		rs_names_learn_list(name, AF_UNSPEC, many, 1);
	}
	assert_int_equal(rs_names_addresses("big.test", out, 4), 0);
	assert_int_equal(rs_names_addresses("n0.test", out, 4), 1);
	assert_int_equal(rs_names_addresses("n63.test", out, 4), 1);
}

static void test_numeric_and_unknown(void **state)
{
	struct rs_name_addr a = addr_of("10.3.0.1"), out[4];

	(void)state;
	rs_names_learn_list("10.3.0.1", AF_UNSPEC, &a, 1);
	assert_int_equal(rs_names_addresses("10.3.0.1", out, 4), 0);
	assert_int_equal(rs_names_addresses("never.test", out, 4), 0);
	assert_int_equal(rs_names_addresses(NULL, out, 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_order_kept_repeats_dropped, reset),
		cmocka_unit_test_setup(test_new_lookup_replaces, reset),
		cmocka_unit_test_setup(test_one_family_keeps_other, reset),
		cmocka_unit_test_setup(test_mapped_kept_as_ipv4, reset),
		cmocka_unit_test_setup(test_hostent_list, reset),
		cmocka_unit_test_setup(test_bounded, reset),
		cmocka_unit_test_setup(test_numeric_and_unknown, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
