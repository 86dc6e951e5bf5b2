/* SPDX-License-Identifier: MIT */
/*
 * test_engine_io_fast.c - the steady state of reads and writes: a read
 * that starts right after the last activity blocks under the kernel's
 * timer, set once per connection, and one that starts later takes the
 * exact path; rs_io_plain() says when a call is the real call alone.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "clock.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"
#include "ktimeo.h"

#define FD 105

static const char *const POLICY_R500 = FK_POLICY("3", "500ms", "off");
static const char *const POLICY_OFF = FK_POLICY("3", "off", "off");

/* The value the kernel holds for a 500 ms read_timeout (ktimeo.c). */
static long kernel_ms(void)
{
	return 500 - 500 / 8 - 20 - (long)rs_clock_coarse_lag_ms();
}

static long rcvtimeo_ms(void)
{
	const struct timeval *tv = &fk_sock(FD)->rcvtimeo;

	return (long)tv->tv_sec * 1000 + (long)tv->tv_usec / 1000;
}

/*
 * The first read puts our SO_RCVTIMEO in the kernel, below read_timeout
 * by the timer's margins and the coarse clock's lag; the next one, right
 * after it, blocks under it without setting it again, and when the
 * kernel's timer ends it the exact wait makes up the rest.
 */
static void test_kernel_timer_set_once(void **state)
{
	static struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .data = "a", .ret = -1 },
		{ .fn = FK_RECV, .fd = FD, .err = EAGAIN },
		FK_POLL_QUIET(0),
		FK_STOP,
	};
	char buf[4];

	(void)state;
	steps[1].advance_ms = kernel_ms();
	steps[2].tmo_ms = (int)(501 - kernel_ms());
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_R500), false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	assert_true(e->kt_ours[0]);
	assert_int_equal(rcvtimeo_ms(), kernel_ms());
	/* A value only the library could have put back. */
	fk_sock(FD)->rcvtimeo.tv_sec = 77;
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	assert_int_equal(fk_now(), 501);
	assert_int_equal(fk_sock(FD)->rcvtimeo.tv_sec, 77);
	assert_int_equal(fk_stat(RS_STAT_READ_TIMEOUTS), 1);
	fk_done();
}

/*
 * A read that starts RS_KTIMEO_SLACK_MS after the last activity is still
 * the kernel's; one that starts a millisecond later tries without
 * blocking and waits exactly until read_timeout after the activity.
 */
static void test_late_read_is_exact(void **state)
{
	static struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .data = "a", .ret = -1 },
		{ .fn = FK_RECV, .fd = FD, .data = "b", .ret = -1 },
		{ .fn = FK_RECV, .fd = FD, .err = EAGAIN,
		  .flags = MSG_DONTWAIT },
		FK_POLL_QUIET(501 - RS_KTIMEO_SLACK_MS - 1),
		FK_STOP,
	};
	char buf[4];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_R500), false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	fk_advance(RS_KTIMEO_SLACK_MS);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	int64_t last = fk_now();

	fk_advance(RS_KTIMEO_SLACK_MS + 1);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	assert_int_equal(fk_now() - last, 501);
	fk_done();
}

/*
 * The count of sockets whose kernel holds our value is exact: a socket
 * closed while armed no longer counts, so that an exec in a process whose
 * armed sockets are all closed does not walk the descriptor table.
 */
static void test_armed_count_exact(void **state)
{
	static struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .data = "a", .ret = -1 },
		FK_STOP,
	};
	char buf[4];

	(void)state;
	fk_script(steps);
	unsigned before = rs_ktimeo_armed();
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_R500), false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	assert_true(e->kt_ours[0]);
	assert_int_equal(rs_ktimeo_armed(), before + 1);
	rs_fd_forget(FD);
	assert_int_equal(rs_ktimeo_armed(), before);
	fk_done();
}

/*
 * The program's own SO_RCVTIMEO (10 s, set before the connect) is read
 * once, by whichever path asks first, and kept whole: a late read that
 * waits asks for it first (the exact path), and when a later read puts
 * ours in the kernel, getsockopt and a release still give the program
 * its 10 s, never a zero the exact path's reading had left.
 */
static void test_own_value_one_home(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .err = EAGAIN,
		  .flags = MSG_DONTWAIT },
		{ .fn = FK_POLL, .fd = -1, .advance_ms = 1,
		  .ready = { { FD, POLLIN } } },
		{ .fn = FK_RECVMSG, .fd = FD, .data = "a", .ret = -1 },
		{ .fn = FK_RECV, .fd = FD, .data = "b", .ret = -1 },
		FK_STOP,
	};
	struct timeval tv = { 0, 0 };
	char buf[4];

	(void)state;
	fk_script(steps);
	fk_sock(FD)->rcvtimeo.tv_sec = 10;
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_R500), false);

	fk_advance(RS_KTIMEO_SLACK_MS + 1);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	assert_false(e->kt_ours[0]);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	assert_true(e->kt_ours[0]);
	assert_int_equal(rcvtimeo_ms(), kernel_ms());
	assert_true(rs_ktimeo_own(e, false, &tv));
	assert_int_equal(tv.tv_sec, 10);
	rs_ktimeo_release(e, FD);
	assert_int_equal(rcvtimeo_ms(), 10000);
	fk_done();
}

/* A write never blocks under the kernel's timer (ktimeo.c says why). */
static void test_write_not_kernel_timed(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_SEND, .fd = FD, .ret = -1, .flags = MSG_DONTWAIT },
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(FK_POLICY("3", "off",
	    "500ms")), false);

	assert_int_equal(rs_io_write(e, FD, "abc", 3), 3);
	assert_false(e->kt_ours[1]);
	fk_done();
}

/*
 * The rest of a steady readv or recvmsg whose first try the kernel's
 * timer ended (interpose_io.c's halves, which make the first try
 * themselves): the exact wait makes up read_timeout and fails with
 * ETIMEDOUT; with bytes during the wait, the non-blocking recvmsg gets
 * them and the header the program gave is completed.
 */
static void test_vector_read_rest(void **state)
{
	static struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .data = "a", .ret = -1 },
		FK_POLL_QUIET(0),
		FK_STOP,
	};
	char buf[4];
	struct iovec v = { buf, sizeof(buf) };

	(void)state;
	steps[1].tmo_ms = (int)(501 - kernel_ms());
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_R500), false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	fk_advance(kernel_ms());
	assert_int_equal(rs_io_readmsg_after(e, FD, &v, 1, 0, NULL, -EAGAIN,
	    rs_fd_gen(e)), -ETIMEDOUT);
	assert_int_equal(fk_now(), 501);
	fk_done();
}

static void test_vector_read_rest_data(void **state)
{
	static struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .data = "a", .ret = -1 },
		FK_POLL_READY(0, 10, FD, POLLIN),
		{ .fn = FK_RECVMSG, .fd = FD, .data = "bc", .ret = -1,
		  .flags = MSG_DONTWAIT },
		FK_STOP,
	};
	char buf[4];
	struct iovec v = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1,
		.msg_flags = MSG_TRUNC };

	(void)state;
	steps[1].tmo_ms = (int)(501 - kernel_ms());
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_R500), false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), 1);
	int64_t last = rs_fd_last_activity(e);

	fk_advance(kernel_ms());
	assert_int_equal(rs_io_readmsg_after(e, FD, &v, 1, 0, &m, -EAGAIN,
	    rs_fd_gen(e)), 2);
	assert_int_equal(m.msg_flags, 0);
	assert_int_equal(rs_fd_last_activity(e) - last, kernel_ms() + 10);
	fk_done();
}

/*
 * The rest of a steady writev whose non-blocking first try sent 1 of 3
 * bytes: the wait for room, then the rest with MSG_DONTWAIT.
 */
static void test_vector_write_rest(void **state)
{
	static const struct fk_step steps[] = {
		FK_POLL_READY(501, 10, FD, POLLOUT),
		{ .fn = FK_SENDMSG, .fd = FD, .ret = -1, .flags = MSG_DONTWAIT,
		  .len = 2 },
		FK_STOP,
	};
	struct iovec v = { "abc", 3 };

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(FK_POLICY("3", "off",
	    "500ms")), false);

	int64_t last = rs_fd_last_activity(e);

	assert_int_equal(rs_io_writemsg_after(e, FD, &v, 1, 0, NULL, 1,
	    rs_fd_gen(e), true), 3);
	assert_int_equal(rs_fd_last_activity(e) - last, 10);
	fk_done();
}

/*
 * The exported names' test for "the real call and nothing else": only a
 * connected socket with no timeout to keep, none pending and no deadline.
 * Last in the file: a deadline, once seen, is assumed from then on.
 */
static void test_plain(void **state)
{
	static const struct fk_step steps[] = { FK_STOP };

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY_OFF), false);

	assert_true(rs_io_plain(e));
	e->read_timed_out = true;
	assert_false(rs_io_plain(e));
	e->read_timed_out = false;
	e->write_timed_out = true;
	assert_false(rs_io_plain(e));
	e->write_timed_out = false;
	rs_fd_set_state(e, RS_FD_CONNECTING);
	assert_false(rs_io_plain(e));
	rs_fd_set_state(e, RS_FD_CONNECTED);
	e = fk_connected(FD, fk_policy(POLICY_R500), false);
	assert_false(rs_io_plain(e));
	e = fk_connected(FD, fk_policy(FK_POLICY("3", "off", "1s")), false);
	assert_false(rs_io_plain(e));
	e = fk_connected(FD, fk_policy(POLICY_OFF), false);
	assert_true(rs_io_plain(e));
	fk_deadline(1000);
	assert_false(rs_io_plain(e));
	fk_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_timer_set_once),
		cmocka_unit_test(test_late_read_is_exact),
		cmocka_unit_test(test_armed_count_exact),
		cmocka_unit_test(test_own_value_one_home),
		cmocka_unit_test(test_write_not_kernel_timed),
		cmocka_unit_test(test_vector_read_rest),
		cmocka_unit_test(test_vector_read_rest_data),
		cmocka_unit_test(test_vector_write_rest),
		cmocka_unit_test(test_plain),
	};

	return fk_run_group("the steady state of reads and writes", NULL, 0,
	    tests, sizeof(tests) / sizeof(tests[0]));
}
