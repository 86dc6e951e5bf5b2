/* SPDX-License-Identifier: MIT */
/*
 * test_names.c - unit tests for names.c (address -> hostname table).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
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

static void v4(const char *s, void *out)
{
	assert_int_equal(inet_pton(AF_INET, s, out), 1);
}

static void v6(const char *s, void *out)
{
	assert_int_equal(inet_pton(AF_INET6, s, out), 1);
}

/* Asserts the name learned for (family, addr), or none when want is NULL. */
static void expect(int family, const void *addr, const char *want)
{
	char out[RS_HOST_MAX];
	bool found = rs_names_lookup(family, addr, out, sizeof(out));

	if (!want) {
		assert_false(found);
		return;
	}
	assert_true(found);
	assert_string_equal(out, want);
}

static void test_learn_lookup(void **state)
{
	/* a is 16 bytes: it is also looked up as an IPv6 address. */
	uint8_t a[16] = { 0 }, b[4], c[16];

	(void)state;
	v4("10.0.0.5", a);
	v4("10.0.0.6", b);
	v6("2001:db8::1", c);
	expect(AF_INET, a, NULL);
	rs_names_learn("db.internal", AF_INET, a);
	rs_names_learn("web.internal", AF_INET6, c);
	expect(AF_INET, a, "db.internal");
	expect(AF_INET, b, NULL);
	expect(AF_INET6, c, "web.internal");
	/* The same bytes under the other family are another address. */
	expect(AF_INET6, a, NULL);
	expect(AF_UNIX, a, NULL);
}

/* Lower case, trailing dot dropped, as host rules compare them. */
static void test_normalisation(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "DB.Internal", "db.internal" },
		{ "localhost.", "localhost" },
		{ "MiXeD.Example.COM.", "mixed.example.com" },
		{ "under_score-1.x", "under_score-1.x" },
	};
	uint8_t a[4] = { 192, 0, 2, 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rs_names_learn(cases[i].in, AF_INET, a);
		expect(AF_INET, a, cases[i].want);
	}
}

/*
 * Address literals name nothing: every form getaddrinfo() resolves
 * numerically must be ignored, including the short and hex IPv4 forms
 * inet_aton() accepts and scoped IPv6 literals.
 */
static void test_numeric_ignored(void **state)
{
	static const char *const numeric[] = {
		"127.0.0.1", "::1", "127.1", "0x7f.1",
		"2130706433", "fe80::1%lo", "::ffff:10.0.0.1",
	};
	uint8_t a[16] = { 127, 0, 0, 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++) {
		rs_names_learn(numeric[i], AF_INET, a);
		rs_names_learn(numeric[i], AF_INET6, a);
		expect(AF_INET, a, NULL);
		expect(AF_INET6, a, NULL);
	}
}

/* Empty names, names over 253 characters and odd families are ignored. */
static void test_unusable_ignored(void **state)
{
	char longest[255], too_long[256];
	uint8_t a[4] = { 192, 0, 2, 7 };

	(void)state;
	rs_names_learn("", AF_INET, a);
	rs_names_learn(".", AF_INET, a);
	rs_names_learn(NULL, AF_INET, a);
	rs_names_learn("x.example", AF_UNIX, a);
	expect(AF_INET, a, NULL);
	memset(too_long, 'a', 254);
	too_long[254] = '\0';
	rs_names_learn(too_long, AF_INET, a);
	expect(AF_INET, a, NULL);
	memset(longest, 'b', 253);
	longest[253] = '.';	/* the trailing dot does not count */
	longest[254] = '\0';
	rs_names_learn(longest, AF_INET, a);
	longest[253] = '\0';
	expect(AF_INET, a, longest);
}

/* Several names for one address: the most recent lookup wins. */
static void test_most_recent_wins(void **state)
{
	uint8_t a[4] = { 192, 0, 2, 9 };

	(void)state;
	rs_names_learn("first.example", AF_INET, a);
	rs_names_learn("second.example", AF_INET, a);
	expect(AF_INET, a, "second.example");
}

/* A short output buffer gets a truncated, terminated name; none at 0. */
static void test_lookup_truncates(void **state)
{
	uint8_t a[4] = { 192, 0, 2, 10 };
	char out[5] = "zzzz";

	(void)state;
	rs_names_learn("abcdefgh.example", AF_INET, a);
	assert_true(rs_names_lookup(AF_INET, a, out, sizeof(out)));
	assert_string_equal(out, "abcd");
	assert_false(rs_names_lookup(AF_INET, a, out, 0));
	assert_string_equal(out, "abcd");
}

static void addr_of(unsigned i, uint8_t a[4])
{
	a[0] = 10;
	a[1] = (uint8_t)(i >> 16);
	a[2] = (uint8_t)(i >> 8);
	a[3] = (uint8_t)i;
}

/* When full, the least recently learned address is replaced first. */
static void test_replacement_when_full(void **state)
{
	uint8_t a[4];
	char name[64];

	(void)state;
	for (unsigned i = 0; i < RS_NAMES_SLOTS; i++) {
		addr_of(i, a);
		snprintf(name, sizeof(name), "h%u.example", i);
		rs_names_learn(name, AF_INET, a);
	}
	/* Learning address 0 again makes address 1 the oldest. */
	addr_of(0, a);
	rs_names_learn("h0.again", AF_INET, a);
	addr_of(RS_NAMES_SLOTS, a);
	rs_names_learn("new.example", AF_INET, a);
	expect(AF_INET, a, "new.example");
	addr_of(1, a);
	expect(AF_INET, a, NULL);
	addr_of(0, a);
	expect(AF_INET, a, "h0.again");
	for (unsigned i = 2; i < RS_NAMES_SLOTS; i++) {
		addr_of(i, a);
		snprintf(name, sizeof(name), "h%u.example", i);
		expect(AF_INET, a, name);
	}
}

static void test_learn_addrinfo(void **state)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr_un_like {
		sa_family_t f;
	} other = { AF_UNIX };
	struct addrinfo ai3 = { .ai_family = AF_UNIX,
		.ai_addr = (struct sockaddr *)&other };
	struct addrinfo ai2 = { .ai_family = AF_INET6,
		.ai_addr = (struct sockaddr *)&in6, .ai_next = &ai3 };
	struct addrinfo ai1 = { .ai_family = AF_INET,
		.ai_addr = (struct sockaddr *)&in, .ai_next = &ai2 };
	struct addrinfo ai0 = { .ai_family = AF_INET, .ai_next = &ai1 };

	(void)state;
	v4("198.51.100.1", &in.sin_addr);
	v6("2001:db8::2", &in6.sin6_addr);
	rs_names_learn_addrinfo("Api.Example.", &ai0);
	expect(AF_INET, &in.sin_addr, "api.example");
	expect(AF_INET6, &in6.sin6_addr, "api.example");
}

static void test_learn_hostent(void **state)
{
	uint8_t a[4], b[4];
	char *list[] = { (char *)a, (char *)b, NULL };
	struct hostent h = { .h_addrtype = AF_INET, .h_length = 4,
		.h_addr_list = list };

	(void)state;
	v4("203.0.113.1", a);
	v4("203.0.113.2", b);
	rs_names_learn_hostent("www.example", &h);
	expect(AF_INET, a, "www.example");
	expect(AF_INET, b, "www.example");
	rs_names_learn_hostent("x", NULL);
}

/*
 * Thread-safety smoke test: writers learn "tN-i.example" for addresses
 * 10.N.x.y while readers look up; every name found must be exactly the
 * one learned for that address (no torn copies), and nothing may crash.
 */
#define SMOKE_THREADS 4
#define SMOKE_ROUNDS 20000

static void *smoke(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint8_t a[4] = { 10, (uint8_t)t, 0, 0 };
	char name[64], want[64], out[RS_HOST_MAX];
	uintptr_t bad = 0;

	for (unsigned i = 0; i < SMOKE_ROUNDS; i++) {
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		snprintf(name, sizeof(name), "t%u-%u.example", t, i & 0xffff);
		rs_names_learn(name, AF_INET, a);
		unsigned j = i / 2;

		a[2] = (uint8_t)(j >> 8);
		a[3] = (uint8_t)j;
		snprintf(want, sizeof(want), "t%u-%u.example", t, j & 0xffff);
		if (rs_names_lookup(AF_INET, a, out, sizeof(out)) &&
		    strcmp(out, want) != 0)
			bad++;
	}
	return (void *)bad;
}

static void test_threads_smoke(void **state)
{
	pthread_t th[SMOKE_THREADS];

	(void)state;
	for (unsigned t = 0; t < SMOKE_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, smoke,
		    (void *)(uintptr_t)t), 0);
	for (unsigned t = 0; t < SMOKE_THREADS; t++) {
		void *bad;

		pthread_join(th[t], &bad);
		assert_int_equal((uintptr_t)bad, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_learn_lookup, reset),
		cmocka_unit_test_setup(test_normalisation, reset),
		cmocka_unit_test_setup(test_numeric_ignored, reset),
		cmocka_unit_test_setup(test_unusable_ignored, reset),
		cmocka_unit_test_setup(test_most_recent_wins, reset),
		cmocka_unit_test_setup(test_lookup_truncates, reset),
		cmocka_unit_test_setup(test_replacement_when_full, reset),
		cmocka_unit_test_setup(test_learn_addrinfo, reset),
		cmocka_unit_test_setup(test_learn_hostent, reset),
		cmocka_unit_test_setup(test_threads_smoke, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
