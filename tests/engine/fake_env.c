/* SPDX-License-Identifier: MIT */
/*
 * fake_env.c - what the engines get from outside besides the real calls:
 * the monotonic clock, the runtime (policy and process deadline), the
 * statistics counters and the log, all under the test's control.
 *
 * Each test starts its clock ten hours after the previous one's, so that
 * retry budgets (windows of at most an hour) never carry counts from one
 * test into the next.
 */
#include "fake.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "connect.h"
#include "epolltrack.h"
#include "fdtable.h"
#include "httpconn.h"
#include "runtime.h"
#include "tdeadline.h"
#include "log.h"
#include "policy_yaml.h"
#include "wait.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#define TEST_SPACING_MS (10 * 3600 * 1000LL)

static struct rs_runtime runtime = { .deadline_ms = RS_NEVER };
unsigned rs_runtime_rare;
static struct rs_policy *policy;
static unsigned stats[RS_STAT_COUNT];
static char log_path[64];

/* ---- the clock ---- */

/*
 * The fake time, in microseconds: the engines read it in whole ms, rounded
 * down as rs_clock_now_ms() does, so a test can place an event between two
 * ms.  Each reading may cost some time (fk_clock_cost_us()), as the code
 * that runs between two readings does, so a ms can pass between a stamp
 * and the wait computed from it.
 */
static int64_t clock_us = 1000000000000LL, start_us, read_cost_us;
static unsigned fine_reads;

int64_t __wrap_rs_clock_now_ms(void);
int64_t __wrap_rs_clock_coarse_ms(void);

/* The coarse clock of the engines' cheap checks: the same fake time. */
int64_t __wrap_rs_clock_coarse_ms(void)
{
	return clock_us / 1000;
}

int64_t __wrap_rs_clock_now_ms(void)
{
	int64_t ms = clock_us / 1000;

	clock_us += read_cost_us;
	fine_reads++;
	return ms;
}

unsigned fk_clock_reads(void)
{
	return fine_reads;
}

int64_t fk_now(void)
{
	return (clock_us - start_us) / 1000;
}

int64_t fk_now_us(void)
{
	return clock_us - start_us;
}

void fk_advance(int64_t ms)
{
	clock_us += ms * 1000;
}

void fk_advance_us(int64_t us)
{
	clock_us += us;
}

void fk_clock_cost_us(int64_t us)
{
	read_cost_us = us;
}

/* ---- the runtime ---- */

const struct rs_runtime *rs_runtime_get(void)
{
	return &runtime;
}

const struct rs_runtime *rs_runtime_peek(void)
{
	return &runtime;
}

const struct rs_policy *fk_policy(const char *yaml)
{
	struct rs_diags d = { 0 };
	char line[512];

	rs_policy_free(policy);
	policy = NULL;
	if (rs_policy_load_buffer("<engine-test>", yaml, strlen(yaml), &policy,
	    &d) != 0) {
		for (size_t i = 0; i < d.n; i++) {
			rs_diag_format(&d.v[i], line, sizeof(line));
			print_error("%s\n", line);
		}
		rs_diags_free(&d);
		fail_msg("the test's policy does not load");
	}
	rs_diags_free(&d);
	/* A machine-wide budget would map a segment under /dev/shm. */
	assert_int_equal(policy->defaults.budget.scope, RS_SCOPE_PROCESS);
	for (size_t i = 0; i < policy->nrules; i++)
		assert_int_equal(policy->rules[i].settings.budget.scope,
		    RS_SCOPE_PROCESS);
	runtime.policy = policy;
	runtime.active = true;
	return policy;
}

void fk_deadline(int64_t in_ms)
{
	runtime.deadline_ms = in_ms == RS_NEVER ? RS_NEVER :
	    clock_us / 1000 + in_ms;
	if (runtime.deadline_ms != RS_NEVER)
		rs_runtime_rare |= RS_RARE_DEADLINE;
	/* As RESOLUTE_DEADLINE gives it: on the wall clock, for headers. */
	runtime.deadline_epoch_ms = in_ms == RS_NEVER ? 0 :
	    rs_clock_epoch_ms() + in_ms;
}

/* ---- counters ---- */

void __wrap_rs_stats_add(const struct rs_rule *rule, enum rs_stat k);

void __wrap_rs_stats_add(const struct rs_rule *rule, enum rs_stat k)
{
	(void)rule;
	if ((unsigned)k < RS_STAT_COUNT)
		stats[k]++;
}

void __wrap_rs_stats_add_pair(const struct rs_rule *rule, enum rs_stat a,
    enum rs_stat b);

void __wrap_rs_stats_add_pair(const struct rs_rule *rule, enum rs_stat a,
    enum rs_stat b)
{
	__wrap_rs_stats_add(rule, a);
	__wrap_rs_stats_add(rule, b);
}

unsigned fk_stat(enum rs_stat k)
{
	return (unsigned)k < RS_STAT_COUNT ? stats[k] : 0;
}

/* ---- the log: debug level, into a file of the test's ---- */

static void open_log(void)
{
	int fd;

	snprintf(log_path, sizeof(log_path), "/tmp/rs-engine-log.XXXXXX");
	fd = mkstemp(log_path);
	assert_true(fd >= 0);
	close(fd);
	setenv("RESOLUTE_LOG", "debug", 1);
	setenv("RESOLUTE_LOG_FILE", log_path, 1);
	rs_log_configure(false);
	/* The name is gone at once; the library keeps the file open. */
	unlink(log_path);
}

/*
 * Returns the library's descriptor for the log file (the only way back to
 * it, as its name is gone), or -1.
 */
static int log_fd(void)
{
	char path[64], buf[256];

	for (int fd = 500; fd < 520; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, buf, sizeof(buf) - 1);

		if (n > 0 && (buf[n] = '\0', strstr(buf, "rs-engine-log.")))
			return fd;
	}
	return -1;
}

bool fk_log_has(const char *text)
{
	static char buf[65536];
	char path[64];
	ssize_t n;
	int fd = log_fd();

	if (fd < 0)
		return false;
	/* The library's descriptor is write-only: read through /proc. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

/* Empties the log file so that each test reads its own lines only. */
static void clear_log(void)
{
	int fd = log_fd();

	if (fd >= 0)
		assert_int_equal(ftruncate(fd, 0), 0);
}

/* ---- per test ---- */

void fk_env_reset(void)
{
	if (!log_path[0])
		open_log();
	clear_log();
	/* Each test starts on a whole ms, its readings free. */
	clock_us += TEST_SPACING_MS * 1000 - clock_us % 1000;
	start_us = clock_us;
	read_cost_us = 0;
	memset(stats, 0, sizeof(stats));
	runtime.deadline_ms = RS_NEVER;
	runtime.deadline_epoch_ms = 0;
}

void fk_env_forget(void)
{
	fk_handler(FK_NO_HANDLER);
	rs_ept_fd_range_closed(0, FK_MAX_FD - 1);
	rs_httpconn_forget_range(0, FK_MAX_FD - 1);
	rs_fd_forget_range(0, FK_MAX_FD - 1);
	rs_tdeadline_clear();
}

void fk_addr(struct sockaddr_storage *ss, socklen_t *len, unsigned port)
{
	struct sockaddr_in *in = (struct sockaddr_in *)(void *)ss;

	memset(ss, 0, sizeof(*ss));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*len = sizeof(*in);
}

void fk_unix_addr(struct sockaddr_storage *ss, socklen_t *len,
    const char *path)
{
	struct sockaddr_un *un = (struct sockaddr_un *)(void *)ss;
	size_t n = strlen(path);

	memset(ss, 0, sizeof(*ss));
	un->sun_family = AF_UNIX;
	snprintf(un->sun_path, sizeof(un->sun_path), "%s", path);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	if (path[0] == '@') {
		un->sun_path[0] = '\0';
		(*len)--;
	}
}

struct rs_fd *fk_connected(int fd, const struct rs_policy *p,
    bool nonblocking)
{
	struct rs_fd *e = rs_fd_claim(fd, true);

	assert_non_null(e);
	e->settings = &p->defaults;
	fk_addr(&e->addr, &e->addrlen, 5432);
	e->nonblocking = nonblocking;
	rs_fd_touch(e, clock_us / 1000);
	rs_fd_set_state(e, RS_FD_CONNECTED);
	fk_sock(fd)->flags = O_RDWR | (nonblocking ? O_NONBLOCK : 0);
	return e;
}

int fk_connect(int fd, bool nonblocking)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int r;

	fk_sock(fd)->flags = O_RDWR | (nonblocking ? O_NONBLOCK : 0);
	fk_addr(&ss, &len, 5432);
	r = rs_connect(fd, (struct sockaddr *)&ss, len);
	rs_wait_fd_connect(fd);
	return r;
}

static void on_signal(int sig)
{
	(void)sig;
}

void fk_handler(enum fk_handler kind)
{
	struct sigaction sa = {
		.sa_handler = kind == FK_NO_HANDLER ? SIG_DFL : on_signal,
		.sa_flags = kind == FK_RESTART_HANDLER ? SA_RESTART : 0,
	};

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
}

static int forget_all(void **state)
{
	(void)state;
	fk_env_forget();
	return 0;
}

int fk_run_group(const char *name, const struct fk_table *tables,
    size_t ntables, const struct CMUnitTest *more, size_t nmore)
{
	size_t total = nmore, n = 0;
	struct CMUnitTest *t;

	for (size_t i = 0; i < ntables; i++)
		total += tables[i].n;
	t = calloc(total, sizeof(*t));
	assert_non_null(t);
	for (size_t i = 0; i < ntables; i++) {
		for (size_t j = 0; j < tables[i].n; j++) {
			const char *row = (const char *)tables[i].rows +
			    j * tables[i].size;

			t[n++] = (struct CMUnitTest){
				.name = *(const char *const *)(const void *)row,
				.test_func = tables[i].run,
				.initial_state = (void *)row,
			};
		}
	}
	for (size_t i = 0; i < nmore; i++)
		t[n++] = more[i];
	for (size_t i = 0; i < n; i++)
		if (!t[i].teardown_func)
			t[i].teardown_func = forget_all;
	int r = _cmocka_run_group_tests(name, t, n, NULL, NULL);

	free(t);
	return r;
}
