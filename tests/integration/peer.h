/* SPDX-License-Identifier: MIT */
/*
 * peer.h - fixtures for the integration tests (header-only).
 *
 * The tests are orchestrators that are NOT preloaded themselves: they start
 * the peer server (build/itests/peer) and run clients (build/itests/rsclient
 * or real programs) with LD_PRELOAD and a policy written for the test, and
 * assert on what the client printed and how long it took.
 *
 * Environment: RS_LIB, RS_BUILD (set by scripts/run-tests.sh); RS_NETNS=1
 * inside scripts/netns.sh, where 127.0.0.2 drops SYNs and 127.0.0.3 answers
 * host-unreachable.  RS_SLACK_MS widens timing windows (valgrind, ASan).
 */
#ifndef RS_TEST_PEER_H
#define RS_TEST_PEER_H

#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define T_BLACKHOLE "127.0.0.2"
#define T_UNREACH "127.0.0.3"

static inline long long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Milliseconds allowed on every upper timing bound: 150, plus RS_SLACK_MS,
 * which a slower run (valgrind, a sanitizer) adds to every test's own.
 */
static inline long long t_slack_ms(void)
{
	const char *s = getenv("RS_SLACK_MS");

	return 150 + (s ? atoll(s) : 0);
}

static inline bool t_netns(void)
{
	const char *s = getenv("RS_NETNS");

	return s && strcmp(s, "1") == 0;
}

static inline const char *t_build(void)
{
	const char *b = getenv("RS_BUILD");

	return b ? b : "build";
}

static inline const char *t_lib(void)
{
	static char path[4096];
	const char *l = getenv("RS_LIB");

	if (l)
		return l;
	snprintf(path, sizeof(path), "%s/libresolute.so", t_build());
	return path;
}

struct t_peer {
	pid_t pid;
	int port;
};

/*
 * Starts build/itests/peer MODE with extra arguments (NULL-terminated) and
 * waits until it prints its port.  Returns 0 or -1.
 */
static inline int t_peer_start(struct t_peer *p, const char *mode, ...)
{
	char exe[4096], *argv[16];
	int pipefd[2], n = 0;
	va_list ap;

	snprintf(exe, sizeof(exe), "%s/itests/peer", t_build());
	argv[n++] = exe;
	argv[n++] = (char *)mode;
	va_start(ap, mode);
	for (char *a; n < 15 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	if (pipe(pipefd) < 0)
		return -1;
	p->pid = fork();
	if (p->pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		unsetenv("LD_PRELOAD");
		execv(exe, argv);
		_exit(127);
	}
	close(pipefd[1]);
	char buf[32] = "";
	ssize_t r = read(pipefd[0], buf, sizeof(buf) - 1);

	close(pipefd[0]);
	if (r <= 0)
		return -1;
	p->port = atoi(buf);
	return 0;
}

static inline void t_peer_stop(struct t_peer *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
}

/*
 * The policy files a test wrote, removed when it exits: their shared retry
 * budgets (scope: machine) are keyed by path, and `resolute stats --prune`
 * (run by scripts/run-tests.sh) removes those whose policy is gone.
 */
static char t_policy_paths[64][40];
static int t_policy_count;

static inline void t_policy_cleanup(void)
{
	for (int i = 0; i < t_policy_count; i++)
		unlink(t_policy_paths[i]);
}

/* Writes yaml to a new temporary policy file; returns its path (malloc). */
static inline char *t_policy(const char *yaml)
{
	char *path = strdup("/tmp/rs-test-policy-XXXXXX.yaml");
	int fd = mkstemps(path, 5);

	if (fd < 0 || write(fd, yaml, strlen(yaml)) != (ssize_t)strlen(yaml))
		abort();
	close(fd);
	if (t_policy_count == 0)
		atexit(t_policy_cleanup);
	if (t_policy_count < 64)
		snprintf(t_policy_paths[t_policy_count++],
		    sizeof(t_policy_paths[0]), "%s", path);
	return path;
}

struct t_run {
	int status;		/* exit status, or 128+signal */
	long long elapsed_ms;
	char out[65536];	/* stdout and stderr together */
};

/*
 * Runs argv with LD_PRELOAD=the library and RESOLUTE_POLICY=policy (when
 * not NULL), plus env entries "NAME=VALUE" (NULL-terminated, may be NULL),
 * capturing its output.  Returns 0, or -1 if it could not be started.
 */
static inline int t_run(struct t_run *r, const char *policy,
    const char *const *env, char *const argv[])
{
	int pipefd[2];

	if (pipe(pipefd) < 0)
		return -1;
	long long start = t_now_ms();
	pid_t pid = fork();

	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		setenv("LD_PRELOAD", t_lib(), 1);
		if (policy)
			setenv("RESOLUTE_POLICY", policy, 1);
		for (; env && *env; env++)
			putenv((char *)*env);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	size_t n = 0;
	ssize_t k;

	while (n < sizeof(r->out) - 1 &&
	    (k = read(pipefd[0], r->out + n, sizeof(r->out) - 1 - n)) > 0)
		n += (size_t)k;
	r->out[n] = '\0';
	close(pipefd[0]);
	int st;

	waitpid(pid, &st, 0);
	r->elapsed_ms = t_now_ms() - start;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/* Path of build/itests/rsclient. */
static inline const char *t_client(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/itests/rsclient", t_build());
	return path;
}

/* Prints the output of a run, for a failing assertion's context. */
static inline void t_show(const struct t_run *r)
{
	fprintf(stderr, "--- exit %d after %lld ms:\n%s---\n", r->status,
	    r->elapsed_ms, r->out);
}

#endif /* RS_TEST_PEER_H */
