/* SPDX-License-Identifier: MIT */
/*
 * test_io_names.c - read and write timeouts (SPEC §6) through each of the
 * other names a program reads and writes a socket with: recvfrom (with
 * and without an address), readv, recvmsg (with and without room for
 * control data), sendto, writev and sendmsg.  Each has a steady path in
 * the exported name (interpose_io.c) for a blocking call under the
 * kernel's timer and for a non-blocking call that only records activity;
 * the cases below hold whichever path a call takes.  rsclient checks on
 * every call that succeeds that errno is kept and that the name, control
 * length and flags it returns are as bare.
 */
#include "integration/io_steps.h"

#define POLICY_2S \
	"version: 1\n" \
	"defaults:\n" \
	"  read_timeout: 2s\n"

static const char *const reads[] = {
	"via:recvfrom", "via:recvfromsa", "via:readv", "via:recvmsg",
	"via:recvmsgctl", NULL,
};
static const char *const writes[] = {
	"via:send", "via:sendto", "via:writev", "via:sendmsg", NULL,
};

/*
 * Half a response, then silence: the reads after the first (which puts
 * our timer in the kernel) are steady ones; the last one's kernel timer
 * ends early, and the exact wait makes it ETIMEDOUT at read_timeout.
 */
static void test_blocking_read_times_out(void **state)
{
	(void)state;
	for (int i = 0; reads[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "stall", "-b", "100000", "connect",
		    "http", reads[i], "readall", NULL);
		assert_failed_in(&r, "readall", "ETIMEDOUT",
		    find_step(&r, "http").ms, 800);
	}
}

/*
 * A steady read whose kernel timer ends before data comes (at 1.85 s,
 * read_timeout 2 s): the wait after it gets the data, the call returns it
 * with errno and the header as bare.
 */
static void test_steady_read_outlives_kernel_timer(void **state)
{
	(void)state;
	for (int i = 0; reads[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_2S, "echo", NULL, NULL, "connect",
		    "later:1850:b", "send:a", "recv", reads[i], "read", NULL);
		struct t_step s = find_step(&r, "read");

		if (strcmp(s.result, "ok") || s.value != 1 || s.ms < 1850 ||
		    s.ms >= 1850 + slack()) {
			t_show(&r);
			fail_msg("%s: read %s %ld after %lld ms", reads[i],
			    s.result, s.value, s.ms);
		}
	}
}

/*
 * Non-blocking: a wait that read_timeout ended leaves one ETIMEDOUT for
 * the next read through any name, and the read after it is EAGAIN.
 */
static void test_nonblocking_read_pending(void **state)
{
	(void)state;
	for (int i = 0; reads[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "silent", NULL, NULL, "connect",
		    reads[i], "nonblock", "pollin:2000", "?read", "?readall",
		    NULL);
		assert_failed_in(&r, "pollin:2000", "ok",
		    find_step(&r, "nonblock").ms, 800);
		assert_failed_in(&r, "?read", "ETIMEDOUT",
		    find_step(&r, "pollin:2000").ms, 0);
		assert_failed_in(&r, "?readall", "EAGAIN",
		    find_step(&r, "?read").ms, 0);
	}
}

/* Bytes a non-blocking read got through any name restart read_timeout. */
static void test_nonblocking_read_is_activity(void **state)
{
	(void)state;
	for (int i = 0; reads[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "stall", "-b", "1000", "connect",
		    reads[i], "nonblock", "http", "sleep:500", "read",
		    "pollin:2000", NULL);
		assert_true(find_step(&r, "read").value > 0);
		assert_failed_in(&r, "pollin:2000", "ok",
		    find_step(&r, "read").ms, 800);
	}
}

/*
 * MSG_WAITALL through recvfrom and recvmsg takes the long way, right
 * after a read that put our timer in the kernel too: on a stalled stream
 * it returns what came once nothing moved for read_timeout (not when the
 * kernel's timer, which is early, ends it), and the next receive reports
 * the timeout at once.
 */
static void test_waitall_partial_then_timeout(void **state)
{
	static const char *const names[] = { "via:recvfrom", "via:recvmsg",
		"via:recvmsgctl", NULL };

	(void)state;
	for (int i = 0; names[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "stall", "-b", "1000", "connect",
		    "http", "recvn:10", names[i], "waitall:65536", "recv",
		    NULL);
		struct t_step s = find_step(&r, "waitall:65536");
		long long http = find_step(&r, "http").ms;

		if (strcmp(s.result, "ok") || s.value <= 400 ||
		    s.value >= 1000 || s.ms - http < 800 ||
		    s.ms - http >= 800 + slack()) {
			t_show(&r);
			fail_msg("%s: waitall %s %ld after %lld ms", names[i],
			    s.result, s.value, s.ms - http);
		}
		assert_failed_in(&r, "recv", "ETIMEDOUT", s.ms, 0);
	}
}

/* MSG_PEEK through recvfrom and recvmsg leaves the data for the read. */
static void test_peek_keeps_data(void **state)
{
	static const char *const names[] = { "via:recvfromsa", "via:recvmsg",
		NULL };

	(void)state;
	for (int i = 0; names[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "slow", "-d", "300", "connect",
		    "http", names[i], "peek:10", "peekall:50", "waitall:50",
		    NULL);
		struct t_step p = find_step(&r, "peek:10");

		assert_string_equal(p.result, "ok");
		assert_int_equal(p.value, 10);
		assert_true(p.ms >= 300 && p.ms < 300 + slack());
		assert_int_equal(find_step(&r, "peekall:50").value, 50);
		assert_int_equal(find_step(&r, "waitall:50").value, 50);
	}
}

/*
 * A peer that never reads: blocking writes through each name make some
 * progress, then a short count once nothing moved for write_timeout, and
 * the next write fails with ETIMEDOUT at once.
 */
static void test_blocking_write_times_out(void **state)
{
	(void)state;
	for (int i = 0; writes[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "sink", NULL, NULL, "connect",
		    writes[i], "sendmany:67108864", "send:x", NULL);
		struct t_step s = find_step(&r, "sendmany:67108864");

		if (strcmp(s.result, "ok") || s.value <= 0 ||
		    s.value >= 67108864 || s.ms < 800 ||
		    s.ms >= 800 + slack()) {
			t_show(&r);
			fail_msg("%s: sendmany %s %ld after %lld ms", writes[i],
			    s.result, s.value, s.ms);
		}
		assert_failed_in(&r, "send:x", "ETIMEDOUT", s.ms, 0);
	}
}

/*
 * Non-blocking writes through each name fill the buffers (EAGAIN ends
 * sendmany), a wait for room that write_timeout ends leaves ETIMEDOUT
 * for the next write.
 */
static void test_nonblocking_write_pending(void **state)
{
	(void)state;
	for (int i = 0; writes[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "sink", NULL, NULL, "connect",
		    writes[i], "nonblock", "sendmany:67108864", "poll:2000",
		    "?send:x", NULL);
		struct t_step s = find_step(&r, "sendmany:67108864");

		assert_string_equal(s.result, "ok");
		assert_true(s.value > 0 && s.value < 67108864);
		assert_failed_in(&r, "poll:2000", "ok", s.ms, 800);
		assert_failed_in(&r, "?send:x", "ETIMEDOUT",
		    find_step(&r, "poll:2000").ms, 0);
	}
}

/*
 * readv and writev of a negative count fail with EINVAL, as bare, on the
 * long way too (a late read, a write), which makes them a recvmsg or
 * sendmsg: a header of no elements would move nothing and return 0, which
 * a reader takes for end of file.
 */
static void test_bad_count_einval(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "connect", "http",
	    "sleep:50", "?readvbad", "?writevbad", NULL);
	assert_string_equal(find_step(&r, "?readvbad").result, "EINVAL");
	assert_string_equal(find_step(&r, "?writevbad").result, "EINVAL");
}

/*
 * A read from the socket's error queue (MSG_ERRQUEUE) never blocks: with
 * nothing queued it fails with EAGAIN at once, as bare, whether it comes
 * right after the last activity (the steady path) or later (the long
 * way); it is not the stream's activity, so the read after it still
 * times out read_timeout after the request.
 */
static void test_errqueue_read_never_waits(void **state)
{
	static const char *const names[] = {
		"via:recv", "via:recvfrom", "via:recvfromsa", "via:recvmsg",
		"via:recvmsgctl", NULL,
	};

	(void)state;
	for (int i = 0; names[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "silent", NULL, NULL, "connect",
		    "http", names[i], "?errqueue:64", "sleep:50",
		    "?errqueue:65", "recv", NULL);
		assert_failed_in(&r, "?errqueue:64", "EAGAIN",
		    find_step(&r, names[i]).ms, 0);
		assert_failed_in(&r, "?errqueue:65", "EAGAIN",
		    find_step(&r, "sleep:50").ms, 0);
		assert_failed_in(&r, "recv", "ETIMEDOUT",
		    find_step(&r, "http").ms, 800);
	}
}

/*
 * A read that finds a message on the error queue (a send time stamp) is
 * not the stream's activity either, by any read name: the read after it
 * still times out read_timeout after the request (regression: recvmmsg
 * recorded it, so that read timed out 500 ms late).
 */
static void test_errqueue_message_is_not_activity(void **state)
{
	static const char *const names[] = {
		"via:recv", "via:recvfrom", "via:recvmmsg", NULL,
	};

	(void)state;
	for (int i = 0; names[i]; i++) {
		struct t_run r;

		run_client(&r, POLICY_800, "silent", NULL, NULL, "connect",
		    "txstamp", "http", "sleep:500", names[i], "errqueue:64",
		    "via:recv", "recv", NULL);
		struct t_step q = find_step(&r, "errqueue:64");

		if (strcmp(q.result, "ok") || q.value <= 0)
			t_show(&r);
		assert_string_equal(q.result, "ok");
		assert_true(q.value > 0);
		assert_failed_in(&r, "recv", "ETIMEDOUT",
		    find_step(&r, "http").ms, 800);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocking_read_times_out),
		cmocka_unit_test(test_steady_read_outlives_kernel_timer),
		cmocka_unit_test(test_nonblocking_read_pending),
		cmocka_unit_test(test_nonblocking_read_is_activity),
		cmocka_unit_test(test_waitall_partial_then_timeout),
		cmocka_unit_test(test_peek_keeps_data),
		cmocka_unit_test(test_blocking_write_times_out),
		cmocka_unit_test(test_nonblocking_write_pending),
		cmocka_unit_test(test_bad_count_einval),
		cmocka_unit_test(test_errqueue_read_never_waits),
		cmocka_unit_test(test_errqueue_message_is_not_activity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
