/* SPDX-License-Identifier: MIT */
/*
 * test_engine_wait.c - the program's poll, ppoll, select and pselect
 * (wait.c) against the scripted kernel: a wait drives a non-blocking
 * connect (the kernel watches POLLOUT during an attempt, nothing during a
 * backoff, and the program sees only the end), reports a read/write
 * timeout as readiness, keeps the program's own timeout, and translates
 * select to poll and back.  A wait with no managed socket is the real call.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>

#include <cmocka.h>

#include "clock.h"
#include "connect.h"
#include "connect_step.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"
#include "io_timeout.h"
#include "wait.h"

#define FD 102
#define OTHER 7		/* a descriptor the library does not manage */

#define REFUSED_EV (POLLOUT | POLLERR | POLLHUP)

#define POLICY(att, rt, wt) FK_POLICY(att, rt, wt)

/* How a case's socket starts out before its wait. */
enum start {
	CONNECTING,	/* a non-blocking connect() has just returned */
	CONNECTED,	/* established (read/write timeouts apply) */
};

enum call { POLL, PPOLL, SELECT, PSELECT };

struct wait_case {
	const char *name;
	const char *policy;
	enum start start;
	enum call call;
	short events;		/* on FD; select: POLLIN/OUT/PRI as the sets */
	bool with_other;	/* OTHER is in the wait too, for POLLIN */
	int timeout_ms;		/* the program's; -1: none */
	struct fk_step steps[16];
	int want;		/* the wait's result */
	short want_revents;	/* FD's; select: as poll events again */
	int64_t want_ms;
	struct fk_ready watched[4];	/* wait i watched FD with these */
	int nwatched;
	int want_so_error;	/* SO_ERROR after the wait, 0: not asked */
	int want_read;		/* a read after the wait: 0 or -errno */
};

/* Wait i of the case watched FD for these events (-1: not at all). */
#define WATCHED(...) .watched = { __VA_ARGS__ }, \
	.nwatched = sizeof((struct fk_ready[]){ __VA_ARGS__ }) / \
		sizeof(struct fk_ready)

static const struct wait_case cases[] = {
	{
		.name = "poll drives refused, backoff, connected; the program "
			"sees only the end",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLOUT, .timeout_ms = 5000,
		.steps = {
			FK_POLL_READY(1001, 2, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 3, FD, POLLOUT),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 1, .want_revents = POLLOUT, .want_ms = 106,
		WATCHED({ 0, POLLOUT }, { 1, (unsigned)-1 }, { 2, POLLOUT }),
	},
	{
		.name = "poll for POLLIN|POLLOUT: the kernel watches the "
			"attempt with the program's events too",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLIN | POLLOUT, .timeout_ms = -1,
		.steps = {
			FK_POLL_READY(1001, 9, FD, POLLOUT),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 1, .want_revents = POLLOUT, .want_ms = 9,
		WATCHED({ 0, POLLIN | POLLOUT }),
	},
	{
		.name = "poll: the program's timeout ends before the connect",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLOUT, .timeout_ms = 50,
		.steps = { FK_POLL_QUIET(51) },
		.want = 0, .want_revents = 0, .want_ms = 51,
	},
	{
		.name = "poll: the attempt times out inside the wait, the next "
			"one connects",
		.policy = POLICY("2", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLOUT, .timeout_ms = -1,
		.steps = {
			FK_POLL_QUIET(1001),
			FK_TIMED_OUT(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 4, FD, POLLOUT),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 1, .want_revents = POLLOUT, .want_ms = 1106,
	},
	{
		.name = "poll: the last attempt fails: POLLIN|POLLERR|POLLHUP "
			"(the kernel's), and SO_ERROR has it",
		.policy = POLICY("1", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLIN, .timeout_ms = -1,
		.steps = {
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = 1, .want_revents = POLLIN | POLLERR | POLLHUP,
		.want_ms = 1, .want_so_error = ECONNREFUSED,
	},
	{
		.name = "poll: an unmanaged descriptor's event ends the wait "
			"during a backoff",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLOUT, .with_other = true,
		.timeout_ms = -1,
		.steps = {
			FK_POLL_READY(1001, 2, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_READY(101, 30, OTHER, POLLIN),
		},
		.want = 1, .want_revents = 0, .want_ms = 32,
		WATCHED({ 0, POLLOUT }, { 1, (unsigned)-1 }),
	},
	{
		.name = "poll: a signal ends the wait with EINTR",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = POLL, .events = POLLOUT, .timeout_ms = -1,
		.steps = { FK_POLL_EINTR(20) },
		.want = -EINTR, .want_ms = 20,
	},
	{
		.name = "poll: read_timeout passes: POLLIN, and the read says "
			"ETIMEDOUT",
		.policy = POLICY("3", "500ms", "off"), .start = CONNECTED,
		.call = POLL, .events = POLLIN, .timeout_ms = -1,
		.steps = { FK_POLL_QUIET(501), FK_POLL_QUIET(0) },
		.want = 1, .want_revents = POLLIN, .want_ms = 501,
		.want_read = -ETIMEDOUT,
	},
	{
		.name = "poll: data before read_timeout is the kernel's answer",
		.policy = POLICY("3", "500ms", "off"), .start = CONNECTED,
		.call = POLL, .events = POLLIN, .timeout_ms = 2000,
		.steps = { FK_POLL_READY(501, 40, FD, POLLIN) },
		.want = 1, .want_revents = POLLIN, .want_ms = 40,
	},
	{
		.name = "poll: data on another descriptor before read_timeout: "
			"one real wait, the kernel's answer as it is",
		.policy = POLICY("3", "500ms", "off"), .start = CONNECTED,
		.call = POLL, .events = POLLIN, .with_other = true,
		.timeout_ms = -1,
		.steps = { FK_POLL_READY(501, 30, OTHER, POLLIN) },
		.want = 1, .want_revents = 0, .want_ms = 30,
	},
	{
		.name = "poll: a signal during a wait under read_timeout is "
			"the program's",
		.policy = POLICY("3", "500ms", "off"), .start = CONNECTED,
		.call = POLL, .events = POLLIN, .timeout_ms = 2000,
		.steps = { FK_POLL_EINTR(20) },
		.want = -EINTR, .want_ms = 20,
	},
	{
		.name = "poll: the program's shorter timeout, no timeout "
			"reported",
		.policy = POLICY("3", "500ms", "off"), .start = CONNECTED,
		.call = POLL, .events = POLLIN, .timeout_ms = 200,
		.steps = { FK_POLL_QUIET(201) },
		.want = 0, .want_ms = 201,
	},
	{
		.name = "poll: no timeout in the asked direction: the real poll",
		.policy = POLICY("3", "500ms", "off"), .start = CONNECTED,
		.call = POLL, .events = POLLOUT, .timeout_ms = 100,
		.steps = { FK_POLL_READY(100, 0, FD, POLLOUT) },
		.want = 1, .want_revents = POLLOUT,
	},
	{
		.name = "ppoll: drives the connect like poll",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = PPOLL, .events = POLLOUT, .timeout_ms = 3000,
		.steps = {
			FK_PPOLL_READY(1001, 8, FD, POLLOUT),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 1, .want_revents = POLLOUT, .want_ms = 8,
	},
	{
		.name = "select for writing: translated to poll, connected",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = SELECT, .events = POLLOUT, .timeout_ms = 1000,
		.steps = {
			FK_POLL_READY(1001, 3, FD, POLLOUT),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 1, .want_revents = POLLOUT, .want_ms = 3,
	},
	{
		.name = "select for reading and writing: a failed connect sets "
			"both",
		.policy = POLICY("1", "off", "off"), .start = CONNECTING,
		.call = SELECT, .events = POLLIN | POLLOUT, .timeout_ms = -1,
		.steps = {
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = 2, .want_revents = POLLIN | POLLOUT, .want_ms = 1,
	},
	{
		.name = "select: read_timeout reported as readable",
		.policy = POLICY("3", "300ms", "off"), .start = CONNECTED,
		.call = SELECT, .events = POLLIN, .timeout_ms = -1,
		.steps = { FK_POLL_QUIET(301), FK_POLL_QUIET(0) },
		.want = 1, .want_revents = POLLIN, .want_ms = 301,
		.want_read = -ETIMEDOUT,
	},
	{
		.name = "select: nothing managed: the real select",
		.policy = POLICY("3", "300ms", "off"), .start = CONNECTED,
		.call = SELECT, .events = POLLOUT, .timeout_ms = 10,
		.steps = {
			{ .fn = FK_SELECT, .fd = -1, .check_tmo = true,
			  .tmo_ms = 10, .ready = { { FD, POLLOUT } } },
		},
		.want = 1, .want_revents = POLLOUT,
	},
	{
		.name = "pselect: write_timeout reported as writable",
		.policy = POLICY("3", "off", "200ms"), .start = CONNECTED,
		.call = PSELECT, .events = POLLOUT, .timeout_ms = 1000,
		.steps = { FK_PPOLL_QUIET(201), FK_PPOLL_QUIET(0) },
		.want = 1, .want_revents = POLLOUT, .want_ms = 201,
	},
	{
		.name = "pselect: the program's timeout first",
		.policy = POLICY("3", "off", "off"), .start = CONNECTING,
		.call = PSELECT, .events = POLLOUT, .timeout_ms = 70,
		.steps = { FK_PPOLL_QUIET(71) },
		.want = 0, .want_ms = 71,
	},
};

/* The wait of case c, through the call it names. */
static int wait_for(const struct wait_case *c, struct pollfd *p, nfds_t n)
{
	struct timespec ts = { c->timeout_ms / 1000,
		(c->timeout_ms % 1000) * 1000000L };
	struct timeval tv = { c->timeout_ms / 1000,
		(c->timeout_ms % 1000) * 1000 };
	fd_set r, w, x;
	int ret;

	if (c->call == POLL)
		return rs_wait_poll(p, n, c->timeout_ms);
	if (c->call == PPOLL)
		return rs_wait_ppoll(p, n, c->timeout_ms < 0 ? NULL : &ts,
		    NULL);
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&x);
	for (nfds_t i = 0; i < n; i++) {
		if (p[i].events & POLLIN)
			FD_SET(p[i].fd, &r);
		if (p[i].events & POLLOUT)
			FD_SET(p[i].fd, &w);
		if (p[i].events & POLLPRI)
			FD_SET(p[i].fd, &x);
	}
	if (c->call == SELECT)
		ret = rs_wait_select(FD + 1, &r, &w, &x,
		    c->timeout_ms < 0 ? NULL : &tv);
	else
		ret = rs_wait_pselect(FD + 1, &r, &w, &x,
		    c->timeout_ms < 0 ? NULL : &ts, NULL);
	for (nfds_t i = 0; i < n; i++)
		p[i].revents = (short)((FD_ISSET(p[i].fd, &r) ? POLLIN : 0) |
		    (FD_ISSET(p[i].fd, &w) ? POLLOUT : 0) |
		    (FD_ISSET(p[i].fd, &x) ? POLLPRI : 0));
	if (c->call == SELECT && c->timeout_ms >= 0) {
		/* Linux select leaves the time not slept. */
		int64_t left = c->timeout_ms - fk_now();

		assert_int_equal(tv.tv_sec * 1000 + tv.tv_usec / 1000,
		    left < 0 ? 0 : left);
	}
	return ret;
}

static void run_case(void **state)
{
	const struct wait_case *c = *state;
	struct pollfd p[2] = { { FD, c->events, 0 }, { OTHER, POLLIN, 0 } };
	struct fk_step steps[20] = { FK_CONNECT_START(FD) };
	bool connecting = c->start == CONNECTING;
	char buf[4];

	memcpy(steps + connecting, c->steps, sizeof(c->steps));
	fk_script(steps);
	const struct rs_policy *pol = fk_policy(c->policy);

	if (connecting)
		assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	else
		fk_connected(FD, pol, true);
	assert_int_equal(wait_for(c, p, c->with_other ? 2 : 1), c->want);
	assert_int_equal(p[0].revents, c->want_revents);
	assert_int_equal(fk_now(), c->want_ms);
	/* The program's array is its own again. */
	assert_int_equal(p[0].fd, FD);
	assert_int_equal(p[0].events, c->events);
	for (int i = 0; i < c->nwatched; i++)
		assert_int_equal(fk_watched(c->watched[i].fd, FD),
		    (int)c->watched[i].events);
	struct rs_fd *e = rs_fd_get(FD);

	if (c->want_so_error)
		assert_int_equal(rs_connect_take_error(e), c->want_so_error);
	if (c->want_read)
		assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)),
		    c->want_read);
	fk_done();
}

/*
 * More involved descriptors than the wait keeps on its stack: 70 sockets
 * with a read timeout, the last of them reported.
 */
static void test_many_involved(void **state)
{
	static const struct fk_step steps[] = {
		FK_POLL_READY(501, 6, FD + 69, POLLIN),
		FK_STOP,
	};
	struct pollfd p[70];

	(void)state;
	fk_script(steps);
	const struct rs_policy *pol = fk_policy(POLICY("3", "500ms", "off"));

	for (int i = 0; i < 70; i++) {
		fk_connected(FD + i, pol, false);
		p[i] = (struct pollfd){ FD + i, POLLIN, 0 };
	}
	assert_int_equal(rs_wait_poll(p, 70, -1), 1);
	assert_int_equal(p[69].revents, POLLIN);
	assert_int_equal(p[0].revents, 0);
	fk_done();
}

/* A ppoll timeout the kernel would refuse is the kernel's to refuse. */
static void test_ppoll_invalid_timeout(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_PPOLL, .fd = -1, .err = EINVAL },
		FK_STOP,
	};
	struct timespec bad = { 0, 2000000000L };
	struct pollfd p = { FD, POLLIN, 0 };

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(POLICY("3", "500ms", "off")), false);
	assert_int_equal(rs_wait_ppoll(&p, 1, &bad, NULL), -EINVAL);
	fk_done();
}

/*
 * The library waits in the kind of call the program made, so that a
 * program whose system calls are filtered makes none it did not make
 * bare: poll for poll and select (the cheaper call: no time left written
 * back), ppoll for ppoll and pselect, with the program's own mask.
 */
static void test_wait_keeps_the_program_s_call(void **state)
{
	static const struct fk_step steps[] = {
		FK_POLL_READY(501, 5, FD, POLLIN),
		/* No read in between: the socket has been idle 5 ms more. */
		FK_PPOLL_READY(496, 5, FD, POLLIN),
		FK_PPOLL_READY(491, 5, FD, POLLIN),
		FK_POLL_READY(486, 5, FD, POLLIN),
		FK_PPOLL_READY(481, 5, FD, POLLIN),
		FK_STOP,
	};
	struct timespec ts = { 3, 0 };
	struct timeval tv = { 3, 0 };
	struct pollfd p = { FD, POLLIN, 0 };
	sigset_t mask;
	fd_set r;

	(void)state;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	fk_script(steps);
	fk_connected(FD, fk_policy(POLICY("3", "500ms", "off")), false);
	assert_int_equal(rs_wait_poll(&p, 1, 3000), 1);
	fk_ppoll_mask = &mask;
	assert_int_equal(rs_wait_ppoll(&p, 1, &ts, NULL), 1);
	assert_null(fk_ppoll_mask);
	assert_int_equal(rs_wait_ppoll(&p, 1, &ts, &mask), 1);
	assert_ptr_equal(fk_ppoll_mask, &mask);
	FD_ZERO(&r);
	FD_SET(FD, &r);
	assert_int_equal(rs_wait_select(FD + 1, &r, NULL, NULL, &tv), 1);
	fk_ppoll_mask = NULL;
	FD_SET(FD, &r);
	assert_int_equal(rs_wait_pselect(FD + 1, &r, NULL, NULL, &ts, &mask),
	    1);
	assert_ptr_equal(fk_ppoll_mask, &mask);
	fk_done();
}

/*
 * A wait on a managed socket with nothing to time (the default policy's
 * steady state) is the program's own call, with its own timeout, and
 * reads no clock; with a read timeout the steady wait reads it once.
 */
static void test_untimed_wait_reads_no_clock(void **state)
{
	static const struct fk_step steps[] = {
		FK_POLL_READY(-1, 1, FD, POLLIN),
		FK_POLL_READY(250, 1, FD, POLLIN),
		{ .fn = FK_SELECT, .fd = -1, .ready = { { FD, POLLIN } } },
		FK_POLL_READY(501, 1, FD, POLLIN),
		FK_STOP,
	};
	struct pollfd p[2] = { { FD, POLLIN, 0 }, { OTHER, POLLIN, 0 } };
	fd_set r;
	unsigned reads;

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(POLICY("3", "off", "off")), false);
	reads = fk_clock_reads();
	assert_int_equal(rs_wait_poll(p, 1, -1), 1);
	assert_int_equal(rs_wait_poll(p, 1, 250), 1);
	FD_ZERO(&r);
	FD_SET(FD, &r);
	assert_int_equal(rs_wait_select(FD + 1, &r, NULL, NULL, NULL), 1);
	assert_int_equal(fk_clock_reads(), reads);
	/* With a read timeout, beside an unmanaged descriptor: the clock,
	   once. */
	fk_connected(FD, fk_policy(POLICY("3", "500ms", "off")), false);
	reads = fk_clock_reads();
	assert_int_equal(rs_wait_poll(p, 2, -1), 1);
	assert_int_equal(p[0].revents, POLLIN);
	assert_int_equal(fk_clock_reads(), reads + 1);
	fk_done();
}

/* A closed descriptor in a select set is EBADF, as Linux select says. */
static void test_select_bad_descriptor(void **state)
{
	static const struct fk_step steps[] = {
		FK_POLL_READY(501, 0, OTHER, POLLNVAL),
		FK_STOP,
	};
	fd_set r;

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(POLICY("3", "500ms", "off")), false);
	FD_ZERO(&r);
	FD_SET(FD, &r);
	FD_SET(OTHER, &r);
	assert_int_equal(rs_wait_select(FD + 1, &r, NULL, NULL, NULL),
	    -EBADF);
	fk_done();
}

/*
 * poll reports what select does not (POLLHUP on a descriptor that is only
 * in exceptfds): that round reports nothing, and the descriptor is left
 * out of the rest of the wait instead of ending it at once, again and
 * again.
 */
static void test_select_hangup_in_exceptfds(void **state)
{
	static const struct fk_step steps[] = {
		FK_POLL_READY(501, 10, OTHER, POLLHUP),
		FK_POLL_READY(491, 20, FD, POLLIN),
		FK_STOP,
	};
	fd_set r, x;

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(POLICY("3", "500ms", "off")), false);
	FD_ZERO(&r);
	FD_ZERO(&x);
	FD_SET(FD, &r);
	FD_SET(OTHER, &x);
	assert_int_equal(rs_wait_select(FD + 1, &r, NULL, &x, NULL), 1);
	assert_true(FD_ISSET(FD, &r));
	assert_false(FD_ISSET(OTHER, &x));
	assert_int_equal(fk_watched(1, OTHER), -1);
	assert_int_equal(fk_now(), 30);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_many_involved),
		cmocka_unit_test(test_ppoll_invalid_timeout),
		cmocka_unit_test(test_wait_keeps_the_program_s_call),
		cmocka_unit_test(test_untimed_wait_reads_no_clock),
		cmocka_unit_test(test_select_bad_descriptor),
		cmocka_unit_test(test_select_hangup_in_exceptfds),
	};

	return FK_RUN("poll and select", tables, more);
}
