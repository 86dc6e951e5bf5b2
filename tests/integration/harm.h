/* SPDX-License-Identifier: MIT */
/*
 * harm.h - helpers for the test_harm_* orchestrators (header-only).
 *
 * They run build/itests/harmprog SCENARIO under the library and pick the
 * lines "NAME RESULT VALUE MS" it prints.  Whether this build has read
 * timeouts is probed once (a read on a silent peer either times out or is
 * ended by harmprog's 3 s alarm), so that the cases that observe the
 * library through read timeouts can say so when they cannot.
 */
#ifndef RS_TEST_HARM_H
#define RS_TEST_HARM_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "integration/peer.h"

#define H_ALARM_MS 3000

struct h_step {
	char result[32];
	long value;
	long long ms;
	bool found;
};

static inline const char *h_prog(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/itests/harmprog", t_build());
	return path;
}

/* Runs harmprog SCENARIO 127.0.0.1 PORT ARG... (NULL-terminated). */
static inline void h_run(struct t_run *r, const char *policy,
    const char *const *env, const char *scenario, int port, ...)
{
	char *argv[32], ps[16];
	int n = 0;
	va_list ap;

	snprintf(ps, sizeof(ps), "%d", port);
	argv[n++] = (char *)h_prog();
	argv[n++] = (char *)scenario;
	argv[n++] = "127.0.0.1";
	argv[n++] = ps;
	va_start(ap, port);
	for (char *a; n < 31 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	if (t_run(r, policy, env, argv) < 0)
		abort();
}

/* The first line of r's output that starts with "NAME ". */
static inline struct h_step h_step(const struct t_run *r, const char *name)
{
	struct h_step s = { .found = false };
	size_t len = strlen(name);

	for (const char *l = r->out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (!strncmp(l, name, len) && l[len] == ' ' &&
		    sscanf(l + len + 1, "%31s %ld %lld", s.result, &s.value,
			&s.ms) == 3) {
			s.found = true;
			break;
		}
	return s;
}

/* A loopback port that nothing listens on (bound, then closed). */
static inline int h_refused_port(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (void *)&in, len) < 0 ||
	    getsockname(s, (void *)&in, &len) < 0)
		abort();
	close(s);
	return ntohs(in.sin_port);
}

/* Fails the test, showing the run, unless the condition holds. */
#define H_EXPECT(r, cond, ...)                                          \
	do {                                                            \
		if (!(cond)) {                                          \
			t_show(r);                                      \
			fail_msg(__VA_ARGS__);                          \
		}                                                       \
	} while (0)

/* Asserts step NAME gave RESULT (VALUE unless < -1) within [lo, hi) ms. */
static inline void h_expect(const struct t_run *r, const char *name,
    const char *result, long value, long long lo, long long hi)
{
	struct h_step s = h_step(r, name);

	H_EXPECT(r, s.found && !strcmp(s.result, result) &&
	    (value < -1 || s.value == value) && s.ms >= lo && s.ms < hi,
	    "%s: want %s %ld in [%lld, %lld) ms, got %s %ld after %lld ms",
	    name, result, value, lo, hi, s.found ? s.result : "nothing",
	    s.value, s.ms);
}

#endif /* RS_TEST_HARM_H */
