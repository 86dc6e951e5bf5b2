/* SPDX-License-Identifier: MIT */
/*
 * test_engine_failover.c - failover in the connect engine (retarget.c via
 * connect_step.c) against the scripted kernel: each retry goes to the
 * next address the program's lookup gave, a recent failure is skipped,
 * `failover: off` and unresolved addresses stay put.  The address of
 * each attempt is read back from the entry and the log lines.
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

#include "clock.h"
#include "connect.h"
#include "failover.h"
#include "fake.h"
#include "fdtable.h"
#include "names.h"

#define FD 100
#define REFUSED_EV (POLLOUT | POLLERR | POLLHUP)

#define POLICY(extra)                                                   \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: 1s\n"                                       \
	"  attempts: 3\n"                                               \
	"  backoff: {base: 100ms, jitter: none}\n"                      \
	"  retry_budget: {ratio: 1000, scope: process}\n"               \
	extra

struct failover_case {
	const char *name;
	const char *policy;
	bool learn;		/* db.test -> 127.0.0.1, .2, .3 */
	const char *failed;	/* an address that failed lately, or NULL */
	struct fk_step steps[16];
	const char *want_addr;	/* where the socket ends up */
	unsigned failovers;
	const char *log[3];	/* texts the log must contain */
};

static const struct failover_case cases[] = {
	{
		.name = "each retry goes to the name's next address",
		.policy = POLICY(""), .learn = true,
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED), FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_START(FD),
			FK_POLL_READY(1001, 1, FD, REFUSED_EV),
			FK_SO_ERROR_IS(FD, ECONNREFUSED), FK_DISSOLVE(FD),
			FK_POLL_QUIET(201),
			FK_CONNECT_NOW(FD),
		},
		.want_addr = "127.0.0.3", .failovers = 2,
		.log = { "db.test:5432 (127.0.0.1) attempt 1/3 failed",
			"db.test:5432 (127.0.0.2) attempt 2/3 failed",
			"db.test:5432 (127.0.0.3) succeeded on attempt 3/3" },
	},
	{
		.name = "an address that failed lately is skipped",
		.policy = POLICY(""), .learn = true, .failed = "127.0.0.2",
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED), FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_NOW(FD),
		},
		.want_addr = "127.0.0.3", .failovers = 1,
		.log = { "(127.0.0.3) succeeded on attempt 2/3" },
	},
	{
		.name = "failover: off keeps every attempt on the address",
		.policy = POLICY("  failover: off\n"), .learn = true,
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED), FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_NOW(FD),
		},
		.want_addr = "127.0.0.1", .failovers = 0,
		.log = { "(127.0.0.1) succeeded on attempt 2/3" },
	},
	{
		.name = "an address no lookup gave stays put",
		.policy = POLICY(""), .learn = false,
		.steps = {
			FK_CONNECT_FAIL(FD, ECONNREFUSED), FK_DISSOLVE(FD),
			FK_POLL_QUIET(101),
			FK_CONNECT_NOW(FD),
		},
		.want_addr = "127.0.0.1", .failovers = 0,
		.log = { "127.0.0.1:5432 succeeded on attempt 2/3" },
	},
};

static struct rs_name_addr v4(const char *s)
{
	struct rs_name_addr a = { .family = AF_INET };

	assert_int_equal(inet_pton(AF_INET, s, a.addr), 1);
	return a;
}

/* The program's lookup: db.test resolves to three addresses. */
static void learn(void)
{
	struct rs_name_addr list[3] = { v4("127.0.0.1"), v4("127.0.0.2"),
		v4("127.0.0.3") };

	for (int i = 0; i < 3; i++)
		rs_names_learn("db.test", AF_INET, list[i].addr);
	rs_names_learn_list("db.test", AF_UNSPEC, list, 3);
}

static void run_case(void **state)
{
	const struct failover_case *c = *state;
	struct sockaddr_storage ss;
	socklen_t len;
	char ip[INET_ADDRSTRLEN];

	rs_names_clear();
	rs_failover_clear();
	fk_script(c->steps);
	fk_policy(c->policy);
	fk_sock(FD)->flags = O_RDWR;
	if (c->learn)
		learn();
	if (c->failed) {
		struct rs_name_addr f = v4(c->failed);

		rs_failover_note_failure(&f, 5432, rs_clock_now_ms());
	}
	fk_addr(&ss, &len, 5432);
	assert_int_equal(rs_connect(FD, (struct sockaddr *)&ss, len), 0);
	struct rs_fd *e = rs_fd_get(FD);

	assert_non_null(e);
	const struct sockaddr_in *in = (const void *)&e->addr;

	inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
	assert_string_equal(ip, c->want_addr);
	assert_int_equal(ntohs(in->sin_port), 5432);
	assert_int_equal(fk_stat(RS_STAT_FAILOVERS), c->failovers);
	for (int i = 0; i < 3 && c->log[i]; i++)
		if (!fk_log_has(c->log[i]))
			fail_msg("the log lacks \"%s\"", c->log[i]);
	rs_names_clear();
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};
	return fk_run_group("failover in the connect engine", tables,
	    sizeof(tables) / sizeof(tables[0]), NULL, 0);
}
