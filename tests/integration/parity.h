/* SPDX-License-Identifier: MIT */
/*
 * parity.h - what test_kernel_parity.c and test_log_safety.c share: the
 * policy their scenarios run under, and running one parity_client mode.
 * Include after <cmocka.h> and "integration/peer.h".
 */
#ifndef RS_TEST_PARITY_H
#define RS_TEST_PARITY_H

/* Three attempts 100 and 200 ms apart: retries show in the timings. */
static const char parity_policy_yaml[] = "version: 1\ndefaults:\n"
    "  connect_timeout: 1s\n  read_timeout: 2s\n  attempts: 3\n"
    "  backoff: {base: 100ms, cap: 1s, multiplier: 2, jitter: none}\n";

/* The policy file, written once by parity_setup(). */
static char *policy;

/* Runs parity_client MODE [ARG] under the library; asserts want in it. */
static inline void scenario(struct t_run *r, const char *want,
    const char *mode, const char *arg, const char *const *env)
{
	char exe[4096];
	char *argv[] = { exe, (char *)mode, (char *)arg, NULL };

	snprintf(exe, sizeof(exe), "%s/itests/parity_client", t_build());
	assert_int_equal(t_run(r, policy, env, argv), 0);
	if (!strstr(r->out, want) || r->status != 0)
		t_show(r);
	assert_non_null(strstr(r->out, want));
	assert_int_equal(r->status, 0);
}

static inline int parity_setup(void **state)
{
	(void)state;
	policy = t_policy(parity_policy_yaml);
	return 0;
}

#endif /* RS_TEST_PARITY_H */
