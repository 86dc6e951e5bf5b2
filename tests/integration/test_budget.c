/* SPDX-License-Identifier: MIT */
/*
 * test_budget.c - the retry budget across real processes (SPEC §5b).
 *
 * A storm: 50 preloaded clients start at once, each connecting to a port
 * of 127.0.0.1 where nothing listens, with attempts 3 and a 10 ms base:
 * 100 retries without a budget.  With ratio 0.2 and min_per_second 1 over
 * 10 s, scope machine, the whole storm may retry
 *	max(floor(0.2 * 50), 1 * 10) = 10
 * times (tolerance 0: the accounting cannot overshoot; the run is asserted
 * to fit in one window less a bucket, so no retry leaves the window).
 * Retries are counted from the JSON log every client appends to.
 * Then: two users never share a segment, and a segment planted by another
 * user is refused with a warning, the client still working.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "integration/peer.h"

#define NCLIENTS 50
#define NOBODY 65534

/* Returns a port of 127.0.0.1 on which nothing listens. */
static int refusing_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		abort();
	close(fd);
	return ntohs(a.sin_port);
}

static char *storm_policy(const char *ratio, const char *scope)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml),
	    "version: 1\n"
	    "defaults:\n"
	    "  attempts: 3\n"
	    "  backoff:\n"
	    "    base: 10ms\n"
	    "    cap: 100ms\n"
	    "  retry_budget:\n"
	    "    ratio: %s\n"
	    "    min_per_second: 1\n"
	    "    window: 10s\n"
	    "    scope: %s\n", ratio, scope);
	return t_policy(yaml);
}

/* Counts the lines of a file that contain needle. */
static int count_lines(const char *path, const char *needle)
{
	char line[2048];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/*
 * Removes the segment named in `resolute stats` output (the tests' policy
 * files are temporary, so their segments would only linger).
 */
static void remove_listed_segment(const char *out)
{
	const char *p = strstr(out, "segment /dev/shm/");
	char path[256];

	if (p && sscanf(p, "segment %255s", path) == 1)
		unlink(path);
}

struct storm {
	int retries, exhausted, failed;
	long long elapsed_ms;
	struct t_run stats;	/* `resolute stats --policy` afterwards */
};

/* Path of build/resolute. */
static const char *t_cli(void)
{
	static char path[4096];
	const char *c = getenv("RS_CLI");

	snprintf(path, sizeof(path), "%s/resolute", t_build());
	return c ? c : path;
}

/* Starts one preloaded client; its output goes to /dev/null. */
static pid_t start_client(const char *policy, const char *log, int port)
{
	char portstr[16];
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	snprintf(portstr, sizeof(portstr), "%d", port);
	int null = open("/dev/null", O_WRONLY);

	dup2(null, 1);
	dup2(null, 2);
	setenv("LD_PRELOAD", t_lib(), 1);
	setenv("RESOLUTE_POLICY", policy, 1);
	setenv("RESOLUTE_LOG_FORMAT", "json", 1);
	setenv("RESOLUTE_LOG_FILE", log, 1);
	execl(t_client(), t_client(), "127.0.0.1", portstr, "connect",
	    (char *)NULL);
	_exit(127);
}

/* Runs NCLIENTS clients at once against a refusing port. */
static void run_storm(const char *ratio, const char *scope, struct storm *s)
{
	char *policy = storm_policy(ratio, scope);
	char log[] = "/tmp/rs-test-budget-log-XXXXXX";
	int fd = mkstemp(log), port = refusing_port();
	pid_t pids[NCLIENTS];
	long long start = t_now_ms();

	assert_true(fd >= 0);
	close(fd);
	for (int i = 0; i < NCLIENTS; i++)
		pids[i] = start_client(policy, log, port);
	s->failed = 0;
	for (int i = 0; i < NCLIENTS; i++) {
		int st;

		assert_true(pids[i] > 0);
		waitpid(pids[i], &st, 0);
		s->failed += WIFEXITED(st) && WEXITSTATUS(st) == 1;
	}
	s->elapsed_ms = t_now_ms() - start;
	s->retries = count_lines(log, "\"event\":\"retry\"");
	s->exhausted = count_lines(log, "\"event\":\"budget_exhausted\"");
	print_message("ratio %s, scope %s: %d retries, %d budget_exhausted, "
	    "%d clients failed, %lld ms\n", ratio, scope, s->retries,
	    s->exhausted, s->failed, s->elapsed_ms);
	char *stats[] = { (char *)t_cli(), "stats", "--policy", policy, NULL };

	assert_int_equal(t_run(&s->stats, NULL, NULL, stats), 0);
	remove_listed_segment(s->stats.out);
	unlink(log);
	unlink(policy);
	free(policy);
}

static void test_storm_without_budget(void **state)
{
	struct storm s;

	(void)state;
	run_storm("1000", "machine", &s);
	assert_int_equal(s.failed, NCLIENTS);
	assert_int_equal(s.retries, NCLIENTS * 2);
	assert_int_equal(s.exhausted, 0);
}

static void test_storm_machine_budget(void **state)
{
	struct storm s;

	(void)state;
	run_storm("0.2", "machine", &s);
	assert_int_equal(s.failed, NCLIENTS);
	assert_true(s.elapsed_ms < 9000);	/* one window less a bucket */
	assert_true(s.retries <= 10);
	assert_true(s.retries >= 1);
	/* Every client stopped either for the budget or after its last try. */
	assert_true(s.exhausted >= NCLIENTS - s.retries);
	/* `resolute stats` reads the same accounts from the segment. */
	char want[128];

	snprintf(want, sizeof(want), "%9d %8d %8d   %d/%d of %d",
	    NCLIENTS, s.retries, s.exhausted, s.retries, NCLIENTS, 10);
	if (!strstr(s.stats.out, want) || s.stats.status != 0) {
		t_show(&s.stats);
		fail_msg("no '%s' in resolute stats", want);
	}
	/* The machine-wide counters agree with the logs of all clients. */
	snprintf(want, sizeof(want), "defaults: connects=%d "
	    "connect_attempts=%d retries=%d give_ups=%d budget_denials=%d",
	    NCLIENTS, NCLIENTS + s.retries, s.retries, NCLIENTS, s.exhausted);
	if (!strstr(s.stats.out, want)) {
		t_show(&s.stats);
		fail_msg("no '%s' in resolute stats", want);
	}
}

/* Per process, each client has its own floor of 10: no limit is felt. */
static void test_storm_process_budget(void **state)
{
	struct storm s;

	(void)state;
	run_storm("0.2", "process", &s);
	assert_int_equal(s.retries, NCLIENTS * 2);
	assert_int_equal(s.exhausted, 0);
	/*
	 * No budget is shared, so `resolute stats` shows none; the segment
	 * holds the machine-wide counters alone, which saw every client.
	 */
	assert_null(strstr(s.stats.out, "window: retries/connects"));
	assert_non_null(strstr(s.stats.out, "no shared retry budget"));
	char want[96];

	snprintf(want, sizeof(want), "defaults: connects=%d "
	    "connect_attempts=%d retries=%d give_ups=%d", NCLIENTS,
	    NCLIENTS * 3, NCLIENTS * 2, NCLIENTS);
	if (!strstr(s.stats.out, want)) {
		t_show(&s.stats);
		fail_msg("no '%s' in resolute stats", want);
	}
}

/*
 * Preloaded clients killed with SIGKILL at random moments, many of them in
 * the middle of their retries, leave the shared budget usable: stats reads
 * it, its window holds no more than `allowed` plus one phantom retry per
 * kill, and a new client gets all of its retries (1000 allowed, at most
 * 270 used).
 */
static void test_killed_clients(void **state)
{
	char *policy = t_policy("version: 1\n"
	    "defaults:\n"
	    "  attempts: 10\n"
	    "  backoff: { base: 1ms, cap: 2ms }\n"
	    "  retry_budget: { ratio: 0, min_per_second: 100, window: 10s }\n");
	int port = refusing_port(), killed = 0;
	char portstr[16];
	struct t_run r;

	(void)state;
	srand((unsigned)getpid());
	for (int i = 0; i < 30; i++) {
		pid_t pid = start_client(policy, "/dev/null", port);
		struct timespec ts = { 0, (rand() % 20000) * 1000L };
		int st;

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		killed += WIFSIGNALED(st);
	}
	char *stats[] = { (char *)t_cli(), "stats", "--policy", policy, NULL };

	assert_int_equal(t_run(&r, NULL, NULL, stats), 0);
	assert_int_equal(r.status, 0);
	unsigned long long used = 0, connects = 0, allowed = 0;
	const char *row = strstr(r.out, "defaults");

	assert_non_null(row);
	row = strchr(row, '/');
	assert_non_null(row);
	while (row[-1] >= '0' && row[-1] <= '9')
		row--;
	assert_int_equal(sscanf(row, "%llu/%llu of %llu", &used, &connects,
	    &allowed), 3);
	print_message("%d of 30 clients killed: %llu retries of %llu allowed "
	    "in the window\n", killed, used, allowed);
	assert_int_equal(allowed, 1000);
	assert_true(used <= allowed + (unsigned long long)killed);
	snprintf(portstr, sizeof(portstr), "%d", port);
	char *client[] = { (char *)t_client(), "127.0.0.1", portstr,
		"connect", NULL };

	assert_int_equal(t_run(&r, policy, NULL, client), 0);
	assert_null(strstr(r.out, "budget exhausted"));
	assert_true(strstr(r.out, "attempt 10/10 failed") != NULL);
	remove_listed_segment(r.out);
	assert_int_equal(t_run(&r, NULL, NULL, stats), 0);
	remove_listed_segment(r.out);
	unlink(policy);
	free(policy);
}

/* Stores in out the segment `resolute stats` lists for policy. */
static bool listed_segment(const char *policy, char *out, size_t n)
{
	char *argv[] = { (char *)t_cli(), "stats", "--policy",
		(char *)policy, NULL };
	struct t_run r;
	char path[256];
	const char *p;

	if (t_run(&r, NULL, NULL, argv) < 0 ||
	    !(p = strstr(r.out, "segment /dev/shm/")) ||
	    sscanf(p, "segment %255s", path) != 1)
		return false;
	snprintf(out, n, "%s", path);
	return true;
}

/* --prune removes the segment of a deleted policy file and only that. */
static void test_prune(void **state)
{
	char *live = storm_policy("0.2", "machine");
	char *gone = storm_policy("0.3", "machine");
	char seg_live[256], seg_gone[256], portstr[16];
	char *client[] = { (char *)t_client(), "127.0.0.1", portstr,
		"connect", NULL };
	char *prune[] = { (char *)t_cli(), "stats", "--prune", NULL };
	struct t_run r;

	(void)state;
	snprintf(portstr, sizeof(portstr), "%d", refusing_port());
	assert_int_equal(t_run(&r, live, NULL, client), 0);
	assert_int_equal(t_run(&r, gone, NULL, client), 0);
	assert_true(listed_segment(live, seg_live, sizeof(seg_live)));
	assert_true(listed_segment(gone, seg_gone, sizeof(seg_gone)));
	unlink(gone);
	assert_int_equal(t_run(&r, NULL, NULL, prune), 0);
	assert_int_equal(r.status, 0);
	assert_true(strstr(r.out, seg_gone) != NULL);
	assert_int_equal(access(seg_gone, F_OK), -1);
	assert_int_equal(access(seg_live, F_OK), 0);
	unlink(seg_live);
	unlink(live);
	free(live);
	free(gone);
}

/* Runs one client as uid (0: as we are); returns its combined output. */
static void run_as(struct t_run *r, const char *policy, unsigned uid,
    int port)
{
	char portstr[16], uidstr[16];
	const char *env[] = { "RESOLUTE_LOG=info", NULL };

	snprintf(portstr, sizeof(portstr), "%d", port);
	snprintf(uidstr, sizeof(uidstr), "%u", uid);
	char *as_root[] = { (char *)t_client(), "127.0.0.1", portstr,
		"connect", NULL };
	char *as_user[] = { "setpriv", "--reuid", uidstr, "--regid", uidstr,
		"--clear-groups", (char *)t_client(), "127.0.0.1", portstr,
		"connect", NULL };

	assert_int_equal(t_run(r, policy, env, uid ? as_user : as_root), 0);
}

static bool can_switch_user(void)
{
	return geteuid() == 0 && access(t_client(), X_OK) == 0 &&
	    system("setpriv --reuid 65534 --regid 65534 --clear-groups "
		"true 2>/dev/null") == 0;
}

static void test_two_users(void **state)
{
	struct t_run r;
	struct stat st;
	char seg0[256], segn[300];

	(void)state;
	if (!can_switch_user()) {
		printf("SKIPPED: needs root and setpriv to run as nobody\n");
		return;
	}
	char *policy = storm_policy("0.2", "machine");

	chmod(policy, 0644);
	run_as(&r, policy, 0, refusing_port());
	assert_true(strstr(r.out, "attempt 1/3 failed") != NULL);
	run_as(&r, policy, NOBODY, refusing_port());
	assert_true(strstr(r.out, "attempt 1/3 failed") != NULL);
	assert_null(strstr(r.out, "retry budget: cannot use"));
	/* One policy, two users: two segments, same hash, each its own. */
	assert_true(listed_segment(policy, seg0, sizeof(seg0)));
	assert_int_equal(strncmp(seg0, "/dev/shm/resolute-0-", 20), 0);
	snprintf(segn, sizeof(segn), "/dev/shm/resolute-%d-%s", NOBODY,
	    seg0 + 20);
	assert_int_equal(stat(seg0, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(segn, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* nobody cannot open root's segment, for reading or writing. */
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "setpriv --reuid 65534 --regid 65534 "
	    "--clear-groups sh -c 'exec 3<%s' 2>/dev/null", seg0);
	assert_int_not_equal(system(cmd), 0);
	unlink(segn);
	unlink(seg0);
	unlink(policy);
	free(policy);
}

/*
 * nobody plants a file under the name root's next segment will have:
 * root's client must refuse it (not its owner), say so, and still retry
 * with a budget of its own.
 */
static void test_planted_segment(void **state)
{
	struct t_run r;
	char seg0[256], cmd[512];

	(void)state;
	if (!can_switch_user()) {
		printf("SKIPPED: needs root and setpriv to run as nobody\n");
		return;
	}
	char *policy = storm_policy("0.2", "machine");

	run_as(&r, policy, 0, refusing_port());
	assert_true(listed_segment(policy, seg0, sizeof(seg0)));
	assert_int_equal(unlink(seg0), 0);
	snprintf(cmd, sizeof(cmd), "setpriv --reuid 65534 --regid 65534 "
	    "--clear-groups sh -c 'umask 077; : > %s'", seg0);
	assert_int_equal(system(cmd), 0);
	run_as(&r, policy, 0, refusing_port());
	if (!strstr(r.out, "it belongs to another user"))
		t_show(&r);
	assert_true(strstr(r.out, "it belongs to another user") != NULL);
	assert_true(strstr(r.out, "attempt 2/3 failed") != NULL);
	unlink(seg0);
	unlink(policy);
	free(policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storm_without_budget),
		cmocka_unit_test(test_storm_machine_budget),
		cmocka_unit_test(test_storm_process_budget),
		cmocka_unit_test(test_killed_clients),
		cmocka_unit_test(test_prune),
		cmocka_unit_test(test_two_users),
		cmocka_unit_test(test_planted_segment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
