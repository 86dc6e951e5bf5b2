/* SPDX-License-Identifier: MIT */
/*
 * test_connect_outcome.c - a program learns the outcome of its connect as
 * the kernel would tell it (SPEC 5), whichever way it asks: the connect()
 * return, connect() again, SO_ERROR, poll/epoll/select, a read or a write.
 *
 * Runs outcome_client (see there) under the library and, where the kernel's
 * answer comes fast enough, bare, and compares the lines it printed:
 *   - the last attempt timed out: ETIMEDOUT, exactly once, and no stale
 *     ECONNRESET left by the library's dissolving of the attempt;
 *   - the server sent data, then reset: the program gets the data, then
 *     the reset, and no retry happens; a reset with no data is retried;
 *   - the program looks at an established connection only after
 *     connect_timeout: it is connected, not timed out and retried;
 *   - SO_ERROR asked during the retries does not eat the library's error.
 * The blackhole cases need the fault namespace of scripts/netns.sh.
 */
#include "integration/test_connect.h"

#include <fcntl.h>

static const char policy_yaml[] = "version: 1\ndefaults:\n" CT_BUDGET
    "  connect_timeout: 200ms\n  attempts: 3\n"
    "  backoff: {base: 50ms, cap: 1s, multiplier: 2, jitter: none}\n";

static char *policy;

/*
 * Runs outcome_client MODE [HOST PORT], bare or under the library, and
 * copies the "NAME=VALUE" lines it printed (not the library's log lines,
 * not elapsed_ms) into res, space-separated.
 */
static void client(struct t_run *r, bool bare, const char *mode,
    const char *host, char *res, size_t len)
{
	char exe[4096];
	char *argv[] = { exe, (char *)mode, (char *)host, "9", NULL };
	const char *env[] = { bare ? "LD_PRELOAD=" : "RESOLUTE_LOG=info",
		NULL };
	size_t n = 0;

	snprintf(exe, sizeof(exe), "%s/itests/outcome_client", t_build());
	if (!host)
		argv[2] = NULL;
	assert_int_equal(t_run(r, bare ? NULL : policy, env, argv), 0);
	res[0] = '\0';
	for (const char *l = r->out; *l && n + 1 < len;) {
		const char *end = strchrnul(l, '\n');
		int k = (int)(end - l);

		if (strncmp(l, "resolute[", 9) != 0 && memchr(l, '=', k) &&
		    strncmp(l, "elapsed_ms=", 11) != 0)
			n += (size_t)snprintf(res + n, len - n, "%s%.*s",
			    n ? " " : "", k, l);
		l = *end ? end + 1 : end;
	}
}

/* Asserts that the program under the library printed want. */
static void expect(const char *mode, const char *host, const char *want)
{
	struct t_run r;
	char res[1024];

	client(&r, false, mode, host, res, sizeof(res));
	if (strcmp(res, want) != 0) {
		t_show(&r);
		fail_msg("%s: got \"%s\", expected \"%s\"", mode, res, want);
	}
}

/*
 * Asserts that the program printed the same bare and under the library,
 * and that this contains want; the library must not have retried.
 */
static void same_as_bare(const char *mode, const char *want)
{
	struct t_run bare, lib;
	char b[1024], l[1024];

	client(&bare, true, mode, NULL, b, sizeof(b));
	client(&lib, false, mode, NULL, l, sizeof(l));
	if (strcmp(b, l) != 0 || !strstr(l, want) ||
	    strstr(lib.out, "retrying")) {
		t_show(&lib);
		fail_msg("%s: under the library \"%s\", bare \"%s\" "
		    "(expected to contain \"%s\")", mode, l, b, want);
	}
}

/* ---- the last attempt timed out (blackhole) ---- */

#define SKIP_WITHOUT_NETNS()                                               \
	do {                                                               \
		if (!t_netns()) {                                          \
			print_message("needs scripts/netns.sh\n");       \
			skip();                                            \
		}                                                          \
	} while (0)

static void test_timeout_reported_once_by_connect_again(void **state)
{
	(void)state;
	SKIP_WITHOUT_NETNS();
	expect("hole-again", T_BLACKHOLE,
	    "pollout=1 again=ETIMEDOUT soerror=0");
}

static void test_timeout_reported_once_by_so_error(void **state)
{
	(void)state;
	SKIP_WITHOUT_NETNS();
	expect("hole-soerror", T_BLACKHOLE,
	    "pollout=1 soerror1=ETIMEDOUT soerror=0");
}

static void test_timeout_reported_once_by_read(void **state)
{
	(void)state;
	SKIP_WITHOUT_NETNS();
	expect("hole-read", T_BLACKHOLE, "pollout=1 read=ETIMEDOUT soerror=0");
}

static void test_timeout_reported_once_by_write(void **state)
{
	(void)state;
	SKIP_WITHOUT_NETNS();
	expect("hole-write", T_BLACKHOLE,
	    "pollout=1 write=ETIMEDOUT soerror=0");
}

static void test_timeout_reported_once_by_blocking_connect(void **state)
{
	(void)state;
	SKIP_WITHOUT_NETNS();
	expect("hole-block", T_BLACKHOLE, "connect=ETIMEDOUT soerror=0");
}

/* Sets net.ipv4.tcp_syn_retries of this (private) namespace. */
static void syn_retries(const char *v, char *old, size_t len)
{
	int fd = open("/proc/sys/net/ipv4/tcp_syn_retries", O_RDWR);
	ssize_t n;

	assert_true(fd >= 0);
	if (old) {
		n = read(fd, old, len - 1);
		old[n > 0 ? n : 0] = '\0';
		lseek(fd, 0, SEEK_SET);
	}
	assert_true(write(fd, v, strlen(v)) == (ssize_t)strlen(v));
	close(fd);
}

/*
 * The expectations above are the kernel's own: with one SYN retry the
 * kernel gives up after 3 s, and the bare program prints the same lines.
 */
static void test_timeout_expectations_are_the_kernels(void **state)
{
	static const char *const cases[][2] = {
		{ "hole-again", "pollout=1 again=ETIMEDOUT soerror=0" },
		{ "hole-read", "pollout=1 read=ETIMEDOUT soerror=0" },
	};
	char old[16], res[1024];
	struct t_run r;

	(void)state;
	SKIP_WITHOUT_NETNS();
	syn_retries("1", old, sizeof(old));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		client(&r, true, cases[i][0], T_BLACKHOLE, res, sizeof(res));
		if (strcmp(res, cases[i][1]) != 0) {
			syn_retries(old, NULL, 0);
			t_show(&r);
			fail_msg("bare %s: \"%s\"", cases[i][0], res);
		}
	}
	syn_retries(old, NULL, 0);
}

/* ---- the server sent data, then reset ---- */

static void test_data_then_reset_kept_for_read(void **state)
{
	(void)state;
	same_as_bare("data-reset-read",
	    "pollout=1 read=HELLO read2=ECONNRESET more_accepts=0");
}

static void test_data_then_reset_kept_for_so_error(void **state)
{
	(void)state;
	same_as_bare("data-reset-soerror",
	    "soerror=ECONNRESET read=HELLO read2=EOF more_accepts=0");
}

static void test_data_then_reset_kept_for_connect_again(void **state)
{
	(void)state;
	same_as_bare("data-reset-again", "again=ECONNRESET");
}

static void test_data_then_reset_kept_without_wait(void **state)
{
	(void)state;
	same_as_bare("data-reset-nopoll",
	    "read=HELLO read2=ECONNRESET more_accepts=0");
}

/*
 * The first wait reports every event the kernel reports for the socket,
 * bare and under the library alike: data and a reset came with the
 * connection (readable, writable, in error, hung up), not POLLOUT alone.
 */
static const char *const ev_modes[] = { "poll", "poll-both", "epoll",
	"epoll-both", "select", "select-both" };

static void test_data_then_reset_events_as_bare(void **state)
{
	char mode[64];

	(void)state;
	for (size_t i = 0; i < sizeof(ev_modes) / sizeof(ev_modes[0]); i++) {
		snprintf(mode, sizeof(mode), "data-reset-ev-%s", ev_modes[i]);
		same_as_bare(mode, "read=HELLO read2=ECONNRESET");
	}
}

/*
 * The same for a connect refused at every attempt: the library's
 * failure, after its retries, reports what the kernel's does.
 */
static void test_refused_events_as_bare(void **state)
{
	struct t_run bare, lib;
	char b[1024], l[1024], mode[64];

	(void)state;
	for (size_t i = 0; i < sizeof(ev_modes) / sizeof(ev_modes[0]); i++) {
		snprintf(mode, sizeof(mode), "refused-ev-%s", ev_modes[i]);
		client(&bare, true, mode, NULL, b, sizeof(b));
		client(&lib, false, mode, NULL, l, sizeof(l));
		if (strcmp(b, l) != 0 || !strstr(l, "soerror=ECONNREFUSED")) {
			t_show(&lib);
			fail_msg("%s: under the library \"%s\", bare \"%s\"",
			    mode, l, b);
		}
	}
}

/* A server that accepts and resets at once is still retried. */
static void test_reset_without_data_retried(void **state)
{
	(void)state;
	expect("reset-nodata", NULL, "pollout=1 soerror=0 read=HELLO");
}

/* ---- an established connection looked at late ---- */

#define LATE "write=4 server_read=PING more_accepts=0"

static void test_connected_found_late_by_poll(void **state)
{
	(void)state;
	same_as_bare("late-poll", "pollout=1 " LATE);
}

static void test_connected_found_late_by_connect_again(void **state)
{
	(void)state;
	same_as_bare("late-again", "again=0 " LATE);
}

static void test_connected_found_late_by_so_error(void **state)
{
	(void)state;
	same_as_bare("late-soerror", "soerror=0 pollout=1 " LATE);
}

static void test_connected_found_late_by_read(void **state)
{
	(void)state;
	same_as_bare("late-read", "read=EAGAIN pollout=1 " LATE);
}

static void test_connected_found_late_by_write(void **state)
{
	(void)state;
	same_as_bare("late-write", LATE);
}

static void test_connected_found_late_by_epoll(void **state)
{
	(void)state;
	same_as_bare("late-epoll", "epollout=1 " LATE);
}

static void test_connected_found_late_by_select(void **state)
{
	(void)state;
	same_as_bare("late-select", "selectout=1 " LATE);
}

/*
 * SO_ERROR asked while the library retries a refused connect says 0 (in
 * progress) without taking the error the library needs: all three
 * attempts run and the program then gets ECONNREFUSED, once.
 */
static void test_so_error_during_retries_keeps_them(void **state)
{
	struct t_run r;
	char res[1024];

	(void)state;
	client(&r, false, "refused-soerror", NULL, res, sizeof(res));
	CT_CHECK(&r, strcmp(res, "soerror1=0 pollout=1 soerror=ECONNREFUSED "
	    "soerror2=0") == 0);
	CT_CHECK(&r, ct_count(r.out, "connection refused; retrying") == 2);
	CT_CHECK(&r, ct_count(r.out, "timed out") == 0);
}

static int setup(void **state)
{
	(void)state;
	policy = t_policy(policy_yaml);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_reported_once_by_connect_again),
		cmocka_unit_test(test_timeout_reported_once_by_so_error),
		cmocka_unit_test(test_timeout_reported_once_by_read),
		cmocka_unit_test(test_timeout_reported_once_by_write),
		cmocka_unit_test(test_timeout_reported_once_by_blocking_connect),
		cmocka_unit_test(test_timeout_expectations_are_the_kernels),
		cmocka_unit_test(test_data_then_reset_kept_for_read),
		cmocka_unit_test(test_data_then_reset_kept_for_so_error),
		cmocka_unit_test(test_data_then_reset_kept_for_connect_again),
		cmocka_unit_test(test_data_then_reset_kept_without_wait),
		cmocka_unit_test(test_data_then_reset_events_as_bare),
		cmocka_unit_test(test_refused_events_as_bare),
		cmocka_unit_test(test_reset_without_data_retried),
		cmocka_unit_test(test_connected_found_late_by_poll),
		cmocka_unit_test(test_connected_found_late_by_connect_again),
		cmocka_unit_test(test_connected_found_late_by_so_error),
		cmocka_unit_test(test_connected_found_late_by_read),
		cmocka_unit_test(test_connected_found_late_by_write),
		cmocka_unit_test(test_connected_found_late_by_epoll),
		cmocka_unit_test(test_connected_found_late_by_select),
		cmocka_unit_test(test_so_error_during_retries_keeps_them),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
