/* SPDX-License-Identifier: MIT */
/*
 * test_engine_rounding.c - no wait of the library ends early because the
 * clock is read in whole milliseconds: a backoff, a connect_timeout and a
 * read_timeout each last at least their interval from the real moment
 * they start, and at most 2 ms more.  The fake clock keeps microseconds;
 * every case runs from each tenth of a ms, with readings that cost
 * nothing and readings that cost time (a ms boundary may then pass
 * between a stamp and the wait computed from it, which is how a backoff
 * of 100 ms once lasted 99.2 ms).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "connect.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"

#define FD 104
/* A scripted wait that finds nothing, of whatever timeout it is given. */
#define ANY_QUIET_POLL { .fn = FK_POLL, .fd = -1 }
/* The most any of these waits may end late, in microseconds. */
#define LATE_MAX_US 2000

/* What each reading of the clock costs, in microseconds. */
static const int64_t costs_us[] = { 0, 30, 150 };

/* When the interval under test really started and ended (fake us). */
static int64_t began_us, ended_us;

static void note_begin(void)
{
	began_us = fk_now_us();
}

static void note_end(void)
{
	ended_us = fk_now_us();
}

/* Places the clock `off` us past a whole ms, each reading costing cost. */
static void clock_at(int64_t off, int64_t cost)
{
	fk_advance_us(off);
	fk_clock_cost_us(cost);
}

/* Asserts the interval lasted want_ms, never less, at most 2 ms more. */
static void assert_lasted(int64_t want_ms, int64_t off, int64_t cost)
{
	int64_t took = ended_us - began_us;

	if (took < want_ms * 1000 || took >= want_ms * 1000 + LATE_MAX_US)
		fail_msg("from %lld us past a ms, readings costing %lld us: "
		    "%lld us for a wait of %lld ms", (long long)off,
		    (long long)cost, (long long)took, (long long)want_ms);
}

/* Runs one case from each tenth of a ms, with each cost of a reading. */
static void from_every_start(void (*one)(int64_t off, int64_t cost))
{
	for (size_t c = 0; c < sizeof(costs_us) / sizeof(costs_us[0]); c++)
		for (int64_t off = 0; off < 1000; off += 100)
			one(off, costs_us[c]);
}

/* The retry after a refusal starts no earlier than the backoff allows. */
static void backoff_from(int64_t off, int64_t cost)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_CONNECT, .fd = FD, .err = ECONNREFUSED,
		  .during = note_begin },
		FK_DISSOLVE(FD),
		ANY_QUIET_POLL,
		{ .fn = FK_CONNECT, .fd = FD, .during = note_end },
		FK_STOP,
	};

	fk_script(steps);
	fk_policy(FK_POLICY("2", "off", "off"));
	clock_at(off, cost);
	assert_int_equal(fk_connect(FD, false), 0);
	assert_lasted(100, off, cost);
	fk_done();
}

/* An attempt gives up no earlier than connect_timeout after its SYN. */
static void connect_timeout_from(int64_t off, int64_t cost)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_CONNECT, .fd = FD, .err = EINPROGRESS,
		  .during = note_begin },
		ANY_QUIET_POLL,
		{ .fn = FK_SO_ERROR, .fd = FD, .during = note_end },
		FK_NO_PEER(FD), FK_ABORT(FD),
		FK_STOP,
	};

	fk_script(steps);
	fk_policy(FK_POLICY("1", "off", "off"));
	clock_at(off, cost);
	assert_int_equal(fk_connect(FD, false), -ETIMEDOUT);
	assert_lasted(1000, off, cost);
	fk_done();
}

/* A read gives up no earlier than read_timeout after the last activity. */
static void read_timeout_from(int64_t off, int64_t cost)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .err = EAGAIN },
		ANY_QUIET_POLL,
		FK_STOP,
	};
	char buf[16];

	fk_script(steps);
	const struct rs_policy *p = fk_policy(FK_POLICY("1", "300ms", "off"));

	clock_at(off, cost);
	/* Connected now: the last activity. */
	note_begin();
	struct rs_fd *e = fk_connected(FD, p, false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	note_end();
	assert_lasted(300, off, cost);
	fk_done();
}

static void test_backoff_never_early(void **state)
{
	(void)state;
	from_every_start(backoff_from);
}

static void test_connect_timeout_never_early(void **state)
{
	(void)state;
	from_every_start(connect_timeout_from);
}

static void test_read_timeout_never_early(void **state)
{
	(void)state;
	from_every_start(read_timeout_from);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_never_early),
		cmocka_unit_test(test_connect_timeout_never_early),
		cmocka_unit_test(test_read_timeout_never_early),
	};

	return fk_run_group("waits never end early for the ms rounding", NULL,
	    0, tests, sizeof(tests) / sizeof(tests[0]));
}
