/* SPDX-License-Identifier: MIT */
/*
 * test_start_environment.c - the library's settings come from the
 * environment the process started with (SPEC 3): a program that clears
 * its environment before its first connect (nginx's workers keep only TZ)
 * keeps its policy, log settings, deadline and RESOLUTE_DISABLE.
 *
 * Runs env_client, which calls clearenv() and then connects once to a
 * port that refuses, under the library with the settings in its starting
 * environment.
 */
#include "integration/test_connect.h"

#include <fcntl.h>

/* Two attempts, a fixed wait of 300 ms: the built-in default (three
   attempts, waits of 50-100 and 100-200 ms) is told apart by both. */
static const char policy_yaml[] = "version: 1\ndefaults:\n" CT_BUDGET
    "  attempts: 2\n"
    "  backoff: {base: 300ms, cap: 1s, multiplier: 2, jitter: none}\n";

static char *policy;
static int closed_fd, port;

/* Runs env_client with env (NULL-terminated) added; returns the time its
   connect took, and its result in res. */
static long long run(struct t_run *r, const char *const *env, char *res,
    size_t len)
{
	char exe[4096], p[16], line[256];
	char *argv[] = { exe, p, NULL };

	snprintf(exe, sizeof(exe), "%s/itests/env_client", t_build());
	snprintf(p, sizeof(p), "%d", port);
	assert_int_equal(t_run(r, policy, env, argv), 0);
	CT_CHECK(r, ct_line(r->out, "connect=", 0, line, sizeof(line)));
	snprintf(res, len, "%.60s", line + strlen("connect="));
	CT_CHECK(r, ct_line(r->out, "elapsed_ms=", 0, line, sizeof(line)));
	return atoll(line + strlen("elapsed_ms="));
}

/* Reads a whole (small) file into buf. */
static void slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/*
 * The policy (two attempts, 300 ms apart) and RESOLUTE_LOG,
 * RESOLUTE_LOG_FORMAT and RESOLUTE_LOG_FILE all hold after clearenv().
 */
static void test_policy_and_log_from_start_environment(void **state)
{
	char logf[] = "/tmp/rs-test-startenv-XXXXXX", env_file[64], log[8192];
	const char *env[] = { "RESOLUTE_LOG=info", "RESOLUTE_LOG_FORMAT=json",
		env_file, NULL };
	struct t_run r;
	char res[64];
	int fd = mkstemp(logf);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	snprintf(env_file, sizeof(env_file), "RESOLUTE_LOG_FILE=%s", logf);
	long long ms = run(&r, env, res, sizeof(res));

	slurp(logf, log, sizeof(log));
	unlink(logf);
	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_WINDOW(&r, ms, 300, 300 + t_slack_ms());
	CT_CHECK(&r, ct_count(r.out, "resolute[") == 0);
	if (ct_count(log, "\"event\":\"retry\"") != 1 ||
	    ct_count(log, "\"attempts\":2") < 2) {
		fprintf(stderr, "log file:\n%s", log);
		CT_CHECK(&r, false);
	}
}

/* RESOLUTE_DEADLINE holds after clearenv(): a deadline 150 ms away
   leaves no room for the 300 ms wait, so the connect fails at once. */
static void test_deadline_from_start_environment(void **state)
{
	char env0[64];
	const char *env[] = { env0, "RESOLUTE_LOG=error", NULL };
	struct t_run r;
	char res[64];

	(void)state;
	snprintf(env0, sizeof(env0), "RESOLUTE_DEADLINE=%lld",
	    ct_epoch_ms() + 150);
	long long ms = run(&r, env, res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ETIMEDOUT") == 0);
	CT_CHECK(&r, ms < 150);
}

/* RESOLUTE_DISABLE=1 holds after clearenv(): one attempt, no log line. */
static void test_disable_from_start_environment(void **state)
{
	const char *env[] = { "RESOLUTE_DISABLE=1", NULL };
	struct t_run r;
	char res[64];

	(void)state;
	long long ms = run(&r, env, res, sizeof(res));

	CT_CHECK(&r, strcmp(res, "ECONNREFUSED") == 0);
	CT_CHECK(&r, ms < 50);
	CT_CHECK(&r, ct_count(r.out, "resolute[") == 0);
}

static int setup(void **state)
{
	(void)state;
	policy = t_policy(policy_yaml);
	port = ct_closed_port(&closed_fd);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_and_log_from_start_environment),
		cmocka_unit_test(test_deadline_from_start_environment),
		cmocka_unit_test(test_disable_from_start_environment),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
