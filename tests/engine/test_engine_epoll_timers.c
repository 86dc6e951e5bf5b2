/* SPDX-License-Identifier: MIT */
/*
 * test_engine_epoll_timers.c - the timers of epoll registrations on
 * connected sockets with read or write timeouts, as a request's
 * epoll_ctl calls churn them (ADD, MOD, DEL, ADD...): the timer is kept
 * lazily, never later than the socket's deadline, so that timeouts are
 * reported on time and a registration that went away reports nothing;
 * the epoll_ctl calls that need no record are the plain system call; and
 * the instance lock holds under contention.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>

#include <cmocka.h>

#include "clock.h"
#include "epollinst.h"
#include "epolltrack.h"
#include "epollwait.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"
#include "real.h"
#include "wait.h"

#define EP 120
#define FD 121
#define DATA 0xbeefULL

#define EWAIT_QUIET(t) \
	{ .fn = FK_EPOLL_PWAIT, .fd = EP, .check_tmo = true, .tmo_ms = (t) }

static int ctl(int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = DATA };

	return rs_wait_epoll_ctl(EP, op, FD, op == EPOLL_CTL_DEL ? NULL : &ev);
}

/* The next wait (no timeout) reports one timeout as events, at time at. */
static void assert_timeout_at(uint32_t events, int64_t at)
{
	struct epoll_event ev[2];

	assert_int_equal(rs_wait_epoll_wait(EP, ev, 2, -1), 1);
	assert_int_equal(ev[0].events, events);
	assert_int_equal(ev[0].data.u64, DATA);
	assert_int_equal(fk_now(), at);
}

/*
 * A registration removed (EPOLL_CTL_DEL) keeps its timer until a wait
 * finds it due: that wait reports nothing for it, sleeps on for the time
 * the program asked, and the instance has nothing left to look after.
 */
static void test_removed_registration_reports_nothing(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(501),
		EWAIT_QUIET(100),
		FK_STOP,
	};
	struct epoll_event ev[2];

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(FK_POLICY("3", "500ms", "off")), true);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	assert_int_equal(ctl(EPOLL_CTL_DEL, 0), 0);
	assert_null(fk_epoll_reg(EP, FD));
	assert_true(rs_ept_busy(EP));
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 2, 600), 0);
	assert_int_equal(fk_now(), 601);
	assert_false(rs_ept_busy(EP));
	fk_done();
}

/*
 * ADD after DEL reuses the record and its timer: activity in between moves
 * the deadline later, the timer is looked at when the earlier one falls
 * due, and the timeout is reported when the read timeout has passed since
 * the last activity -- never before, with the program's data.
 */
static void test_readd_times_out_from_last_activity(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(301),
		EWAIT_QUIET(200),
		FK_POLL_QUIET(0),
		EWAIT_QUIET(0),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD,
	    fk_policy(FK_POLICY("3", "500ms", "off")), true);

	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	assert_int_equal(ctl(EPOLL_CTL_DEL, 0), 0);
	fk_advance(200);
	rs_fd_touch(e, rs_clock_now_ms());
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	assert_int_equal(fk_epoll_reg(EP, FD)->data, DATA);
	/* The timer of the first ADD (501) falls due first; the deadline
	   is 701. */
	assert_timeout_at(EPOLLIN, 701);
	fk_done();
}

/*
 * A MOD that adds a direction with a shorter timeout brings the timer
 * forward: the write timeout (100 ms) is reported at 101, although the
 * timer was kept for the read timeout (500 ms).
 */
static void test_mod_to_shorter_timeout_brings_timer_forward(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(101),
		FK_POLL_QUIET(0),
		EWAIT_QUIET(0),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(FK_POLICY("3", "500ms", "100ms")), true);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	assert_int_equal(ctl(EPOLL_CTL_MOD, EPOLLIN | EPOLLOUT), 0);
	assert_int_equal(fk_epoll_reg(EP, FD)->events, EPOLLIN | EPOLLOUT);
	assert_timeout_at(EPOLLOUT, 101);
	fk_done();
}

/*
 * A timeout already reported (edge-triggered: once) and not yet read is
 * due at once when the program registers the socket again, whatever the
 * timer kept from before says.
 */
static void test_pending_timeout_due_at_once_after_readd(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(501),
		FK_POLL_QUIET(0),
		EWAIT_QUIET(0),
		FK_POLL_QUIET(0),
		EWAIT_QUIET(0),
		FK_STOP,
	};
	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(FK_POLICY("3", "500ms", "off")), true);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN | EPOLLET), 0);
	assert_timeout_at(EPOLLIN, 501);
	assert_int_equal(ctl(EPOLL_CTL_DEL, 0), 0);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	assert_timeout_at(EPOLLIN, 501);
	fk_done();
}

/*
 * A timer kept across DEL and ADD while the socket's connect failed (it
 * reconnected meanwhile) is dropped when it falls due: the failure is
 * reported once, the wait neither spins on the timer nor reports more.
 */
static void test_kept_timer_of_failed_socket_dropped(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(0),
		FK_STOP,
	};
	struct epoll_event ev[2];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD,
	    fk_policy(FK_POLICY("3", "500ms", "off")), true);

	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	assert_int_equal(ctl(EPOLL_CTL_DEL, 0), 0);
	e->final_error = ECONNREFUSED;
	rs_fd_set_state(e, RS_FD_FAILED);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	fk_advance(600);
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 2, 0), 1);
	assert_int_equal(ev[0].events, EPOLLIN | EPOLLERR | EPOLLHUP);
	assert_int_equal(ev[0].data.u64, DATA);
	fk_done();
}

/*
 * Which epoll_ctl calls are the plain system call: a connected socket
 * with nothing to time in an instance without records; not a socket that
 * may still connect, nor anything once the instance has records.
 */
static void test_plain_epoll_ctl(void **state)
{
	static const struct fk_step steps[] = {
		FK_NO_PEER(FD + 1),
		FK_STOP,
	};
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = DATA };

	(void)state;
	fk_script(steps);
	const struct rs_policy *p = fk_policy(FK_POLICY("3", "off", "off"));

	fk_connected(FD, p, true);
	assert_true(rs_ept_ctl_plain(EP, EPOLL_CTL_ADD, FD));
	assert_true(rs_ept_ctl_plain(EP, EPOLL_CTL_DEL, FD));
	/* Unmanaged: it may be a socket whose connect is to come. */
	assert_false(rs_ept_ctl_plain(EP, EPOLL_CTL_ADD, FD + 1));
	assert_int_equal(rs_wait_epoll_ctl(EP, EPOLL_CTL_ADD, FD + 1, &ev), 0);
	assert_true(rs_ept_tracking());
	assert_false(rs_ept_ctl_plain(EP, EPOLL_CTL_ADD, FD));
	assert_false(rs_ept_ctl_plain(EP, EPOLL_CTL_MOD, FD));
	/* Another instance without records is plain still. */
	assert_true(rs_ept_ctl_plain(EP + 1, EPOLL_CTL_MOD, FD));
	fk_done();
}

/*
 * The express path of a request's epoll_ctl calls makes the program's
 * calls and no others, and their errors are the kernel's: an ADD of a
 * registered socket, a DEL or MOD of one that is not (the general path
 * answers those, under the same lock), with errno left alone.
 */
static void test_express_calls_are_the_programs(void **state)
{
	static const struct fk_step steps[] = { FK_STOP };

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(FK_POLICY("3", "500ms", "off")), true);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	errno = EIO;
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), -EEXIST);
	assert_int_equal(errno, EIO);
	assert_int_equal(ctl(EPOLL_CTL_DEL, 0), 0);
	assert_int_equal(ctl(EPOLL_CTL_DEL, 0), -ENOENT);
	assert_int_equal(ctl(EPOLL_CTL_MOD, EPOLLOUT), -ENOENT);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN | EPOLLET), 0);
	assert_int_equal(ctl(EPOLL_CTL_MOD, EPOLLOUT), 0);
	assert_int_equal(fk_epoll_reg(EP, FD)->events, EPOLLOUT);
	assert_int_equal(fk_epoll_reg(EP, FD)->data, DATA);
	assert_int_equal(fk_epoll_ctl_count(EPOLL_CTL_ADD), 3);
	assert_int_equal(fk_epoll_ctl_count(EPOLL_CTL_DEL), 2);
	assert_int_equal(fk_epoll_ctl_count(EPOLL_CTL_MOD), 2);
	/* In libc's convention, as the exported name returns it. */
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = DATA };

	errno = 0;
	assert_int_equal(rs_ept_epoll_ctl(EP, EPOLL_CTL_ADD, FD, &ev), -1);
	assert_int_equal(errno, EEXIST);
	/* A registration the kernel lost behind our back: the DEL is done
	   all the same, errno untouched. */
	assert_int_equal(rs_real_epoll_ctl(EP, EPOLL_CTL_DEL, FD, NULL), 0);
	errno = EIO;
	assert_int_equal(rs_ept_epoll_ctl(EP, EPOLL_CTL_DEL, FD, NULL), 0);
	assert_int_equal(errno, EIO);
	assert_int_equal(ctl(EPOLL_CTL_ADD, EPOLLIN), 0);
	fk_done();
}

/*
 * A one-shot whose timeout was reported is withdrawn from the kernel; the
 * program's MOD that re-arms it is declined by the express path and done
 * by the general one: the program's registration is back in the kernel
 * and the timeout, not yet read, is due at once.
 */
static void test_rearm_after_oneshot_timeout(void **state)
{
	static const struct fk_step steps[] = {
		EWAIT_QUIET(501),
		FK_POLL_QUIET(0),
		EWAIT_QUIET(0),
		FK_STOP,
	};
	uint32_t os = EPOLLIN | EPOLLONESHOT;

	(void)state;
	fk_script(steps);
	fk_connected(FD, fk_policy(FK_POLICY("3", "500ms", "off")), true);
	assert_int_equal(ctl(EPOLL_CTL_ADD, os), 0);
	assert_timeout_at(EPOLLIN, 501);
	assert_null(fk_epoll_reg(EP, FD));
	assert_int_equal(ctl(EPOLL_CTL_MOD, os), 0);
	assert_non_null(fk_epoll_reg(EP, FD));
	assert_int_equal(fk_epoll_reg(EP, FD)->events, os);
	assert_int_equal(fk_epoll_reg(EP, FD)->data, DATA);
	assert_true(rs_ept_busy(EP));
	fk_done();
}

#define LOCK_ROUNDS 200000

static struct rs_ept_instance *g_inst;
static unsigned long g_count;

static void *hammer(void *arg)
{
	(void)arg;
	for (int k = 0; k < LOCK_ROUNDS; k++) {
		rs_epi_lock(g_inst);
		g_count++;
		rs_epi_unlock(g_inst);
	}
	return NULL;
}

/* The instance lock excludes under contention, sleepers woken. */
static void test_instance_lock_excludes(void **state)
{
	pthread_t t[3];

	(void)state;
	g_inst = rs_epi_get(EP + 2);
	assert_non_null(g_inst);
	g_count = 0;
	for (int k = 0; k < 3; k++)
		assert_int_equal(pthread_create(&t[k], NULL, hammer, NULL), 0);
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	assert_int_equal(g_count, 3UL * LOCK_ROUNDS);
	assert_int_equal(g_inst->lock, 0);
}

int main(void)
{
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_removed_registration_reports_nothing),
		cmocka_unit_test(test_readd_times_out_from_last_activity),
		cmocka_unit_test(test_mod_to_shorter_timeout_brings_timer_forward),
		cmocka_unit_test(test_pending_timeout_due_at_once_after_readd),
		cmocka_unit_test(test_kept_timer_of_failed_socket_dropped),
		cmocka_unit_test(test_plain_epoll_ctl),
		cmocka_unit_test(test_express_calls_are_the_programs),
		cmocka_unit_test(test_rearm_after_oneshot_timeout),
		cmocka_unit_test(test_instance_lock_excludes),
	};

	return fk_run_group("epoll timers", NULL, 0, more,
	    sizeof(more) / sizeof(more[0]));
}
