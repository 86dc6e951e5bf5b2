/* SPDX-License-Identifier: MIT */
/*
 * test_log_safety.c - the library's log lines never hurt the program: a
 * daemon that closes every descriptor never gets them in its own files,
 * and a pipe nobody reads never kills it with SIGPIPE.  Each case failed
 * on the code before its fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "integration/peer.h"
#include "integration/parity.h"

/* A daemon closing every descriptor never gets our log lines. */
static void test_log_file_survives_daemon_cleanup(void **state)
{
	char data[64], log[64], env_log[96], buf[4096];
	struct t_run r;

	(void)state;
	snprintf(data, sizeof(data), "/tmp/rs-logsafety-data-%d", (int)getpid());
	snprintf(log, sizeof(log), "/tmp/rs-logsafety-log-%d", (int)getpid());
	snprintf(env_log, sizeof(env_log), "RESOLUTE_LOG_FILE=%s", log);
	const char *env[] = { env_log, NULL };

	scenario(&r, "logfd: done", "logfd", data, env);
	int fd = open(data, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	assert_string_equal(buf, "PROGRAM DATA\n");
	fd = open(log, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	/* Both connects were logged: attempt 1/3 appears twice. */
	char *first = strstr(buf, "attempt 1/3");

	assert_non_null(first);
	assert_non_null(strstr(first + 1, "attempt 1/3"));
	unlink(data);
	unlink(log);
}

/* A log line written to a pipe nobody reads must not kill the program. */
static void test_log_to_dead_pipe_no_sigpipe(void **state)
{
	char exe[4096];
	int p[2], st;

	(void)state;
	snprintf(exe, sizeof(exe), "%s/itests/parity_client", t_build());
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	pid_t pid = fork();

	if (pid == 0) {
		dup2(p[1], 2);
		signal(SIGPIPE, SIG_DFL);
		setenv("LD_PRELOAD", t_lib(), 1);
		setenv("RESOLUTE_POLICY", policy, 1);
		execl(exe, exe, "refused", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/*
 * RESOLUTE_LOG_FILE a FIFO whose reader has gone: opening it for the
 * first log line waited for a reader, under the start-up lock, so the
 * first calls of every thread hung.  Now the open fails at once, the
 * lines go to standard error, and neither thread waits.
 */
static void test_log_fifo_without_reader_no_stall(void **state)
{
	char fifo[64], env_log[96];
	struct t_run r;

	(void)state;
	snprintf(fifo, sizeof(fifo), "/tmp/rs-logsafety-fifo-%d",
	    (int)getpid());
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(env_log, sizeof(env_log), "RESOLUTE_LOG_FILE=%s", fifo);
	const char *env[] = { env_log, NULL };

	scenario(&r, "firsttwo: done", "firsttwo", NULL, env);
	assert_non_null(strstr(r.out, "cannot open log file"));
	unlink(fifo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_file_survives_daemon_cleanup),
		cmocka_unit_test(test_log_to_dead_pipe_no_sigpipe),
		cmocka_unit_test(test_log_fifo_without_reader_no_stall),
	};

	return cmocka_run_group_tests(tests, parity_setup, NULL);
}
