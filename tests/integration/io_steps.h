/* SPDX-License-Identifier: MIT */
/*
 * io_steps.h - the orchestration of the read and write timeout tests
 * (test_io.c, test_io_names.c): rsclient's steps run under the library
 * against a misbehaving peer, each step's outcome and time parsed back.
 */
#ifndef RS_TEST_IO_STEPS_H
#define RS_TEST_IO_STEPS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "integration/peer.h"

#define POLICY_800 \
	"version: 1\n" \
	"defaults:\n" \
	"  read_timeout: 800ms\n" \
	"  write_timeout: 800ms\n"

#define POLICY_1S \
	"version: 1\n" \
	"defaults:\n" \
	"  read_timeout: 1s\n"

static inline long long slack(void)
{
	long long s = t_slack_ms();

	return s < 300 ? 300 : s;
}

/*
 * How early the kernel may end a timeout it keeps in ticks (the program's
 * own SO_RCVTIMEO, which the library leaves to it): one tick, the coarse
 * clock's resolution (10 ms where the kernel does not say), and 1 ms for
 * the steps' rounding to whole ms.  A tick-based wait is counted from the
 * tick count at its start, which lags the true time after an idle spell.
 */
static inline long long kernel_early_ms(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || res.tv_sec ||
	    res.tv_nsec <= 0)
		return 11;
	return (res.tv_nsec + 999999) / 1000000 + 1;
}

/* The parsed line of one step: "STEP RESULT VALUE ELAPSED". */
struct t_step {
	char result[32];
	long value;
	long long ms;
};

/* Finds the first line of step name in r's output; fails the test if none. */
static inline struct t_step find_step(const struct t_run *r, const char *name)
{
	struct t_step s = { "", 0, 0 };
	size_t len = strlen(name);

	for (const char *p = r->out; p && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, name, len) == 0 && p[len] == ' ' &&
		    sscanf(p + len, " %31s %ld %lld", s.result, &s.value,
			&s.ms) == 3)
			return s;
	}
	t_show(r);
	fail_msg("no line for step %s", name);
	return s;
}

/* Epoch milliseconds, for RESOLUTE_DEADLINE. */
static inline long long epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Runs rsclient against peer mode (with extra peer arguments) under the
 * yaml policy, with the client steps in ap, NULL-terminated; with
 * RESOLUTE_DEADLINE deadline_in_ms from just before the client starts
 * when deadline_in_ms > 0 (after the peer has started, so that the whole
 * run can be timed against it).
 */
static inline void run_client_v(struct t_run *r, const char *yaml,
    long long deadline_in_ms, const char *mode, const char *parg1,
    const char *parg2, va_list ap)
{
	struct t_peer p;
	char port[16], *argv[24], env0[64];
	const char *env[] = { env0, NULL };
	int n = 0;

	/* The peer's lifetime bounds a client the library fails to stop. */
	if (parg1)
		assert_int_equal(t_peer_start(&p, mode, "-l", "15000", parg1,
		    parg2, NULL), 0);
	else
		assert_int_equal(t_peer_start(&p, mode, "-l", "15000", NULL),
		    0);
	snprintf(port, sizeof(port), "%d", p.port);
	argv[n++] = (char *)t_client();
	argv[n++] = "127.0.0.1";
	argv[n++] = port;
	for (char *a; n < 23 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	argv[n] = NULL;
	char *policy = t_policy(yaml);

	snprintf(env0, sizeof(env0), "RESOLUTE_DEADLINE=%lld",
	    epoch_ms() + deadline_in_ms);
	assert_int_equal(t_run(r, policy, deadline_in_ms > 0 ? env : NULL,
	    argv), 0);
	unlink(policy);
	free(policy);
	t_peer_stop(&p);
}

/* run_client_v() with no environment, the steps as arguments. */
static inline void run_client(struct t_run *r, const char *yaml, const char *mode,
    const char *parg1, const char *parg2, ...)
{
	va_list ap;

	va_start(ap, parg2);
	run_client_v(r, yaml, 0, mode, parg1, parg2, ap);
	va_end(ap);
}

/* Asserts a step failed with err after [lo, lo + slack) ms of the run. */
static inline void assert_failed_in(const struct t_run *r, const char *name,
    const char *err, long long after_ms, long long lo)
{
	struct t_step s = find_step(r, name);

	if (strcmp(s.result, err) != 0 || s.ms - after_ms < lo ||
	    s.ms - after_ms >= lo + slack()) {
		t_show(r);
		fail_msg("%s: want %s after %lld ms (+%lld), got %s after %lld",
		    name, err, lo, slack(), s.result, s.ms - after_ms);
	}
}

#endif /* RS_TEST_IO_STEPS_H */
