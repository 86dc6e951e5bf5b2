/* SPDX-License-Identifier: MIT */
/*
 * test_breaker_hammer.c - one breaker hammered by 8 processes of 8 threads
 * each (SPEC 12), against a listener that comes and goes every 20 ms, so
 * that the breaker opens, is probed and closes over and over.
 *
 * Afterwards: the machine-wide counters agree with what the clients
 * counted (every connect either made its one attempt or was rejected:
 * connects = connect_attempts + breaker_rejects); and once the listener
 * stays, after one max_open_for and one lease the first connect and every
 * one after it connects and `resolute stats` shows no breaker that is not
 * closed: no probe lost, no breaker stuck half-open.  Run under ThreadSanitizer by scripts/tsan.sh;
 * RS_HAMMER_MS=120000 hammers for two minutes instead of 1.5 s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "integration/peer.h"

#define PROCS 8

static int port;
static int flapping = 1, stop;

/* A listener on 127.0.0.1:port, up 20 ms, down 20 ms, ... until stop;
   up for good once flapping is cleared. */
static void *flap(void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1;

	(void)arg;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int round = 0; round < 10000 &&
	    !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); round++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    listen(fd, 4096) < 0) {
			close(fd);
			usleep(5000);
			continue;
		}
		long long until = t_now_ms() + 20;

		while ((t_now_ms() < until ||
		    !__atomic_load_n(&flapping, __ATOMIC_ACQUIRE)) &&
		    !__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
			int c = accept(fd, NULL, NULL);

			if (c >= 0)
				close(c);
			else
				usleep(200);
		}
		close(fd);
		usleep(20000);
	}
	return NULL;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		abort();
	close(fd);
	return ntohs(a.sin_port);
}

/* Runs nprocs hammer clients of `threads` threads at once for ms; sums
   their counts. */
static void hammer(const char *policy, int nprocs, int threads, int ms,
    long long *connects, long long *oks)
{
	char exe[4096], portarg[16], msarg[16], tharg[16];
	struct t_run *runs = calloc((size_t)nprocs, sizeof(*runs));
	pid_t pids[PROCS];
	int pipes[PROCS][2];

	snprintf(exe, sizeof(exe), "%s/itests/breaker_hammer", t_build());
	snprintf(portarg, sizeof(portarg), "%d", port);
	snprintf(msarg, sizeof(msarg), "%d", ms);
	snprintf(tharg, sizeof(tharg), "%d", threads);
	*connects = *oks = 0;
	for (int i = 0; i < nprocs; i++) {
		assert_int_equal(pipe(pipes[i]), 0);
		pids[i] = fork();
		if (pids[i] == 0) {
			char *argv[] = { exe, portarg, msarg, tharg, NULL };
			struct t_run *r = &runs[i];

			close(pipes[i][0]);
			const char *env[] = { "RESOLUTE_LOG=error", NULL };

			t_run(r, policy, env, argv);
			if (write(pipes[i][1], r, sizeof(*r)) < 0)
				_exit(1);
			_exit(0);
		}
		close(pipes[i][1]);
	}
	for (int i = 0; i < nprocs; i++) {
		struct t_run *r = &runs[i];
		size_t got = 0;
		ssize_t k;
		long long c = -1, o = -1, f;

		while (got < sizeof(*r) && (k = read(pipes[i][0],
		    (char *)r + got, sizeof(*r) - got)) > 0)
			got += (size_t)k;
		close(pipes[i][0]);
		waitpid(pids[i], NULL, 0);
		const char *line = got == sizeof(*r) ? strstr(r->out,
		    "connects ") : NULL;

		if (!line || sscanf(line, "connects %lld ok %lld failed %lld",
		    &c, &o, &f) != 3) {
			if (got == sizeof(*r))
				t_show(r);
			fail_msg("hammer client %d said nothing usable", i);
		}
		*connects += c;
		*oks += o;
	}
	free(runs);
}

/* The value of "key":N after the defaults rule in the JSON stats. */
static long long stat_of(const char *json, const char *key)
{
	char pat[64];
	const char *p = strstr(json, "{\"rule\":\"defaults\"");
	long long v = -1;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	if (p && (p = strstr(p, pat)))
		sscanf(p + strlen(pat), "%lld", &v);
	return v;
}

static void stats(const char *policy, const char *format, struct t_run *r)
{
	char cli[4096];
	char *argv[] = { cli, "stats", "--policy", (char *)policy,
		"--format", (char *)format, NULL };

	snprintf(cli, sizeof(cli), "%s/resolute", t_build());
	/* The command-line tool, not preloaded. */
	const char *env[] = { "LD_PRELOAD=", NULL };

	assert_int_equal(t_run(r, NULL, env, argv), 0);
	assert_int_equal(r->status, 0);
}

static void test_hammer(void **state)
{
	pthread_t th;
	long long connects, oks, c2, o2;
	static struct t_run r;
	char *policy = t_policy(
	    "version: 1\n"
	    "defaults:\n"
	    "  attempts: 1\n"
	    "  connect_timeout: 50ms\n"
	    "  retry_budget: {ratio: 1000, min_per_second: 100000}\n"
	    "  breaker:\n"
	    "    failures: 3\n"
	    "    open_for: 100ms\n"
	    "    max_open_for: 400ms\n"
	    "    probes: 1\n");

	(void)state;
	port = free_port();
	assert_int_equal(pthread_create(&th, NULL, flap, NULL), 0);
	/* RS_HAMMER_MS: a longer run by hand (CI: 1.5 s). */
	const char *ms = getenv("RS_HAMMER_MS");

	hammer(policy, PROCS, 8, ms ? atoi(ms) : 1500, &connects, &oks);
	stats(policy, "json", &r);
	long long sc = stat_of(r.out, "connects");
	long long sa = stat_of(r.out, "connect_attempts");
	long long rej = stat_of(r.out, "breaker_rejects");
	long long opens = stat_of(r.out, "breaker_opens");

	fprintf(stderr, "hammer: %lld connects (%lld ok), %lld attempts, "
	    "%lld rejected, %lld openings\n", connects, oks, sa, rej, opens);
	if (sc != connects || sc != sa + rej || opens < 1 || rej < 1)
		fprintf(stderr, "%s\n", r.out);
	assert_int_equal(sc, connects);
	assert_int_equal(sc, sa + rej);
	assert_true(opens >= 1);
	assert_true(rej >= 1);
	/*
	 * The listener stays.  After max_open_for and a lease, whatever state
	 * the storm left, the first connect goes (closed, or as the probe)
	 * and connects, and so does every one after it.  One thread alone:
	 * while a probe is out other connects are rejected by design, and a
	 * crowd of threads could overrun this one listener's queue.
	 */
	__atomic_store_n(&flapping, 0, __ATOMIC_RELEASE);
	usleep(1000 * 1000);
	hammer(policy, 1, 1, 200, &c2, &o2);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	fprintf(stderr, "then, one thread: %lld connects, %lld ok\n", c2, o2);
	assert_true(c2 > 0);
	assert_int_equal(o2, c2);
	stats(policy, "text", &r);
	if (strstr(r.out, "breakers not closed"))
		fail_msg("a breaker is left open: %s", r.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hammer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
