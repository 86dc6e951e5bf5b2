/* SPDX-License-Identifier: MIT */
/*
 * test_wait_many.c - 1,000 non-blocking connects in one epoll loop, under
 * a policy of 500 ms attempts, 2 attempts, 100 ms backoff without jitter.
 *
 * A fifth of the sockets connect to the blackhole (SYNs dropped, in the
 * test namespace only) and must fail with ETIMEDOUT after 500 + 100 + 500
 * ms; the others reach an http peer with a deep accept queue and must all
 * succeed promptly.  The loop must not spin on sockets in backoff: the
 * number of waits stays small.  epoll level- and edge-triggered, and one
 * poll() over all the sockets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/resource.h>

#include "integration/peer.h"

#define N 1000

static const char *const policy = "version: 1\n"
	"defaults:\n"
	"  connect_timeout: 500ms\n"
	"  attempts: 2\n"
	"  backoff: {base: 100ms, jitter: none}\n"
	"  retry_budget: {ratio: 1000, min_per_second: 100000}\n";

/* Reads "NAME COUNT min_ms=A max_ms=B" (min optional) from the output. */
static int field(const char *out, const char *name, long long *min_ms,
    long long *max_ms)
{
	char key[64];
	int count = 0;

	snprintf(key, sizeof(key), "\n%s ", name);
	const char *p = strncmp(out, key + 1, strlen(key + 1)) ? strstr(out,
	    key) : out - 1;

	if (!p)
		return 0;
	sscanf(p + strlen(key), "%d", &count);
	const char *mn = strstr(p + 1, "min_ms="), *mx = strstr(p + 1,
	    "max_ms="), *nl = strchr(p + 1, '\n');

	if (min_ms && mn && (!nl || mn < nl))
		*min_ms = atoll(mn + 7);
	if (max_ms && mx && (!nl || mx < nl))
		*max_ms = atoll(mx + 7);
	return count;
}

static void many(const char *trigger)
{
	struct t_peer peer;
	struct t_run *r = calloc(1, sizeof(*r));
	char *pol = t_policy(policy), port[16], n[16], dropped[16], exe[4096];
	int drop = t_netns() ? N / 5 : 0;

	assert_int_equal(t_peer_start(&peer, "http", "-q", "4096", NULL), 0);
	snprintf(port, sizeof(port), "%d", peer.port);
	snprintf(n, sizeof(n), "%d", N);
	snprintf(dropped, sizeof(dropped), "%d", drop);
	snprintf(exe, sizeof(exe), "%s/itests/many_connect", t_build());
	char *argv[] = { exe, port, n, dropped, (char *)trigger, NULL };
	static const char *const env[] = { "RESOLUTE_LOG=error", NULL };

	assert_int_equal(t_run(r, pol, env, argv), 0);
	t_show(r);
	long long ok_max = -1, to_min = -1, to_max = -1, waits = 0;
	int ok = field(r->out, "ok", NULL, &ok_max);
	int to = field(r->out, "ETIMEDOUT", &to_min, &to_max);

	sscanf(strstr(r->out, "waits ") + 6, "%lld", &waits);
	fprintf(stderr, "%s: %d connected (last after %lld ms), %d timed out "
	    "(%lld..%lld ms), %lld waits\n", trigger, ok, ok_max, to, to_min,
	    to_max, waits);
	assert_int_equal(ok, N - drop);
	assert_int_equal(to, drop);
	assert_true(ok_max < 1000 + t_slack_ms());
	if (drop) {
		assert_true(to_min >= 1100);
		assert_true(to_max < 1100 + 2 * t_slack_ms());
	}
	assert_true(waits < 200);
	assert_non_null(strstr(r->out, "left 0\n"));
	t_peer_stop(&peer);
	unlink(pol);
	free(pol);
	free(r);
}

static void test_many_level(void **state)
{
	(void)state;
	many("lt");
}

static void test_many_edge(void **state)
{
	(void)state;
	many("et");
}

static void test_many_poll(void **state)
{
	(void)state;
	many("poll");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_level),
		cmocka_unit_test(test_many_edge),
		cmocka_unit_test(test_many_poll),
	};
	struct rlimit rl;

	/* The peer needs a descriptor per connection too. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	if (!t_netns())
		printf("SKIPPED: the blackholed fifth needs the network "
		    "namespace (scripts/netns.sh as root)\n");
	return r;
}
