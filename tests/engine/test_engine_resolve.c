/* SPDX-License-Identifier: MIT */
/*
 * test_engine_resolve.c - retries of transient name-resolution failures
 * (resolve.c, SPEC 5d) against a scripted resolver: which answers are
 * retried, the schedule of the sleeps between lookups (on the fake
 * clock), attempts, the process deadline, connect_budget, the rule of the
 * name, and calls the library makes itself.
 */
#include <errno.h>
#include <netdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"
#include "guard.h"
#include "resolve.h"

/* attempts and connect_budget of the defaults; db.internal gets 2
   attempts; nodns.internal does not retry dns. */
#define RPOLICY(att, budget)                                            \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  attempts: " att "\n"                                         \
	"  retry_on: [refused, dns]\n"                                  \
	"  connect_budget: " budget "\n"                                \
	"  backoff:\n"                                                  \
	"    base: 100ms\n"                                             \
	"    multiplier: 2\n"                                           \
	"    jitter: none\n"                                            \
	"  retry_budget:\n"                                             \
	"    ratio: 1000\n"                                             \
	"    min_per_second: 1000\n"                                    \
	"    scope: process\n"                                          \
	"hosts:\n"                                                      \
	"  - match: db.internal\n"                                      \
	"    attempts: 2\n"                                             \
	"  - match: nodns.internal\n"                                   \
	"    retry_on: [refused]\n"                                     \
	"  - match: off.internal\n"                                     \
	"    passthrough: true\n"

#define POLICY RPOLICY("4", "off")

#define GAI(code) { .fn = FK_GETADDRINFO, .ret = (code) }
#define GAI_SLOW(code, ms) \
	{ .fn = FK_GETADDRINFO, .ret = (code), .advance_ms = (ms) }
#define GHBN(h) { .fn = FK_GETHOSTBYNAME, .ret = (h) }
#define GHBN_R(e, h) { .fn = FK_GETHOSTBYNAME, .err = (e), .ret = (h) }

enum call { GETADDRINFO, GHBN_PLAIN, GHBN2, GHBN_REENTRANT, GHBN2_R };

struct resolve_case {
	const char *name;
	const char *policy;
	enum call call;
	const char *host;	/* NULL: "api.internal" */
	int af;			/* gethostbyname2*: 0 means AF_INET */
	int64_t deadline_in_ms;
	bool guarded;		/* the library's own call */
	struct fk_step steps[8];
	int want;		/* getaddrinfo/_r result; else the h_errno
				   (0: an answer) */
	int64_t sleeps[6];	/* the waits between lookups, 0-ended */
	unsigned dns_retries;
	const char *log;
};

static const struct resolve_case cases[] = {
	{ .name = "EAI_AGAIN twice, then an answer: 100 ms, then 200 ms",
	  .policy = POLICY,
	  .steps = { GAI(EAI_AGAIN), GAI(EAI_AGAIN), GAI(0) },
	  .want = 0, .sleeps = { 100, 200 }, .dns_retries = 2 },
	{ .name = "EAI_AGAIN every time: attempts lookups, then its error",
	  .policy = POLICY,
	  .steps = { GAI(EAI_AGAIN), GAI(EAI_AGAIN), GAI(EAI_AGAIN),
		GAI(EAI_AGAIN) },
	  .want = EAI_AGAIN, .sleeps = { 100, 200, 400 }, .dns_retries = 3,
	  .log = "giving up" },
	{ .name = "a permanent answer after a transient one ends it",
	  .policy = POLICY,
	  .steps = { GAI(EAI_AGAIN), GAI(EAI_NONAME) },
	  .want = EAI_NONAME, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "EAI_NONAME is returned at once",
	  .policy = POLICY, .steps = { GAI(EAI_NONAME) }, .want = EAI_NONAME },
	{ .name = "the rule of the name: its attempts",
	  .policy = POLICY, .host = "db.internal",
	  .steps = { GAI(EAI_AGAIN), GAI(EAI_AGAIN) },
	  .want = EAI_AGAIN, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "a rule without dns in retry_on: no retry",
	  .policy = POLICY, .host = "nodns.internal",
	  .steps = { GAI(EAI_AGAIN) }, .want = EAI_AGAIN },
	{ .name = "a passthrough rule: no retry",
	  .policy = POLICY, .host = "off.internal",
	  .steps = { GAI(EAI_AGAIN) }, .want = EAI_AGAIN },
	{ .name = "the library's own lookup is never retried",
	  .policy = POLICY, .guarded = true,
	  .steps = { GAI(EAI_AGAIN) }, .want = EAI_AGAIN },
	{ .name = "the process deadline ends the retries",
	  .policy = POLICY, .deadline_in_ms = 250,
	  .steps = { GAI(EAI_AGAIN), GAI(EAI_AGAIN) },
	  .want = EAI_AGAIN, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "connect_budget bounds the lookups and the sleeps",
	  .policy = RPOLICY("4", "500ms"),
	  .steps = { GAI_SLOW(EAI_AGAIN, 150), GAI_SLOW(EAI_AGAIN, 150) },
	  .want = EAI_AGAIN, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "gethostbyname: TRY_AGAIN, then an answer",
	  .policy = POLICY, .call = GHBN_PLAIN,
	  .steps = { GHBN(TRY_AGAIN), GHBN(0) },
	  .want = 0, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "gethostbyname: HOST_NOT_FOUND at once",
	  .policy = POLICY, .call = GHBN_PLAIN,
	  .steps = { GHBN(HOST_NOT_FOUND) }, .want = HOST_NOT_FOUND },
	{ .name = "gethostbyname2: TRY_AGAIN, then an answer",
	  .policy = POLICY, .call = GHBN2, .af = AF_INET,
	  .steps = { GHBN(TRY_AGAIN), GHBN(0) },
	  .want = 0, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "gethostbyname_r: TRY_AGAIN, then an answer",
	  .policy = POLICY, .call = GHBN_REENTRANT,
	  .steps = { GHBN_R(EAGAIN, TRY_AGAIN), GHBN_R(0, 0) },
	  .want = 0, .sleeps = { 100 }, .dns_retries = 1 },
	{ .name = "gethostbyname_r: ERANGE is the caller's, never retried",
	  .policy = POLICY, .call = GHBN_REENTRANT,
	  .steps = { GHBN_R(ERANGE, TRY_AGAIN) }, .want = ERANGE },
	{ .name = "gethostbyname2_r: TRY_AGAIN twice, then an answer",
	  .policy = POLICY, .call = GHBN2_R, .af = AF_INET6,
	  .steps = { GHBN_R(EAGAIN, TRY_AGAIN), GHBN_R(EAGAIN, TRY_AGAIN),
		GHBN_R(0, 0) },
	  .want = 0, .sleeps = { 100, 200 }, .dns_retries = 2 },
};

/* Makes the case's call; returns its result as the case states it. */
static int call(const struct resolve_case *c, const char *host)
{
	struct addrinfo *res = NULL;
	struct hostent he, *r = NULL, *h;
	char buf[256];
	int herr = 0, af = c->af ? c->af : AF_INET;

	switch (c->call) {
	case GETADDRINFO:
		return rs_resolve_getaddrinfo(host, "5432", NULL, &res);
	case GHBN_PLAIN:
		h = rs_resolve_gethostbyname(host);
		return h ? 0 : h_errno;
	case GHBN2:
		h = rs_resolve_gethostbyname2(host, af);
		return h ? 0 : h_errno;
	case GHBN_REENTRANT:
		return rs_resolve_gethostbyname_r(host, &he, buf, sizeof(buf),
		    &r, &herr);
	case GHBN2_R:
		return rs_resolve_gethostbyname2_r(host, af, &he, buf,
		    sizeof(buf), &r, &herr);
	}
	return -1;
}

static void run_case(void **state)
{
	const struct resolve_case *c = *state;
	const int64_t *ms;
	int n, want_n = 0;

	fk_script(c->steps);
	fk_policy(c->policy);
	if (c->deadline_in_ms)
		fk_deadline(c->deadline_in_ms);
	if (c->guarded)
		rs_guard_enter();
	int r = call(c, c->host ? c->host : "api.internal");

	if (c->guarded)
		rs_guard_leave();
	assert_int_equal(r, c->want);
	n = fk_sleeps(&ms);
	while (want_n < 6 && c->sleeps[want_n])
		want_n++;
	assert_int_equal(n, want_n);
	for (int i = 0; i < n; i++)
		assert_int_equal(ms[i], c->sleeps[i]);
	assert_int_equal(fk_stat(RS_STAT_DNS_RETRIES), c->dns_retries);
	if (c->log)
		assert_true(fk_log_has(c->log));
	fk_done();
}

/* gethostbyname2() with af 0 is glibc's to refuse: straight through. */
static void test_af_zero(void **state)
{
	static const struct fk_step steps[] = {
		GHBN(NO_RECOVERY), GHBN_R(EAFNOSUPPORT, NO_RECOVERY), FK_STOP,
	};
	struct hostent he, *r;
	char buf[64];
	int herr;

	(void)state;
	fk_script(steps);
	fk_policy(POLICY);
	assert_null(rs_resolve_gethostbyname2("api.internal", 0));
	assert_int_equal(rs_resolve_gethostbyname2_r("api.internal", 0, &he,
	    buf, sizeof(buf), &r, &herr), EAFNOSUPPORT);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_af_zero),
	};

	return FK_RUN("resolver retries", tables, more);
}
