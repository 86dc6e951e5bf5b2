/* SPDX-License-Identifier: MIT */
/*
 * test_engine_breaker.c - the circuit breaker in the connect engine
 * (connect_breaker.c via connect_step.c) against the scripted kernel: an
 * open address costs no connect call and fails with the error that opened
 * it, blocking and non-blocking; a probe after the open period closes it;
 * with failover the attempt goes to the name's next address at once, and
 * when every address is open the connect fails at once.  Breakers of
 * scope process, so nothing is shared with other tests.
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

#include <cmocka.h>

#include "breakers.h"
#include "clock.h"
#include "connect.h"
#include "failover.h"
#include "fake.h"
#include "fdtable.h"
#include "names.h"

#define POLICY(failures, attempts)                                      \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: 1s\n"                                       \
	"  attempts: " attempts "\n"                                    \
	"  backoff: {base: 100ms, jitter: none}\n"                      \
	"  retry_budget: {ratio: 1000, scope: process}\n"               \
	"  breaker: {failures: " failures ", open_for: 1s, "            \
	"scope: process}\n"

static int connect_fd(int fd, const char *ip, bool nonblocking)
{
	struct sockaddr_storage ss;
	socklen_t len;

	fk_sock(fd)->flags = O_RDWR | (nonblocking ? O_NONBLOCK : 0);
	fk_addr(&ss, &len, 5432);
	inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr);
	return rs_connect(fd, (struct sockaddr *)&ss, len);
}

static const char *addr_of(int fd, char *ip)
{
	struct rs_fd *e = rs_fd_get(fd);

	assert_non_null(e);
	inet_ntop(AF_INET, &((const struct sockaddr_in *)&e->addr)->sin_addr,
	    ip, INET_ADDRSTRLEN);
	return ip;
}

static void reset(void)
{
	rs_breakers_clear_process();
	rs_names_clear();
	rs_failover_clear();
}

/*
 * Two refusals open it; then a blocking and a non-blocking connect fail
 * at once with ECONNREFUSED and no call; after the period one probe
 * connects and closes it, and the next connect goes ahead as usual.
 */
static void test_open_reject_probe_close(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_FAIL(100, ECONNREFUSED), FK_DISSOLVE(100),
		FK_CONNECT_FAIL(101, ECONNREFUSED), FK_DISSOLVE(101),
		FK_CONNECT_NOW(104),
		FK_CONNECT_NOW(105),
		FK_STOP,
	};

	(void)state;
	reset();
	fk_script(steps);
	fk_policy(POLICY("2", "1"));
	assert_int_equal(connect_fd(100, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_OPENS), 0);
	assert_int_equal(connect_fd(101, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_OPENS), 1);
	assert_true(fk_log_has("breaker open after 2 failures in a row "
	    "(connection refused)"));
	int64_t t0 = fk_now();

	assert_int_equal(connect_fd(102, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(connect_fd(103, "127.0.0.1", true), -ECONNREFUSED);
	assert_int_equal(fk_now(), t0);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_REJECTS), 2);
	assert_int_equal(fk_stat(RS_STAT_ATTEMPTS), 2);
	/* Open for 900-1100 ms: at 1100 the probe goes, and connects. */
	fk_advance(1100);
	assert_int_equal(connect_fd(104, "127.0.0.1", false), 0);
	assert_true(fk_log_has("breaker closed"));
	assert_int_equal(connect_fd(105, "127.0.0.1", false), 0);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_REJECTS), 2);
	fk_done();
}

/* A failed probe opens it again, for twice the period. */
static void test_failed_probe(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_FAIL(100, ECONNREFUSED), FK_DISSOLVE(100),
		FK_CONNECT_FAIL(101, ECONNREFUSED), FK_DISSOLVE(101),
		FK_CONNECT_NOW(103),
		FK_STOP,
	};

	(void)state;
	reset();
	fk_script(steps);
	fk_policy(POLICY("1", "1"));
	assert_int_equal(connect_fd(100, "127.0.0.1", false), -ECONNREFUSED);
	fk_advance(1100);
	assert_int_equal(connect_fd(101, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_OPENS), 2);
	assert_true(fk_log_has("breaker open again: its probe failed"));
	/* 1800-2200 ms now: still open at 1799, a probe at 2200. */
	fk_advance(1799);
	assert_int_equal(connect_fd(102, "127.0.0.1", false), -ECONNREFUSED);
	fk_advance(401);
	assert_int_equal(connect_fd(103, "127.0.0.1", false), 0);
	fk_done();
}

/*
 * A failure that opens the breaker of the only address ends the connect
 * at once: its retry would only be rejected, after a backoff wait.
 */
static void test_opened_no_retry(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_FAIL(100, ECONNREFUSED), FK_DISSOLVE(100),
		FK_STOP,
	};

	(void)state;
	reset();
	fk_script(steps);
	fk_policy(POLICY("1", "3"));
	assert_int_equal(connect_fd(100, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(fk_now(), 0);
	assert_int_equal(fk_stat(RS_STAT_RETRIES), 0);
	assert_true(fk_log_has("attempt 1/3 failed: connection refused; "
	    "breaker open"));
	fk_done();
}

static struct rs_name_addr v4(const char *s)
{
	struct rs_name_addr a = { .family = AF_INET };

	assert_int_equal(inet_pton(AF_INET, s, a.addr), 1);
	return a;
}

/* The program's lookup: db.test resolves to .1 and .2. */
static void learn(void)
{
	struct rs_name_addr list[2] = { v4("127.0.0.1"), v4("127.0.0.2") };

	for (int i = 0; i < 2; i++)
		rs_names_learn("db.test", AF_INET, list[i].addr);
	rs_names_learn_list("db.test", AF_UNSPEC, list, 2);
}

/*
 * With failover, an open first address sends the first attempt to the
 * next one at once: no call to the open one, no backoff wait.  Once both
 * are open, the connect fails at once.
 */
static void test_failover_past_open(void **state)
{
	static const struct fk_step steps[] = {
		/* .1 refuses (opens it), the retry goes to .2. */
		FK_CONNECT_FAIL(100, ECONNREFUSED), FK_DISSOLVE(100),
		FK_POLL_QUIET(101),
		FK_CONNECT_NOW(100),
		/* The next connect to .1 goes to .2 at once. */
		FK_CONNECT_NOW(101),
		FK_STOP,
	};
	static const struct fk_step both[] = {
		/* Hours later .1 is half-open: its probe is refused (open
		   again), the retry goes to .2, refused too (open). */
		FK_CONNECT_FAIL(102, ECONNREFUSED), FK_DISSOLVE(102),
		FK_POLL_QUIET(101),
		FK_CONNECT_FAIL(102, ECONNREFUSED), FK_DISSOLVE(102),
		FK_STOP,
	};
	char ip[INET_ADDRSTRLEN];

	(void)state;
	reset();
	fk_script(steps);
	fk_policy(POLICY("1", "2"));
	learn();
	assert_int_equal(connect_fd(100, "127.0.0.1", false), 0);
	assert_string_equal(addr_of(100, ip), "127.0.0.2");
	int64_t t0 = fk_now();

	assert_int_equal(connect_fd(101, "127.0.0.1", false), 0);
	assert_string_equal(addr_of(101, ip), "127.0.0.2");
	assert_int_equal(fk_now(), t0);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_REJECTS), 1);
	fk_done();
	/* .2 fails too: now every address is open. */
	fk_script(both);
	learn();
	assert_int_equal(connect_fd(102, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_OPENS), 2);
	t0 = fk_now();
	assert_int_equal(connect_fd(103, "127.0.0.1", false), -ECONNREFUSED);
	assert_int_equal(fk_now(), t0);
	fk_done();
	rs_names_clear();
}

/* The default policy has no breaker: refusals never stop the attempts. */
static void test_off_by_default(void **state)
{
	static const struct fk_step steps[] = {
		FK_CONNECT_FAIL(100, ECONNREFUSED), FK_DISSOLVE(100),
		FK_CONNECT_FAIL(101, ECONNREFUSED), FK_DISSOLVE(101),
		FK_CONNECT_FAIL(102, ECONNREFUSED), FK_DISSOLVE(102),
		FK_STOP,
	};

	(void)state;
	reset();
	fk_script(steps);
	fk_policy("version: 1\ndefaults:\n  attempts: 1\n"
	    "  retry_budget: {scope: process}\n");
	for (int fd = 100; fd < 103; fd++)
		assert_int_equal(connect_fd(fd, "127.0.0.1", false),
		    -ECONNREFUSED);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_REJECTS), 0);
	assert_int_equal(fk_stat(RS_STAT_BREAKER_OPENS), 0);
	fk_done();
}

int main(void)
{
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_open_reject_probe_close),
		cmocka_unit_test(test_failed_probe),
		cmocka_unit_test(test_opened_no_retry),
		cmocka_unit_test(test_failover_past_open),
		cmocka_unit_test(test_off_by_default),
	};

	return fk_run_group("the breaker in the connect engine", NULL, 0,
	    more, sizeof(more) / sizeof(more[0]));
}
