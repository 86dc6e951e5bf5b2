/* SPDX-License-Identifier: MIT */
/*
 * test_wait.c - non-blocking connects driven by the program's waits
 * (SPEC §5), for every wait API: poll, ppoll, select, pselect, epoll
 * (level- and edge-triggered) and epoll_pwait.
 *
 * Each case runs rsclient or wait_mix under the library and asserts what
 * the wait reported, what SO_ERROR said and how long it took.  Backoff has
 * no jitter here, so the expected times are exact lower bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include "integration/peer.h"

static const char *const apis[] = { "poll", "ppoll", "select", "pselect",
	"epoll", "epollet", "epollpwait" };
#define NAPIS (sizeof(apis) / sizeof(apis[0]))

/* attempts 6, 100 ms base, no jitter: attempts at 0, 100, 300, 700 ms. */
static const char *const pol_retry = "version: 1\n"
	"defaults:\n"
	"  connect_timeout: 500ms\n"
	"  attempts: 6\n"
	"  backoff: {base: 100ms, jitter: none}\n"
	"  retry_budget: {ratio: 1000, min_per_second: 100000}\n";

/* attempts 4: refusals at 0, 100, 300, 700 ms, then ECONNREFUSED. */
static const char *const pol_refused = "version: 1\n"
	"defaults:\n"
	"  attempts: 4\n"
	"  backoff: {base: 100ms, jitter: none}\n"
	"  retry_budget: {ratio: 1000, min_per_second: 100000}\n";

/* 3 attempts of 300 ms with waits of 100 and 200 ms: 1200 ms. */
static const char *const pol_drop = "version: 1\n"
	"defaults:\n"
	"  connect_timeout: 300ms\n"
	"  attempts: 3\n"
	"  backoff: {base: 100ms, jitter: none}\n"
	"  retry_budget: {ratio: 1000, min_per_second: 100000}\n";

/* A first backoff of 2 s, so that the program's short wait ends first. */
static const char *const pol_long = "version: 1\n"
	"defaults:\n"
	"  attempts: 3\n"
	"  backoff: {base: 2s, jitter: none}\n";

struct ctx {
	char *policy;
	struct t_peer peer;
	char port[16];
	struct t_run run;
};

static const char *api_of(void **state)
{
	return *state;
}

static void ctx_start(struct ctx *c, const char *policy, const char *mode,
    const char *delay)
{
	memset(c, 0, sizeof(*c));
	c->policy = t_policy(policy);
	if (mode) {
		assert_int_equal(t_peer_start(&c->peer, mode, "-d", delay,
		    NULL), 0);
		snprintf(c->port, sizeof(c->port), "%d", c->peer.port);
	} else {
		snprintf(c->port, sizeof(c->port), "80");
	}
}

static void ctx_stop(struct ctx *c)
{
	t_peer_stop(&c->peer);
	unlink(c->policy);
	free(c->policy);
}

/* Runs argv under the library with the context's policy; shows output. */
static void run(struct ctx *c, char *const argv[])
{
	static const char *const env[] = { "RESOLUTE_LOG=error", NULL };

	assert_int_equal(t_run(&c->run, c->policy, env, argv), 0);
	t_show(&c->run);
}

/* Returns the line of the output that starts with prefix, or fails. */
static const char *line(const struct t_run *r, const char *prefix)
{
	for (const char *p = r->out; p && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, prefix, strlen(prefix)))
			return p;
	}
	fail_msg("no line starting with \"%s\"", prefix);
	return NULL;
}

/* The last field of an rsclient step line: its elapsed time. */
static long long step_ms(const struct t_run *r, const char *prefix)
{
	const char *l = line(r, prefix), *end = strchr(l, '\n');
	const char *sp = end ? end : l + strlen(l);

	while (sp > l && sp[-1] != ' ')
		sp--;
	return atoll(sp);
}

static void assert_window(long long got, long long lo, long long slack)
{
	fprintf(stderr, "elapsed %lld ms, window [%lld, %lld)\n", got, lo,
	    lo + slack);
	assert_true(got >= lo);
	assert_true(got < lo + slack);
}

/* rsclient ADDR PORT nbconnect API:MS soerror */
static void client(struct ctx *c, const char *addr, const char *api, int ms)
{
	char wait[32];

	snprintf(wait, sizeof(wait), "%s:%d", api, ms);
	char *argv[] = { (char *)t_client(), (char *)addr, c->port,
		"nbconnect", wait, "soerror", NULL };
	run(c, argv);
}

/* wait_mix API ADDR PORT CASE ARG */
static void mix(struct ctx *c, const char *addr, const char *api,
    const char *cs, const char *arg)
{
	char exe[4096];

	snprintf(exe, sizeof(exe), "%s/itests/wait_mix", t_build());
	char *argv[] = { exe, (char *)api, (char *)addr, c->port, (char *)cs,
		(char *)arg, NULL };
	run(c, argv);
}

static bool is_select(const char *api)
{
	return strstr(api, "select") != NULL;
}

/* Refused until 600 ms: the attempt at 700 ms succeeds, unnoticed. */
static void test_refused_then_up(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	char prefix[32];

	ctx_start(&c, pol_retry, "late", "600");
	client(&c, "127.0.0.1", api, 5000);
	snprintf(prefix, sizeof(prefix), "%s:5000 ok 1 ", api);
	line(&c.run, prefix);
	line(&c.run, "soerror ok");
	assert_int_equal(c.run.status, 0);
	/*
	 * The peer's 600 ms began when it said its port, before the client
	 * started, and the client's clock starts with it: under a sanitizer
	 * on a loaded machine 300 ms and more later (a connect at 250 ms of
	 * its own was 616 ms after its spawn).  From the spawn (the run's
	 * length less its last step's time: its start-up, and its exit) the
	 * connect is not before the peer listens; from its own start, not
	 * later than a retry's reaction after it.
	 */
	long long got = step_ms(&c.run, prefix);
	long long lag = c.run.elapsed_ms - step_ms(&c.run, "soerror ok");

	assert_window(got + (lag > 0 ? lag : 0), 600, 1000000);
	assert_window(got, 0, 700 + t_slack_ms());
	ctx_stop(&c);
}

/* Refused forever: one report after the last attempt, with the error. */
static void test_refused_forever(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	long long ms;

	ctx_start(&c, pol_refused, "late", "60000");
	mix(&c, "127.0.0.1", api, "connect", "5000");
	const char *l = line(&c.run, "wait 1 ok sock=");

	/* POLLOUT|POLLERR|POLLHUP; select only has the write set. */
	assert_non_null(strstr(l, is_select(api) ? "sock=0x4 " : "sock=0x1c "));
	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 700, t_slack_ms());
	line(&c.run, "soerror ECONNREFUSED");
	ctx_stop(&c);
}

/* Waits of 1 s each see nothing until the failure is final. */
static void test_refused_short_waits(void **state)
{
	const char *api = api_of(state);
	struct ctx c;

	ctx_start(&c, pol_refused, "late", "60000");
	mix(&c, "127.0.0.1", api, "connect", "300");
	line(&c.run, "wait 0 ok sock=0 other=0 ms=");
	line(&c.run, "wait 1 ok sock=");
	line(&c.run, "soerror ECONNREFUSED");
	ctx_stop(&c);
}

/* The program's 200 ms wait ends after 200 ms, in a 2 s backoff. */
static void test_program_timeout(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	char prefix[32];

	ctx_start(&c, pol_long, "late", "60000");
	client(&c, "127.0.0.1", api, 200);
	snprintf(prefix, sizeof(prefix), "%s:200 ok 0 ", api);
	line(&c.run, prefix);
	assert_window(step_ms(&c.run, prefix), 200, t_slack_ms());
	ctx_stop(&c);
}

/* Another descriptor ready at once, or after 300 ms: the wait returns. */
static void test_other_ready(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	long long ms;

	ctx_start(&c, pol_long, "late", "60000");
	mix(&c, "127.0.0.1", api, "other", "0");
	const char *l = line(&c.run, "wait 1 ok sock=0 other=0x1 ms=");

	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 0, t_slack_ms());
	mix(&c, "127.0.0.1", api, "other", "300");
	l = line(&c.run, "wait 1 ok sock=0 other=0x1 ms=");
	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 300, t_slack_ms());
	ctx_stop(&c);
}

/* A signal during the wait is the program's: EINTR. */
static void test_eintr(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	long long ms;

	ctx_start(&c, pol_long, "late", "60000");
	mix(&c, "127.0.0.1", api, "eintr", "250");
	const char *l = line(&c.run, "wait -1 EINTR sock=0 other=0 ms=");

	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 250, t_slack_ms());
	ctx_stop(&c);
}

/* The socket as fd 1500 (select sets beyond FD_SETSIZE). */
static void test_big_fd(void **state)
{
	const char *api = api_of(state);
	struct ctx c;

	ctx_start(&c, pol_retry, "late", "600");
	mix(&c, "127.0.0.1", api, "bigfd", "");
	line(&c.run, "wait 1 ok sock=0x4 other=0 ms=");
	line(&c.run, "soerror ok");
	ctx_stop(&c);
}

/* Dropped SYNs: three 300 ms attempts and 300 ms of waits. */
static void test_blackhole(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	char prefix[32];

	if (!t_netns()) {
		print_message("skipped: no network namespace\n");
		return;
	}
	ctx_start(&c, pol_drop, NULL, NULL);
	client(&c, T_BLACKHOLE, api, 5000);
	snprintf(prefix, sizeof(prefix), "%s:5000 ok 1 ", api);
	line(&c.run, prefix);
	line(&c.run, "soerror ETIMEDOUT");
	assert_window(step_ms(&c.run, prefix), 1200, 2 * t_slack_ms());
	ctx_stop(&c);
}

/* Host unreachable at once, three times, with 300 ms of waits. */
static void test_unreachable(void **state)
{
	const char *api = api_of(state);
	struct ctx c;
	char prefix[32];

	if (!t_netns()) {
		print_message("skipped: no network namespace\n");
		return;
	}
	ctx_start(&c, pol_drop, NULL, NULL);
	client(&c, T_UNREACH, api, 5000);
	snprintf(prefix, sizeof(prefix), "%s:5000 ok 1 ", api);
	line(&c.run, prefix);
	line(&c.run, "soerror EHOSTUNREACH");
	assert_window(step_ms(&c.run, prefix), 300, t_slack_ms());
	ctx_stop(&c);
}

/* read_timeout 300 ms, for the waits of a connected socket. */
static const char *const pol_read300 = "version: 1\n"
	"defaults:\n"
	"  read_timeout: 300ms\n";

/*
 * rsclient connect [FIRST] API-in:2000 against a peer that never
 * answers, under read_timeout 300 ms: the wait ends after 300 ms with the
 * socket readable (the read that follows fails with ETIMEDOUT; io.c's
 * part).
 */
static void read_timeout_in(const char *in, const char *first)
{
	struct ctx c;
	char prefix[32], step[32];

	ctx_start(&c, pol_read300, "silent", "0");
	snprintf(prefix, sizeof(prefix), "%sin:2000 ok 1 ", in);
	snprintf(step, sizeof(step), "%sin:2000", in);
	char *argv[] = { (char *)t_client(), "127.0.0.1", c.port, "connect",
		first ? (char *)first : step, first ? step : NULL, NULL };
	run(&c, argv);
	assert_window(step_ms(&c.run, prefix), 300, t_slack_ms());
	ctx_stop(&c);
}

/* The read timeout of a wait for input, by each API (epoll: epollin). */
static void test_read_timeout_wait(void **state)
{
	const char *api = api_of(state);

	read_timeout_in(strncmp(api, "epoll", 5) ? api : "epoll", NULL);
}

/*
 * A program whose system calls are filtered (seccomp), as hardened ones
 * are: the library waits in the kind of call the program made, so a
 * timed wait works with the other kind denied -- poll and select with
 * ppoll denied, ppoll and pselect with poll denied.  Before, every
 * managed wait was a ppoll, and a poll-only program got ENOSYS.
 */
static void test_filtered_wait_call(void **state)
{
	(void)state;
	read_timeout_in("poll", "deny:ppoll");
	read_timeout_in("select", "deny:ppoll");
#ifdef SYS_poll
	read_timeout_in("ppoll", "deny:poll");
	read_timeout_in("pselect", "deny:poll");
#endif
}

/*
 * EPOLLONESHOT keeps its meaning: one report once connected, none until
 * the program re-arms the registration with EPOLL_CTL_MOD, then one.
 */
static void test_oneshot(void **state)
{
	struct ctx c;

	(void)state;
	ctx_start(&c, pol_retry, "late", "600");
	mix(&c, "127.0.0.1", "epolloneshot", "connect", "5000");
	const char *l = line(&c.run, "wait 1 ok sock=0x4 ");

	l = strstr(l, "soerror ok");
	assert_non_null(l);
	l = strstr(l, "wait 0 ok sock=0 ");
	assert_non_null(l);
	assert_non_null(strstr(l, "wait 1 ok sock=0x4 "));
	ctx_stop(&c);
}

/*
 * epoll_pwait2 (not in rsclient): refused until 600 ms, then up; refused
 * forever; the program's 200 ms timeout inside a 2 s backoff.
 */
static void test_pwait2(void **state)
{
	struct ctx c;
	long long ms;

	(void)state;
	ctx_start(&c, pol_retry, "late", "600");
	mix(&c, "127.0.0.1", "epollpwait2", "connect", "5000");
	const char *l = line(&c.run, "wait 1 ok sock=0x4 ");

	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 600, 100 + t_slack_ms());
	line(&c.run, "soerror ok");
	ctx_stop(&c);
	ctx_start(&c, pol_refused, "late", "60000");
	mix(&c, "127.0.0.1", "epollpwait2", "connect", "5000");
	l = line(&c.run, "wait 1 ok sock=0x1c ");
	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 700, t_slack_ms());
	line(&c.run, "soerror ECONNREFUSED");
	ctx_stop(&c);
	ctx_start(&c, pol_long, "late", "60000");
	mix(&c, "127.0.0.1", "epollpwait2", "eintr", "250");
	l = line(&c.run, "wait -1 EINTR sock=0 other=0 ms=");
	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 250, t_slack_ms());
	ctx_stop(&c);
	ctx_start(&c, pol_long, "late", "60000");
	mix(&c, "127.0.0.1", "epollpwait2", "other", "300");
	l = line(&c.run, "wait 1 ok sock=0 other=0x1 ms=");
	assert_int_equal(sscanf(strstr(l, "ms="), "ms=%lld", &ms), 1);
	assert_window(ms, 300, t_slack_ms());
	ctx_stop(&c);
}

#define PER_API(fn) { #fn, fn }

static const struct {
	const char *name;
	void (*fn)(void **);
} cases[] = {
	PER_API(test_refused_then_up), PER_API(test_refused_forever),
	PER_API(test_refused_short_waits), PER_API(test_program_timeout),
	PER_API(test_other_ready), PER_API(test_eintr), PER_API(test_big_fd),
	PER_API(test_blackhole), PER_API(test_unreachable),
	PER_API(test_read_timeout_wait),
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

int main(void)
{
	static struct CMUnitTest tests[NCASES * NAPIS + 3];
	static char names[NCASES * NAPIS][64];
	size_t n = 0;

	for (size_t i = 0; i < NCASES; i++)
		for (size_t j = 0; j < NAPIS; j++, n++) {
			snprintf(names[n], sizeof(names[n]), "%s/%s",
			    cases[i].name + 5, apis[j]);
			tests[n] = (struct CMUnitTest){ .name = names[n],
				.test_func = cases[i].fn,
				.initial_state = (void *)apis[j] };
		}
	tests[n++] = (struct CMUnitTest){ .name = "oneshot/epoll",
		.test_func = test_oneshot };
	tests[n++] = (struct CMUnitTest){ .name = "pwait2/epoll",
		.test_func = test_pwait2 };
	tests[n++] = (struct CMUnitTest){ .name = "filtered_wait_call",
		.test_func = test_filtered_wait_call };
	int r = _cmocka_run_group_tests("wait", tests, n, NULL, NULL);

	if (!t_netns())
		printf("SKIPPED: blackhole and unreachable cases need the "
		    "network namespace (scripts/netns.sh as root)\n");
	return r;
}
