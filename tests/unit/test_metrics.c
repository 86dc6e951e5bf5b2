/* SPDX-License-Identifier: MIT */
/*
 * test_metrics.c - the machine-wide counters (SPEC 11): their slots in the
 * shared segment (one per rule, shared by every mapping, long labels and a
 * host named "defaults" kept distinct, a full table), layout detection (a layout-1 file is refused
 * and identified, never misread), rs_stats_add() reaching the segment from
 * several processes, and the export formats: Prometheus label and HELP
 * escaping, UTF-8 checking, sample lines, JSON strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "export.h"
#include "shm.h"
#include "stats.h"

/* The segment tests use their own file under /dev/shm. */
#include "unit/segment_fixture.h"

static void test_metric_slots(void **state)
{
	struct rs_shm_table *t1, *t2;
	struct rs_rule r = mkrule("db.internal:5432", 7);
	struct rs_rule r2 = mkrule("*.example.com", 9);

	(void)state;
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t1), 0);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t2), 0);
	struct rs_shm_metric *m1 = rs_shm_metric(t1, &r);
	struct rs_shm_metric *m2 = rs_shm_metric(t2, &r);

	assert_non_null(m1);
	assert_int_equal(m1 - t1->metrics, m2 - t2->metrics);
	assert_string_equal(m2->rule, "db.internal:5432");
	assert_int_equal(m2->line, 7);
	m1->count[RS_STAT_RETRIES] += 3;
	assert_int_equal(m2->count[RS_STAT_RETRIES], 3);
	/* The defaults and another rule have slots of their own. */
	assert_ptr_not_equal(rs_shm_metric(t1, NULL), m1);
	assert_ptr_not_equal(rs_shm_metric(t1, &r2), m1);
	assert_string_equal(rs_shm_metric(t2, NULL)->rule, "defaults");
	/* The same rule at another line (an edited file) keeps its slot. */
	struct rs_rule moved = mkrule("db.internal:5432", 12);

	assert_ptr_equal(rs_shm_metric(t1, &moved), m1);
	rs_shm_detach(t1);
	rs_shm_detach(t2);
}

/* Two match texts alike in their first 300 bytes get distinct labels. */
static void test_long_labels(void **state)
{
	char a[400], b[400];
	struct rs_shm_table *t;

	(void)state;
	memset(a, 'a', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[350] = 'b';
	struct rs_rule ra = mkrule(a, 1), rb = mkrule(b, 2);

	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	struct rs_shm_metric *ma = rs_shm_metric(t, &ra);
	struct rs_shm_metric *mb = rs_shm_metric(t, &rb);

	assert_non_null(ma);
	assert_non_null(mb);
	assert_int_equal(strnlen(ma->rule, RS_SHM_LABEL_MAX),
	    RS_SHM_LABEL_MAX - 1);
	assert_string_not_equal(ma->rule, mb->rule);
	assert_non_null(strchr(ma->rule, '~'));
	rs_shm_detach(t);
}

/* A host rule for the host "defaults" never shares the defaults' label. */
static void test_defaults_label(void **state)
{
	struct rs_rule r = mkrule("defaults", 4);
	struct rs_shm_table *t;

	(void)state;
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	assert_string_equal(rs_shm_metric(t, NULL)->rule, "defaults");
	assert_int_equal(strncmp(rs_shm_metric(t, &r)->rule, "defaults~", 9),
	    0);
	rs_shm_detach(t);
}

static void test_metrics_full(void **state)
{
	struct rs_shm_table *t;
	char names[RS_SHM_METRICS + 1][16];

	(void)state;
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	for (int i = 0; i <= RS_SHM_METRICS; i++) {
		snprintf(names[i], sizeof(names[i]), "h%d", i);
		struct rs_rule r = mkrule(names[i], (unsigned)i + 1);
		struct rs_shm_metric *m = rs_shm_metric(t, &r);

		if (i < RS_SHM_METRICS)
			assert_non_null(m);
		else
			assert_null(m);
	}
	rs_shm_detach(t);
}

/*
 * A file laid out as layout 1 (the budgets-only segment of the previous
 * release: same header, then 256 budget slots) under this layout's name:
 * attach refuses it, peek names its layout and policy.
 */
static void test_layout1_refused(void **state)
{
	struct rs_shm_head h = { RS_SHM_MAGIC, 1, RS_SHM_SLOTS, 0, "/old.yaml" };
	size_t size1 = sizeof(h) + RS_SHM_SLOTS * sizeof(struct rs_shm_slot);
	struct rs_shm_table *t;
	struct rs_shm_head got;
	int fd;

	(void)state;
	h.size = size1;
	fd = open(seg, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size1), 0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
	assert_int_equal(rs_shm_attach(seg, "/old.yaml", true, &t), -EPROTO);
	assert_int_equal(rs_shm_attach(seg, NULL, false, &t), -EPROTO);
	assert_int_equal(rs_shm_peek(seg, &got), 0);
	assert_int_equal(got.version, 1);
	assert_string_equal(got.policy, "/old.yaml");
	/* Same size as this layout, version 1: refused all the same. */
	assert_int_equal(truncate(seg, sizeof(struct rs_shm_table)), 0);
	assert_int_equal(rs_shm_attach(seg, "/old.yaml", true, &t), -EPROTO);
	/* Peek applies the owner and mode checks too. */
	assert_int_equal(chmod(seg, 0644), 0);
	assert_int_equal(rs_shm_peek(seg, &got), -EACCES);
}

static void test_path_layout(void **state)
{
	char path[128], real[512];

	(void)state;
	assert_int_equal(rs_shm_path("<built-in>", 42, path, sizeof(path),
	    real, sizeof(real)), 0);
	assert_int_equal(strncmp(path, "/dev/shm/resolute-42-", 21), 0);
	assert_string_equal(path + strlen(path) - 3, "-v4");
}

/*
 * rs_stats_add() from this process and from two forked children lands in
 * one slot of the policy's segment.  The policy file is this test's own,
 * so that no other test shares the segment.
 */
static void test_stats_add_shared(void **state)
{
	char policy[] = "/tmp/rs-test-metrics-XXXXXX";
	char path[128], real[512];
	struct rs_rule rules[1] = { mkrule("127.0.0.1:9", 3) };
	struct rs_policy p = { .rules = rules, .nrules = 1 };
	struct rs_shm_table *t;

	(void)state;
	close(mkstemp(policy));
	p.path = policy;
	assert_int_equal(rs_stats_init(&p), 0);
	rs_stats_add(NULL, RS_STAT_CONNECTS);
	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			for (int k = 0; k < 1000; k++)
				rs_stats_add(&rules[0], RS_STAT_ATTEMPTS);
			_exit(0);
		}
		assert_true(pid > 0);
	}
	for (int i = 0; i < 2; i++)
		wait(NULL);
	rs_stats_add(&rules[0], RS_STAT_ATTEMPTS);
	assert_int_equal(rs_shm_path(policy, geteuid(), path, sizeof(path),
	    real, sizeof(real)), 0);
	assert_int_equal(rs_shm_attach(path, real, false, &t), 0);
	struct rs_shm_metric *m = NULL;

	for (unsigned i = 0; i < RS_SHM_METRICS; i++)
		if (t->metrics[i].ready && strcmp(t->metrics[i].rule,
		    "127.0.0.1:9") == 0)
			m = &t->metrics[i];
	assert_non_null(m);
	assert_int_equal(m->count[RS_STAT_ATTEMPTS], 2001);
	assert_int_equal(m->count[RS_STAT_CONNECTS], 0);
	rs_shm_detach(t);
	unlink(path);
	unlink(policy);
}

/* Runs fn with a memory stream and returns what it wrote (static). */
static const char *captured(void (*fn)(FILE *f, const void *arg),
    const void *arg)
{
	static char *buf;
	size_t len;
	FILE *f;

	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void label(FILE *f, const void *s)
{
	rs_export_label(f, s, RS_EXPORT_VALUE_MAX);
}

static void json(FILE *f, const void *s)
{
	rs_export_json_string(f, s, RS_EXPORT_VALUE_MAX);
}

static void test_label_escaping(void **state)
{
	static const struct {
		const char *in, *label, *json;
	} cases[] = {
		{ "plain", "plain", "\"plain\"" },
		{ "a\"b", "a\\\"b", "\"a\\\"b\"" },
		{ "back\\slash", "back\\\\slash", "\"back\\\\slash\"" },
		{ "line\nfeed", "line\\nfeed", "\"line\\u000afeed\"" },
		{ "tab\there", "tab\there", "\"tab\\u0009here\"" },
		{ "caf\xc3\xa9", "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "bad\xc3(", "bad\xef\xbf\xbd(", "\"bad\\ufffd(\"" },
		{ "cut\xe2\x82", "cut\xef\xbf\xbd\xef\xbf\xbd",
		    "\"cut\\ufffd\\ufffd\"" },
		{ "over\xc0\xaf", "over\xef\xbf\xbd\xef\xbf\xbd",
		    "\"over\\ufffd\\ufffd\"" },
		{ "sur\xed\xa0\x80", "sur\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		    "\"sur\\ufffd\\ufffd\\ufffd\"" },
		{ "emoji\xf0\x9f\x98\x80", "emoji\xf0\x9f\x98\x80",
		    "\"emoji\xf0\x9f\x98\x80\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_string_equal(captured(label, cases[i].in),
		    cases[i].label);
		assert_string_equal(captured(json, cases[i].in),
		    cases[i].json);
	}
}

/* A string without a NUL is read up to its bound, never beyond. */
static void bounded(FILE *f, const void *s)
{
	rs_export_label(f, s, 4);
}

static void test_label_bound(void **state)
{
	static const char field[8] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };

	(void)state;
	assert_string_equal(captured(bounded, field), "abcd");
}

static void family(FILE *f, const void *arg)
{
	const char *labels[] = { "policy", "/etc/x\"y.yaml", "rule",
		"unix:/run/a\\b\n*" };

	(void)arg;
	rs_export_family(f, "resolute_retries_total", "counter",
	    "Retries, with a \\ and a\nline feed.");
	rs_export_sample(f, "resolute_retries_total", labels, 2, 42);
	rs_export_sample(f, "up", NULL, 0, 1);
}

static void test_exposition_lines(void **state)
{
	(void)state;
	assert_string_equal(captured(family, NULL),
	    "# HELP resolute_retries_total Retries, with a \\\\ and a\\nline "
	    "feed.\n"
	    "# TYPE resolute_retries_total counter\n"
	    "resolute_retries_total{policy=\"/etc/x\\\"y.yaml\","
	    "rule=\"unix:/run/a\\\\b\\n*\"} 42\n"
	    "up 1\n");
}

static void test_counter_names(void **state)
{
	(void)state;
	assert_string_equal(rs_stats_name(RS_STAT_CONNECTS), "connects");
	assert_string_equal(rs_stats_name(RS_STAT_ATTEMPTS),
	    "connect_attempts");
	assert_string_equal(rs_stats_name(RS_STAT_HTTP_GIVE_UPS),
	    "http_give_ups");
	assert_null(rs_stats_name(RS_STAT_COUNT));
	/* Every name is a valid metric name fragment: [a-z_]. */
	for (int k = 0; k < RS_STAT_COUNT; k++)
		assert_int_equal(strspn(rs_stats_name(k),
		    "abcdefghijklmnopqrstuvwxyz_"), strlen(rs_stats_name(k)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metric_slots, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_long_labels, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_defaults_label, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_metrics_full, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_layout1_refused,
		    seg_setup, seg_teardown),
		cmocka_unit_test(test_path_layout),
		cmocka_unit_test(test_stats_add_shared),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_label_bound),
		cmocka_unit_test(test_exposition_lines),
		cmocka_unit_test(test_counter_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
