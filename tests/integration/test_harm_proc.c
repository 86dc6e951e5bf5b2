/* SPDX-License-Identifier: MIT */
/*
 * test_harm_proc.c - processes, threads and signals (SPEC §8).
 *
 * fork children re-seed the jitter generator; vfork and posix_spawn
 * children leave the parent's state alone; exec'd children inherit the
 * library through the environment; 64 threads against faulty servers
 * neither deadlock nor crash; signal handlers doing I/O on unmanaged
 * descriptors while the main thread retries inside the library behave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "integration/harm.h"

static struct t_peer silent;
static bool have_io;

static int setup(void **state)
{
	char *policy = t_policy("version: 1\ndefaults:\n  read_timeout: 300ms\n");
	struct t_run r;

	(void)state;
	if (t_peer_start(&silent, "silent", NULL) < 0)
		return -1;
	h_run(&r, policy, NULL, "silentread", silent.port, NULL);
	have_io = !strcmp(h_step(&r, "read").result, "ETIMEDOUT");
	if (!have_io)
		printf("note: no read timeouts in this build; the cases that "
		    "observe the library through them are skipped\n");
	unlink(policy);
	free(policy);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	t_peer_stop(&silent);
	return 0;
}

/* Collects the wait_ms values of pid's JSON log lines into w[]; a count. */
static int waits_of(const char *log, long pid, long *w, int max)
{
	char key[48];
	int n = 0;

	snprintf(key, sizeof(key), "\"pid\":%ld,", pid);
	for (const char *l = log; l && *l && n < max; l = strchr(l, '\n'),
	    l = l ? l + 1 : l) {
		const char *end = strchr(l, '\n'), *p = strstr(l, key),
			   *m = strstr(l, "\"wait_ms\":");

		if (p && m && (!end || m < end) && (!end || p < end))
			w[n++] = atol(m + 10);
	}
	return n;
}

/* Reads a whole small file into buf (NUL-terminated). */
static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/*
 * The parent draws jitter first, then forks two children that retry: their
 * waits must differ (without a re-seed they continue the parent's
 * sequence in lock-step).  Full jitter draws from U(0, v): three equal
 * draws in a row are all but impossible with independent seeds.
 */
static void test_fork_children_reseed(void **state)
{
	char *policy = t_policy("version: 1\ndefaults:\n  attempts: 4\n"
	    "  backoff:\n    base: 100ms\n    cap: 1s\n    jitter: full\n");
	char logf[] = "/tmp/rs-harm-log-XXXXXX", log[65536];
	char env_file[64];
	const char *env[] = { env_file, "RESOLUTE_LOG_FORMAT=json", NULL };
	struct t_run r;
	long a[8], b[8], c0, c1;

	(void)state;
	close(mkstemp(logf));
	snprintf(env_file, sizeof(env_file), "RESOLUTE_LOG_FILE=%s", logf);
	h_run(&r, policy, env, "forkjitter", h_refused_port(), NULL);
	slurp(logf, log, sizeof(log));
	c0 = h_step(&r, "child0").value;
	c1 = h_step(&r, "child1").value;
	int na = waits_of(log, c0, a, 8), nb = waits_of(log, c1, b, 8);

	H_EXPECT(&r, na == 3 && nb == 3, "waits: %d and %d, want 3 each\n%s",
	    na, nb, log);
	H_EXPECT(&r, a[0] != b[0] || a[1] != b[1] || a[2] != b[2],
	    "children %ld and %ld waited alike: %ld %ld %ld\n%s", c0, c1,
	    a[0], a[1], a[2], log);
	unlink(logf);
	unlink(policy);
	free(policy);
}

/*
 * A vfork child shares the parent's memory until it execs: its close()
 * and dup2() on a managed socket's number must not touch the parent's
 * table.  Nor may posix_spawn's file actions.  The parent's socket still
 * has its read timeout afterwards.
 */
static void test_vfork_spawn_children_leave_state(void **state)
{
	const char *scs[] = { "vforkclose", "spawnclose" };
	char *policy = t_policy("version: 1\ndefaults:\n  read_timeout: 300ms\n");
	struct t_run r;

	(void)state;
	if (!have_io)
		skip();
	for (int i = 0; i < 2; i++) {
		h_run(&r, policy, NULL, scs[i], silent.port, NULL);
		h_expect(&r, "read", "ETIMEDOUT", -1, 300, 300 + t_slack_ms());
	}
	unlink(policy);
	free(policy);
}

/*
 * Children made by fork, vfork and posix_spawn, and a shell that execs
 * the client, all inherit the library: their connects are retried.
 */
static void test_children_get_retries(void **state)
{
	const char *hows[] = { "fork", "vfork", "spawn" };
	char *policy = t_policy("version: 1\ndefaults:\n  attempts: 3\n"
	    "  backoff:\n    base: 20ms\n");
	char port[16], cmd[4200];
	struct t_run r;

	(void)state;
	snprintf(port, sizeof(port), "%d", h_refused_port());
	for (int i = 0; i < 3; i++) {
		h_run(&r, policy, NULL, "child", 0, hows[i], t_client(),
		    "127.0.0.1", port, "connect", NULL);
		H_EXPECT(&r, strstr(r.out, "attempt 3/3") &&
		    h_step(&r, "child").value == 1, "%s: no retries", hows[i]);
	}
	snprintf(cmd, sizeof(cmd), "exec %s 127.0.0.1 %s connect", t_client(),
	    port);
	h_run(&r, policy, NULL, "child", 0, "spawn", "/bin/sh", "-c", cmd,
	    NULL);
	H_EXPECT(&r, strstr(r.out, "attempt 3/3"), "sh -c exec: no retries");
	unlink(policy);
	free(policy);
}

/*
 * 64 threads, three rounds each, against a refused port, a late listener
 * (1.5 s) and a silent peer (connect, dup, close, read with a 300 ms
 * timeout where the build has them): every outcome as expected, no
 * deadlock (harmprog's 60 s alarm), no crash.  The retry budget is opened
 * wide: this storm is the point here, not what the budget makes of it.
 */
static void test_threads_against_faulty_servers(void **state)
{
	struct t_peer late;
	int refused = h_refused_port();
	char yaml[640], p0[16], p1[16], p2[16];
	const char *env[] = { have_io ? "HARM_READ=1" : NULL, NULL };
	struct t_run r;

	(void)state;
	assert_int_equal(t_peer_start(&late, "late", "-d", "1500", NULL), 0);
	snprintf(yaml, sizeof(yaml), "version: 1\ndefaults:\n"
	    "  read_timeout: 300ms\n  attempts: 8\n  connect_budget: 20s\n"
	    "  retry_budget:\n    ratio: 1000\n    min_per_second: 1000000\n"
	    "    scope: process\n"
	    "  backoff:\n    base: 100ms\n    cap: 800ms\nhosts:\n"
	    "  - match: 127.0.0.1:%d\n    attempts: 3\n    backoff:\n"
	    "      base: 20ms\n", refused);
	char *policy = t_policy(yaml);

	snprintf(p0, sizeof(p0), "%d", refused);
	snprintf(p1, sizeof(p1), "%d", late.port);
	snprintf(p2, sizeof(p2), "%d", silent.port);
	h_run(&r, policy, env, "threads", 0, "64", p0, p1, p2, NULL);
	t_peer_stop(&late);
	H_EXPECT(&r, r.status == 0, "exit %d", r.status);
	h_expect(&r, "refused", "ok", 22 * 3, 0, 30000);
	h_expect(&r, "late", "ok", 21 * 3, 0, 30000);
	h_expect(&r, "silent", "ok", 21 * 3, 0, 30000);
	h_expect(&r, "wrong", "ok", 0, 0, 30000);
	unlink(policy);
	free(policy);
}

/*
 * A 5 ms interval timer whose handler writes and reads a pipe while the
 * main thread retries a refused connect (4 attempts, waits of at least
 * 50, 100 and 200 ms): the handler's I/O works and keeps errno, EINTR
 * ends the blocking connect as the kernel would, and connecting again
 * resumes the same logical connect, which ends after exactly 4 attempts.
 */
static void test_signal_handlers_during_retries(void **state)
{
	char *policy = t_policy("version: 1\ndefaults:\n  attempts: 4\n"
	    "  backoff:\n    base: 100ms\n    jitter: equal\n");
	struct t_run r;

	(void)state;
	h_run(&r, policy, NULL, "signals", h_refused_port(), NULL);
	h_expect(&r, "connect", "ECONNREFUSED", -ECONNREFUSED, 350,
	    2000 + t_slack_ms());
	struct h_step handled = h_step(&r, "handled");

	H_EXPECT(&r, handled.found && handled.value >= 20, "handler ran %ld",
	    handled.value);
	h_expect(&r, "handler_bad", "ok", 0, 0, 10000);
	H_EXPECT(&r, strstr(r.out, "attempt 4/4") && !strstr(r.out, "/5") &&
	    !strstr(r.out, "attempt 5"), "not exactly 4 attempts");
	unlink(policy);
	free(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_children_reseed),
		cmocka_unit_test(test_vfork_spawn_children_leave_state),
		cmocka_unit_test(test_children_get_retries),
		cmocka_unit_test(test_threads_against_faulty_servers),
		cmocka_unit_test(test_signal_handlers_during_retries),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
