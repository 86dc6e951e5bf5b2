/* SPDX-License-Identifier: MIT */
/*
 * test_engine_io_state.c - reads and writes whose socket's state changes
 * around them: a read on a connect under way (non-blocking: one step and
 * EAGAIN; blocking: the connect's end first), a read after a failed
 * connect, the timeouts a wait reports and the next call's ETIMEDOUT, a
 * number reused for another socket, O_NONBLOCK changed through a copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"
#include "io_timeout.h"

#define FD 104
#define AGAIN(c) { .fn = (c), .fd = FD, .err = EAGAIN }

static const char *const POLICY_RW = FK_POLICY("3", "500ms", "300ms");

/* A connect under way on a non-blocking socket: a read steps it once. */
static void test_read_steps_pending_connect(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_NO_PEER(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		{ .fn = FK_READ, .fd = FD, .data = "hi", .ret = -1 },
		FK_STOP,
	};
	char buf[8] = { 0 };

	(void)state;
	fk_script(steps);
	fk_policy(POLICY_RW);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(rs_fd_state(e), RS_FD_CONNECTING);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 2);
	assert_int_equal(rs_fd_state(e), RS_FD_CONNECTED);
	fk_done();
}

/*
 * A blocking read on a socket whose connect was interrupted waits for the
 * connect first, as the kernel does, with the program's flags restored.
 */
static void test_blocking_read_finishes_connect(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_POLL_EINTR(100),
		FK_POLL_READY(901, 40, FD, POLLOUT),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		{ .fn = FK_RECV, .fd = FD, .data = "data", .ret = -1 },
		FK_STOP,
	};
	char buf[8] = { 0 };

	(void)state;
	fk_script(steps);
	fk_policy(POLICY_RW);
	fk_handler(FK_PLAIN_HANDLER);
	assert_int_equal(fk_connect(FD, false), -EINTR);
	struct rs_fd *e = rs_fd_get(FD);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 4);
	fk_handler(FK_NO_HANDLER);
	assert_string_equal(buf, "data");
	assert_int_equal(fk_now(), 140);
	assert_int_equal(fk_sock(FD)->flags, O_RDWR);
	fk_done();
}

/* A read after a failed connect gets the connect's error, once. */
static void test_read_after_failed_connect(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, EHOSTUNREACH),
		FK_ABORT(FD),
		FK_STOP,
	};
	char buf[8];

	(void)state;
	fk_script(steps);
	fk_policy(FK_POLICY("1", "500ms", "off"));
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -EHOSTUNREACH);
	assert_int_equal(rs_fd_state(e), RS_FD_FAILED);
	assert_int_equal(e->final_error, 0);
	fk_done();
}

/*
 * What the waits ask of io.c: when a read (write) times out, and the
 * timeout that a wait reports makes the next call fail, once.
 */
static void test_wait_deadline_and_expiry(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .data = "x", .ret = -1 },
		FK_STOP,
	};
	char buf[4];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_RW), false);
	int64_t t0 = rs_clock_now_ms();

	assert_int_equal(rs_io_wait_deadline(e, POLLIN, t0), t0 + 501);
	assert_int_equal(rs_io_wait_deadline(e, POLLOUT, t0), t0 + 301);
	assert_int_equal(rs_io_wait_deadline(e, POLLIN | POLLOUT, t0),
	    t0 + 301);
	assert_int_equal(rs_io_wait_expired(e, POLLIN | POLLOUT, t0 + 300),
	    0);
	assert_int_equal(rs_io_wait_expired(e, POLLIN | POLLOUT, t0 + 301),
	    POLLOUT);
	/* Reported now: the wait sees it as due at once. */
	assert_int_equal(rs_io_wait_deadline(e, POLLOUT, t0 + 301), t0 + 301);
	assert_int_equal(rs_io_write(e, FD, "abc", 3), -ETIMEDOUT);
	assert_int_equal(rs_io_wait_expired(e, POLLIN, t0 + 501), POLLIN);
	assert_int_equal(rs_io_wait_expired(e, POLLIN, t0 + 502), POLLIN);
	assert_int_equal(fk_stat(RS_STAT_READ_TIMEOUTS), 1);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	assert_true(fk_log_has("read from 127.0.0.1:5432 timed out: no "
	    "progress for 500 ms"));
	/* Not connected: no deadline, nothing expires. */
	rs_fd_set_state(e, RS_FD_FAILED);
	assert_int_equal(rs_io_wait_deadline(e, POLLIN, t0), RS_NEVER);
	assert_int_equal(rs_io_wait_expired(e, POLLIN, t0 + 9999), 0);
	fk_done();
}

/*
 * A number closed behind the library's back and reused for another socket
 * (another inode) does not get our timeout: the entry is forgotten and the
 * call finishes as the plain blocking call it is.
 */
static void test_reused_number_gets_no_timeout(void **state)
{
	static const struct fk_step steps[] = {
		AGAIN(FK_RECV),
		FK_POLL_QUIET(501),
		{ .fn = FK_RECVMSG, .fd = FD, .data = "theirs", .ret = -1 },
		FK_STOP,
	};
	char buf[8] = { 0 };

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_RW), false);

	e->ino = 4242;	/* FD is not open here: its inode reads as 0 */
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "theirs");
	assert_null(rs_fd_get(FD));
	assert_int_equal(fk_stat(RS_STAT_READ_TIMEOUTS), 0);
	fk_done();
}

/* Another thread closes FD and connects anew on the same number. */
static void close_and_reuse(void)
{
	rs_fd_forget(FD);
	fk_connected(FD, fk_policy(POLICY_RW), false);
}

/*
 * A read waiting on FD while another thread closes it and makes a new
 * connection on the number: the bytes that arrive are the new
 * connection's.  The wait ends with EBADF, the number is not read, and the
 * new entry is left as it was.
 */
static void test_close_and_reuse_during_wait(void **state)
{
	static const struct fk_step steps[] = {
		AGAIN(FK_RECV),
		{ .fn = FK_POLL, .fd = -1, .check_tmo = true, .tmo_ms = 501,
		  .advance_ms = 100, .during = close_and_reuse,
		  .ready = { { FD, POLLIN } } },
		FK_STOP,
	};
	char buf[8];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_RW), false);
	int64_t t0 = rs_fd_last_activity(e);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -EBADF);
	assert_ptr_equal(rs_fd_get(FD), e);
	assert_int_equal(rs_fd_last_activity(e), t0);
	assert_int_equal(fk_stat(RS_STAT_READ_TIMEOUTS), 0);
	fk_done();
}

/* The same for a write: its bytes never go to the new connection. */
static void test_close_and_reuse_during_write(void **state)
{
	static const struct fk_step steps[] = {
		AGAIN(FK_SEND),
		{ .fn = FK_POLL, .fd = -1, .check_tmo = true, .tmo_ms = 301,
		  .advance_ms = 100, .during = close_and_reuse,
		  .ready = { { FD, POLLOUT } } },
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_RW), false);

	assert_int_equal(rs_io_write(e, FD, "abc", 3), -EBADF);
	assert_ptr_equal(rs_fd_get(FD), e);
	assert_int_equal(fk_stat(RS_STAT_WRITE_TIMEOUTS), 0);
	fk_done();
}

/*
 * The same for a blocking sendmmsg whose wait after its first message
 * finds the number reused: the rest goes by the plain blocking call, and
 * the entry is not touched again.
 */
static void test_reused_number_sendmmsg_goes_plain(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_SENDMMSG, .fd = FD, .ret = 1 },
		AGAIN(FK_SENDMMSG),
		FK_POLL_QUIET(301),
		{ .fn = FK_SENDMMSG, .fd = FD, .ret = 1, .len = 1 },
		FK_STOP,
	};
	char a[] = "ab", b[] = "cd";
	struct iovec va = { a, 2 }, vb = { b, 2 };
	struct mmsghdr m[2] = {
		{ .msg_hdr = { .msg_iov = &va, .msg_iovlen = 1 } },
		{ .msg_hdr = { .msg_iov = &vb, .msg_iovlen = 1 } },
	};

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_RW), false);

	e->ino = 4242;	/* FD is not open here: its inode reads as 0 */
	assert_int_equal(rs_io_sendmmsg(e, FD, m, 2, 0), 2);
	assert_int_equal(m[1].msg_len, 2);
	assert_null(rs_fd_get(FD));
	assert_int_equal(fk_stat(RS_STAT_WRITE_TIMEOUTS), 0);
	fk_done();
}

/*
 * A dup'd socket shares O_NONBLOCK with its copies, which may change it
 * through another number: the flag is read again before a first wait, so
 * a socket made blocking through a copy gets its timeout, and one made
 * non-blocking gets the kernel's EAGAIN rather than a wait.
 */
static void test_dup_flags_read_again(void **state)
{
	static const struct fk_step steps[] = {
		AGAIN(FK_RECV),
		FK_POLL_QUIET(501),
		AGAIN(FK_RECV),
		FK_STOP,
	};
	char buf[4];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_RW), true);

	e->shared = true;
	fk_sock(FD)->flags = O_RDWR;	/* cleared through a copy */
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	assert_false(e->nonblocking);
	fk_sock(FD)->flags = O_RDWR | O_NONBLOCK;	/* set again */
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -EAGAIN);
	assert_true(e->nonblocking);
	assert_int_equal(fk_now(), 501);
	fk_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_steps_pending_connect),
		cmocka_unit_test(test_blocking_read_finishes_connect),
		cmocka_unit_test(test_read_after_failed_connect),
		cmocka_unit_test(test_wait_deadline_and_expiry),
		cmocka_unit_test(test_reused_number_gets_no_timeout),
		cmocka_unit_test(test_close_and_reuse_during_wait),
		cmocka_unit_test(test_close_and_reuse_during_write),
		cmocka_unit_test(test_reused_number_sendmmsg_goes_plain),
		cmocka_unit_test(test_dup_flags_read_again),
	};

	return fk_run_group("reads and writes around state changes", NULL, 0,
	    tests, sizeof(tests) / sizeof(tests[0]));
}
