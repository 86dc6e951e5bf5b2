/* SPDX-License-Identifier: MIT */
/*
 * test_connect_faults.c - blocking connect against dropped SYNs and ICMP
 * host-unreachable (SPEC 5): attempt timeouts, connect_budget,
 * RESOLUTE_DEADLINE, unreachable classification, EINTR in a SYN wait.
 *
 * Needs the fault namespace of scripts/netns.sh (127.0.0.2 drops SYNs,
 * 127.0.0.3 answers host-unreachable); prints SKIPPED without it.
 */
#include "integration/test_connect.h"

#define POLICY_HEAD "version: 1\ndefaults:\n" CT_BUDGET

/* Runs rsclient ADDR 80 connect and returns the connect's elapsed_ms. */
static long long blocking_connect(struct t_run *r, const char *pol,
    const char *const *env, const char *addr, const char *want)
{
	char res[64];

	ct_client(r, pol, env, addr, "80", "connect", NULL);
	long long ms = ct_step(r->out, "connect", res, sizeof(res));

	CT_CHECK(r, ms >= 0);
	CT_CHECK(r, strcmp(res, want) == 0);
	return ms;
}

/*
 * Three attempts of 300 ms with waits of 100 and 200 ms between them:
 * ETIMEDOUT after 300 + 100 + 300 + 200 + 300 = 1200 ms.
 */
static void test_blackhole_attempts(void **state)
{
	struct t_run r;
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 300ms\n"
	    "  attempts: 3\n  connect_budget: 10s\n  backoff: {base: 100ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");
	static const long long w[] = { 100, 200 };

	(void)state;
	long long ms = blocking_connect(&r, pol, NULL, T_BLACKHOLE,
	    "ETIMEDOUT");

	CT_CHECK(&r, ct_check_waits(&r, 2, w, w) == 300);
	CT_CHECK(&r, ct_count(r.out, "\"error\":\"timed out\"") == 3);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"give_up\"") == 1);
	CT_WINDOW(&r, ms, 1200, 1200 + ct_slack_ms());
	print_message("blackhole 3 x 300 ms + 100 + 200: ETIMEDOUT after "
	    "%lld ms (expected 1200)\n", ms);
	ct_policy_free(pol);
}

/*
 * connect_budget 700 ms cuts the second attempt at 700 ms (300 + 100 +
 * 300), and no further wait is begun: ETIMEDOUT at 700 ms.
 */
static void test_blackhole_budget(void **state)
{
	struct t_run r;
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 300ms\n"
	    "  attempts: 5\n  connect_budget: 700ms\n  backoff: {base: 100ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");

	(void)state;
	long long ms = blocking_connect(&r, pol, NULL, T_BLACKHOLE,
	    "ETIMEDOUT");

	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"deadline\"") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":3") == 0);
	CT_WINDOW(&r, ms, 700, 700 + t_slack_ms());
	print_message("blackhole, connect_budget 700 ms: ETIMEDOUT after "
	    "%lld ms\n", ms);
	ct_policy_free(pol);
}

/*
 * A wait that would end past the budget is not begun: after the first
 * 300 ms attempt a 1 s wait would end at 1300 ms > 1000 ms, so the call
 * fails at once at 300 ms instead of sleeping until the budget runs out.
 */
static void test_budget_no_useless_wait(void **state)
{
	struct t_run r;
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 300ms\n"
	    "  attempts: 3\n  connect_budget: 1s\n  backoff: {base: 1s, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");

	(void)state;
	long long ms = blocking_connect(&r, pol, NULL, T_BLACKHOLE,
	    "ETIMEDOUT");

	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 0);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"deadline\"") == 1);
	CT_WINDOW(&r, ms, 300, 300 + t_slack_ms());
	CT_CHECK(&r, ms < 1000);
	ct_policy_free(pol);
}

/*
 * RESOLUTE_DEADLINE (epoch ms) 500 ms from now cuts the second attempt
 * (which starts at 400 ms) at 500 ms, whatever connect_budget says.
 */
static void test_process_deadline(void **state)
{
	struct t_run r;
	char env0[64];
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 300ms\n"
	    "  attempts: 3\n  connect_budget: 10s\n  backoff: {base: 100ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");
	const char *env[] = { env0, NULL };

	(void)state;
	snprintf(env0, sizeof(env0), "RESOLUTE_DEADLINE=%lld",
	    ct_epoch_ms() + 500);
	blocking_connect(&r, pol, env, T_BLACKHOLE, "ETIMEDOUT");
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"deadline\"") == 1);
	/* Whole-run time: the deadline counts from before the fork. */
	CT_WINDOW(&r, r.elapsed_ms, 500 - 1, 500 + t_slack_ms());
	print_message("RESOLUTE_DEADLINE now+500: client ended after %lld ms\n",
	    r.elapsed_ms);
	ct_policy_free(pol);
}

/* Host-unreachable is class `unreachable`, retried when listed. */
static void test_unreachable_retried(void **state)
{
	struct t_run r;
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n"
	    "  retry_on: [refused, unreachable]\n  backoff: {base: 50ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");
	static const long long w[] = { 50, 100 };

	(void)state;
	long long ms = blocking_connect(&r, pol, NULL, T_UNREACH,
	    "EHOSTUNREACH");

	CT_CHECK(&r, ct_check_waits(&r, 2, w, w) == 150);
	CT_CHECK(&r, ct_count(r.out, "host unreachable") == 3);
	CT_WINDOW(&r, ms, 150, 150 + ct_slack_ms());
	ct_policy_free(pol);
}

/* ...and returned at once when retry_on does not list it. */
static void test_unreachable_not_retried(void **state)
{
	struct t_run r;
	char *pol = ct_policy(POLICY_HEAD "  attempts: 3\n"
	    "  retry_on: [refused]\n  backoff: {base: 50ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");

	(void)state;
	long long ms = blocking_connect(&r, pol, NULL, T_UNREACH,
	    "EHOSTUNREACH");

	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 0);
	CT_CHECK(&r, ct_count(r.out, "host unreachable") == 1);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":1,\"attempts\":3") == 1);
	CT_WINDOW(&r, ms, 0, t_slack_ms());
	ct_policy_free(pol);
}

/*
 * A signal without SA_RESTART during the first dropped SYN: EINTR at once;
 * the next connect() resumes the same schedule, ETIMEDOUT at 1200 ms.
 */
static void test_eintr_dropped_syn(void **state)
{
	struct t_run r;
	char res[64], exe[4096];
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 300ms\n"
	    "  attempts: 3\n  connect_budget: 10s\n  backoff: {base: 100ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");
	const char *envv[] = { "RESOLUTE_LOG=info", "RESOLUTE_LOG_FORMAT=json",
		NULL };

	(void)state;
	snprintf(exe, sizeof(exe), "%s/itests/eintr_client", t_build());
	char *argv[] = { exe, T_BLACKHOLE, "80", "150", "3", NULL };

	assert_int_equal(t_run(&r, pol, envv, argv), 0);
	long long first = ct_step(r.out, "connect1", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "EINTR") == 0);
	CT_WINDOW(&r, first, 150, 150 + t_slack_ms());
	long long second = ct_step(r.out, "connect2", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ETIMEDOUT") == 0);
	CT_WINDOW(&r, second, 1200, 1200 + ct_slack_ms());
	CT_CHECK(&r, ct_count(r.out, "\"event\":\"retry\"") == 2);
	CT_CHECK(&r, ct_count(r.out, "\"attempt\":1,") == 1);
	print_message("EINTR at %lld ms in a dropped SYN; resumed connect "
	    "ended at %lld ms (expected 1200)\n", first, second);
	ct_policy_free(pol);
}

/*
 * Regression: the program's own connect timeout (SO_SNDTIMEO, after which
 * a blocking connect fails with EINPROGRESS) is honoured.  The engine used
 * to run its whole schedule (here 1200 ms) regardless; now connect()
 * returns EINPROGRESS at 400 ms as the kernel's would, the logical connect
 * going on in the background for the program's waits to drive.
 */
static void test_sndtimeo_honoured(void **state)
{
	struct t_run r;
	char res[64], exe[4096];
	char *pol = ct_policy(POLICY_HEAD "  connect_timeout: 300ms\n"
	    "  attempts: 3\n  connect_budget: 10s\n  backoff: {base: 100ms, "
	    "cap: 5s, multiplier: 2, jitter: none}\n");
	const char *envv[] = { "RESOLUTE_LOG=info", "RESOLUTE_LOG_FORMAT=json",
		NULL };

	(void)state;
	snprintf(exe, sizeof(exe), "%s/itests/eintr_client", t_build());
	char *argv[] = { exe, T_BLACKHOLE, "80", "0", "1", "sndtimeo:400",
		NULL };

	assert_int_equal(t_run(&r, pol, envv, argv), 0);
	long long first = ct_step(r.out, "connect1", res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "EINPROGRESS") == 0);
	CT_WINDOW(&r, first, 400, 400 + t_slack_ms());
	print_message("SO_SNDTIMEO 400 ms: connect returned EINPROGRESS after "
	    "%lld ms\n", first);
	ct_policy_free(pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blackhole_attempts),
		cmocka_unit_test(test_blackhole_budget),
		cmocka_unit_test(test_budget_no_useless_wait),
		cmocka_unit_test(test_process_deadline),
		cmocka_unit_test(test_unreachable_retried),
		cmocka_unit_test(test_unreachable_not_retried),
		cmocka_unit_test(test_eintr_dropped_syn),
		cmocka_unit_test(test_sndtimeo_honoured),
	};

	if (!t_netns()) {
		printf("SKIPPED: needs the fault namespace of scripts/netns.sh "
		    "(root and nft)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
