/* SPDX-License-Identifier: MIT */
/*
 * test_ktimeo.c - blocking reads timed by the kernel for the library
 * (SO_RCVTIMEO) keep SPEC §6 and leave no trace the program can see: the
 * timeout fires within its window, the program reads back its own value,
 * a shorter value of its own is honoured (EAGAIN), a longer one (even
 * one past 32 bits of milliseconds) does not hide read_timeout, and a
 * program it execs, or starts with system(), popen() or wordexp(), does
 * not inherit the library's value on the socket.
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

/*
 * Runs the client MODE against a silent peer under policy yaml (ARG after
 * the port, if any); asserts that its read ended with "read WANT ms=" at
 * least ms and less than ms + slack after the socket's last activity (the
 * client's connect or write, from which SPEC §6 counts), and that the
 * output has also1 and also2 (NULL: nothing).
 */
static void check(const char *yaml, const char *mode, const char *arg,
    const char *want, long long ms, const char *also1, const char *also2)
{
	struct t_peer p;
	struct t_run *r = malloc(sizeof(*r));
	char port[16], head[64], *pol = t_policy(yaml);
	long long got = -1;

	assert_int_equal(t_peer_start(&p, "silent", NULL), 0);
	snprintf(port, sizeof(port), "%d", p.port);
	char *argv[] = { (char *)client(), (char *)mode, port, (char *)arg,
		NULL };

	assert_int_equal(t_run(r, pol, NULL, argv), 0);
	t_peer_stop(&p);
	snprintf(head, sizeof(head), "read %s ms=", want);
	const char *s = strstr(r->out, head);

	if (!s || (also1 && !strstr(r->out, also1)) ||
	    (also2 && !strstr(r->out, also2)))
		t_show(r);
	assert_non_null(s);
	sscanf(s + strlen(head), "%lld", &got);
	if (got < ms || got >= ms + t_slack_ms()) {
		printf("%s: read %s after %lld ms, want [%lld, %lld)\n", mode,
		    want, got, ms, ms + t_slack_ms());
		t_show(r);
	}
	assert_true(got >= ms && got < ms + t_slack_ms());
	assert_true(!also1 || strstr(r->out, also1));
	assert_true(!also2 || strstr(r->out, also2));
	free(pol);
	free(r);
}

/* read_timeout 1s ends the read after 1 s; the child sees no timeout. */
static void test_exec_child_does_not_inherit_timeout(void **state)
{
	(void)state;
	check("version: 1\ndefaults:\n  read_timeout: 1s\n", "inherit", NULL,
	    "ETIMEDOUT", 1000, "own=0.000000", "child SO_RCVTIMEO=0.000000");
}

/*
 * A fork() child that execs leaves the socket's kernel value alone: it
 * cannot tell whether its parent still reads the socket, and the parent
 * relies on the value (a daemon's helpers inherit its connections without
 * using them).  The parent's next read still ends at read_timeout (the
 * program the child runs sees the library's value: README).  A child that
 * put the program's value back would leave that read to hang until the
 * client's alarm.
 */
static void test_fork_child_exec_keeps_parent_timeout(void **state)
{
	(void)state;
	check("version: 1\ndefaults:\n  read_timeout: 1s\n", "fork", NULL,
	    "ETIMEDOUT", 1000, "armed ETIMEDOUT", NULL);
}

/*
 * The C library's own spawns (system, popen, wordexp's command
 * substitution) go through its internal exec, not the exported one: the
 * child must not inherit the library's SO_RCVTIMEO there either.
 */
static void libc_spawn_child(const char *how)
{
	check("version: 1\ndefaults:\n  read_timeout: 300ms\n", how, NULL,
	    "ETIMEDOUT", 300, "own=0.000000", "child SO_RCVTIMEO=0.000000");
}

static void test_system_child_does_not_inherit_timeout(void **state)
{
	(void)state;
	libc_spawn_child("system");
}

static void test_popen_child_does_not_inherit_timeout(void **state)
{
	(void)state;
	libc_spawn_child("popen");
}

static void test_wordexp_child_does_not_inherit_timeout(void **state)
{
	(void)state;
	libc_spawn_child("wordexp");
}

/* The program's own 300 ms fires first, with EAGAIN, as bare. */
static void test_own_shorter_timeout_gives_eagain(void **state)
{
	(void)state;
	check("version: 1\ndefaults:\n  read_timeout: 2s\n", "own", "300",
	    "EAGAIN", 300, "own=0.300000", NULL);
}

/*
 * The program's own value of 4294968 s (about 50 days) is longer than
 * read_timeout: in whole milliseconds it does not fit 32 bits, and cut to
 * them it read as 704 ms, shorter than the library's, so the kernel was
 * left the program's value and the read was never ended at 1 s.
 */
static void test_own_huge_timeout_keeps_read_timeout(void **state)
{
	(void)state;
	check("version: 1\ndefaults:\n  read_timeout: 1s\n", "own",
	    "4294968000", "ETIMEDOUT", 1000, "own=4294968.000000", NULL);
}

/*
 * Another thread's posix_spawn puts the program's value (none) back in
 * the kernel while this thread's read is timed by ours: when our early
 * timer fires, the read must still go on to read_timeout and ETIMEDOUT,
 * not return the kernel's EAGAIN to a program that set no timeout.
 */
static void test_spawn_during_read_keeps_timeout(void **state)
{
	(void)state;
	check("version: 1\ndefaults:\n  read_timeout: 1s\n", "spawn", NULL,
	    "ETIMEDOUT", 1000, "own=0.000000", NULL);
}

/*
 * A vfork child shares the parent's memory: its exec must not mistake
 * the unmanaged socket it dup2'd over the managed one's number for the
 * parent's socket.  It did: it put the program's value on the child's
 * socket and marked the parent's entry as holding it, so the parent's
 * getsockopt returned the library's value.  posix_spawn with the same
 * dup2, whose child runs none of the library's code, for comparison.
 */
static void dup2_child(const char *how)
{
	check("version: 1\ndefaults:\n  read_timeout: 300ms\n", how, NULL,
	    "ETIMEDOUT", 300, "child SO_RCVTIMEO=0.000000",
	    "parent SO_RCVTIMEO=0.000000");
}

static void test_vfork_child_dup2_leaves_parent(void **state)
{
	(void)state;
	dup2_child("vfork");
}

static void test_spawn_child_dup2_leaves_parent(void **state)
{
	(void)state;
	dup2_child("spawn-dup2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_child_does_not_inherit_timeout),
		cmocka_unit_test(test_fork_child_exec_keeps_parent_timeout),
		cmocka_unit_test(test_system_child_does_not_inherit_timeout),
		cmocka_unit_test(test_popen_child_does_not_inherit_timeout),
		cmocka_unit_test(test_wordexp_child_does_not_inherit_timeout),
		cmocka_unit_test(test_own_shorter_timeout_gives_eagain),
		cmocka_unit_test(test_own_huge_timeout_keeps_read_timeout),
		cmocka_unit_test(test_spawn_during_read_keeps_timeout),
		cmocka_unit_test(test_vfork_child_dup2_leaves_parent),
		cmocka_unit_test(test_spawn_child_dup2_leaves_parent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
