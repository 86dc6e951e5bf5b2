/* SPDX-License-Identifier: MIT */
/*
 * test_connect.h - helpers shared by the connect integration tests.
 *
 * The tests run build/itests/rsclient (or a small client of their own)
 * under the library with a policy written for the test, then read what the
 * client printed ("STEP RESULT VALUE elapsed_ms") and the library's JSON log
 * lines, and check counts and timings against the policy's formulas.
 * Header-only; single-threaded orchestrators.
 */
#ifndef RS_TEST_CONNECT_H
#define RS_TEST_CONNECT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include "integration/peer.h"

/*
 * A block every test policy starts with.  The retry budget is per process
 * and generous so that concurrent test runs sharing a machine budget can
 * never turn a retry this file counts on into a budget_exhausted give-up.
 */
#define CT_BUDGET \
	"  retry_budget: {ratio: 1, min_per_second: 1000, window: 10s, " \
	"scope: process}\n"

/* Upper-bound slack for multi-second sequences: at least 300 ms. */
static inline long long ct_slack_ms(void)
{
	long long s = t_slack_ms();

	return s < 300 ? 300 : s;
}

/* Fails the test after showing the client's output, with a message. */
#define CT_CHECK(r, cond)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			t_show(r);                                         \
			fail_msg("%s:%d: %s", __FILE__, __LINE__, #cond);  \
		}                                                          \
	} while (0)

/* Asserts lo <= v < hi, showing the run and the numbers otherwise. */
#define CT_WINDOW(r, v, lo, hi)                                            \
	do {                                                               \
		long long v_ = (v), lo_ = (lo), hi_ = (hi);                \
		if (v_ < lo_ || v_ >= hi_) {                               \
			t_show(r);                                         \
			fail_msg("%s:%d: %s = %lld, expected [%lld, %lld)", \
			    __FILE__, __LINE__, #v, v_, lo_, hi_);         \
		}                                                          \
	} while (0)

/*
 * Returns a port on 127.0.0.1 that refuses connections: a socket bound to
 * it and never listening, kept open in *fd so that nobody else takes it.
 */
static inline int ct_closed_port(int *fd)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
	    getsockname(*fd, (struct sockaddr *)&in, &len) < 0)
		abort();
	return ntohs(in.sin_port);
}

/* Writes a policy from a printf format; returns its path (malloc). */
static inline char *ct_policy(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline char *ct_policy(const char *fmt, ...)
{
	char yaml[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(yaml, sizeof(yaml), fmt, ap);
	va_end(ap);
	return t_policy(yaml);
}

static inline void ct_policy_free(char *path)
{
	unlink(path);
	free(path);
}

/*
 * Runs rsclient with the given arguments (NULL-terminated) under the
 * library, with JSON logs at debug level plus extra env entries.
 */
static inline void ct_client(struct t_run *r, const char *policy,
    const char *const *env, ...)
{
	char *argv[32];
	const char *envv[16] = { "RESOLUTE_LOG=debug",
		"RESOLUTE_LOG_FORMAT=json" };
	int n = 0, m = 2;
	va_list ap;

	argv[n++] = (char *)t_client();
	va_start(ap, env);
	for (char *a; n < 31 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	for (; env && *env && m < 15; env++)
		envv[m++] = *env;
	envv[m] = NULL;
	if (t_run(r, policy, envv, argv) < 0)
		fail_msg("cannot run %s", argv[0]);
}

/* Counts the lines of out that contain needle. */
static inline int ct_count(const char *out, const char *needle)
{
	int n = 0;

	for (const char *l = out; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		const char *hit = memmem(l, len, needle, strlen(needle));

		n += hit != NULL;
		l = end ? end + 1 : NULL;
	}
	return n;
}

/*
 * Counts the library's log lines about connection events (JSON objects or
 * text lines), leaving out the debug lines that explain a decision and the
 * exit summary, which are about the process rather than one connection.
 */
static inline int ct_log_lines(const char *out)
{
	return ct_count(out, "\"event\":") -
	    ct_count(out, "\"event\":\"summary\"") +
	    ct_count(out, "resolute[") - ct_count(out, ": debug: ") -
	    ct_count(out, ": info: summary ");
}

/*
 * Finds the idx-th line (0-based) containing needle and copies it to buf.
 * Returns false when there are fewer.
 */
static inline bool ct_line(const char *out, const char *needle, int idx,
    char *buf, size_t len)
{
	for (const char *l = out; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) : strlen(l);

		if (memmem(l, n, needle, strlen(needle)) && idx-- == 0) {
			snprintf(buf, len, "%.*s", (int)n, l);
			return true;
		}
		l = end ? end + 1 : NULL;
	}
	return false;
}

/* The integer value of "key": in a JSON line, or -1 when absent. */
static inline long long ct_json_int(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

/*
 * Parses the client's line for step (the first line starting with "STEP "):
 * copies its result ("ok" or an errno name) and returns its elapsed_ms, or
 * -1 when the step did not run.
 */
static inline long long ct_step(const char *out, const char *step,
    char *result, size_t len)
{
	char pat[128], line[512], res[64];
	long long value, ms;

	snprintf(pat, sizeof(pat), "%s ", step);
	for (int i = 0; ct_line(out, pat, i, line, sizeof(line)); i++) {
		if (strncmp(line, pat, strlen(pat)) != 0)
			continue;
		if (sscanf(line + strlen(pat), "%63s %lld %lld", res, &value,
		    &ms) != 3)
			return -1;
		snprintf(result, len, "%s", res);
		return ms;
	}
	return -1;
}

/* Sums the wait_ms of the "retry" events, checking each against bounds. */
static inline long long ct_check_waits(const struct t_run *r, int retries,
    const long long *lo, const long long *hi)
{
	char line[1024];
	long long sum = 0;

	for (int i = 0; i < retries; i++) {
		if (!ct_line(r->out, "\"event\":\"retry\"", i, line,
		    sizeof(line))) {
			t_show(r);
			fail_msg("retry event %d missing", i + 1);
		}
		long long w = ct_json_int(line, "wait_ms");

		CT_CHECK(r, ct_json_int(line, "attempt") == i + 1);
		CT_WINDOW(r, w, lo[i], hi[i] + 1);
		sum += w;
	}
	CT_CHECK(r, ct_count(r->out, "\"event\":\"retry\"") == retries);
	return sum;
}

/* Epoch milliseconds, for RESOLUTE_DEADLINE. */
static inline long long ct_epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

#endif /* RS_TEST_CONNECT_H */
