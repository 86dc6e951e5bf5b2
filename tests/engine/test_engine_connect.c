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
			FK_POLL_READY(1000, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(100),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(200),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 1, FD, CONNECTED_EV),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 0, .want_ms = 303, .want_state = RS_FD_CONNECTED,
		.attempts = 3, .retries = 2,
		.log = "succeeded on attempt 3/3",
	},
	{
		.name = "refused every time: the last error, once all attempts ran",
		.policy = GENEROUS("1s", "2", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 2, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(100),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 2, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
		},
		.want = -ECONNREFUSED, .want_ms = 104,
		.want_state = RS_FD_NONE, .attempts = 2, .retries = 1,
		.give_ups = 1, .log = "giving up",
	},
	{
		.name = "a refusal the kernel reports at once is retried too",
		.policy = GENEROUS("1s", "3", "off"),
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(100),
			FK_CONNECT_NOW(FD),
		},
		.want = 0, .want_ms = 100, .want_state = RS_FD_CONNECTED,
		.attempts = 2, .retries = 1,
	},
	{
		.name = "attempt timeout: each attempt ends at connect_timeout",
		.policy = GENEROUS("200ms", "2", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(200),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(100),
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(200),
			FK_DISSOLVE(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 500, .want_state = RS_FD_NONE,
		.attempts = 2, .retries = 1, .timeouts = 2, .give_ups = 1,
	},
	{
		.name = "an unreachable host is retried, then connects",
		.policy = GENEROUS("1s", "2", "off"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 5, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, EHOSTUNREACH),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(100),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 5, FD, CONNECTED_EV),
			FK_SO_ERROR_IS(FD, 0),
			FK_PEER(FD),
		},
		.want = 0, .want_ms = 110, .want_state = RS_FD_CONNECTED,
		.attempts = 2, .retries = 1,
	},
	{
		.name = "a class not in retry_on ends the connect at once",
		.policy = POLICY("1s", "3", "off", "timeout", "1000", "1000"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(1000, 1, FD, REFUSED_EV),
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
			FK_POLL_QUIET(300),
			FK_DISSOLVE(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 300, .want_state = RS_FD_NONE,
		.attempts = 1, .timeouts = 1, .give_ups = 1,
		.log = "no time left for another attempt",
	},
	{
		.name = "connect_budget cuts a later attempt, no wait past it",
		.policy = GENEROUS("1s", "5", "450ms"),
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_READY(450, 10, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED),
			FK_DISSOLVE(FD),
			FK_POLL_QUIET(100),
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(340),
			FK_DISSOLVE(FD),
		},
		.want = -ETIMEDOUT, .want_ms = 450, .want_state = RS_FD_NONE,
		.attempts = 2, .retries = 1, .timeouts = 1, .give_ups = 1,
	},
	{
		.name = "the process deadline cuts an attempt",
		.policy = GENEROUS("1s", "3", "off"),
		.deadline_in_ms = 250,
		.steps = {
			FK_CONNECT_START(FD),
			FK_POLL_QUIET(250),
			FK_DISSOLVE(FD),
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
			FK_POLL_READY(1000, 1, FD, REFUSED_EV),
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
			FK_POLL_READY(600, 1, FD, CONNECTED_EV),
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
			FK_POLL_QUIET(150),
		},
		.want = -EINPROGRESS, .want_ms = 150,
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
			FK_POLL_QUIET(100),
			FK_CONNECT_FAIL(FD, EAGAIN),
			FK_POLL_QUIET(200),
			FK_CONNECT_NOW(FD),
		},
		.want = 0, .want_ms = 300, .want_state = RS_FD_CONNECTED,
		.attempts = 3, .retries = 2, .log = "listener backlog full",
	},
	{
		.name = "a datagram socket: the real connect alone",
		.policy = GENEROUS("1s", "3", "off"),
		.sock_type = SOCK_DGRAM,
		.steps = { FK_CONNECT_NOW(FD) },
		.want = 0, .want_state = RS_FD_NONE,
	},
};

static void unix_addr(struct sockaddr_storage *ss, socklen_t *len,
    const char *path)
{
	struct sockaddr_un *un = (struct sockaddr_un *)(void *)ss;

	memset(ss, 0, sizeof(*ss));
	un->sun_family = AF_UNIX;
	snprintf(un->sun_path, sizeof(un->sun_path), "%s", path);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(path) + 1);
}

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
		unix_addr(&ss, &len, c->unix_path);

	int r = rs_connect(FD, (struct sockaddr *)&ss, len);
	struct rs_fd *e = rs_fd_get(FD);

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
	assert_int_equal(fk_stat(RS_STAT_ATTEMPTS), c->attempts);
	assert_int_equal(fk_stat(RS_STAT_RETRIES), c->retries);
	assert_int_equal(fk_stat(RS_STAT_BUDGET_DENIALS), c->denials);
	assert_int_equal(fk_stat(RS_STAT_TIMEOUTS), c->timeouts);
	assert_int_equal(fk_stat(RS_STAT_GIVE_UPS), c->give_ups);
	if (c->log && !fk_log_has(c->log))
		fail_msg("the log lacks \"%s\"", c->log);
	fk_done();
}

/* A blocking connect interrupted by a signal resumes where it was. */
static void test_interrupted_connect_resumes(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_POLL_EINTR(400),
		FK_POLL_READY(600, 100, FD, CONNECTED_EV),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	fk_script(steps);
	fk_policy(GENEROUS("1s", "3", "off"));
	fk_handler(FK_PLAIN_HANDLER);
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), -EINTR);
	/* The same attempt goes on: no new SYN, the same attempt timer. */
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	fk_handler(FK_NO_HANDLER);
	assert_int_equal(fk_now(), 500);
	assert_int_equal(fk_stat(RS_STAT_ATTEMPTS), 1);
	assert_int_equal(rs_fd_state(rs_fd_get(FD)), RS_FD_CONNECTED);
	fk_done();
}

/*
 * A non-blocking program that polls by calling connect() again: EALREADY
 * while the attempt is in flight, then EISCONN from the kernel.
 */
static void test_nonblocking_connect_again(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_NO_PEER(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_CONNECT_FAIL(FD, EISCONN),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	fk_script(steps);
	fk_policy(GENEROUS("1s", "3", "off"));
	fk_sock(FD)->flags = O_RDWR | O_NONBLOCK;
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -EINPROGRESS);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -EALREADY);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -EISCONN);
	fk_done();
}

/*
 * A failed non-blocking connect reports its error through SO_ERROR once,
 * as the kernel does, and its poll events say so; a new connect() then
 * starts afresh.
 */
static void test_failed_connect_reports_once(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, ECONNREFUSED),
		FK_DISSOLVE(FD),
		FK_CONNECT_NOW(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	fk_script(steps);
	fk_policy(GENEROUS("1s", "1", "off"));
	fk_sock(FD)->flags = O_RDWR | O_NONBLOCK;
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	assert_non_null(e);
	assert_int_equal(rs_connect_next_ms(e), rs_clock_now_ms() + 1000);
	assert_int_equal(rs_connect_step(FD, e, 1, rs_clock_now_ms()), RS_WANT_NOTHING);
	assert_int_equal(rs_fd_state(e), RS_FD_FAILED);
	assert_int_equal(rs_connect_next_ms(e), RS_NEVER);
	assert_int_equal(rs_connect_revents(e), POLLOUT | POLLERR | POLLHUP);
	assert_int_equal(rs_connect_take_error(e), ECONNREFUSED);
	assert_int_equal(rs_connect_take_error(e), 0);
	assert_int_equal(fk_stat(RS_STAT_GIVE_UPS), 1);
	/* A new connect() on the socket starts a new logical connect. */
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(rs_connect_revents(rs_fd_get(FD)), POLLOUT);
	assert_int_equal(rs_connect_take_error(rs_fd_get(FD)), -1);
	fk_done();
}

/*
 * The kernel's own safety net: TCP_USER_TIMEOUT is connect_timeout plus a
 * margin while attempts run, and the program's value comes back after.
 */
static void test_safety_net_restored(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_POLL_READY(1000, 3, FD, CONNECTED_EV),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	fk_script(steps);
	fk_policy(GENEROUS("1s", "3", "off"));
	fk_sock(FD)->user_timeout = 7000;
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(fk_sock(FD)->user_timeout_peak, 7000);
	assert_int_equal(fk_sock(FD)->user_timeout, 7000);
	assert_int_equal(fk_sock(FD)->user_timeout_sets, 2);
	fk_done();

	fk_script(steps);
	fk_policy(GENEROUS("1s", "3", "off"));
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(fk_sock(FD)->user_timeout_peak, 1250);
	assert_int_equal(fk_sock(FD)->user_timeout, 0);
	fk_done();
}

/*
 * A host rule written as a name applies to an address the program
 * resolved from that name, and the log names both.
 */
static void test_rule_by_resolved_name(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_POLL_QUIET(300),
		FK_DISSOLVE(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t lo[4] = { 127, 0, 0, 1 };

	(void)state;
	fk_script(steps);
	fk_policy(GENEROUS("1s", "3", "off")
	    "  - match: db.internal\n"
	    "    connect_timeout: 300ms\n"
	    "    attempts: 1\n");
	rs_names_learn("db.internal", AF_INET, lo);
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -ETIMEDOUT);
	rs_names_clear();
	assert_int_equal(fk_now(), 300);
	assert_true(fk_log_has("connect db.internal:5432 (127.0.0.1): rule "
	    "db.internal"));
	assert_true(fk_log_has("attempt 1/1 failed: timed out"));
	fk_done();
}

static void test_classify(void **state)
{
	static const struct {
		int err, family;
		unsigned want;
	} t[] = {
		{ ECONNREFUSED, AF_INET, RS_CLASS_REFUSED },
		{ ENOENT, AF_UNIX, RS_CLASS_REFUSED },
		{ EAGAIN, AF_UNIX, RS_CLASS_REFUSED },
		{ ENOENT, AF_INET, RS_CLASS_NONE },
		{ EAGAIN, AF_INET6, RS_CLASS_NONE },
		{ ETIMEDOUT, AF_INET, RS_CLASS_TIMEOUT },
		{ ENETUNREACH, AF_INET, RS_CLASS_UNREACHABLE },
		{ EHOSTUNREACH, AF_INET6, RS_CLASS_UNREACHABLE },
		{ ENETDOWN, AF_INET, RS_CLASS_UNREACHABLE },
		{ EHOSTDOWN, AF_INET, RS_CLASS_UNREACHABLE },
		{ ECONNRESET, AF_INET, RS_CLASS_RESET },
		{ ECONNABORTED, AF_INET, RS_CLASS_RESET },
		{ EACCES, AF_INET, RS_CLASS_NONE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(rs_connect_classify(t[i].err, t[i].family),
		    t[i].want);
}

static void test_format_dest(void **state)
{
	static const struct {
		const char *host, *path;
		int family;
		const char *addr, *dest;
	} t[] = {
		{ NULL, NULL, AF_INET, "127.0.0.1:5432", "127.0.0.1:5432" },
		{ "db.internal", NULL, AF_INET, "127.0.0.1:5432",
		  "db.internal:5432 (127.0.0.1)" },
		{ NULL, NULL, AF_INET6, "[::1]:443", "[::1]:443" },
		{ "web", NULL, AF_INET6, "[::1]:443", "web:443 ([::1])" },
		{ NULL, "/run/app.sock", AF_UNIX, "unix:/run/app.sock",
		  "unix:/run/app.sock" },
		{ NULL, "@abstract", AF_UNIX, "unix:@abstract",
		  "unix:@abstract" },
	};
	static struct rs_fd e;
	struct rs_dest d;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&e, 0, sizeof(e));
		if (t[i].family == AF_INET) {
			fk_addr(&e.addr, &e.addrlen, 5432);
		} else if (t[i].family == AF_INET6) {
			struct sockaddr_in6 *in6 = (void *)&e.addr;

			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons(443);
			in6->sin6_addr = in6addr_loopback;
			e.addrlen = sizeof(*in6);
		} else {
			unix_addr(&e.addr, &e.addrlen, t[i].path);
			if (t[i].path[0] == '@') {
				((struct sockaddr_un *)(void *)&e.addr)
				    ->sun_path[0] = '\0';
				e.addrlen--;	/* no terminator */
			}
		}
		snprintf(e.host, sizeof(e.host), "%s",
		    t[i].host ? t[i].host : "");
		rs_dest_format(&e, &d);
		assert_string_equal(d.addr, t[i].addr);
		assert_string_equal(d.text, t[i].dest);
	}
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_interrupted_connect_resumes),
		cmocka_unit_test(test_nonblocking_connect_again),
		cmocka_unit_test(test_failed_connect_reports_once),
		cmocka_unit_test(test_safety_net_restored),
		cmocka_unit_test(test_rule_by_resolved_name),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_format_dest),
	};

	return FK_RUN("connect engine", tables, more);
}
