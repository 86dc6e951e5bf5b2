/*
 * cmd_stats.c - `resolute stats [--policy FILE | --prune]`: the live retry
 * budgets of scope machine that belong to the current user, read from the
 * shared segments (/dev/shm/resolute-<euid>-*), and the budget lines of
 * `resolute explain`.
 *
 * Segments are mapped read-only, after the same owner, mode and header
 * checks the library makes; this tool never writes to them.  --prune
 * removes those whose policy file is gone.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "clock.h"
#include "shm.h"

/* Prints one slot: totals since creation and the current window. */
static void print_slot(const struct rs_shm_slot *s, int64_t now)
{
	struct rs_retry_budget b;
	struct rs_budget_usage u;
	char win[16], line[16];

	rs_shm_slot_budget(s, &b);
	rs_budget_acct_usage(&s->acct, &b, now, &u);
	snprintf(line, sizeof(line), "%u", s->line);
	printf("  %-24.*s %-5s %-6g %-6u %-7s %9llu %8llu %8llu   %llu/%llu "
	    "of %llu\n", RS_SHM_RULE_MAX, s->rule, s->line ? line : "-",
	    b.ratio, b.min_per_second,
	    rs_duration_format(b.window_ms, win, sizeof(win)),
	    (unsigned long long)__atomic_load_n(&s->acct.total_connects,
		__ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s->acct.total_retries,
		__ATOMIC_RELAXED),
	    (unsigned long long)__atomic_load_n(&s->acct.total_denials,
		__ATOMIC_RELAXED),
	    (unsigned long long)u.retries, (unsigned long long)u.connects,
	    (unsigned long long)u.allowed);
}

static void print_table(const char *path, const struct rs_shm_table *t)
{
	int64_t now = rs_clock_now_ms();

	printf("policy %.*s\n  segment %s\n", RS_SHM_POLICY_MAX, t->policy,
	    path);
	printf("  %-24s %-5s %-6s %-6s %-7s %9s %8s %8s   %s\n", "rule",
	    "line", "ratio", "min/s", "window", "connects", "retries",
	    "denials", "window: retries/connects of allowed");
	for (unsigned i = 0; i < RS_SHM_SLOTS; i++) {
		const struct rs_shm_slot *s = &t->slots[i];

		if (__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
			print_slot(s, now);
	}
}

/*
 * Shows one segment file (when it is of policy `only`, if given), preceded
 * by a blank line unless it is the first shown.  Returns 1 when shown, 0
 * when not, and counts a refused file in *refused.
 */
static int show(const char *path, const char *only, int shown, int *refused)
{
	struct rs_shm_table *t;
	int err = rs_shm_attach(path, NULL, false, &t), match;

	if (err) {
		rs_cli_warn("%s: %s; skipped", path, rs_shm_refusal(err));
		++*refused;
		return 0;
	}
	match = !only || strncmp(t->policy, only, RS_SHM_POLICY_MAX) == 0;
	if (match) {
		if (shown)
			printf("\n");
		print_table(path, t);
	}
	rs_shm_detach(t);
	return match;
}

/* Lists the segments of this user in /dev/shm; returns how many shown. */
static int scan(const char *only, int *refused)
{
	char prefix[64], path[512];
	struct dirent *d;
	DIR *dir = opendir(RS_SHM_DIR);
	int n = 0;

	if (!dir)
		return 0;
	snprintf(prefix, sizeof(prefix), RS_SHM_PREFIX "%u-",
	    (unsigned)geteuid());
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), RS_SHM_DIR "/%s", d->d_name);
		n += show(path, only, n, refused);
	}
	closedir(dir);
	return n;
}

/*
 * Removes the segment at path when the policy file it was made for no
 * longer exists (temporary policies of tests and scripts): no process can
 * start with that policy any more, and those still running keep their
 * mapping.  Returns 1 when removed.
 */
static int prune(const char *path)
{
	struct rs_shm_table *t;
	char policy[RS_SHM_POLICY_MAX];
	int gone;

	if (rs_shm_attach(path, NULL, false, &t) < 0)
		return 0;
	snprintf(policy, sizeof(policy), "%.*s", RS_SHM_POLICY_MAX - 1,
	    t->policy);
	rs_shm_detach(t);
	gone = policy[0] == '/' && access(policy, F_OK) < 0 && errno == ENOENT;
	if (gone && unlink(path) == 0) {
		printf("removed %s (policy %s no longer exists)\n", path,
		    policy);
		return 1;
	}
	return 0;
}

static int prune_all(void)
{
	char prefix[64], path[512];
	struct dirent *d;
	DIR *dir = opendir(RS_SHM_DIR);
	int n = 0;

	if (!dir)
		return RS_EXIT_OK;
	snprintf(prefix, sizeof(prefix), RS_SHM_PREFIX "%u-",
	    (unsigned)geteuid());
	while ((d = readdir(dir)))
		if (strncmp(d->d_name, prefix, strlen(prefix)) == 0) {
			snprintf(path, sizeof(path), RS_SHM_DIR "/%s",
			    d->d_name);
			n += prune(path);
		}
	closedir(dir);
	printf("%d segment%s removed\n", n, n == 1 ? "" : "s");
	return RS_EXIT_OK;
}

int rs_cmd_stats(int argc, char **argv)
{
	char shm[256], real[RS_SHM_POLICY_MAX];
	const char *only = NULL;
	int refused = 0;

	if (argc == 2 && strcmp(argv[1], "--prune") == 0)
		return prune_all();
	if (argc == 3 && strcmp(argv[1], "--policy") == 0)
		only = argv[2];
	else if (argc == 2 && strncmp(argv[1], "--policy=", 9) == 0)
		only = argv[1] + 9;
	else if (argc != 1)
		return rs_cli_usage_error("stats: usage: resolute stats "
		    "[--policy FILE | --prune]");
	if (only && rs_shm_path(only, geteuid(), shm, sizeof(shm), real,
	    sizeof(real)) == 0)
		only = real;
	if (scan(only, &refused) == 0)
		printf("no shared retry budgets of user %u%s%s in %s (none is "
		    "made before a connect under scope: machine)\n",
		    (unsigned)geteuid(), only ? " for " : "", only ? only : "",
		    RS_SHM_DIR);
	return refused ? RS_EXIT_FAIL : RS_EXIT_OK;
}

void rs_cli_budget_live(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s)
{
	char path[256], real[RS_SHM_POLICY_MAX];
	struct rs_shm_table *t;
	const struct rs_shm_slot *slot = NULL;
	struct rs_budget_usage u;
	struct rs_retry_budget b = s->budget;

	printf("  allowed retries in the last window: max(floor(%g x connects),"
	    " %llu)\n", b.ratio, (unsigned long long)rs_budget_allowed(&b, 0));
	if (b.scope != RS_SCOPE_MACHINE ||
	    rs_shm_path(p->path, geteuid(), path, sizeof(path), real,
		sizeof(real)) < 0)
		return;
	printf("  segment %s\n", path);
	if (rs_shm_attach(path, real, false, &t) < 0) {
		printf("  live: not in use (no connect under this policy yet, "
		    "or not this user's)\n");
		return;
	}
	slot = rs_shm_slot_find(t, r, &b);
	if (slot) {
		rs_budget_acct_usage(&slot->acct, &b, rs_clock_now_ms(), &u);
		printf("  live: %llu retries of %llu allowed, %llu connects in "
		    "the window\n", (unsigned long long)u.retries,
		    (unsigned long long)u.allowed,
		    (unsigned long long)u.connects);
	} else {
		printf("  live: no connect under this rule yet\n");
	}
	rs_shm_detach(t);
}
