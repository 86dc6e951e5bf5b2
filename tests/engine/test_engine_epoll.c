/* SPDX-License-Identifier: MIT */
/*
 * test_engine_epoll.c - epoll registrations of managed sockets
 * (epolltrack.c, through wait.c) against a model of the kernel's interest
 * lists: during an attempt the kernel holds a tagged EPOLLOUT, during a
 * backoff nothing, and the program's own registration (events and data)
 * comes back when the connect ends.  Level-triggered, edge-triggered and
 * one-shot registrations each see a failed connect as Linux would show a
 * dead socket; read timeouts are reported as events; a connect started by
 * another thread during a plain wait is caught on the way out.
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
#include <sys/epoll.h>

#include <cmocka.h>

#include "clock.h"
#include "connect.h"
#include "connect_step.h"
#include "epolltrack.h"
#include "epollwait.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"
#include "io_timeout.h"
#include "wait.h"

#define EP 110		/* the program's epoll instance */
#define FD 111
#define DATA 0xfeedULL	/* the program's data word */

#define REFUSED_EV (EPOLLOUT | EPOLLERR | EPOLLHUP)

#define POLICY(att, rt) FK_POLICY(att, rt, "off")

/* An epoll wait on EP with timeout t that finds f ready with ev after a. */
#define EWAIT_READY(t, a, f, ev) \
	{ .fn = FK_EPOLL_PWAIT, .fd = EP, .check_tmo = true, .tmo_ms = (t), \
	  .advance_ms = (a), .ready = { { (f), (ev) } } }
#define EWAIT_QUIET(t) \
	{ .fn = FK_EPOLL_PWAIT, .fd = EP, .check_tmo = true, .tmo_ms = (t) }

/* The program registers FD with EP for events, with its data word. */
static int add(uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = DATA };

	return rs_wait_epoll_ctl(EP, EPOLL_CTL_ADD, FD, &ev);
}

static int mod(uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = DATA };

	return rs_wait_epoll_ctl(EP, EPOLL_CTL_MOD, FD, &ev);
}

/* The kernel's registration of FD holds the program's own, or not. */
static void assert_program_reg(uint32_t events)
{
	const struct fk_epreg *g = fk_epoll_reg(EP, FD);

	assert_non_null(g);
	assert_int_equal(g->events, events);
	assert_int_equal(g->data, DATA);
}

/*
 * The kernel's registration of FD is the library's for a connect under
 * way: its EPOLLOUT, and the read events of the program's registration
 * prog, so that the event of the completion carries them; edge-triggered
 * with all of prog's events when prog is.
 */
static void assert_library_reg(uint32_t prog)
{
	const struct fk_epreg *g = fk_epoll_reg(EP, FD);
	uint32_t mask = EPOLLIN | EPOLLRDHUP | EPOLLPRI;

	if (prog & EPOLLET)
		mask |= EPOLLOUT | EPOLLET;
	assert_non_null(g);
	assert_int_equal(g->events, EPOLLOUT | (prog & mask));
	assert_int_not_equal(g->data, DATA);
}

/*
 * Level-triggered: refused, backoff, connected.  During the attempts the
 * kernel holds the library's EPOLLOUT, during the backoff nothing, and the
 * program's wait sees one event, with its data, once connected.
 */
static void test_level_triggered_connect(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		EWAIT_READY(1001, 2, FD, REFUSED_EV),
		FK_SO_ERROR_IS(FD, ECONNREFUSED),
		FK_DISSOLVE(FD),
		EWAIT_QUIET(101),
		FK_CONNECT_START(FD),
		EWAIT_READY(1001, 3, FD, EPOLLOUT),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	struct epoll_event ev[4];

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLIN | EPOLLOUT), 0);
	assert_program_reg(EPOLLIN | EPOLLOUT);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	assert_library_reg(EPOLLIN | EPOLLOUT);
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, 5000), 1);
	assert_int_equal(ev[0].events, EPOLLOUT);
	assert_int_equal(ev[0].data.u64, DATA);
	assert_int_equal(fk_now(), 106);
	/* The attempts watched their completion and the program's reads. */
	assert_int_equal(fk_watched(0, FD), EPOLLOUT | EPOLLIN);
	assert_int_equal(fk_watched(1, FD), -1);
	assert_program_reg(EPOLLIN | EPOLLOUT);
	fk_done();
}

/*
 * Data that came with the connection (a server's greeting): the event of
 * the completion carries EPOLLIN as well, as the kernel reports it to the
 * program without the library -- from the library's own registration,
 * which asked for the program's read events, with no question more.
 */
static void test_connect_reports_data(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		EWAIT_READY(1001, 3, FD, EPOLLIN | EPOLLOUT),
		FK_STOP,
	};
	struct epoll_event ev[4];

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLIN | EPOLLOUT | EPOLLET), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	assert_library_reg(EPOLLIN | EPOLLOUT | EPOLLET);
	fk_sock(FD)->inq = 5;	/* the greeting: connected, says outcome.c */
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, 5000), 1);
	assert_int_equal(ev[0].events, EPOLLIN | EPOLLOUT);
	assert_int_equal(ev[0].data.u64, DATA);
	/* The edge was the program's: the library's registration stays
	   (a MOD now would re-arm it and report it again), until the
	   program's own MOD puts the program's back. */
	assert_library_reg(EPOLLIN | EPOLLOUT | EPOLLET);
	assert_int_equal(mod(EPOLLIN | EPOLLET), 0);
	assert_program_reg(EPOLLIN | EPOLLET);
	fk_done();
}

/* How each kind of registration sees a connect that failed for good. */
struct failure_case {
	const char *name;
	uint32_t events;
	int second;		/* events the next wait returns */
	bool reg_after;		/* the kernel holds the program's after */
	int tmo_ms;		/* the kernel's timeout for the next wait of
				   100 ms: 101 when the library waits for it
				   (rs_clock_after) */
};

static const struct failure_case failures[] = {
	{ "level-triggered: the dead socket is reported again, as Linux does",
	  EPOLLOUT, 1, true, 101 },
	{ "edge-triggered: the failure is one edge, reported once",
	  EPOLLOUT | EPOLLET, 0, false, 100 },
	{ "one-shot: reported once, then disarmed until the program re-arms",
	  EPOLLOUT | EPOLLONESHOT, 0, false, 100 },
};

static void run_failure(void **state)
{
	const struct failure_case *c = *state;
	struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		EWAIT_READY(1001, 5, FD, REFUSED_EV),
		FK_SO_ERROR_IS(FD, ECONNREFUSED),
		FK_DISSOLVE(FD),
		EWAIT_READY(c->tmo_ms, 0, FD, REFUSED_EV),
		FK_STOP,
	};
	struct epoll_event ev[4];

	fk_script(steps);
	fk_policy(POLICY("1", "off"));
	assert_int_equal(add(c->events), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	/* The failure, with the program's data, once. */
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, -1), 1);
	assert_int_equal(ev[0].events, REFUSED_EV);
	assert_int_equal(ev[0].data.u64, DATA);
	assert_null(fk_epoll_reg(EP, FD));
	assert_int_equal(rs_connect_take_error(rs_fd_get(FD)), ECONNREFUSED);
	/* The next wait: the kernel's registration, or none. */
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, 100), c->second);
	if (c->second)
		assert_int_equal(ev[0].data.u64, DATA);
	if (c->reg_after)
		assert_program_reg(c->events);
	else
		assert_null(fk_epoll_reg(EP, FD));
	fk_done();
}

/*
 * A registration made or re-armed after a connect failed for good: the
 * next wait reports the failure once, as Linux reports a dead socket to a
 * new or re-armed registration -- with EPOLLERR while SO_ERROR is unread
 * (the library's report), without it once the program has read SO_ERROR
 * (the kernel's report of the dissolved socket).
 */
struct late_case {
	const char *name;
	uint32_t events;
	bool rearm;		/* re-armed with MOD after a first report;
				   else registered after the failure */
	bool error_read;	/* SO_ERROR read before the registration */
	uint32_t want;		/* what the next wait reports */
};

static const struct late_case lates[] = {
	{ "one-shot re-armed, SO_ERROR unread: the failure again",
	  EPOLLOUT | EPOLLONESHOT, true, false, REFUSED_EV },
	{ "one-shot re-armed, SO_ERROR read: the kernel's dead socket",
	  EPOLLOUT | EPOLLONESHOT, true, true, EPOLLOUT | EPOLLHUP },
	{ "level-triggered re-armed, SO_ERROR unread: with EPOLLERR",
	  EPOLLOUT, true, false, REFUSED_EV },
	{ "edge-triggered re-armed, SO_ERROR unread: the failure again",
	  EPOLLOUT | EPOLLET, true, false, REFUSED_EV },
	{ "one-shot registered after the failure: reported",
	  EPOLLOUT | EPOLLONESHOT, false, false, REFUSED_EV },
	{ "level-triggered registered after the failure: with EPOLLERR",
	  EPOLLOUT, false, false, REFUSED_EV },
};

static void run_late(void **state)
{
	const struct late_case *c = *state;
	struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, ECONNREFUSED),
		FK_DISSOLVE(FD),
		/* The first report, when re-arming: the library's. */
		EWAIT_QUIET(0),
		/* The kernel, asked, finds the dissolved socket. */
		{ .fn = FK_EPOLL_PWAIT, .fd = EP, .advance_ms = 1,
		  .ready = { { FD, EPOLLOUT | EPOLLHUP } } },
		FK_STOP,
	};
	struct epoll_event ev[4];

	if (!c->rearm) {
		/* No first registration and no first wait. */
		memmove(steps, steps + 1, 3 * sizeof(steps[0]));
		memmove(steps + 3, steps + 5, 2 * sizeof(steps[0]));
	}
	fk_script(steps);
	fk_policy(POLICY("1", "off"));
	if (c->rearm)
		assert_int_equal(add(c->events), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	rs_connect_step(FD, rs_fd_get(FD), 1, rs_clock_now_ms());
	if (c->rearm) {
		/* The first report, as the failure happened. */
		assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, -1), 1);
		assert_int_equal(ev[0].events, REFUSED_EV);
	}
	if (c->error_read)
		assert_int_equal(rs_connect_take_error(rs_fd_get(FD)),
		    ECONNREFUSED);
	assert_int_equal(c->rearm ? mod(c->events) : add(c->events), 0);
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, -1), 1);
	assert_int_equal(ev[0].events, c->want);
	assert_int_equal(ev[0].data.u64, DATA);
	fk_done();
}

/*
 * A connected socket with a read timeout keeps the program's registration
 * (its events need no translation) and a timer in the instance, updated
 * lazily from the last activity: the wait wakes when the first deadline
 * would have been, finds the activity, sleeps on to the new one, looks
 * once whether data is there, and reports the timeout as EPOLLIN, after
 * which the read says ETIMEDOUT.
 */
static void test_read_timeout_event(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_READY(501, 20, FD, EPOLLIN),
		EWAIT_QUIET(481),
		EWAIT_QUIET(20),
		FK_POLL_QUIET(0),
		EWAIT_QUIET(0),
		FK_STOP,
	};
	struct epoll_event ev[4];
	char buf[4];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY("3", "500ms")),
	    true);

	assert_int_equal(add(EPOLLIN), 0);
	assert_int_equal(fk_epoll_reg(EP, FD)->events, EPOLLIN);
	assert_int_equal(fk_epoll_reg(EP, FD)->data, DATA);
	/* Data: the kernel's event, with the program's data. */
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, -1), 1);
	assert_int_equal(ev[0].events, EPOLLIN);
	assert_int_equal(ev[0].data.u64, DATA);
	rs_fd_touch(e, rs_clock_now_ms());
	/* Silence: the timeout, as readiness. */
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, -1), 1);
	assert_int_equal(ev[0].events, EPOLLIN);
	assert_int_equal(ev[0].data.u64, DATA);
	assert_int_equal(fk_now(), 521);
	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	fk_done();
}

/*
 * A record the library reports before the kernel's wait (here a read
 * timeout) that the kernel then reports in the same wait too (data came
 * just then): one event, with both, never two for one registration.
 */
static void test_reported_once_per_wait(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(501),
		FK_POLL_QUIET(0),
		EWAIT_READY(0, 0, FD, EPOLLIN | EPOLLRDHUP),
		FK_STOP,
	};
	struct epoll_event ev[4];

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(POLICY("3", "500ms")), true);
	assert_int_equal(add(EPOLLIN | EPOLLRDHUP), 0);
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, -1), 1);
	assert_int_equal(ev[0].events, EPOLLIN | EPOLLRDHUP);
	assert_int_equal(ev[0].data.u64, DATA);
	fk_done();
}

/* Another thread's connect, begun while a plain wait was blocked. */
static void connect_meanwhile(void)
{
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
}

static void test_connect_during_plain_wait(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		{ .fn = FK_EPOLL_PWAIT, .fd = EP, .check_tmo = true,
		  .tmo_ms = 2000, .advance_ms = 1, .during = connect_meanwhile,
		  .ready = { { FD, REFUSED_EV } } },
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, ECONNREFUSED),
		FK_DISSOLVE(FD),
		EWAIT_QUIET(101),
		FK_CONNECT_START(FD),
		EWAIT_READY(1001, 4, FD, EPOLLOUT),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	struct epoll_event ev[4];

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLOUT), 0);
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, 2000), 1);
	assert_int_equal(ev[0].events, EPOLLOUT);
	assert_int_equal(ev[0].data.u64, DATA);
	assert_int_equal(fk_now(), 106);
	fk_done();
}

/*
 * The program changes or removes its registration while the library
 * holds the kernel's: only the record changes, and the new registration
 * is what comes back; a removal removes it from the kernel too.
 */
static void test_mod_and_del_during_attempt(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLOUT), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	assert_int_equal(mod(EPOLLIN | EPOLLRDHUP), 0);
	assert_library_reg(EPOLLIN | EPOLLRDHUP);
	/* The connect ends (a connect() call steps it): the new one. */
	rs_connect_step(FD, rs_fd_get(FD), 1, rs_clock_now_ms());
	rs_wait_fd_connect(FD);
	assert_program_reg(EPOLLIN | EPOLLRDHUP);
	assert_int_equal(rs_wait_epoll_ctl(EP, EPOLL_CTL_DEL, FD, NULL), 0);
	assert_null(fk_epoll_reg(EP, FD));
	/* Gone from the record too: a second removal is the kernel's. */
	assert_int_equal(rs_wait_epoll_ctl(EP, EPOLL_CTL_DEL, FD, NULL),
	    -ENOENT);
	fk_done();
}

/*
 * EPOLLEXCLUSIVE registrations cannot be modified: the library's swaps
 * are a removal and an addition instead.
 */
static void test_exclusive_registration(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLOUT | EPOLLEXCLUSIVE), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	assert_library_reg(EPOLLOUT);
	rs_connect_step(FD, rs_fd_get(FD), 1, rs_clock_now_ms());
	rs_wait_fd_connect(FD);
	assert_program_reg(EPOLLOUT | EPOLLEXCLUSIVE);
	assert_true(fk_epoll_ctl_count(EPOLL_CTL_ADD) >= 3);
	fk_done();
}

/*
 * Closing a socket whose registration the library holds puts the
 * program's back first (a dup'd copy may keep it alive); a number reused
 * behind the library's back leaves the kernel alone; closing the epoll
 * instance forgets all its records.
 */
static void test_close_restores_registration(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		FK_NO_PEER(FD),
		FK_CONNECT_START(FD),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLOUT), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	rs_wait_fd_closed(FD);
	rs_fd_forget(FD);
	assert_program_reg(EPOLLOUT);

	/* Reused: the record goes, the kernel is not touched. */
	assert_int_equal(rs_wait_epoll_ctl(EP, EPOLL_CTL_DEL, FD, NULL), 0);
	assert_int_equal(add(EPOLLOUT), 0);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	int ctls = fk_epoll_ctl_count(EPOLL_CTL_MOD) +
	    fk_epoll_ctl_count(EPOLL_CTL_ADD) +
	    fk_epoll_ctl_count(EPOLL_CTL_DEL);

	rs_fd_forget(FD);
	rs_wait_fd_reused(FD);
	assert_library_reg(EPOLLOUT);
	assert_int_equal(fk_epoll_ctl_count(EPOLL_CTL_MOD) +
	    fk_epoll_ctl_count(EPOLL_CTL_ADD) +
	    fk_epoll_ctl_count(EPOLL_CTL_DEL), ctls);
	/* The instance closed: waits on its number are plain again. */
	rs_wait_fd_closed(EP);
	assert_false(rs_ept_busy(EP));
	fk_done();
}

/* Sockets already connected, and non-sockets, are not recorded. */
static void test_connected_socket_not_recorded(void **state)
{
	static const struct fk_step steps[] = {
		FK_PEER(FD),
		EWAIT_READY(10, 0, FD, EPOLLIN),
		FK_STOP,
	};
	struct epoll_event ev[2];

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(add(EPOLLIN), 0);
	assert_false(rs_ept_tracking());
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 2, 10), 1);
	assert_int_equal(ev[0].data.u64, DATA);
	fk_done();
}

/* epoll_pwait2, and the arguments the library refuses itself. */
static void test_pwait2_and_bad_arguments(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD),
		{ .fn = FK_EPOLL_PWAIT2, .fd = EP, .check_tmo = true,
		  .tmo_ms = 250 },
		FK_CONNECT_START(FD),
		FK_STOP,
	};
	struct timespec ts = { 0, 250000000L };
	struct epoll_event ev[2];

	(void)state;
	fk_script(steps);
	fk_policy(POLICY("3", "off"));
	assert_int_equal(rs_wait_epoll_ctl(EP, EPOLL_CTL_ADD, FD, NULL),
	    -EFAULT);
	assert_int_equal(add(EPOLLOUT), 0);
	/* Recorded, but nothing to look after: the real call. */
	assert_int_equal(rs_wait_epoll_pwait2(EP, ev, 2, &ts, NULL), 0);
	assert_int_equal(fk_now(), 250);
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	assert_true(rs_ept_busy(EP));
	assert_int_equal(rs_wait_epoll_pwait(EP, ev, 0, 10, NULL), -EINVAL);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(failures, run_failure),
		FK_TABLE(lates, run_late),
	};
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_level_triggered_connect),
		cmocka_unit_test(test_read_timeout_event),
		cmocka_unit_test(test_reported_once_per_wait),
		cmocka_unit_test(test_connect_reports_data),
		cmocka_unit_test(test_connect_during_plain_wait),
		cmocka_unit_test(test_mod_and_del_during_attempt),
		cmocka_unit_test(test_exclusive_registration),
		cmocka_unit_test(test_close_restores_registration),
		cmocka_unit_test(test_connected_socket_not_recorded),
		cmocka_unit_test(test_pwait2_and_bad_arguments),
	};

	return FK_RUN("epoll registrations", tables, more);
}
