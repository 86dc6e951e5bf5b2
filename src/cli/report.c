/* SPDX-License-Identifier: MIT */
/*
 * report.c - the formats of `resolute stats` (see report.h).
 *
 * Counters are shown for every rule that has counted at least once under
 * the policy (its slot is claimed on the first count), zeros included, so
 * that a Prometheus series exists from then on and only ever grows.  The
 * budget lines show the accounts of rules with scope: machine.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "clock.h"
#include "cli.h"
#include "export.h"
#include "learn_cli.h"
#include "report_breaker.h"
#include "stats.h"

/* HELP lines, in the order of enum rs_stat. */
static const char *const help[RS_STAT_COUNT] = {
	"Logical connects (one per connect() of the program) under the rule.",
	"Kernel connect attempts, first attempts and retries together.",
	"Connect attempts retried after a failure.",
	"Connect attempts that timed out (connect_timeout or the budget).",
	"Logical connects that failed after every attempt they were allowed.",
	"Retries refused because the retry budget was spent.",
	"Reads that failed with ETIMEDOUT after read_timeout.",
	"Writes that failed with ETIMEDOUT after write_timeout.",
	"Connect attempts sent to another address of the name (failover).",
	"Name lookups retried after a transient failure.",
	"HTTP requests replayed after a retryable status.",
	"Retryable HTTP responses handed to the program as the last one.",
	"HTTP requests read whose deadline header bound the reading thread.",
	"HTTP requests sent with the calling thread's deadline in a header.",
	"Circuit breakers opened, or opened again by a failed probe.",
	"Connect attempts failed at once by an open circuit breaker.",
};

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static bool ready(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE) != 0;
}

/* One budget row: totals since creation and the current window. */
static void text_slot(FILE *f, const struct rs_shm_slot *s, int64_t now)
{
	struct rs_retry_budget b;
	struct rs_budget_usage u;
	char win[16], line[16];

	rs_shm_slot_budget(s, &b);
	rs_budget_acct_usage(&s->acct, &b, now, &u);
	snprintf(line, sizeof(line), "%u", s->line);
	fprintf(f, "  %-24.*s %-5s %-6g %-6u %-7s %9llu %8llu %8llu   "
	    "%llu/%llu of %llu\n", RS_SHM_RULE_MAX, s->rule,
	    s->line ? line : "-", b.ratio, b.min_per_second,
	    rs_duration_format(b.window_ms, win, sizeof(win)),
	    (unsigned long long)load(&s->acct.total_connects),
	    (unsigned long long)load(&s->acct.total_retries),
	    (unsigned long long)load(&s->acct.total_denials),
	    (unsigned long long)u.retries, (unsigned long long)u.connects,
	    (unsigned long long)u.allowed);
}

static void text_budgets(FILE *f, const struct rs_shm_table *t)
{
	int64_t now = rs_clock_now_ms();
	int shown = 0;

	for (unsigned i = 0; i < RS_SHM_SLOTS; i++) {
		if (!ready(&t->slots[i].ready))
			continue;
		if (!shown++)
			fprintf(f, "  %-24s %-5s %-6s %-6s %-7s %9s %8s %8s   "
			    "%s\n", "rule", "line", "ratio", "min/s",
			    "window", "connects", "retries", "denials",
			    "window: retries/connects of allowed");
		text_slot(f, &t->slots[i], now);
	}
	if (!shown)
		fprintf(f, "  no shared retry budget (no rule of scope "
		    "machine has connected)\n");
}

/* Counters: one line per rule, its non-zero counters as name=value. */
static void text_counters(FILE *f, const struct rs_shm_table *t)
{
	fprintf(f, "  counters since the segment was made:\n");
	for (unsigned i = 0; i < RS_SHM_METRICS; i++) {
		const struct rs_shm_metric *m = &t->metrics[i];
		int any = 0;

		if (!ready(&m->ready))
			continue;
		fprintf(f, "    %.*s:", RS_SHM_LABEL_MAX, m->rule);
		for (int k = 0; k < RS_STAT_COUNT; k++) {
			uint64_t v = load(&m->count[k]);

			if (v && ++any)
				fprintf(f, " %s=%llu", rs_stats_name(k),
				    (unsigned long long)v);
		}
		fputs(any ? "\n" : " none\n", f);
	}
}

void rs_report_text_segment(FILE *f, const struct rs_report_seg *s)
{
	fprintf(f, "policy %.*s\n  segment %s\n", RS_SHM_POLICY_MAX,
	    s->t->policy, s->path);
	text_budgets(f, s->t);
	text_counters(f, s->t);
	rs_cli_learn_text(f, s->t);
	rs_report_text_breakers(f, s->t);
}

static void text(FILE *f, const struct rs_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (i)
			fputc('\n', f);
		rs_report_text_segment(f, &r->segs[i]);
	}
}

static void json_rule(FILE *f, const struct rs_shm_metric *m, int first)
{
	fputs(first ? "\n    {\"rule\":" : ",\n    {\"rule\":", f);
	rs_export_json_string(f, m->rule, RS_SHM_LABEL_MAX);
	fprintf(f, ",\"line\":%u", m->line);
	for (int k = 0; k < RS_STAT_COUNT; k++)
		fprintf(f, ",\"%s\":%llu", rs_stats_name(k),
		    (unsigned long long)load(&m->count[k]));
	fputc('}', f);
}

static void json_segment(FILE *f, const struct rs_report_seg *s)
{
	int first = 1;

	fputs("{\"policy\":", f);
	rs_export_json_string(f, s->t->policy, RS_SHM_POLICY_MAX);
	fputs(",\"segment\":", f);
	rs_export_json_string(f, s->path, sizeof(s->path));
	fputs(",\"rules\":[", f);
	for (unsigned i = 0; i < RS_SHM_METRICS; i++)
		if (ready(&s->t->metrics[i].ready)) {
			json_rule(f, &s->t->metrics[i], first);
			first = 0;
		}
	fputc(']', f);
	rs_report_json_breakers(f, s->t);
	fputc('}', f);
}

static void json(FILE *f, const struct rs_report *r)
{
	fputs("{\"segments\":[", f);
	for (size_t i = 0; i < r->n; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		json_segment(f, &r->segs[i]);
	}
	fputs("]}\n", f);
}

/*
 * One sample.  The strings are copied out of the segment within their
 * fields first, so that a field without a NUL ends at its bound.
 */
static void prom_sample(FILE *f, const char *name,
    const struct rs_shm_table *t, const struct rs_shm_metric *m, int k)
{
	char policy[RS_SHM_POLICY_MAX + 1], rule[RS_SHM_LABEL_MAX + 1];
	const char *labels[] = { "policy", policy, "rule", rule };

	snprintf(policy, sizeof(policy), "%.*s", RS_SHM_POLICY_MAX, t->policy);
	snprintf(rule, sizeof(rule), "%.*s", RS_SHM_LABEL_MAX, m->rule);
	rs_export_sample(f, name, labels, 2, load(&m->count[k]));
}

/* One family: its HELP and TYPE lines, then a sample per policy and rule. */
static void prom_family(FILE *f, const struct rs_report *r, int k)
{
	char name[64];

	snprintf(name, sizeof(name), "resolute_%s_total", rs_stats_name(k));
	rs_export_family(f, name, "counter", help[k]);
	for (size_t i = 0; i < r->n; i++)
		for (unsigned j = 0; j < RS_SHM_METRICS; j++)
			if (ready(&r->segs[i].t->metrics[j].ready))
				prom_sample(f, name, r->segs[i].t,
				    &r->segs[i].t->metrics[j], k);
}

/* The counters, then the learned histograms (SPEC 13). */
static void prom(FILE *f, const struct rs_report *r)
{
	const struct rs_shm_table *t[64];
	size_t n = 0;

	for (int k = 0; k < RS_STAT_COUNT; k++)
		prom_family(f, r, k);
	for (size_t i = 0; i < r->n && n < 64; i++)
		t[n++] = r->segs[i].t;
	rs_cli_learn_prom(f, t, n);
	rs_report_prom_breaker_family(f);
	for (size_t i = 0; i < n; i++)
		rs_report_prom_breakers(f, t[i]);
}

void rs_report_write(FILE *f, const struct rs_report *r,
    enum rs_report_format fmt)
{
	if (fmt == RS_REPORT_TEXT)
		text(f, r);
	else if (fmt == RS_REPORT_JSON)
		json(f, r);
	else
		prom(f, r);
}

int rs_report_write_file(const char *path, const struct rs_report *r,
    enum rs_report_format fmt)
{
	mode_t mask = umask(0);
	char tmp[4096];
	FILE *f;

	umask(mask);
	f = rs_cli_temp_open(path, 0644 & ~mask, tmp, sizeof(tmp));
	if (!f)
		return -1;
	rs_report_write(f, r, fmt);
	return rs_cli_temp_commit(f, tmp, path);
}
