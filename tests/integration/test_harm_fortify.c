/* SPDX-License-Identifier: MIT */
/*
 * test_harm_fortify.c - _FORTIFY_SOURCE=2 programs (SPEC §8): they call
 * __read_chk, __recv_chk, __recvfrom_chk, __poll_chk and __ppoll_chk
 * instead of the plain names, so those must be interposed and behave.
 *
 * Proof in three steps: the test program really imports the fortified
 * names (nm -D); the dynamic linker binds them to the library (LD_DEBUG=
 * bindings); and each call works on a socket to the echo peer.  Where the
 * build has read timeouts (or the wait engine), the fortified read (poll)
 * shows the library acting through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "integration/harm.h"

static const char *const chk[] = { "__read_chk", "__recv_chk",
	"__recvfrom_chk", "__poll_chk", "__ppoll_chk" };

/* The program imports every fortified name (it was built with them). */
static void test_program_imports_chk_names(void **state)
{
	char cmd[4200], out[8192] = "";

	(void)state;
	snprintf(cmd, sizeof(cmd), "nm -D --undefined-only %s", h_prog());
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	size_t n = fread(out, 1, sizeof(out) - 1, p);

	out[n] = '\0';
	pclose(p);
	for (size_t i = 0; i < 5; i++) {
		char want[64];

		snprintf(want, sizeof(want), " %s@", chk[i]);
		if (!strstr(out, want))
			fail_msg("%s not imported by harmprog:\n%s", chk[i], out);
	}
}

/*
 * The dynamic linker binds each to libresolute.so, and each call works.
 * The loader's trace goes to a file: with a sanitizer runtime preloaded it
 * is far larger than the captured output.
 */
static void test_chk_bound_to_library_and_work(void **state)
{
	char dir[] = "/tmp/rs-harm-ld-XXXXXX", out_env[64], cmd[512];
	const char *env[] = { "LD_DEBUG=bindings", out_env, NULL };
	struct t_peer echo;
	struct t_run r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out_env, sizeof(out_env), "LD_DEBUG_OUTPUT=%s/ld", dir);
	assert_int_equal(t_peer_start(&echo, "echo", NULL), 0);
	h_run(&r, NULL, env, "fortify", echo.port, NULL);
	t_peer_stop(&echo);
	for (size_t i = 0; i < 5; i++) {
		snprintf(cmd, sizeof(cmd), "grep -q \"libresolute.so \\[0\\]: "
		    "normal symbol \\`%s'\" %s/ld.*", chk[i], dir);
		H_EXPECT(&r, system(cmd) == 0, "%s not bound to the library",
		    chk[i]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fail_msg("%s", cmd);
	h_expect(&r, "send", "ok", 5, 0, t_slack_ms());
	h_expect(&r, "poll", "ok", 1, 0, 2000);
	h_expect(&r, "ppoll", "ok", 1, 0, 2000);
	h_expect(&r, "recv_peek", "ok", 5, 0, 2000);
	h_expect(&r, "recvfrom", "ok", 2, 0, 2000);
	h_expect(&r, "read", "ok", 3, 0, 2000);
}

/* __read_chk on a silent peer: the read timeout applies. */
static void test_read_chk_times_out(void **state)
{
	char *policy = t_policy("version: 1\ndefaults:\n  read_timeout: 300ms\n");
	struct t_peer silent;
	struct t_run r;

	(void)state;
	assert_int_equal(t_peer_start(&silent, "silent", NULL), 0);
	h_run(&r, policy, NULL, "silentread", silent.port, NULL);
	t_peer_stop(&silent);
	unlink(policy);
	free(policy);
	if (!strcmp(h_step(&r, "read").result, "EINTR")) {
		printf("note: no read timeouts in this build\n");
		skip();
	}
	h_expect(&r, "read", "ETIMEDOUT", -1, 300, 300 + t_slack_ms());
}

/*
 * __poll_chk drives a non-blocking connect to a listener that comes up
 * after 600 ms: the poll reports the socket once connected, SO_ERROR 0.
 */
static void test_poll_chk_drives_connect(void **state)
{
	char *policy = t_policy("version: 1\ndefaults:\n  attempts: 8\n"
	    "  backoff:\n    base: 100ms\n    cap: 400ms\n");
	struct t_peer late;
	struct t_run r;

	(void)state;
	assert_int_equal(t_peer_start(&late, "late", "-d", "600", NULL), 0);
	h_run(&r, policy, NULL, "nbpoll", late.port, NULL);
	t_peer_stop(&late);
	unlink(policy);
	free(policy);
	struct h_step s = h_step(&r, "soerror");

	if (s.found && !strcmp(s.result, "ECONNREFUSED") && s.ms < 600) {
		printf("note: no wait engine in this build\n");
		skip();
	}
	h_expect(&r, "poll", "ok", 1, 500, 3000);
	h_expect(&r, "soerror", "ok", 0, 500, 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_imports_chk_names),
		cmocka_unit_test(test_chk_bound_to_library_and_work),
		cmocka_unit_test(test_read_chk_times_out),
		cmocka_unit_test(test_poll_chk_drives_connect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
