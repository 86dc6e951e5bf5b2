/* SPDX-License-Identifier: MIT */
/*
 * test_policy_match.c - match parsing, matching, sockaddr conversion,
 * lookup order and duration formatting, table-driven.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "policy.h"

/* Builds a target from "1.2.3.4", "::1" or "unix:/path", a port, a name. */
static void target(struct rs_target *t, const char *addr, uint16_t port,
    const char *host)
{
	memset(t, 0, sizeof(*t));
	if (strncmp(addr, "unix:", 5) == 0) {
		t->family = AF_UNIX;
		t->path = addr + 5;
		return;
	}
	t->family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(t->family, addr, t->addr), 1);
	t->port = port;
	t->host = host;
}

struct match_case {
	const char *match;
	const char *addr;
	uint16_t port;
	const char *host;
	bool want;
};

static const struct match_case match_cases[] = {
	{ "*", "10.1.2.3", 80, NULL, true },
	{ "*", "::1", 80, NULL, true },
	{ "*", "unix:/run/x.sock", 0, NULL, false },
	{ "*:443", "10.1.2.3", 443, NULL, true },
	{ "*:443", "10.1.2.3", 80, NULL, false },
	{ "db.internal", "10.0.0.5", 5432, "db.internal", true },
	{ "db.internal", "10.0.0.5", 5432, "DB.Internal", true },
	{ "DB.INTERNAL", "10.0.0.5", 5432, "db.internal", true },
	{ "db.internal", "10.0.0.5", 5432, "db.internal.", true },
	{ "db.internal.", "10.0.0.5", 5432, "db.internal", true },
	{ "db.internal", "10.0.0.5", 5432, NULL, false },
	{ "db.internal", "10.0.0.5", 5432, "db.internal2", false },
	{ "db.internal", "10.0.0.5", 5432, "xdb.internal", false },
	{ "db.internal:5432", "10.0.0.5", 5432, "db.internal", true },
	{ "db.internal:5432", "10.0.0.5", 5433, "db.internal", false },
	{ "db.internal:9000-9100", "10.0.0.5", 9000, "db.internal", true },
	{ "db.internal:9000-9100", "10.0.0.5", 9100, "db.internal", true },
	{ "db.internal:9000-9100", "10.0.0.5", 8999, "db.internal", false },
	{ "db.internal:9000-9100", "10.0.0.5", 9101, "db.internal", false },
	{ "localhost", "127.0.0.1", 80, "localhost", true },
	{ "*.example.com", "1.2.3.4", 443, "api.example.com", true },
	{ "*.example.com", "1.2.3.4", 443, "a.b.Example.COM", true },
	{ "*.example.com", "1.2.3.4", 443, "api.example.com.", true },
	{ "*.example.com", "1.2.3.4", 443, "example.com", false },
	{ "*.example.com", "1.2.3.4", 443, "example.com.", false },
	{ "*.example.com", "1.2.3.4", 443, "badexample.com", false },
	{ "*.example.com", "1.2.3.4", 443, NULL, false },
	{ "*.example.com:443", "1.2.3.4", 80, "api.example.com", false },
	{ "10.0.0.5", "10.0.0.5", 1, NULL, true },
	{ "10.0.0.5", "10.0.0.5", 1, "named.host", true },
	{ "10.0.0.5", "10.0.0.6", 1, NULL, false },
	{ "10.0.0.5", "::ffff:10.0.0.5", 1, NULL, false },
	{ "10.0.0.5:80", "10.0.0.5", 80, NULL, true },
	{ "10.0.0.5:80", "10.0.0.5", 81, NULL, false },
	{ "10.0.0.0/8", "10.255.255.255", 1, NULL, true },
	{ "10.0.0.0/8", "11.0.0.0", 1, NULL, false },
	{ "10.0.0.0/8", "9.255.255.255", 1, NULL, false },
	{ "0.0.0.0/0", "203.0.113.9", 1, NULL, true },
	{ "0.0.0.0/0", "::1", 1, NULL, false },
	{ "192.168.1.7/32", "192.168.1.7", 1, NULL, true },
	{ "192.168.1.7/32", "192.168.1.6", 1, NULL, false },
	{ "172.16.0.0/12", "172.31.255.255", 1, NULL, true },
	{ "172.16.0.0/12", "172.32.0.0", 1, NULL, false },
	{ "127.0.0.1:9000-9100", "127.0.0.1", 9050, NULL, true },
	{ "[::1]", "::1", 1, NULL, true },
	{ "[::1]", "::2", 1, NULL, false },
	{ "[::1]", "127.0.0.1", 1, NULL, false },
	{ "[::1]:8080", "::1", 8080, NULL, true },
	{ "[::1]:8080", "::1", 8081, NULL, false },
	{ "[2001:db8::]/32", "2001:db8:ffff::1", 1, NULL, true },
	{ "[2001:db8::]/32", "2001:db9::1", 1, NULL, false },
	{ "[2001:db8::]/32:443", "2001:db8::1", 443, NULL, true },
	{ "[2001:db8::]/32:443", "2001:db8::1", 80, NULL, false },
	{ "[::]/0", "fe80::1", 1, NULL, true },
	{ "[::]/0", "10.0.0.1", 1, NULL, false },
	{ "[fd00::1]/128", "fd00::1", 1, NULL, true },
	{ "[fd00::1]/128", "fd00::2", 1, NULL, false },
	{ "[fc00::]/7", "fdff::1", 1, NULL, true },
	{ "[fd00::]/8", "fc00::1", 1, NULL, false },
	{ "unix:/run/postgresql/*", "unix:/run/postgresql/.s.PGSQL.5432", 0,
	  NULL, true },
	{ "unix:/run/*", "unix:/run/a/b/c.sock", 0, NULL, true },
	{ "unix:/run/app.sock", "unix:/run/app.sock", 0, NULL, true },
	{ "unix:/run/app.sock", "unix:/run/app.sock2", 0, NULL, false },
	{ "unix:/run/app-[0-9].sock", "unix:/run/app-7.sock", 0, NULL, true },
	{ "unix:/run/app-?.sock", "unix:/run/app-xy.sock", 0, NULL, false },
	{ "unix:@ctl", "unix:@ctl", 0, NULL, true },
	{ "unix:@ctl*", "unix:/ctl", 0, NULL, false },
	{ "unix:/run/*", "10.0.0.1", 0, NULL, false },
};

static void test_match_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(match_cases) / sizeof(match_cases[0]);
	    i++) {
		const struct match_case *c = &match_cases[i];
		struct rs_match m;
		struct rs_target t;
		const char *why = NULL;

		if (rs_match_parse(&m, c->match, &why) != 0)
			fail_msg("parse '%s': %s", c->match, why);
		target(&t, c->addr, c->port, c->host);
		if (rs_match_test(&m, &t) != c->want)
			fail_msg("'%s' vs %s:%u host %s: want %d", c->match,
			    c->addr, c->port, c->host ? c->host : "-",
			    c->want);
		rs_match_free(&m);
	}
}

struct bad_case {
	const char *match;
	const char *why;
};

static const struct bad_case bad_cases[] = {
	{ "", "empty match" },
	{ "unix:", "empty path glob after 'unix:'" },
	{ "::1", "IPv6 addresses must be written in brackets: [::1]:443" },
	{ "[::1", "missing ']' after IPv6 address" },
	{ "[::g]", "invalid IPv6 address" },
	{ "[::]/129", "IPv6 prefix length must be 0..128" },
	{ "[::1]/64", "address has bits set beyond the prefix length" },
	{ "10.0.0.0/33", "IPv4 prefix length must be 0..32" },
	{ "10.0.0.0/", "invalid prefix length after '/'" },
	{ "10.0.0.0/x", "invalid prefix length after '/'" },
	{ "10.1.0.0/8", "address has bits set beyond the prefix length" },
	{ "10.0.0", "invalid IPv4 address" },
	{ "300.0.0.1", "invalid IPv4 address" },
	{ "host:0", "invalid port (expected 1..65535 or LOW-HIGH)" },
	{ "host:65536", "invalid port (expected 1..65535 or LOW-HIGH)" },
	{ "host:", "invalid port (expected 1..65535 or LOW-HIGH)" },
	{ "host:http", "invalid port (expected 1..65535 or LOW-HIGH)" },
	{ "host:90-80", "port range is reversed (LOW must not exceed HIGH)" },
	{ "host:80-", "invalid port (expected 1..65535 or LOW-HIGH)" },
	{ ":80", "missing host or address before ':'" },
	{ "*.", "'*' is only allowed alone or as '*.suffix'" },
	{ "*.example..com", "invalid domain suffix after '*.'" },
	{ "a*b", "'*' is only allowed alone or as '*.suffix'" },
	{ "bad host", "invalid host name" },
	{ "a..b", "invalid host name" },
	{ ".", "invalid host name" },
};

static void test_match_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]);
	    i++) {
		struct rs_match m;
		const char *why = NULL;

		if (rs_match_parse(&m, bad_cases[i].match, &why) != -EINVAL)
			fail_msg("'%s' parsed", bad_cases[i].match);
		if (!why || strcmp(why, bad_cases[i].why) != 0)
			fail_msg("'%s': got '%s'", bad_cases[i].match,
			    why ? why : "(null)");
		assert_null(m.text);
		assert_null(m.name);
	}
}

static void test_match_fields(void **state)
{
	struct rs_match m;

	(void)state;
	assert_int_equal(rs_match_parse(&m, "DB.Internal.:5432", NULL), 0);
	assert_int_equal(m.kind, RS_MATCH_HOST);
	assert_string_equal(m.name, "db.internal");
	assert_string_equal(m.text, "DB.Internal.:5432");
	assert_int_equal(m.port_lo, 5432);
	assert_int_equal(m.port_hi, 5432);
	rs_match_free(&m);
	assert_int_equal(rs_match_parse(&m, "*.Example.com", NULL), 0);
	assert_int_equal(m.kind, RS_MATCH_SUFFIX);
	assert_string_equal(m.name, ".example.com");
	assert_int_equal(m.port_lo, 0);
	assert_int_equal(m.port_hi, 65535);
	rs_match_free(&m);
	assert_int_equal(rs_match_parse(&m, "[fd00::]/8:1-2", NULL), 0);
	assert_int_equal(m.kind, RS_MATCH_CIDR);
	assert_int_equal(m.family, AF_INET6);
	assert_int_equal(m.prefix_len, 8);
	assert_int_equal(m.addr[0], 0xfd);
	assert_int_equal(m.port_hi, 2);
	rs_match_free(&m);
	assert_int_equal(rs_match_parse(&m, "10.0.0.5", NULL), 0);
	assert_int_equal(m.family, AF_INET);
	assert_int_equal(m.prefix_len, 32);
	rs_match_free(&m);
}

static void test_target_inet(void **state)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET,
		.sin_port = htons(80) };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
		.sin6_port = htons(443) };
	struct rs_target t;

	(void)state;
	inet_pton(AF_INET, "192.0.2.1", &s4.sin_addr);
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&s4,
	    sizeof(s4)), 0);
	assert_int_equal(t.family, AF_INET);
	assert_int_equal(t.port, 80);
	assert_memory_equal(t.addr, &s4.sin_addr, 4);
	assert_null(t.host);
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&s4,
	    sizeof(s4) - 1), -EINVAL);
	inet_pton(AF_INET6, "::ffff:192.0.2.1", &s6.sin6_addr);
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&s6,
	    sizeof(s6)), 0);
	assert_int_equal(t.family, AF_INET);
	assert_int_equal(t.port, 443);
	assert_memory_equal(t.addr, &s4.sin_addr, 4);
	inet_pton(AF_INET6, "2001:db8::1", &s6.sin6_addr);
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&s6,
	    sizeof(s6)), 0);
	assert_int_equal(t.family, AF_INET6);
	assert_memory_equal(t.addr, &s6.sin6_addr, 16);
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&s6, 8),
	    -EINVAL);
	s6.sin6_family = AF_PACKET;
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&s6,
	    sizeof(s6)), -EAFNOSUPPORT);
}

static void test_target_unix(void **state)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	size_t off = offsetof(struct sockaddr_un, sun_path);
	struct rs_target t;

	(void)state;
	strcpy(su.sun_path, "/run/app.sock");
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&su,
	    sizeof(su)), 0);
	assert_int_equal(t.family, AF_UNIX);
	assert_string_equal(t.path, "/run/app.sock");
	/* Without the terminating NUL in the length. */
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&su,
	    (socklen_t)(off + 4)), 0);
	assert_string_equal(t.path, "/run");
	memcpy(su.sun_path, "\0ctl-x", 6);
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&su,
	    (socklen_t)(off + 6)), 0);
	assert_string_equal(t.path, "@ctl-x");
	/* An unnamed socket's address has no path at all. */
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&su,
	    (socklen_t)off), 0);
	assert_string_equal(t.path, "");
	/* A full-length path without a NUL. */
	memset(su.sun_path, 'a', sizeof(su.sun_path));
	assert_int_equal(rs_target_from_sockaddr(&t, (void *)&su,
	    sizeof(su)), 0);
	assert_int_equal(strlen(t.path), sizeof(su.sun_path));
}

/* Builds a policy from match strings; passthrough for names with "!". */
static void build(struct rs_policy *p, struct rs_rule *rules,
    const char *const *m, size_t n)
{
	memset(p, 0, sizeof(*p));
	rs_settings_init(&p->defaults);
	p->rules = rules;
	p->nrules = n;
	for (size_t i = 0; i < n; i++) {
		const char *text = m[i][0] == '!' ? m[i] + 1 : m[i];

		memset(&rules[i], 0, sizeof(rules[i]));
		rs_settings_init(&rules[i].settings);
		rules[i].settings.attempts = (unsigned)i + 1;
		rules[i].settings.passthrough = m[i][0] == '!';
		assert_int_equal(rs_match_parse(&rules[i].match, text, NULL),
		    0);
	}
}

static void test_lookup(void **state)
{
	static const char *const m[] = { "db.internal:5432", "!10.0.0.0/8",
		"10.0.0.0/8", "unix:/run/pg/*", "*.example.com" };
	struct rs_rule rules[5];
	struct rs_policy p;
	const struct rs_settings *s;
	const struct rs_rule *r;
	struct rs_target t;

	(void)state;
	build(&p, rules, m, 5);
	/* First match wins: db.internal at 10.0.0.5 is rule 0, not 1. */
	target(&t, "10.0.0.5", 5432, "db.internal");
	s = rs_policy_lookup(&p, &t, &r);
	assert_ptr_equal(r, &rules[0]);
	assert_ptr_equal(s, &rules[0].settings);
	/* Passthrough: NULL settings, the rule still reported. */
	target(&t, "10.0.0.5", 80, "db.internal");
	assert_null(rs_policy_lookup(&p, &t, &r));
	assert_ptr_equal(r, &rules[1]);
	/* No rule: the defaults. */
	target(&t, "192.0.2.1", 443, "www.example.org");
	assert_ptr_equal(rs_policy_lookup(&p, &t, &r), &p.defaults);
	assert_null(r);
	target(&t, "192.0.2.1", 443, "www.example.com");
	assert_ptr_equal(rs_policy_lookup(&p, &t, NULL), &rules[4].settings);
	/* Unix sockets: only through a unix: rule, never the defaults. */
	target(&t, "unix:/run/pg/.s.PGSQL.5432", 0, NULL);
	assert_ptr_equal(rs_policy_lookup(&p, &t, &r), &rules[3].settings);
	target(&t, "unix:/run/other.sock", 0, NULL);
	assert_null(rs_policy_lookup(&p, &t, &r));
	assert_null(r);
	for (size_t i = 0; i < 5; i++)
		rs_match_free(&rules[i].match);
}

static void test_duration_format(void **state)
{
	static const struct {
		uint32_t ms;
		const char *want;
	} cases[] = {
		{ 0, "0ms" }, { 1, "1ms" }, { 250, "250ms" }, { 999, "999ms" },
		{ 1000, "1s" }, { 1500, "1.5s" }, { 1250, "1.25s" },
		{ 1234, "1.234s" }, { 30000, "30s" }, { 60000, "1m" },
		{ 90000, "90s" }, { 120000, "2m" }, { 150000, "2.5m" },
		{ 86400000, "1440m" }, { RS_OFF, "off" },
		{ UINT32_MAX - 1, "4294967.294s" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(rs_duration_format(cases[i].ms, buf,
		    sizeof(buf)), cases[i].want);
}

static void test_class_names(void **state)
{
	(void)state;
	assert_string_equal(rs_class_name(RS_CLASS_REFUSED), "refused");
	assert_string_equal(rs_class_name(RS_CLASS_TIMEOUT), "timeout");
	assert_string_equal(rs_class_name(RS_CLASS_UNREACHABLE),
	    "unreachable");
	assert_string_equal(rs_class_name(RS_CLASS_RESET), "reset");
	assert_null(rs_class_name(RS_CLASS_NONE));
	assert_null(rs_class_name(RS_CLASS_REFUSED | RS_CLASS_RESET));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_table),
		cmocka_unit_test(test_match_errors),
		cmocka_unit_test(test_match_fields),
		cmocka_unit_test(test_target_inet),
		cmocka_unit_test(test_target_unix),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_duration_format),
		cmocka_unit_test(test_class_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
