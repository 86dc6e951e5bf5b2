/* SPDX-License-Identifier: MIT */
/*
 * test_connect_retry.c - blocking connect retries on loopback (SPEC 5, 7, 8).
 *
 * Everything here works without the fault namespace: refusals come from a
 * port that is bound but never listens, late listeners from the peer.
 * Counts come from the library's JSON log lines, timings from the client's
 * own per-step clock, both checked against the policy's formulas.
 */
#include "integration/test_connect.h"

#define POLICY_HEAD "version: 1\ndefaults:\n" CT_BUDGET

static char portbuf[16];

static const char *port_str(int port)
{
	snprintf(portbuf, sizeof(portbuf), "%d", port);
	return portbuf;
}

/*
 * Equal jitter, base 100 ms, multiplier 2: the waits before retries 1..3
 * lie in 50-100, 100-200 and 200-400 ms; the call fails with the last
 * attempt's ECONNREFUSED after their sum.
 */
static void test_refused_equal_jitter(void **state)
{
	struct t_run r;
	char res[64];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 1s\n"
	    "  attempts: 4\n  backoff: {base: 100ms, cap: 5s, multiplier: 2, "
	    "jitter: equal}\n");
	static const long long lo[] = { 50, 100, 200 }, hi[] = { 100, 200, 400 };

	(void)state;
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port), "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));
	long long sum = ct_check_waits(&r, 3, lo, hi);

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"give_up\"") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":4,\"attempts\":4") == 1);
	CT_CHECK(&r, ct_count(r.out, "connection refused") == 4);
	CT_WINDOW(&r, ms, sum, sum + ct_slack_ms());
	print_message("refused x4, equal jitter: waits sum %lld ms, "
	    "connect returned after %lld ms\n", sum, ms);
	close(hold);
	ct_policy_free(pol);
}

/* Without jitter the waits are exact: 100 + 200 ms, then ECONNREFUSED. */
static void test_refused_no_jitter(void **state)
{
	struct t_run r;
	char res[64];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n  backoff: "
	    "{base: 100ms, cap: 5s, multiplier: 2, jitter: none}\n");
	static const long long w[] = { 100, 200 };

	(void)state;
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port), "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, ct_check_waits(&r, 2, w, w) == 300);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_WINDOW(&r, ms, 300, 300 + ct_slack_ms());
	print_message("refused x3, no jitter: connect returned after %lld ms "
	    "(expected 300)\n", ms);
	close(hold);
	ct_policy_free(pol);
}

/* Full jitter: waits U(0, v) with v = 100, 200, 400 ms. */
static void test_refused_full_jitter(void **state)
{
	struct t_run r;
	char res[64];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 4\n  backoff: "
	    "{base: 100ms, cap: 5s, multiplier: 2, jitter: full}\n");
	static const long long lo[] = { 0, 0, 0 }, hi[] = { 100, 200, 400 };

	(void)state;
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port), "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));
	long long sum = ct_check_waits(&r, 3, lo, hi);

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_WINDOW(&r, ms, sum, sum + ct_slack_ms());
	close(hold);
	ct_policy_free(pol);
}

/*
 * Decorrelated jitter: each wait is min(cap, U(base, 3 x previous)), the
 * first one's "previous" being base; cap 500 ms here.
 */
static void test_refused_decorrelated_jitter(void **state)
{
	struct t_run r;
	char res[64], line[1024];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 5\n  backoff: "
	    "{base: 100ms, cap: 500ms, multiplier: 2, jitter: decorrelated}\n");
	long long prev = 100, sum = 0;

	(void)state;
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port), "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 4);
	for (int i = 0; i < 4; i++) {
		CT_CHECK(&r, ct_line(r.out, "\"event\":\"retry\"", i, line,
		    sizeof(line)));
		long long w = ct_json_int(line, "wait_ms");
		long long hi = 3 * prev < 500 ? 3 * prev : 500;

		CT_WINDOW(&r, w, 100, hi + 1);
		sum += w;
		prev = w;
	}
	CT_WINDOW(&r, ms, sum, sum + ct_slack_ms());
	close(hold);
	ct_policy_free(pol);
}

/*
 * IPv6 is managed alike: [::1] refused, retried with the same schedule,
 * and logged with a bracketed address.  Skipped (passes) without ::1.
 */
static void test_refused_ipv6(void **state)
{
	struct t_run r;
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_LOOPBACK_INIT };
	socklen_t len = sizeof(in6);
	char res[64], want[64];
	int hold = socket(AF_INET6, SOCK_STREAM, 0);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n  backoff: "
	    "{base: 50ms, cap: 5s, multiplier: 2, jitter: none}\n");
	static const long long w[] = { 50, 100 };

	(void)state;
	if (bind(hold, (struct sockaddr *)&in6, sizeof(in6)) < 0) {
		print_message("no ::1 here: IPv6 case not run\n");
		close(hold);
		ct_policy_free(pol);
		return;
	}
	getsockname(hold, (struct sockaddr *)&in6, &len);
	ct_client(&r, pol, NULL, "::1", port_str(ntohs(in6.sin6_port)),
	    "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_check_waits(&r, 2, w, w) == 150);
	snprintf(want, sizeof(want), "\"addr\":\"[::1]:%d\"",
	    ntohs(in6.sin6_port));
	CT_CHECK(&r, ct_count(r.out, want) == 3);
	CT_WINDOW(&r, ms, 150, 150 + ct_slack_ms());
	close(hold);
	ct_policy_free(pol);
}

/*
 * A listener that appears after 0.8 s: the program's one connect succeeds
 * after some retries and the exchange goes on as usual.  The same peer
 * refuses a client without the library at first.
 */
static void test_late_listener(void **state)
{
	struct t_peer p;
	struct t_run r;
	char res[64];
	char *pol = ct_policy(POLICY_HEAD "  attempts: 6\n  backoff: "
	    "{base: 100ms, cap: 5s, multiplier: 2, jitter: equal}\n");
	const char *off[] = { "RESOLUTE_DISABLE=1", NULL };

	(void)state;
	assert_int_equal(t_peer_start(&p, "late", "-d", "800", NULL), 0);
	const char *port = port_str(p.port);

	ct_client(&r, pol, off, "127.0.0.1", port, "connect", NULL);
	CT_CHECK(&r, ct_step(r.out, "connect", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_log_lines(r.out) == 0);
	ct_client(&r, pol, NULL, "127.0.0.1", port, "connect", "http",
	    "readall", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ok") == 0);
	CT_CHECK(&r, strstr(r.out, "readall ok 88 ") != NULL);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") >= 1);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"connected\"") == 1);
	/* Worst case: listening at 800 ms, just after an attempt at up to
	 * 100+200+400 ms; the next one comes at most 800 ms later. */
	CT_WINDOW(&r, ms, 0, 700 + 800 + 800 + ct_slack_ms());
	print_message("late listener (800 ms): connected after %lld ms, "
	    "%d retries\n", ms, ct_count(r.out, "\"event\":\"retry\""));
	t_peer_stop(&p);
	ct_policy_free(pol);
}

/*
 * A hostname rule applies to the address the program resolved that name
 * to, and only then: the same address connected by number gets defaults.
 */
static void test_hostname_rule(void **state)
{
	struct t_run r;
	char res[64];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n  backoff: "
	    "{base: 20ms, cap: 1s, multiplier: 2, jitter: none}\n"
	    "hosts:\n  - match: localhost\n    attempts: 1\n");

	(void)state;
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port),
	    "resolve:localhost", "connect", NULL);
	CT_CHECK(&r, ct_step(r.out, "connect", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 0);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":1,\"attempts\":1") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"host\":\"localhost\"") == 1);
	CT_CHECK(&r, strstr(r.out, "connect localhost:") != NULL);

	/* The text form names the host, then the address (SPEC 7). */
	const char *text[] = { "RESOLUTE_LOG_FORMAT=text", NULL };
	char want[160];

	snprintf(want, sizeof(want), "]: info: connect localhost:%d "
	    "(127.0.0.1) attempt 1/1 failed: connection refused\n", port);
	ct_client(&r, pol, text, "127.0.0.1", port_str(port),
	    "resolve:localhost", "connect", NULL);
	CT_CHECK(&r, strstr(r.out, want) != NULL);

	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port), "connect", NULL);
	CT_CHECK(&r, ct_step(r.out, "connect", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 2);
	CT_CHECK(&r, ct_count(r.out, "\"attempts\":3") == 3);
	CT_CHECK(&r, ct_count(r.out, "\"host\":") == 0);
	close(hold);
	ct_policy_free(pol);
}

/* A passthrough rule: one real connect, no retry, not a word logged. */
static void test_passthrough(void **state)
{
	struct t_run r;
	char res[64];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 5\n"
	    "hosts:\n  - match: 127.0.0.1\n    passthrough: true\n");

	(void)state;
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(port), "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_log_lines(r.out) == 0);
	CT_WINDOW(&r, ms, 0, t_slack_ms());
	close(hold);
	ct_policy_free(pol);
}

/* A UDP connect never fails and is never managed: ICMP errors reach recv. */
static void test_udp_untouched(void **state)
{
	struct t_run r;
	char res[64], exe[4096];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 5\n");
	const char *envv[] = { "RESOLUTE_LOG=debug", NULL };

	(void)state;
	close(hold);	/* a UDP port nobody uses: the TCP one just freed */
	snprintf(exe, sizeof(exe), "%s/itests/udp_client", t_build());
	char *argv[] = { exe, (char *)port_str(port), NULL };

	assert_int_equal(t_run(&r, pol, envv, argv), 0);
	CT_CHECK(&r, ct_step(r.out, "connect", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ok") == 0);
	CT_CHECK(&r, ct_step(r.out, "recv", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_log_lines(r.out) == 0);
	ct_policy_free(pol);
}

/* Unix sockets are managed only where a unix: rule matches. */
static void test_unix_unmatched(void **state)
{
	struct t_run r;
	char res[64];
	char *pol = ct_policy(POLICY_HEAD "  attempts: 5\nhosts:\n"
	    "  - match: unix:/tmp/rs-*\n");

	(void)state;
	ct_client(&r, pol, NULL, "unix:/nonexistent", "0", "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ENOENT") == 0);
	CT_CHECK(&r, ct_log_lines(r.out) == 0);
	CT_WINDOW(&r, ms, 0, t_slack_ms());
	ct_policy_free(pol);
}

/* A matched unix path that does not exist: ENOENT is retried. */
static void test_unix_matched_enoent(void **state)
{
	struct t_run r;
	char res[64], path[128];
	char *pol = ct_policy(POLICY_HEAD "  attempts: 2\nhosts:\n"
	    "  - match: unix:/tmp/rs-*\n    attempts: 3\n    backoff: "
	    "{base: 50ms, cap: 1s, multiplier: 2, jitter: none}\n");
	static const long long w[] = { 50, 100 };

	(void)state;
	snprintf(path, sizeof(path), "unix:/tmp/rs-ct-%d-missing",
	    (int)getpid());
	ct_client(&r, pol, NULL, path, "0", "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ENOENT") == 0);
	CT_CHECK(&r, ct_check_waits(&r, 2, w, w) == 150);
	CT_CHECK(&r, ct_count(r.out, "no such socket file") == 3);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") +
	    ct_count(r.out, "\"event\":\"give_up\"") == 3);
	CT_CHECK(&r, ct_count(r.out, "\"error\":\"no such socket file\"") == 3);
	CT_WINDOW(&r, ms, 150, 150 + ct_slack_ms());
	ct_policy_free(pol);
}

/* A unix listener that starts listening after 0.6 s is reached. */
static void test_unix_late(void **state)
{
	struct t_peer p;
	struct t_run r;
	char res[64], sock[128], addr[160];
	char *pol = ct_policy(POLICY_HEAD "  attempts: 1\nhosts:\n"
	    "  - match: unix:/tmp/rs-*\n    attempts: 6\n    backoff: "
	    "{base: 100ms, cap: 5s, multiplier: 2, jitter: equal}\n");

	(void)state;
	snprintf(sock, sizeof(sock), "/tmp/rs-ct-%d.sock", (int)getpid());
	snprintf(addr, sizeof(addr), "unix:%s", sock);
	assert_int_equal(t_peer_start(&p, "late", "-u", sock, "-d", "600",
	    NULL), 0);
	ct_client(&r, pol, NULL, addr, "0", "connect", "http", "readall",
	    NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ok") == 0);
	CT_CHECK(&r, strstr(r.out, "readall ok 88 ") != NULL);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") >= 1);
	CT_WINDOW(&r, ms, 0, 700 + 800 + ct_slack_ms());
	print_message("unix late listener (600 ms): connected after %lld ms\n",
	    ms);
	t_peer_stop(&p);
	unlink(sock);
	ct_policy_free(pol);
}

/*
 * A peer that resets its first two connections right after accepting.
 * The handshake completes in the kernel before accept(), so a reset is no
 * connect failure as such; what the program sees depends on when the RST
 * arrives.  Observed on loopback: it arrives before the engine confirms
 * the attempt (SO_ERROR = ECONNRESET), which SPEC 5 classes `reset`
 * ("before the program sent or received a byte") and retries.  Should it
 * arrive after connect() returned, the program's next send/recv reports
 * it; connect() itself succeeds either way.
 */
static void test_reset_on_accept(void **state)
{
	struct t_peer p;
	struct t_run r;
	char res[64];
	char *pol = ct_policy(POLICY_HEAD "  attempts: 4\n  backoff: "
	    "{base: 50ms, cap: 1s, multiplier: 2, jitter: none}\n");

	(void)state;
	assert_int_equal(t_peer_start(&p, "reset", "-n", "2", NULL), 0);
	ct_client(&r, pol, NULL, "127.0.0.1", port_str(p.port), "connect",
	    "http", "readall", NULL);
	int resets = ct_count(r.out, "\"error\":\"connection reset\"");

	CT_CHECK(&r, ct_step(r.out, "connect", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ok") == 0);
	CT_CHECK(&r, resets <= 2);
	if (resets == 2)
		CT_CHECK(&r, strstr(r.out, "readall ok 88 ") != NULL);
	else
		CT_CHECK(&r, strstr(r.out, "ECONNRESET") ||
		    strstr(r.out, "EPIPE"));
	print_message("reset-on-accept x2: %d absorbed as connect-level "
	    "resets\n", resets);
	t_peer_stop(&p);
	ct_policy_free(pol);
}

/*
 * A signal without SA_RESTART interrupts a blocking connect in its backoff
 * wait: connect() fails with EINTR promptly, and the next connect() on the
 * socket resumes the same logical connect (attempt numbers go on, the
 * schedule ends when it would have: 400 + 800 ms).
 */
static void test_eintr_backoff(void **state)
{
	struct t_run r;
	char res[64], exe[4096];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n  backoff: "
	    "{base: 400ms, cap: 5s, multiplier: 2, jitter: none}\n");
	const char *envv[] = { "RESOLUTE_LOG=info", "RESOLUTE_LOG_FORMAT=json",
		NULL };

	(void)state;
	snprintf(exe, sizeof(exe), "%s/itests/eintr_client", t_build());
	char *argv[] = { exe, "127.0.0.1", (char *)port_str(port), "300", "3",
		NULL };

	assert_int_equal(t_run(&r, pol, envv, argv), 0);
	long long first = ct_step(r.out, "connect1", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "EINTR") == 0);
	CT_WINDOW(&r, first, 300, 300 + t_slack_ms());
	long long second = ct_step(r.out, "connect2", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_WINDOW(&r, second, 1200, 1200 + ct_slack_ms());
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 2);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":1,") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":3,\"attempts\":3") == 1);
	CT_CHECK(&r, strstr(r.out, "connect3") == NULL);
	close(hold);
	ct_policy_free(pol);
}

/*
 * Regression: a handler WITH SA_RESTART must not make connect() fail with
 * EINTR, since the kernel restarts an interrupted blocking connect then
 * (signal(7); the socket has no SO_SNDTIMEO).  Programs that rely on it do
 * not retry connect on EINTR.  The engine used to return EINTR whatever
 * the handler's flags.
 */
static void test_eintr_sa_restart(void **state)
{
	struct t_run r;
	char res[64], exe[4096];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n  backoff: "
	    "{base: 400ms, cap: 5s, multiplier: 2, jitter: none}\n");
	const char *envv[] = { "RESOLUTE_LOG=info", "RESOLUTE_LOG_FORMAT=json",
		NULL };

	(void)state;
	snprintf(exe, sizeof(exe), "%s/itests/eintr_client", t_build());
	char *argv[] = { exe, "127.0.0.1", (char *)port_str(port), "300", "1",
		"restart", NULL };

	assert_int_equal(t_run(&r, pol, envv, argv), 0);
	long long ms = ct_step(r.out, "connect1", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_WINDOW(&r, ms, 1200, 1200 + ct_slack_ms());
	CT_CHECK(&r, strstr(r.out, "alarms 1") != NULL);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 2);
	close(hold);
	ct_policy_free(pol);
}

/*
 * Regression: with RESOLUTE_DEADLINE already past, no attempt may start
 * (SPEC 5: no attempt starts that would end after the process deadline).
 * The engine used to send a SYN anyway and then report "attempt 1 failed:
 * timed out"; on loopback that SYN even completes a handshake, which the
 * listener below would find in its accept queue.
 */
static void test_deadline_passed(void **state)
{
	struct t_run r;
	char res[64], env0[64];
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n");
	const char *env[] = { env0, NULL };
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	(void)state;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(l, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(listen(l, 8), 0);
	getsockname(l, (struct sockaddr *)&in, &len);
	snprintf(env0, sizeof(env0), "RESOLUTE_DEADLINE=%lld",
	    ct_epoch_ms() - 1000);
	ct_client(&r, pol, env, "127.0.0.1", port_str(ntohs(in.sin_port)),
	    "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ETIMEDOUT") == 0);
	CT_WINDOW(&r, ms, 0, t_slack_ms());
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"deadline\"") == 1);
	CT_CHECK(&r, ct_count(r.out, "failed") == 0);
	int c = accept(l, NULL, NULL);

	CT_CHECK(&r, c < 0 && errno == EAGAIN);
	close(l);
	ct_policy_free(pol);
}

/* RESOLUTE_DISABLE=1: one real connect, nothing logged. */
static void test_disable(void **state)
{
	struct t_run r;
	char res[64];
	int hold, port = ct_closed_port(&hold);
	char *pol = ct_policy(POLICY_HEAD "  attempts: 5\n");
	const char *env[] = { "RESOLUTE_DISABLE=1", NULL };

	(void)state;
	ct_client(&r, pol, env, "127.0.0.1", port_str(port), "connect", NULL);
	long long ms = ct_step(r.out, "connect", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ct_log_lines(r.out) == 0);
	CT_WINDOW(&r, ms, 0, t_slack_ms());
	close(hold);
	ct_policy_free(pol);
}

static const char invalid_yaml[] = "version: 1\ndefaults:\n  atempts: 3\n";

/*
 * An invalid policy: its error is logged once with FILE:LINE:COL, and
 * every connect passes through (two refused connects, no retry).
 */
static void test_invalid_policy(void **state)
{
	struct t_run r;
	char res[64], exe[4096], where[512];
	int hold, port = ct_closed_port(&hold);
	char *pol = t_policy(invalid_yaml);
	const char *envv[] = { "RESOLUTE_LOG=debug", NULL };

	(void)state;
	snprintf(exe, sizeof(exe), "%s/itests/eintr_client", t_build());
	snprintf(where, sizeof(where), "%s:3:3: error: ", pol);
	char *argv[] = { exe, "127.0.0.1", (char *)port_str(port), "0", "2",
		NULL };

	assert_int_equal(t_run(&r, pol, envv, argv), 0);
	CT_CHECK(&r, ct_step(r.out, "connect1", res, sizeof(res)) >= 0);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	long long ms = ct_step(r.out, "connect2", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_WINDOW(&r, ms, 0, t_slack_ms());
	CT_CHECK(&r, ct_count(r.out, where) == 1);
	CT_CHECK(&r, ct_count(r.out, "attempts") == 1);	/* the suggestion */
	CT_CHECK(&r, ct_log_lines(r.out) == 2);
	CT_CHECK(&r, ct_count(r.out, "passing every call through") == 1);
	close(hold);
	ct_policy_free(pol);
}

/* RESOLUTE_STRICT=1: an invalid policy stops even /bin/true with 78. */
static void test_strict(void **state)
{
	struct t_run r;
	char where[512];
	char *pol = t_policy(invalid_yaml);
	const char *env[] = { "RESOLUTE_STRICT=1", NULL };
	char *argv[] = { "/bin/true", NULL };

	(void)state;
	snprintf(where, sizeof(where), "%s:3:3: error: ", pol);
	assert_int_equal(t_run(&r, pol, env, argv), 0);
	CT_CHECK(&r, r.status == 78);
	CT_CHECK(&r, ct_count(r.out, where) == 1);
	ct_policy_free(pol);
	/* A valid policy in strict mode: the program runs as usual. */
	pol = ct_policy(POLICY_HEAD "  attempts: 2\n");
	assert_int_equal(t_run(&r, pol, env, argv), 0);
	CT_CHECK(&r, r.status == 0);
	CT_CHECK(&r, r.out[0] == '\0');
	ct_policy_free(pol);
}

/* Lazy start-up: a program that never connects never parses the policy. */
static void test_lazy(void **state)
{
	struct t_run r;
	char *pol = t_policy(invalid_yaml);
	char *argv[] = { "/bin/true", NULL };

	(void)state;
	assert_int_equal(t_run(&r, pol, NULL, argv), 0);
	CT_CHECK(&r, r.status == 0);
	CT_CHECK(&r, r.out[0] == '\0');
	ct_policy_free(pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_equal_jitter),
		cmocka_unit_test(test_refused_no_jitter),
		cmocka_unit_test(test_refused_full_jitter),
		cmocka_unit_test(test_refused_decorrelated_jitter),
		cmocka_unit_test(test_refused_ipv6),
		cmocka_unit_test(test_late_listener),
		cmocka_unit_test(test_hostname_rule),
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_udp_untouched),
		cmocka_unit_test(test_unix_unmatched),
		cmocka_unit_test(test_unix_matched_enoent),
		cmocka_unit_test(test_unix_late),
		cmocka_unit_test(test_reset_on_accept),
		cmocka_unit_test(test_eintr_backoff),
		cmocka_unit_test(test_eintr_sa_restart),
		cmocka_unit_test(test_deadline_passed),
		cmocka_unit_test(test_disable),
		cmocka_unit_test(test_invalid_policy),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_lazy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
