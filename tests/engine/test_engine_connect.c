/* SPDX-License-Identifier: MIT */
/*
 * test_engine_connect.c - the connect engine (connect.c) against the
 * scripted kernel: attempts, attempt timeouts, backoff waits, the
 * connect_budget and process-deadline cuts, retry-budget denial, EINTR
 * with and without SA_RESTART, the program's own SO_SNDTIMEO, and the
 * connects it must leave alone.  Every timing is exact: the clock moves
 * only when a scripted wait says so.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cmocka.h>

#include "born.h"
#include "clock.h"
#include "connect.h"
#include "connect_step.h"
#include "dest.h"
#include "fake.h"
#include "fdtable.h"
#include "names.h"

#define FD 100

/* Socket events of a refused attempt, and of a connected one. */
#define REFUSED_EV (POLLOUT | POLLERR | POLLHUP)
#define CONNECTED_EV POLLOUT
/* A wait of timeout t in which the attempt connects after a ms. */
#define CONNECTED_AFTER(t, a) \
	FK_POLL_READY((t), (a), FD, CONNECTED_EV), FK_SO_ERROR_IS(FD, 0), \
	FK_PEER(FD)

/*
 * A policy: connect_timeout, attempts, connect_budget, retry_on, the
 * budget's ratio and min_per_second.  Backoff without jitter: 100 ms,
 * 200 ms, 400 ms...
 */
#define POLICY(ct, att, budget, on, ratio, minps)                       \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: " ct "\n"                                   \
	"  attempts: " att "\n"                                         \
	"  retry_on: [" on "]\n"                                        \
	"  backoff:\n"                                                  \
	"    base: 100ms\n"                                             \
	"    cap: 10s\n"                                                \
	"    multiplier: 2\n"                                           \
	"    jitter: none\n"                                            \
	"  connect_budget: " budget "\n"                                \
	"  retry_budget:\n"                                             \
	"    ratio: " ratio "\n"                                        \
	"    min_per_second: " minps "\n"                               \
	"    window: 10s\n"                                             \
	"    scope: process\n"                                          \
	"hosts:\n"                                                      \
	"  - match: 127.0.0.1:9000-9100\n"                              \
	"    passthrough: true\n"

#define ALL_CLASSES "refused, timeout, unreachable, reset"
#define GENEROUS(ct, att, budget) \
	POLICY(ct, att, budget, ALL_CLASSES, "1000", "1000")

struct connect_case {
	const char *name;
	const char *policy;
	bool nonblocking;
	int64_t deadline_in_ms;	/* process deadline; 0: none */
	int sndtimeo_ms;	/* the program's SO_SNDTIMEO; 0: none */
	enum fk_handler handler;	/* SIGUSR1's during the call */
	unsigned port;		/* 0: 5432 */
	const char *unix_path;	/* connect to this unix socket instead */
	int sock_type;		/* 0: SOCK_STREAM */
	bool plain;		/* made by socket() and untouched (born.h) */
	struct fk_step steps[24];
	int want;		/* rs_connect()'s result */
	int64_t want_ms;	/* the time it took */
	enum rs_fd_state want_state;
	unsigned attempts, retries, denials, timeouts, give_ups;
	const char *log;	/* a text the log must contain, or NULL */
};

static const struct connect_case cases[] = {
	{
		.name = "refused, refused, connected",
		.policy = GENEROUS("1s", "3", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(201),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 1, FD, CONNECTED_EV),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 0, .want_ms = 305, .want_state = RS_FD_CONNECTED,
		.attempts = 3, .retries = 2,
		.log = "succeeded on attempt 3/3",
	},
	{
		.name = "refused every time: the last error, once all attempts ran",
		.policy = GENEROUS("1s", "2", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 2, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 2, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = -ECONNREFUSED, .want_ms = 105,
		.want_state = RS_FD_NONE, .attempts = 2, .retries = 1,
		.give_ups = 1, .log = "giving up",
	},
	{
		.name = "a refusal the kernel reports at once is retried too",
		.policy = GENEROUS("1s", "3", "off"),
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_NOW(FD),
		},
		.want = 0, .want_ms = 101, .want_state = RS_FD_CONNECTED,
		.attempts = 2, .retries = 1,
	},
	{
		.name = "attempt timeout: each attempt ends at connect_timeout",
		.policy = GENEROUS("200ms", "2", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(201),
			FK_TIMED_OUT(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(201),
			FK_TIMED_OUT(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 503, .want_state = RS_FD_NONE,
		.attempts = 2, .retries = 1, .timeouts = 2, .give_ups = 1,
	},
	{
		.name = "an unreachable host is retried, then connects",
		.policy = GENEROUS("1s", "2", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 5, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, EHOSTUNREACH),
			FK_ABORT(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 5, FD, CONNECTED_EV),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 0, .want_ms = 111, .want_state = RS_FD_CONNECTED,
		.attempts = 2, .retries = 1,
	},
	{
		.name = "a class not in retry_on ends the connect at once",
		.policy = POLICY("1s", "3", "off", "timeout", "1000", "1000"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = -ECONNREFUSED, .want_ms = 1, .want_state = RS_FD_NONE,
		.attempts = 1, .give_ups = 1,
	},
	{
		.name = "connect_budget cuts the first attempt short",
		.policy = GENEROUS("1s", "5", "300ms"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(301),
			FK_TIMED_OUT(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 301, .want_state = RS_FD_NONE,
		.attempts = 1, .timeouts = 1, .give_ups = 1,
		.log = "no time left for another attempt",
	},
	{
		.name = "connect_budget cuts a later attempt, no wait past it",
		.policy = GENEROUS("1s", "5", "450ms"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(451, 10, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(340),
			FK_TIMED_OUT(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 451, .want_state = RS_FD_NONE,
		.attempts = 2, .retries = 1, .timeouts = 1, .give_ups = 1,
	},
	{
		.name = "the process deadline cuts an attempt",
		.policy = GENEROUS("1s", "3", "off"),
		.deadline_in_ms = 250,
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(250),
			FK_TIMED_OUT(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 250, .want_state = RS_FD_NONE,
		.attempts = 1, .timeouts = 1, .give_ups = 1,
	},
	{
		.name = "a passed process deadline sends no SYN at all",
		.policy = GENEROUS("1s", "3", "off"),
		.deadline_in_ms = -1,
		.steps = { FK_STOP },
		.want = -ETIMEDOUT, .want_ms = 0, .want_state = RS_FD_NONE,
		.attempts = 0, .give_ups = 1, .log = "no time left for attempt 1/3",
	},
	{
		.name = "retry budget spent: the first failure is final",
		.policy = POLICY("1s", "3", "off", ALL_CLASSES, "0", "0"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = -ECONNREFUSED, .want_ms = 1, .want_state = RS_FD_NONE,
		.attempts = 1, .denials = 1, .give_ups = 1,
		.log = "retry budget exhausted",
	},
	{
		.name = "EINTR under an SA_RESTART handler: the wait goes on",
		.policy = GENEROUS("1s", "3", "off"),
		.handler = FK_RESTART_HANDLER,
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_EINTR(400),
			FK_POLL_READY(601, 1, FD, CONNECTED_EV),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 0, .want_ms = 401, .want_state = RS_FD_CONNECTED,
		.attempts = 1,
	},
	{
		.name = "EINTR under a handler without SA_RESTART is returned",
		.policy = GENEROUS("1s", "3", "off"),
		.handler = FK_PLAIN_HANDLER,
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_EINTR(400),
		},
		.want = -EINTR, .want_ms = 400, .want_state = RS_FD_CONNECTING,
		.attempts = 1,
	},
	{
		.name = "the program's SO_SNDTIMEO ends a blocking connect with "
			"EINPROGRESS",
		.policy = GENEROUS("1s", "3", "off"),
		.sndtimeo_ms = 150,
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(151),
		},
		.want = -EINPROGRESS, .want_ms = 151,
		.want_state = RS_FD_CONNECTING, .attempts = 1,
	},
	{
		.name = "non-blocking: the first attempt goes on in the background",
		.policy = GENEROUS("1s", "3", "off"),
		.nonblocking = true,
		.steps = { FK_CONNECT_START(FD) },
		.want = -EINPROGRESS, .want_ms = 0,
		.want_state = RS_FD_CONNECTING, .attempts = 1,
	},
	{
		.name = "non-blocking, refused at once: backing off, not failed",
		.policy = GENEROUS("1s", "3", "off"),
		.nonblocking = true,
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = -EINPROGRESS, .want_ms = 0,
		.want_state = RS_FD_BACKOFF, .attempts = 1, .retries = 1,
	},
	{
		.name = "non-blocking, connected at once",
		.policy = GENEROUS("1s", "3", "off"),
		.nonblocking = true,
		.steps = { FK_CONNECT_NOW(FD) },
		.want = 0, .want_state = RS_FD_CONNECTED, .attempts = 1,
	},
	{
		.name = "non-blocking, one attempt, refused at once: the error "
			"now",
		.policy = GENEROUS("1s", "1", "off"),
		.nonblocking = true,
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = -ECONNREFUSED, .want_state = RS_FD_NONE,
		.attempts = 1, .give_ups = 1,
	},
	{
		.name = "a passthrough rule: the real connect alone",
		.policy = GENEROUS("1s", "3", "off"),
		.port = 9050,
		.steps = { FK_CONNECT_FAIL(FD, ECONNREFUSED) },
		.want = -ECONNREFUSED, .want_state = RS_FD_NONE,
		.log = "passthrough rule; passed through",
	},
	{
		.name = "a unix socket without a unix: rule is left alone",
		.policy = GENEROUS("1s", "3", "off"),
		.unix_path = "/run/other/app.sock",
		.steps = { FK_CONNECT_FAIL(FD, ENOENT) },
		.want = -ENOENT, .want_state = RS_FD_NONE,
		.log = "no unix: rule matches",
	},
	{
		.name = "a unix socket not there yet is retried, without a "
			"dissolve or a safety net",
		.policy = GENEROUS("1s", "3", "off")
			"  - match: unix:/run/test/*\n",
		.unix_path = "/run/test/app.sock",
		.steps = {
			FK_CONNECT_FAIL(FD, ENOENT),
			FK_POLL_QUIET(101),
			FK_CONNECT_FAIL(FD, EAGAIN),
			FK_POLL_QUIET(201),
			FK_CONNECT_NOW(FD),
		},
		.want = 0, .want_ms = 302, .want_state = RS_FD_CONNECTED,
		.attempts = 3, .retries = 2, .log = "listener backlog full",
	},
	{
		.name = "a datagram socket: the real connect alone",
		.policy = GENEROUS("1s", "3", "off"),
		.sock_type = SOCK_DGRAM,
		.steps = { FK_CONNECT_NOW(FD) },
		.want = 0, .want_state = RS_FD_NONE,
	},
	/*
	 * A plain socket: its first attempt is the kernel's blocking
	 * connect under a SO_SNDTIMEO of one tick, with no question asked
	 * before it, nor after it when it connected; anything longer is the
	 * usual exact path, from the tick on.
	 */
	{
		.name = "plain: connected within the kernel's tick, nothing "
			"asked",
		.policy = GENEROUS("1s", "3", "off"),
		.plain = true,
		.steps = { FK_CONNECT_NOW(FD) },
		.want = 0, .want_state = RS_FD_CONNECTED, .attempts = 1,
	},
	{
		.name = "plain: the tick passes, the exact wait does the rest",
		.policy = GENEROUS("1s", "3", "off"),
		.plain = true,
		.steps = {
			FK_CONNECT_START(FD),
			CONNECTED_AFTER(1001, 5),
		},
		.want = 0, .want_ms = 5, .want_state = RS_FD_CONNECTED,
		.attempts = 1,
	},
	{
		.name = "plain: timed out at connect_timeout exactly, then "
			"retried",
		.policy = GENEROUS("1s", "2", "off"),
		.plain = true,
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(1001),
			FK_TIMED_OUT(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(1001),
			FK_TIMED_OUT(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 2103, .want_state = RS_FD_NONE,
		.attempts = 2, .retries = 1, .timeouts = 2, .give_ups = 1,
	},
	{
		.name = "plain: refused at once, retried on the usual path",
		.policy = GENEROUS("1s", "3", "off"),
		.plain = true,
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_NOW(FD),
		},
		.want = 0, .want_ms = 101, .want_state = RS_FD_CONNECTED,
		.attempts = 2, .retries = 1,
	},
	{
		.name = "plain: EINTR under a handler without SA_RESTART is "
			"returned",
		.policy = GENEROUS("1s", "3", "off"),
		.plain = true,
		.handler = FK_PLAIN_HANDLER,
		.steps = { FK_CONNECT_FAIL(FD, EINTR) },
		.want = -EINTR, .want_state = RS_FD_CONNECTING, .attempts = 1,
	},
	{
		.name = "plain: EINTR under SA_RESTART handlers waits on",
		.policy = GENEROUS("1s", "3", "off"),
		.plain = true,
		.handler = FK_RESTART_HANDLER,
		.steps = {
			FK_CONNECT_FAIL(FD, EINTR),
			CONNECTED_AFTER(1001, 7),
		},
		.want = 0, .want_ms = 7, .want_state = RS_FD_CONNECTED,
		.attempts = 1,
	},
	{
		.name = "plain, yet non-blocking after all (a copy elsewhere "
			"changed it): EINPROGRESS, as the kernel's",
		.policy = GENEROUS("1s", "3", "off"),
		.plain = true,
		.nonblocking = true,
		.steps = { FK_CONNECT_START(FD) },
		.want = -EINPROGRESS, .want_state = RS_FD_CONNECTING,
		.attempts = 1,
	},
	{
		.name = "plain, but a connect_timeout shorter than the kernel "
			"path's minimum: the usual path",
		.policy = GENEROUS("30ms", "1", "off"),
		.plain = true,
		.steps = {
			FK_CONNECT_START(FD),
			CONNECTED_AFTER(31, 2),
		},
		.want = 0, .want_ms = 2, .want_state = RS_FD_CONNECTED,
		.attempts = 1,
	},
};

static void run_case(void **state)
{
	const struct connect_case *c = *state;
	struct sockaddr_storage ss;
	socklen_t len;
	int flags = O_RDWR | (c->nonblocking ? O_NONBLOCK : 0);

	fk_script(c->steps);
	fk_policy(c->policy);
	if (c->deadline_in_ms)
		fk_deadline(c->deadline_in_ms);
	fk_handler(c->handler);
	fk_sock(FD)->flags = flags;
	fk_sock(FD)->sndtimeo.tv_usec = c->sndtimeo_ms * 1000;
	if (c->sock_type)
		fk_sock(FD)->type = c->sock_type;
	fk_addr(&ss, &len, c->port ? c->port : 5432);
	if (c->unix_path)
		fk_unix_addr(&ss, &len, c->unix_path);

	if (c->plain)
		rs_born_note(FD, AF_INET, SOCK_STREAM);
	unsigned setfl = fk_sock(FD)->setfl_calls;
	int r = rs_connect(FD, (struct sockaddr *)&ss, len);
	struct rs_fd *e = rs_fd_get(FD);

	rs_born_forget(FD);
	/* The kernel path leaves the program's SO_SNDTIMEO (none) behind,
	   and one that connected at once never touched the file flags. */
	if (c->plain) {
		assert_int_equal(fk_sock(FD)->sndtimeo.tv_sec, 0);
		assert_int_equal(fk_sock(FD)->sndtimeo.tv_usec, 0);
	}
	if (c->plain && c->steps[1].fn == FK_END && r == 0)
		assert_int_equal(fk_sock(FD)->setfl_calls, setfl);

	fk_handler(FK_NO_HANDLER);
	assert_int_equal(r, c->want);
	assert_int_equal(fk_now(), c->want_ms);
	assert_int_equal(e ? rs_fd_state(e) : RS_FD_NONE, c->want_state);
	/* Whatever happened, the program's flags are its own again, and
	   the safety net is taken down once the connect has ended. */
	assert_int_equal(fk_sock(FD)->flags, flags);
	if (c->want_state != RS_FD_CONNECTING &&
	    c->want_state != RS_FD_BACKOFF)
		assert_int_equal(fk_sock(FD)->user_timeout, 0);
	/* A managed connect (one that made an attempt or gave up) counts
	   once, on each path: the plain socket's kernel attempt counts it
	   with its attempt, or alone when it makes none (a short timeout). */
	assert_int_equal(fk_stat(RS_STAT_CONNECTS),
	    c->attempts || c->give_ups ? 1 : 0);
	assert_int_equal(fk_stat(RS_STAT_ATTEMPTS), c->attempts);
	assert_int_equal(fk_stat(RS_STAT_RETRIES), c->retries);
	assert_int_equal(fk_stat(RS_STAT_BUDGET_DENIALS), c->denials);
	assert_int_equal(fk_stat(RS_STAT_TIMEOUTS), c->timeouts);
	assert_int_equal(fk_stat(RS_STAT_GIVE_UPS), c->give_ups);
	if (c->log && !fk_log_has(c->log))
		fail_msg("the log lacks \"%s\"", c->log);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};
	return fk_run_group("connect engine", tables,
	    sizeof(tables) / sizeof(tables[0]), NULL, 0);
}
