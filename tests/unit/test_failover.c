/* SPDX-License-Identifier: MIT */
/*
 * test_failover.c - unit tests for failover.c: the next address of a
 * name (order, round-robin, families, recent failures) and the socket
 * addresses it makes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "failover.h"

static int reset(void **state)
{
	(void)state;
	rs_failover_clear();
	return 0;
}

static struct rs_name_addr A(const char *s)
{
	struct rs_name_addr a = { 0 };

	a.family = strchr(s, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(a.family, s, a.addr), 1);
	return a;
}

/* The request for a list of up to 4 addresses, current one cur. */
static struct rs_failover_req req(const struct rs_name_addr *list, size_t n,
    const char *cur, int sock_family)
{
	struct rs_failover_req r = { .addrs = list, .n = n,
		.current = A(cur), .sock_family = sock_family, .port = 80,
		.now_ms = 100000, .window_ms = 10000 };

	return r;
}

static void test_next_in_order_round_robin(void **state)
{
	struct rs_name_addr l[] = { A("127.0.0.21"), A("127.0.0.22"),
		A("127.0.0.23") };
	struct rs_failover_req r = req(l, 3, "127.0.0.21", AF_INET);

	(void)state;
	assert_int_equal(rs_failover_choose(&r), 1);
	r.current = l[1];
	assert_int_equal(rs_failover_choose(&r), 2);
	r.current = l[2];
	assert_int_equal(rs_failover_choose(&r), 0);	/* wraps */
}

static void test_not_in_list_stays(void **state)
{
	struct rs_name_addr l[] = { A("127.0.0.21"), A("127.0.0.22") };
	struct rs_failover_req r = req(l, 2, "127.0.0.99", AF_INET);

	(void)state;
	assert_int_equal(rs_failover_choose(&r), -1);
	r.n = 0;
	assert_int_equal(rs_failover_choose(&r), -1);
}

static void test_skips_recent_failures(void **state)
{
	struct rs_name_addr l[] = { A("127.0.0.21"), A("127.0.0.22"),
		A("127.0.0.23") };
	struct rs_failover_req r = req(l, 3, "127.0.0.21", AF_INET);

	(void)state;
	rs_failover_note_failure(&l[1], 80, 95000);
	assert_int_equal(rs_failover_choose(&r), 2);
	/* Another port of the same host has not failed. */
	r.port = 81;
	assert_int_equal(rs_failover_choose(&r), 1);
	r.port = 80;
	/* Older than the window: tried again. */
	r.now_ms = 95000 + 10000;
	assert_int_equal(rs_failover_choose(&r), 1);
	/* A success forgets it. */
	r.now_ms = 96000;
	rs_failover_note_success(&l[1], 80);
	assert_int_equal(rs_failover_choose(&r), 1);
}

/* When every other address failed lately, the next one is tried anyway. */
static void test_all_failed_next_anyway(void **state)
{
	struct rs_name_addr l[] = { A("127.0.0.21"), A("127.0.0.22"),
		A("127.0.0.23") };
	struct rs_failover_req r = req(l, 3, "127.0.0.22", AF_INET);

	(void)state;
	for (int i = 0; i < 3; i++)
		rs_failover_note_failure(&l[i], 80, 99000);
	assert_int_equal(rs_failover_choose(&r), 2);
}

static void test_families(void **state)
{
	struct rs_name_addr l[] = { A("fd00::21"), A("127.0.0.22"),
		A("fd00::23"), A("127.0.0.24") };
	struct rs_failover_req r = req(l, 4, "127.0.0.22", AF_INET);

	(void)state;
	/* AF_INET: IPv4 only. */
	assert_int_equal(rs_failover_choose(&r), 3);
	r.current = l[3];
	assert_int_equal(rs_failover_choose(&r), 1);
	/* AF_INET6: both, IPv4 as mapped... */
	r.sock_family = AF_INET6;
	r.current = l[0];
	assert_int_equal(rs_failover_choose(&r), 1);
	/* ...unless IPV6_V6ONLY. */
	r.v6only = true;
	assert_int_equal(rs_failover_choose(&r), 2);
	r.current = l[2];
	assert_int_equal(rs_failover_choose(&r), 0);
	/* An AF_INET socket whose name has only IPv6 else: nothing. */
	struct rs_name_addr six[] = { A("127.0.0.22"), A("fd00::23") };
	struct rs_failover_req s = req(six, 2, "127.0.0.22", AF_INET);

	assert_int_equal(rs_failover_choose(&s), 0);
}

static void test_sockaddr_forms(void **state)
{
	struct sockaddr_storage ss;
	struct rs_name_addr v4 = A("127.0.0.23"), v6 = A("fe80::1");
	const struct sockaddr_in *in = (const void *)&ss;
	const struct sockaddr_in6 *in6 = (const void *)&ss;
	char buf[INET6_ADDRSTRLEN];

	(void)state;
	assert_int_equal(rs_failover_sockaddr(&v4, AF_INET, 8080, 0, &ss),
	    sizeof(struct sockaddr_in));
	assert_int_equal(in->sin_family, AF_INET);
	assert_int_equal(ntohs(in->sin_port), 8080);
	assert_memory_equal(&in->sin_addr, v4.addr, 4);
	assert_int_equal(rs_failover_sockaddr(&v4, AF_INET6, 8080, 3, &ss),
	    sizeof(struct sockaddr_in6));
	inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
	assert_string_equal(buf, "::ffff:127.0.0.23");
	assert_int_equal(in6->sin6_scope_id, 0);
	assert_int_equal(rs_failover_sockaddr(&v6, AF_INET6, 80, 3, &ss),
	    sizeof(struct sockaddr_in6));
	assert_int_equal(in6->sin6_scope_id, 3);
	assert_int_equal(rs_failover_sockaddr(&v6, AF_INET, 80, 0, &ss), 0);
}

/* The memory is bounded: the oldest failure gives way. */
static void test_memory_bounded(void **state)
{
	struct rs_name_addr first = A("10.9.0.1");

	(void)state;
	rs_failover_note_failure(&first, 80, 1000);
	for (unsigned i = 0; i < RS_FAILOVER_SLOTS; i++) {
		struct rs_name_addr a = A("10.8.0.0");

		a.addr[2] = (uint8_t)(i >> 8);
		a.addr[3] = (uint8_t)i;
		rs_failover_note_failure(&a, 80, 2000 + i);
	}
	assert_false(rs_failover_failed_lately(&first, 80, 3000, 10000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_next_in_order_round_robin, reset),
		cmocka_unit_test_setup(test_not_in_list_stays, reset),
		cmocka_unit_test_setup(test_skips_recent_failures, reset),
		cmocka_unit_test_setup(test_all_failed_next_anyway, reset),
		cmocka_unit_test_setup(test_families, reset),
		cmocka_unit_test_setup(test_sockaddr_forms, reset),
		cmocka_unit_test_setup(test_memory_bounded, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
