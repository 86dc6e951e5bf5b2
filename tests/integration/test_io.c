/* SPDX-License-Identifier: MIT */
/*
 * test_io.c - read and write timeouts (SPEC §6) with the peer and rsclient.
 *
 * Each case runs rsclient under the library against a misbehaving peer and
 * asserts both the outcome of each step and how long it took: a timeout
 * must come no earlier than read_timeout (write_timeout) and not much
 * later; data, end of file and the socket calls' own semantics must be
 * unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "integration/io_steps.h"

/* run_client_v() under a process deadline deadline_in_ms away. */
static void run_client_deadline(struct t_run *r, const char *yaml,
    long long deadline_in_ms, const char *mode, ...)
{
	va_list ap;

	va_start(ap, mode);
	run_client_v(r, yaml, deadline_in_ms, mode, NULL, NULL, ap);
	va_end(ap);
}

static void test_silent_recv_times_out(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "connect", "recv",
	    NULL);
	assert_failed_in(&r, "recv", "ETIMEDOUT", find_step(&r, "connect").ms,
	    800);
	assert_non_null(strstr(r.out, "read from 127.0.0.1:"));
}

static void test_silent_read_times_out(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "connect", "http",
	    "read", NULL);
	assert_failed_in(&r, "read", "ETIMEDOUT", find_step(&r, "http").ms,
	    800);
}

/*
 * A process deadline ends a blocking read on a socket with no read_timeout
 * (SPEC §6, §10): such a read is the plain call on the fast path only
 * while no deadline can bind the thread.  The deadline counts from just
 * before the client started, so the whole run is timed.
 */
static void test_process_deadline_ends_untimed_read(void **state)
{
	struct t_run r;

	(void)state;
	run_client_deadline(&r, "version: 1\ndefaults:\n"
	    "  connect_timeout: 2s\n", 1000, "silent", "connect", "recv",
	    NULL);
	struct t_step s = find_step(&r, "recv");

	if (strcmp(s.result, "ETIMEDOUT") != 0 || r.elapsed_ms < 1000 - 1 ||
	    r.elapsed_ms >= 1000 + slack()) {
		t_show(&r);
		fail_msg("recv: want ETIMEDOUT after 1000 ms (+%lld), got %s "
		    "after %lld", slack(), s.result, r.elapsed_ms);
	}
}

/* An answer after 0.4 s is within a 1 s read timeout, and not delayed. */
static void test_slow_answer_within_timeout(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_1S, "slow", "-d", "400", "connect", "http",
	    "readall", NULL);
	struct t_step s = find_step(&r, "readall");

	if (strcmp(s.result, "ok") || s.value <= 5 || s.ms < 400 ||
	    s.ms >= 400 + slack()) {
		t_show(&r);
		fail_msg("readall: %s %ld after %lld ms", s.result, s.value,
		    s.ms);
	}
}

/* Half a response then silence: readall times out after the last byte. */
static void test_stall_mid_response(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "stall", "-b", "100000", "connect", "http",
	    "readall", NULL);
	assert_failed_in(&r, "readall", "ETIMEDOUT", find_step(&r, "http").ms,
	    800);
}

/* End of file comes at once: a fast full response is not delayed. */
static void test_eof_is_immediate(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "http", "-b", "1000", "connect", "http",
	    "readall", "read", NULL);
	struct t_step s = find_step(&r, "readall");
	struct t_step eof = find_step(&r, "read");

	assert_string_equal(s.result, "ok");
	assert_true(s.value > 1000);
	assert_string_equal(eof.result, "ok");
	assert_int_equal(eof.value, 0);
	if (eof.ms >= 200) {
		t_show(&r);
		fail_msg("end of file took %lld ms", eof.ms);
	}
}

/*
 * A peer that never reads: a blocking writer of 64 MB makes some progress,
 * then gets a short count once nothing moved for write_timeout, and the
 * next write fails with ETIMEDOUT at once.
 */
static void test_sink_write_times_out(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "sink", NULL, NULL, "connect",
	    "sendmany:67108864", "send:x", NULL);
	struct t_step s = find_step(&r, "sendmany:67108864");

	if (strcmp(s.result, "ok") || s.value <= 0 || s.value >= 67108864 ||
	    s.ms < 800 || s.ms >= 800 + slack()) {
		t_show(&r);
		fail_msg("sendmany: %s %ld after %lld ms", s.result, s.value,
		    s.ms);
	}
	assert_failed_in(&r, "send:x", "ETIMEDOUT", s.ms, 0);
	assert_non_null(strstr(r.out, "write to 127.0.0.1:"));
}

/* MSG_WAITALL keeps looping across segments until all N bytes are there. */
static void test_waitall_complete(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "http", "-b", "200000", "connect", "http",
	    "waitall:65536", "waitall:65536", NULL);
	struct t_step s = find_step(&r, "waitall:65536");

	assert_string_equal(s.result, "ok");
	assert_int_equal(s.value, 65536);
}

/*
 * MSG_WAITALL on a stalled stream returns what arrived once nothing moved
 * for read_timeout (as the kernel does with SO_RCVTIMEO); the timeout is
 * then reported by the next receive, at once.
 */
static void test_waitall_partial_then_timeout(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "stall", "-b", "1000", "connect", "http",
	    "waitall:65536", "recv", NULL);
	struct t_step s = find_step(&r, "waitall:65536");
	long long http = find_step(&r, "http").ms;

	if (strcmp(s.result, "ok") || s.value <= 500 || s.value >= 1000 ||
	    s.ms - http < 800 || s.ms - http >= 800 + slack()) {
		t_show(&r);
		fail_msg("waitall: %s %ld after %lld ms", s.result, s.value,
		    s.ms - http);
	}
	assert_failed_in(&r, "recv", "ETIMEDOUT", s.ms, 0);
}

/* MSG_PEEK leaves the data in place; a later recv still gets it. */
static void test_peek_keeps_data(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "slow", "-d", "300", "connect", "http",
	    "peek:10", "peekall:50", "waitall:50", NULL);
	struct t_step p = find_step(&r, "peek:10");
	struct t_step pa = find_step(&r, "peekall:50");
	struct t_step w = find_step(&r, "waitall:50");

	assert_string_equal(p.result, "ok");
	assert_int_equal(p.value, 10);
	assert_true(p.ms >= 300 && p.ms < 300 + slack());
	assert_string_equal(pa.result, "ok");
	assert_int_equal(pa.value, 50);
	assert_string_equal(w.result, "ok");
	assert_int_equal(w.value, 50);
}

/*
 * A socket closed with a raw system call, its number reused by a pipe: the
 * pipe is not a managed socket, so a read on it waits for the writer (1.2
 * s, longer than the 300 ms read timeout) and returns its data.
 */
static void test_raw_close_reused_by_pipe(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r,
	    "version: 1\ndefaults:\n  read_timeout: 300ms\n", "silent",
	    NULL, NULL, "connect", "rawclose", "pipe:1200", NULL);
	struct t_step s = find_step(&r, "pipe:1200");

	if (strcmp(s.result, "ok") || s.value != 5 || s.ms < 1200) {
		t_show(&r);
		fail_msg("pipe read: %s %ld after %lld ms", s.result, s.value,
		    s.ms);
	}
}

/*
 * A non-blocking connect that no wait has driven (here: a sleep, where a
 * program might use a wait the library does not see) must not leave the
 * socket failing with EAGAIN forever: the write steps the connect itself.
 */
static void test_nonblocking_write_after_undriven_connect(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "echo", NULL, NULL, "nbconnect",
	    "sleep:100", "send:hello", "sleep:200", "recv", NULL);
	struct t_step s = find_step(&r, "send:hello");
	struct t_step v = find_step(&r, "recv");

	if (strcmp(s.result, "ok") || s.value != 5 || strcmp(v.result, "ok") ||
	    v.value != 5) {
		t_show(&r);
		fail_msg("send %s %ld, recv %s %ld", s.result, s.value,
		    v.result, v.value);
	}
}

/*
 * A blocking write on a socket whose connect is still under way waits for
 * the connect, as the kernel would, and reports its failure: here a
 * blackholed address with a 500 ms connect timeout and one attempt.
 */
static void test_blocking_write_while_connecting(void **state)
{
	struct t_run r;
	char *argv[] = { (char *)t_client(), T_BLACKHOLE, "9", "nbconnect",
		"block", "send:x", NULL };

	(void)state;
	if (!t_netns()) {
		printf("SKIPPED: needs the fault namespace (root)\n");
		skip();
	}
	char *policy = t_policy("version: 1\ndefaults:\n"
	    "  connect_timeout: 500ms\n  attempts: 1\n"
	    "  write_timeout: 5s\n");

	assert_int_equal(t_run(&r, policy, NULL, argv), 0);
	unlink(policy);
	free(policy);
	assert_failed_in(&r, "send:x", "ETIMEDOUT", 0, 500);
}

/*
 * A socket closed and its number reused for another socket, both behind
 * the library's back: the new socket is not managed, so a read on it waits
 * for the answer (1.2 s, longer than the 300 ms read timeout).
 */
static void test_raw_close_reused_by_socket(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r,
	    "version: 1\ndefaults:\n  read_timeout: 300ms\n", "slow",
	    "-d", "1200", "connect", "rawreconnect", "http", "read", NULL);
	struct t_step s = find_step(&r, "read");

	if (strcmp(s.result, "ok") || s.value <= 0 || s.ms < 1200) {
		t_show(&r);
		fail_msg("read: %s %ld after %lld ms", s.result, s.value, s.ms);
	}
}

/*
 * The program's own SO_RCVTIMEO is honoured (EAGAIN, as the kernel says),
 * and setting it again takes effect: the library reads it anew after the
 * program sets a socket option, so a cleared one leaves our read_timeout.
 */
static void test_own_rcvtimeo_followed(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "connect",
	    "rcvtimeo:200", "?recv", "rcvtimeo:0", "recv", NULL);
	/* The kernel times the program's 200 ms (kernel_early_ms()). */
	assert_failed_in(&r, "?recv", "EAGAIN", 0, 200 - kernel_early_ms());
	/* 800 ms since the connect, the last activity. */
	assert_failed_in(&r, "recv", "ETIMEDOUT", 0, 800);
}

/*
 * The program's own SO_RCVTIMEO set before the connect, on the socket
 * socket() made, is the one the kernel keeps: a read ends with EAGAIN at
 * its 200 ms, not with our ETIMEDOUT at 800.  (The library knows such a
 * socket's own timeouts without asking the kernel unless the program set
 * one.)
 */
static void test_own_rcvtimeo_before_connect(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "rcvtimeo:200",
	    "connect", "?recv", "rcvtimeo:0", "recv", NULL);
	/* The kernel times the program's 200 ms: once in CI its EAGAIN came
	   198 ms after the read began (kernel_early_ms()). */
	assert_failed_in(&r, "?recv", "EAGAIN", find_step(&r, "connect").ms,
	    200 - kernel_early_ms());
	assert_failed_in(&r, "recv", "ETIMEDOUT", 0, 800);
}

/*
 * O_NONBLOCK set through a dup'd copy (the flag belongs to the shared
 * file, not to the number) makes the socket non-blocking: a read with no
 * data fails with EAGAIN at once, it does not wait for the read timeout.
 */
static void test_nonblocking_through_dup(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "connect",
	    "dupnonblock", "recv", NULL);
	assert_failed_in(&r, "recv", "EAGAIN", find_step(&r, "dupnonblock").ms,
	    0);
}

/*
 * On a non-blocking socket (its reads and writes the program's own calls,
 * the activity recorded after them): a wait that read_timeout ended
 * leaves one ETIMEDOUT for the next read, and the read after that is the
 * kernel's EAGAIN again.
 */
static void test_nonblocking_read_after_wait_timeout(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "silent", NULL, NULL, "connect",
	    "nonblock", "pollin:2000", "?read", "?recv", NULL);
	assert_failed_in(&r, "pollin:2000", "ok", find_step(&r, "nonblock").ms,
	    800);
	assert_failed_in(&r, "?read", "ETIMEDOUT",
	    find_step(&r, "pollin:2000").ms, 0);
	assert_failed_in(&r, "?recv", "EAGAIN", find_step(&r, "?read").ms, 0);
}

/*
 * Bytes a non-blocking read got are activity: the wait after it ends
 * read_timeout after that read, not after the request sent before.
 */
static void test_nonblocking_read_is_activity(void **state)
{
	struct t_run r;

	(void)state;
	run_client(&r, POLICY_800, "stall", "-b", "1000", "connect",
	    "nonblock", "http", "sleep:500", "read", "pollin:2000", NULL);
	assert_true(find_step(&r, "read").value > 0);
	assert_failed_in(&r, "pollin:2000", "ok", find_step(&r, "read").ms,
	    800);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_recv_times_out),
		cmocka_unit_test(test_silent_read_times_out),
		cmocka_unit_test(test_process_deadline_ends_untimed_read),
		cmocka_unit_test(test_slow_answer_within_timeout),
		cmocka_unit_test(test_stall_mid_response),
		cmocka_unit_test(test_eof_is_immediate),
		cmocka_unit_test(test_sink_write_times_out),
		cmocka_unit_test(test_waitall_complete),
		cmocka_unit_test(test_waitall_partial_then_timeout),
		cmocka_unit_test(test_peek_keeps_data),
		cmocka_unit_test(test_raw_close_reused_by_pipe),
		cmocka_unit_test(test_raw_close_reused_by_socket),
		cmocka_unit_test(test_nonblocking_through_dup),
		cmocka_unit_test(test_nonblocking_read_after_wait_timeout),
		cmocka_unit_test(test_nonblocking_read_is_activity),
		cmocka_unit_test(test_own_rcvtimeo_followed),
		cmocka_unit_test(test_own_rcvtimeo_before_connect),
		cmocka_unit_test(test_nonblocking_write_after_undriven_connect),
		cmocka_unit_test(test_blocking_write_while_connecting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
