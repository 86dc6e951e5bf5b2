/*
 * test_ktimeo.c - blocking reads timed by the kernel for the library
 * (SO_RCVTIMEO) keep SPEC §6 and leave no trace the program can see: the
 * timeout fires within its window, the program reads back its own value,
 * a shorter value of its own is honoured (EAGAIN), and a program it execs
 * does not inherit the library's value on the socket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "integration/peer.h"

static const char *client(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/itests/sockopt_client", t_build());
	return path;
}

static void run(struct t_run *r, const char *yaml, char **argv)
{
	char *pol = t_policy(yaml);

	assert_int_equal(t_run(r, pol, NULL, argv), 0);
	free(pol);
}

/* read_timeout 1s ends the read after 1 s; the child sees no timeout. */
static void test_exec_child_does_not_inherit_timeout(void **state)
{
	struct t_peer p;
	struct t_run *r = malloc(sizeof(*r));
	char port[16];
	long long ms = -1;

	(void)state;
	assert_int_equal(t_peer_start(&p, "silent", NULL), 0);
	snprintf(port, sizeof(port), "%d", p.port);
	char *argv[] = { (char *)client(), "inherit", port, NULL };

	run(r, "version: 1\ndefaults:\n  read_timeout: 1s\n", argv);
	t_peer_stop(&p);
	const char *s = strstr(r->out, "read ETIMEDOUT ms=");

	if (!s || !strstr(r->out, "own=0.000000") ||
	    !strstr(r->out, "child SO_RCVTIMEO=0.000000"))
		t_show(r);
	assert_non_null(s);
	sscanf(s, "read ETIMEDOUT ms=%lld", &ms);
	assert_true(ms >= 1000 && ms < 1000 + t_slack_ms());
	assert_non_null(strstr(r->out, "own=0.000000"));
	assert_non_null(strstr(r->out, "child SO_RCVTIMEO=0.000000"));
	free(r);
}

/* The program's own 300 ms fires first, with EAGAIN, as bare. */
static void test_own_shorter_timeout_gives_eagain(void **state)
{
	struct t_peer p;
	struct t_run *r = malloc(sizeof(*r));
	char port[16];
	long long ms = -1;

	(void)state;
	assert_int_equal(t_peer_start(&p, "silent", NULL), 0);
	snprintf(port, sizeof(port), "%d", p.port);
	char *argv[] = { (char *)client(), "own", port, "300", NULL };

	run(r, "version: 1\ndefaults:\n  read_timeout: 2s\n", argv);
	t_peer_stop(&p);
	const char *s = strstr(r->out, "read EAGAIN ms=");

	if (!s || !strstr(r->out, "own=0.300000"))
		t_show(r);
	assert_non_null(s);
	sscanf(s, "read EAGAIN ms=%lld", &ms);
	assert_true(ms >= 300 && ms < 300 + t_slack_ms());
	assert_non_null(strstr(r->out, "own=0.300000"));
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_child_does_not_inherit_timeout),
		cmocka_unit_test(test_own_shorter_timeout_gives_eagain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
