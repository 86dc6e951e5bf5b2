/* SPDX-License-Identifier: MIT */
/*
 * cmd_stats.c - `resolute stats [--policy FILE] [--format text|json|
 * prometheus] [--output FILE]` and `resolute stats --prune`: the counters
 * and live retry budgets that the current user's processes keep in the
 * shared segments (/dev/shm/resolute-<euid>-*), and the budget lines of
 * `resolute explain`.
 *
 * Segments are mapped read-only, after the same owner, mode and header
 * checks the library makes; this tool never writes to them.  Segments of
 * another layout (an older or newer resolute) are identified by their
 * common header and skipped with a note.  --prune removes those whose
 * policy file is gone.
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
#include "learn_cli.h"
#include "report.h"
#include "shm.h"

struct stats_opts {
	const char *policy;	/* only this policy's segment */
	const char *output;
	const char *histogram;	/* --histogram RULE */
	enum rs_report_format format;
	bool prune;
};

/*
 * Says why a segment that could not be attached is skipped.  One of
 * another layout belongs to processes of another version of resolute
 * (typically started before an upgrade): it is only counted in *other,
 * for one note at the end, when of the policy asked for (if any).
 * Anything else is a warning and counts as refused.
 */
static void skipped(const char *path, int err, const char *only,
    int *refused, int *other)
{
	struct rs_shm_head h;

	if (err == -EPROTO && rs_shm_peek(path, &h) == 0 &&
	    h.version != RS_SHM_VERSION) {
		*other += !only || strcmp(h.policy, only) == 0;
		return;
	}
	/* Another policy's segment is none of --policy's business. */
	if (err == -EPROTO && only && rs_shm_peek(path, &h) == 0 &&
	    strcmp(h.policy, only) != 0)
		return;
	rs_cli_warn("%s: %s; skipped", path, rs_shm_refusal(err));
	++*refused;
}

/* Adds the segment at path to r when it is of policy `only` (if given). */
static void collect(struct rs_report *r, const char *path, const char *only,
    int *refused, int *other)
{
	struct rs_shm_table *t;
	struct rs_report_seg *segs;
	int err = rs_shm_attach(path, NULL, false, &t);

	if (err) {
		skipped(path, err, only, refused, other);
		return;
	}
	if (only && strncmp(t->policy, only, RS_SHM_POLICY_MAX) != 0) {
		rs_shm_detach(t);
		return;
	}
	segs = realloc(r->segs, (r->n + 1) * sizeof(*segs));
	if (!segs) {
		rs_shm_detach(t);
		++*refused;
		return;
	}
	r->segs = segs;
	snprintf(segs[r->n].path, sizeof(segs[r->n].path), "%s", path);
	segs[r->n++].t = t;
}

/* Calls fn on each segment file of this user in /dev/shm, in name order. */
static void each_segment(void (*fn)(const char *path, void *arg), void *arg)
{
	char prefix[64], path[320];
	struct dirent **names;
	int n = scandir(RS_SHM_DIR, &names, NULL, alphasort);

	snprintf(prefix, sizeof(prefix), RS_SHM_PREFIX "%u-",
	    (unsigned)geteuid());
	for (int i = 0; i < n; i++) {
		if (strncmp(names[i]->d_name, prefix, strlen(prefix)) == 0) {
			snprintf(path, sizeof(path), RS_SHM_DIR "/%s",
			    names[i]->d_name);
			fn(path, arg);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

struct collecting {
	struct rs_report r;
	const char *only;
	int refused, other;
};

static void collect_one(const char *path, void *arg)
{
	struct collecting *c = arg;

	collect(&c->r, path, c->only, &c->refused, &c->other);
}

/*
 * Removes the segment at path (of any layout) when the policy file it was
 * made for no longer exists (temporary policies of tests and scripts): no
 * process can start with that policy any more, and those still running
 * keep their mapping.
 */
static void prune_one(const char *path, void *arg)
{
	struct rs_shm_head h;
	int *n = arg;

	if (rs_shm_peek(path, &h) < 0 || h.policy[0] != '/')
		return;
	if (access(h.policy, F_OK) < 0 && errno == ENOENT &&
	    unlink(path) == 0) {
		printf("removed %s (policy %s no longer exists)\n", path,
		    h.policy);
		++*n;
	}
}

static int prune_all(void)
{
	int n = 0;

	each_segment(prune_one, &n);
	printf("%d segment%s removed\n", n, n == 1 ? "" : "s");
	return RS_EXIT_OK;
}

static int parse_format(const char *v, enum rs_report_format *f)
{
	if (strcmp(v, "text") == 0)
		*f = RS_REPORT_TEXT;
	else if (strcmp(v, "json") == 0)
		*f = RS_REPORT_JSON;
	else if (strcmp(v, "prometheus") == 0)
		*f = RS_REPORT_PROM;
	else
		return rs_cli_usage_error("stats: --format must be text, json "
		    "or prometheus, not '%s'", v);
	return 0;
}

static int stats_args(int argc, char **argv, struct stats_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *v;

		if (strcmp(argv[i], "--prune") == 0)
			o->prune = true;
		else if ((v = rs_cli_opt_value(argc, argv, &i, "--policy")))
			o->policy = v;
		else if ((v = rs_cli_opt_value(argc, argv, &i, "--output")))
			o->output = v;
		else if ((v = rs_cli_opt_value(argc, argv, &i,
		    "--histogram")))
			o->histogram = v;
		else if ((v = rs_cli_opt_value(argc, argv, &i, "--format"))) {
			if (parse_format(v, &o->format))
				return RS_EXIT_USAGE;
		} else
			return rs_cli_usage_error("stats: unknown option or "
			    "missing value: '%s'", argv[i]);
	}
	if (o->prune && (o->policy || o->output || o->format))
		return rs_cli_usage_error("stats: --prune takes no other "
		    "option");
	return 0;
}

static void no_segments(const char *only)
{
	printf("no shared segments of user %u%s%s in %s (one is made at the "
	    "first connect under a policy)\n", (unsigned)geteuid(),
	    only ? " for " : "", only ? only : "", RS_SHM_DIR);
}

/* --histogram RULE: the rule's learned latency in every segment shown. */
static int plot(const struct rs_report *r, const char *rule)
{
	int drawn = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct rs_shm_learn *l = rs_cli_learn_find(r->segs[i].t,
		    rule);

		if (!l)
			continue;
		printf("%spolicy %.*s\n", drawn ? "\n" : "",
		    RS_SHM_POLICY_MAX, r->segs[i].t->policy);
		drawn += rs_cli_learn_plot(stdout, l);
	}
	if (drawn)
		return 0;
	fprintf(stderr, "resolute: nothing learned for rule '%s' (the rule's "
	    "match text, or defaults)\n", rule);
	return RS_EXIT_FAIL;
}

int rs_cmd_stats(int argc, char **argv)
{
	char shm[256], real[RS_SHM_POLICY_MAX];
	struct stats_opts o = { 0 };
	struct collecting c = { 0 };
	int status = stats_args(argc, argv, &o);

	if (status)
		return status;
	if (o.prune)
		return prune_all();
	c.only = o.policy;
	if (o.policy && rs_shm_path(o.policy, geteuid(), shm, sizeof(shm),
	    real, sizeof(real)) == 0) {
		c.only = real;
	}
	each_segment(collect_one, &c);
	if (o.histogram)
		status = plot(&c.r, o.histogram);
	else if (o.output)
		status = rs_report_write_file(o.output, &c.r, o.format);
	else if (c.r.n == 0 && o.format == RS_REPORT_TEXT)
		no_segments(c.only);
	else
		rs_report_write(stdout, &c.r, o.format);
	if (c.other)
		fprintf(stderr, "resolute: note: %d segment%s of another "
		    "layout (another version of resolute) not shown\n",
		    c.other, c.other == 1 ? "" : "s");
	for (size_t i = 0; i < c.r.n; i++)
		rs_shm_detach((struct rs_shm_table *)c.r.segs[i].t);
	free(c.r.segs);
	return status || c.refused ? RS_EXIT_FAIL : RS_EXIT_OK;
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
