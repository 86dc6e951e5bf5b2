/* SPDX-License-Identifier: MIT */
/*
 * test_engine_connect_state.c - the connect engine across calls: a
 * blocking connect interrupted by a signal resumes the same attempt, a
 * non-blocking one polled by connect() says EALREADY then EISCONN, a
 * failure reaches SO_ERROR once, the TCP_USER_TIMEOUT safety net comes and
 * goes, a host rule applies through the name the program resolved, an
 * attempt's outcome is the kernel's (found late, data then reset, SO_ERROR
 * during retries); and the pure helpers: failure classes and how a destination is written.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
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

#define FD 103
#define CONNECTED_EV POLLOUT

/* A blocking connect interrupted by a signal resumes where it was. */
static void test_interrupted_connect_resumes(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_POLL_EINTR(400),
		FK_POLL_READY(601, 100, FD, CONNECTED_EV),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	fk_script(steps);
	fk_policy(FK_POLICY("3", "off", "off"));
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
	fk_policy(FK_POLICY("3", "off", "off"));
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
	fk_policy(FK_POLICY("1", "off", "off"));
	fk_sock(FD)->flags = O_RDWR | O_NONBLOCK;
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	assert_non_null(e);
	assert_int_equal(rs_connect_next_ms(e), rs_clock_now_ms() + 1001);
	assert_int_equal(rs_connect_step(FD, e, 1, rs_clock_now_ms()), RS_WANT_NOTHING);
	assert_int_equal(rs_fd_state(e), RS_FD_FAILED);
	assert_int_equal(rs_connect_next_ms(e), RS_NEVER);
	assert_int_equal(rs_connect_take_error(e), ECONNREFUSED);
	assert_int_equal(rs_connect_take_error(e), 0);
	assert_int_equal(fk_stat(RS_STAT_GIVE_UPS), 1);
	/* As on Linux, a connect() after the error was reported fails with
	   ECONNABORTED; the one after it starts a new logical connect. */
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -ECONNABORTED);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(rs_fd_state(rs_fd_get(FD)), RS_FD_CONNECTED);
	assert_int_equal(rs_connect_take_error(rs_fd_get(FD)), -1);
	fk_done();
}

/*
 * The kernel's own safety net: TCP_USER_TIMEOUT is connect_timeout plus a
 * margin while an attempt waits where the library may not see it (a
 * non-blocking connect), and the program's value comes back after; a
 * blocking connect() waits in the library and sets none.
 */
static void test_safety_net_restored(void **state)
{
	static const struct fk_step blocking[] = {
		FK_CONNECT_START(FD),
		FK_POLL_READY(1001, 3, FD, CONNECTED_EV),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	static const struct fk_step nonblocking[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;

	(void)state;
	/* A blocking connect() waits in the library: no net is needed. */
	fk_script(blocking);
	fk_policy(FK_POLICY("3", "off", "off"));
	fk_sock(FD)->user_timeout = 7000;
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(fk_sock(FD)->user_timeout, 7000);
	assert_int_equal(fk_sock(FD)->user_timeout_sets, 0);
	fk_done();

	/* A non-blocking one waits where the library may not see it. */
	fk_script(nonblocking);
	fk_policy(FK_POLICY("3", "off", "off"));
	fk_sock(FD)->flags = O_NONBLOCK;
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -EINPROGRESS);
	assert_int_equal(fk_sock(FD)->user_timeout, 1250);
	assert_int_equal(rs_connect_step(FD, rs_fd_get(FD), 1,
	    rs_clock_now_ms()), RS_WANT_NOTHING);
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
		FK_POLL_QUIET(301),
		FK_TIMED_OUT(FD),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;
	uint8_t lo[4] = { 127, 0, 0, 1 };

	(void)state;
	fk_script(steps);
	fk_policy(FK_POLICY("3", "off", "off")
	    "hosts:\n"
	    "  - match: db.internal\n"
	    "    connect_timeout: 300ms\n"
	    "    attempts: 1\n");
	rs_names_learn("db.internal", AF_INET, lo);
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len),
	    -ETIMEDOUT);
	rs_names_clear();
	assert_int_equal(fk_now(), 301);
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
			fk_unix_addr(&e.addr, &e.addrlen, t[i].path);
		}
		snprintf(e.host, sizeof(e.host), "%s",
		    t[i].host ? t[i].host : "");
		rs_dest_format(&e, &d);
		assert_string_equal(d.addr, t[i].addr);
		assert_string_equal(d.text, t[i].dest);
	}
}

/*
 * A socket the program looks at only after connect_timeout is asked
 * before it is timed out: found established, it is connected.
 */
static void test_established_found_late_is_connected(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_policy(FK_POLICY("3", "off", "off"));
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	fk_advance(5000);
	assert_int_equal(rs_connect_step(FD, e, 0, rs_clock_now_ms()),
	    RS_WANT_NOTHING);
	assert_int_equal(rs_fd_state(e), RS_FD_CONNECTED);
	assert_int_equal(fk_stat(RS_STAT_TIMEOUTS), 0);
	fk_done();
}

/*
 * The peer's data queued means the connection was made, whatever became
 * of it since: connected, and SO_ERROR (a reset after the data) is left
 * to the program.
 */
static void test_peer_data_means_connected(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_policy(FK_POLICY("3", "off", "off"));
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	fk_sock(FD)->inq = 5;
	assert_int_equal(rs_connect_step(FD, e, 1, rs_clock_now_ms()),
	    RS_WANT_NOTHING);
	assert_int_equal(rs_fd_state(e), RS_FD_CONNECTED);
	assert_int_equal(rs_connect_so_error(FD, e), -1);
	fk_done();
}

/* SO_ERROR asked during the retries steps the connect and says 0. */
static void test_so_error_while_retrying(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_START(FD),
		FK_SO_ERROR_IS(FD, ECONNREFUSED),
		FK_DISSOLVE(FD),
		FK_STOP,
	};

	(void)state;
	fk_script(steps);
	fk_policy(FK_POLICY("3", "off", "off"));
	assert_int_equal(fk_connect(FD, true), -EINPROGRESS);
	struct rs_fd *e = rs_fd_get(FD);

	assert_int_equal(rs_connect_so_error(FD, e), 0);
	assert_int_equal(rs_fd_state(e), RS_FD_BACKOFF);
	assert_int_equal(fk_stat(RS_STAT_RETRIES), 1);
	fk_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interrupted_connect_resumes),
		cmocka_unit_test(test_nonblocking_connect_again),
		cmocka_unit_test(test_failed_connect_reports_once),
		cmocka_unit_test(test_safety_net_restored),
		cmocka_unit_test(test_rule_by_resolved_name),
		cmocka_unit_test(test_established_found_late_is_connected),
		cmocka_unit_test(test_peer_data_means_connected),
		cmocka_unit_test(test_so_error_while_retrying),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_format_dest),
	};

	return fk_run_group("connect engine across calls", NULL, 0, tests,
	    sizeof(tests) / sizeof(tests[0]));
}
