/* SPDX-License-Identifier: MIT */
/*
 * test_epoll.c - epoll behaviour that event loops rely on, under the
 * library: a connect's completion reaches the program in the wait in which
 * the kernel reports it, whatever else is ready (level-triggered, EPOLLET
 * and EPOLLONESHOT alike), and once (an edge never twice: the waits after
 * it print the same as bare); and read timeouts of thousands of silent
 * sockets in one epoll set each fire on time, none early.
 *
 * Runs build/itests/epoll_client and epoll_edges under the library (the
 * latter bare too, to compare); asserts what they printed.  Timing
 * windows are wide (>= expected, < expected + slack).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/resource.h>

#include "integration/peer.h"

static const char *client(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/itests/epoll_client", t_build());
	return path;
}

/* The first wait reports the client writable together with the peer. */
static void completion_in_same_wait(const char *mode)
{
	char *pol = t_policy("version: 1\n");
	struct t_run r;
	char *argv[] = { (char *)client(), "both", (char *)mode, NULL };

	assert_int_equal(t_run(&r, pol, NULL, argv), 0);
	if (r.status != 0 || !strstr(r.out, "first n=2 client=OUT peer=OUT\n"))
		t_show(&r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "first n=2 client=OUT peer=OUT\n"));
	free(pol);
}

static void test_connect_completion_reported_in_same_wait_lt(void **state)
{
	(void)state;
	completion_in_same_wait("lt");
}

static void test_connect_completion_reported_in_same_wait_et(void **state)
{
	(void)state;
	completion_in_same_wait("et");
}

static void test_connect_completion_reported_in_same_wait_oneshot(
    void **state)
{
	(void)state;
	completion_in_same_wait("oneshot");
}

/*
 * Runs epoll_edges MODE bare and under the library with policy yaml, and
 * asserts that both printed the same waits; returns the library's output
 * (malloc) for further checks.
 */
static char *edges_as_bare(const char *mode, const char *yaml)
{
	static char path[4096];
	char *pol = t_policy(yaml);
	struct t_run *bare = malloc(sizeof(*bare)), *lib = malloc(sizeof(*lib));
	const char *env[] = { "LD_PRELOAD=", NULL };
	char *argv[] = { path, (char *)mode, NULL };

	snprintf(path, sizeof(path), "%s/itests/epoll_edges", t_build());
	assert_int_equal(t_run(bare, NULL, env, argv), 0);
	assert_int_equal(t_run(lib, pol, NULL, argv), 0);
	if (bare->status || lib->status || strcmp(bare->out, lib->out)) {
		fprintf(stderr, "bare:\n");
		t_show(bare);
		fprintf(stderr, "under the library:\n");
		t_show(lib);
	}
	assert_int_equal(bare->status, 0);
	assert_int_equal(lib->status, 0);
	assert_string_equal(lib->out, bare->out);
	char *out = strdup(lib->out);

	free(bare);
	free(lib);
	free(pol);
	return out;
}

/*
 * CPython's test_epoll.test_control_and_wait: the connect's completion is
 * one edge, reported by the first wait and not by the second (the library
 * put its registration back with EPOLL_CTL_MOD, which re-armed it).
 */
static void test_connect_edge_reported_once_et(void **state)
{
	(void)state;
	char *out = edges_as_bare("et", "version: 1\n");

	assert_non_null(strstr(out, "w1 n=2 client=OUT peer=OUT\n"
	    "w2 n=0 client=- peer=-\n"));
	free(out);
}

/* The same, the client asking only for EPOLLIN, and a byte that came
   with the connection. */
static void test_connect_edge_reported_once_et_in(void **state)
{
	(void)state;
	char *out = edges_as_bare("etin", "version: 1\n");

	assert_non_null(strstr(out, "w1 n=2 client=IN peer=OUT\n"
	    "w2 n=0 client=- peer=-\n"));
	free(out);
}

/* Level-triggered and one-shot waits after a connect, as bare. */
static void test_connect_edges_lt_oneshot_as_bare(void **state)
{
	(void)state;
	free(edges_as_bare("lt", "version: 1\n"));
	free(edges_as_bare("oneshot", "version: 1\n"));
}

/* Edge-triggered under read and write timeouts (the records keep timers)
   as bare. */
static void test_connect_edges_with_timeouts_as_bare(void **state)
{
	static const char yaml[] = "version: 1\ndefaults:\n"
	    "  read_timeout: 5s\n  write_timeout: 5s\n";

	(void)state;
	free(edges_as_bare("et", yaml));
	free(edges_as_bare("oneshot", yaml));
}

/*
 * 10,000 silent sockets (fewer when RLIMIT_NOFILE's hard limit cannot
 * hold them) in one epoll set under read_timeout 1s: every one is
 * reported, its read fails with ETIMEDOUT, none before 1 s after its
 * connect, the last well within the window.
 */
static void test_many_silent_sockets_time_out_on_time(void **state)
{
	struct rlimit rl;
	long n = 10000;
	char nbuf[16], line[160];
	struct t_run *r = malloc(sizeof(*r));

	(void)state;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < (rlim_t)n + 64)
		n = (long)rl.rlim_max - 64;
	snprintf(nbuf, sizeof(nbuf), "%ld", n);
	char *pol = t_policy("version: 1\ndefaults:\n  read_timeout: 1s\n");
	char *argv[] = { (char *)client(), "silent", nbuf, "1000", NULL };
	/* One warning per timeout would be 10,000 lines. */
	const char *const env[] = { "RESOLUTE_LOG=error", NULL };

	assert_int_equal(t_run(r, pol, env, argv), 0);
	long rep = -1, early = -1, tmo = -1;
	long long lo = -1, hi = -1;
	const char *s = strstr(r->out, "silent n=");

	if (!s || sscanf(s, "silent n=%*d reported=%ld early=%ld etimedout=%ld "
		"min_ms=%lld max_ms=%lld", &rep, &early, &tmo, &lo, &hi) != 5)
		t_show(r);
	snprintf(line, sizeof(line), "n=%ld reported=%ld early=%ld "
	    "etimedout=%ld min=%lld max=%lld", n, rep, early, tmo, lo, hi);
	print_message("%s\n", line);
	assert_int_equal(r->status, 0);
	assert_int_equal(rep, n);
	assert_int_equal(early, 0);
	assert_int_equal(tmo, n);
	assert_true(lo >= 1000);
	assert_true(hi < 1000 + 2000 + t_slack_ms());
	free(pol);
	free(r);
}

/*
 * Standard error is a pipe that is full and never read: the read timeout's
 * warning cannot be written, and must not block the program, which gets
 * its ETIMEDOUT and exits on time.
 */
static void test_log_line_never_blocks_on_full_stderr(void **state)
{
	char *pol = t_policy("version: 1\ndefaults:\n  read_timeout: 300ms\n");
	char out[] = "/tmp/rs-test-out-XXXXXX";
	int p[2], o = mkstemp(out);
	char fill[4096] = { 0 };

	(void)state;
	assert_true(o >= 0 && pipe2(p, O_NONBLOCK) == 0);
	while (write(p[1], fill, sizeof(fill)) > 0)
		;
	fcntl(p[1], F_SETFL, 0);
	long long t0 = t_now_ms();
	pid_t pid = fork();

	if (pid == 0) {
		dup2(o, 1);
		dup2(p[1], 2);
		setenv("LD_PRELOAD", t_lib(), 1);
		setenv("RESOLUTE_POLICY", pol, 1);
		execl(client(), client(), "silent", "3", "300", (char *)NULL);
		_exit(127);
	}
	int st = 0;

	for (int i = 0; i < 100 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(50000);
	long long ms = t_now_ms() - t0;

	if (waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fail_msg("the program blocked on its log line for %lld ms", ms);
	}
	char buf[256] = "";
	ssize_t n = pread(o, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	print_message("%s", buf);
	assert_non_null(strstr(buf, "reported=3 early=0 etimedout=3"));
	close(p[0]);
	close(p[1]);
	close(o);
	unlink(out);
	free(pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connect_completion_reported_in_same_wait_lt),
		cmocka_unit_test(test_connect_completion_reported_in_same_wait_et),
		cmocka_unit_test(
		    test_connect_completion_reported_in_same_wait_oneshot),
		cmocka_unit_test(test_connect_edge_reported_once_et),
		cmocka_unit_test(test_connect_edge_reported_once_et_in),
		cmocka_unit_test(test_connect_edges_lt_oneshot_as_bare),
		cmocka_unit_test(test_connect_edges_with_timeouts_as_bare),
		cmocka_unit_test(test_many_silent_sockets_time_out_on_time),
		cmocka_unit_test(test_log_line_never_blocks_on_full_stderr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
