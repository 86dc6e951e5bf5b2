/* SPDX-License-Identifier: MIT */
/*
 * test_policy_yaml.c - the YAML loader: valid files, every invalid fixture
 * with its exact diagnostic, every shipped policy, the compiled-in copy.
 *
 * Run from the repository root: paths are relative to it.
 */
#include <errno.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "default_policy.h"
#include "policy.h"
#include "policy_yaml.h"
#include "sysio.h"

static struct rs_policy *load_ok(const char *path)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	char line[1024];
	int ret = rs_policy_load_file(path, &p, &d);

	for (size_t i = 0; i < d.n; i++) {
		rs_diag_format(&d.v[i], line, sizeof(line));
		print_error("%s\n", line);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(d.n, 0);
	assert_non_null(p);
	rs_diags_free(&d);
	return p;
}

static void assert_spec_defaults(const struct rs_settings *s)
{
	struct rs_settings want;

	rs_settings_init(&want);
	assert_int_equal(s->connect_timeout_ms, 3000);
	assert_int_equal(s->read_timeout_ms, RS_OFF);
	assert_int_equal(s->write_timeout_ms, RS_OFF);
	assert_int_equal(s->attempts, 3);
	assert_int_equal(s->retry_on, RS_CLASS_ALL);
	assert_int_equal(s->backoff.base_ms, 100);
	assert_int_equal(s->backoff.cap_ms, 30000);
	assert_true(s->backoff.multiplier == 2.0);
	assert_int_equal(s->backoff.jitter, RS_JITTER_EQUAL);
	assert_int_equal(s->connect_budget_ms, 10000);
	assert_true(s->budget.ratio == 0.2);
	assert_int_equal(s->budget.min_per_second, 10);
	assert_int_equal(s->budget.window_ms, 10000);
	assert_int_equal(s->budget.scope, RS_SCOPE_MACHINE);
	assert_false(s->passthrough);
	assert_memory_equal(s, &want, sizeof(want));
}

/* failover: on|off and the dns class, in the defaults and per rule. */
static void test_failover_and_dns(void **state)
{
	struct rs_policy *p = load_ok("tests/fixtures/valid/failover.yaml");
	const struct rs_rule *r = p->rules;

	(void)state;
	assert_int_equal(p->defaults.failover, 0);
	assert_int_equal(p->defaults.retry_on, RS_CLASS_REFUSED | RS_CLASS_DNS);
	assert_int_equal(r[0].settings.failover, 1);
	assert_int_equal(r[0].set, RS_KEY_FAILOVER);
	assert_int_equal(r[0].settings.retry_on,
	    RS_CLASS_REFUSED | RS_CLASS_DNS);
	assert_int_equal(r[1].settings.failover, 0);
	assert_int_equal(r[1].settings.retry_on, RS_CLASS_TIMEOUT);
	rs_policy_free(p);
}

/* breaker: off by default, a mapping turns it on, a rule inherits it. */
static void test_breaker(void **state)
{
	struct rs_policy *p = load_ok("tests/fixtures/valid/breaker.yaml");
	const struct rs_rule *r = p->rules;
	const struct rs_breaker_settings *d = &p->defaults.breaker;

	(void)state;
	assert_true(d->enabled);
	assert_int_equal(d->failures, 3);
	assert_int_equal(d->open_for_ms, 2000);
	assert_int_equal(d->max_open_for_ms, 300000);
	assert_int_equal(d->probes, 1);
	assert_int_equal(d->scope, RS_SCOPE_MACHINE);
	assert_false(rs_breaker_settings_has_status(d));
	assert_true(r[0].settings.breaker.enabled);
	assert_int_equal(r[0].settings.breaker.failures, 3);
	assert_int_equal(r[0].settings.breaker.open_for_ms, 2000);
	assert_int_equal(r[0].settings.breaker.max_open_for_ms, 60000);
	assert_int_equal(r[0].settings.breaker.probes, 2);
	assert_int_equal(r[0].settings.breaker.scope, RS_SCOPE_PROCESS);
	assert_int_equal(r[0].set, RS_KEY_BREAKER | RS_KEY_BREAKER_MAX_OPEN_FOR |
	    RS_KEY_BREAKER_PROBES | RS_KEY_BREAKER_SCOPE);
	assert_true(rs_breaker_settings_fails(&r[1].settings.breaker, 503));
	assert_true(rs_breaker_settings_fails(&r[1].settings.breaker, 502));
	assert_false(rs_breaker_settings_fails(&r[1].settings.breaker, 429));
	assert_false(rs_breaker_settings_fails(&r[1].settings.breaker, 200));
	assert_false(r[2].settings.breaker.enabled);
	assert_int_equal(r[2].set, RS_KEY_BREAKER);
	rs_policy_free(p);
	/* The compiled-in default has no breaker. */
	struct rs_diags dg = { 0 };

	assert_int_equal(rs_policy_load_default(&p, &dg), 0);
	assert_false(p->defaults.breaker.enabled);
	for (size_t i = 0; i < p->nrules; i++)
		assert_false(p->rules[i].settings.breaker.enabled);
	rs_policy_free(p);
	rs_diags_free(&dg);
}

static void test_inheritance(void **state)
{
	struct rs_policy *p = load_ok("tests/fixtures/valid/inherit.yaml");
	const struct rs_rule *r = p->rules;

	(void)state;
	assert_int_equal(p->nrules, 4);
	assert_int_equal(p->defaults_line, 16);
	assert_int_equal(p->defaults.connect_timeout_ms, 1500);
	assert_int_equal(p->defaults.attempts, 5);
	assert_int_equal(p->defaults.backoff.jitter, RS_JITTER_DECORRELATED);
	assert_int_equal(p->defaults.budget.window_ms, 120000);
	assert_int_equal(p->defaults.budget.min_per_second, 0);
	/* Rule 0 sets read_timeout and cap, inherits everything else. */
	assert_int_equal(r[0].line, 4);
	assert_int_equal(r[0].col, 5);
	assert_int_equal(r[0].set, RS_KEY_READ_TIMEOUT | RS_KEY_BACKOFF_CAP);
	assert_int_equal(r[0].settings.read_timeout_ms, 5000);
	assert_int_equal(r[0].settings.backoff.cap_ms, 2000);
	assert_int_equal(r[0].settings.backoff.base_ms, 50);
	assert_true(r[0].settings.backoff.multiplier == 1.5);
	assert_int_equal(r[0].settings.connect_timeout_ms, 1500);
	assert_int_equal(r[0].settings.attempts, 5);
	assert_int_equal(r[0].match.port_lo, 5432);
	/* Rule 1: an empty retry_on is allowed and means never retry. */
	assert_int_equal(r[1].settings.retry_on, 0);
	assert_int_equal(r[1].settings.attempts, 2);
	assert_int_equal(r[1].set, RS_KEY_ATTEMPTS | RS_KEY_RETRY_ON);
	assert_true(r[2].settings.passthrough);
	assert_int_equal(r[2].set, RS_KEY_PASSTHROUGH);
	assert_int_equal(r[3].settings.budget.scope, RS_SCOPE_PROCESS);
	assert_true(r[3].settings.budget.ratio == 0.5);
	assert_int_equal(r[3].match.kind, RS_MATCH_UNIX);
	rs_policy_free(p);
}

/* Reads "# expect: LINE:COL: MESSAGE" from the first line of a fixture. */
static int read_expect(const char *path, char *out, size_t len)
{
	char *buf;
	size_t n;
	const char *tag = "# expect: ";

	if (rs_sys_read_file(path, 1 << 20, &buf, &n) < 0)
		return -1;
	if (strncmp(buf, tag, strlen(tag)) != 0) {
		free(buf);
		return -1;
	}
	snprintf(out, len, "%s:%.*s", path, (int)strcspn(buf + strlen(tag),
	    "\n"), buf + strlen(tag));
	free(buf);
	return 0;
}

/* Returns 0 when the fixture yields exactly its one expected diagnostic. */
static int check_fixture(const char *path)
{
	char want[1200], got[1200] = "(no diagnostic)", *colon;
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	int ret, bad;

	if (read_expect(path, want, sizeof(want)) < 0) {
		print_error("%s: no '# expect:' line\n", path);
		return 1;
	}
	/* "FILE:L:C: MSG" becomes "FILE:L:C: error: MSG". */
	colon = strstr(want + strlen(path) + 1, ": ");
	memmove(colon + 9, colon + 2, strlen(colon + 2) + 1);
	memcpy(colon, ": error: ", 9);
	ret = rs_policy_load_file(path, &p, &d);
	if (d.n > 0)
		rs_diag_format(&d.v[0], got, sizeof(got));
	bad = ret != -EINVAL || p || d.n != 1 || strcmp(want, got) != 0;
	if (bad) {
		print_error("want: %s\n got: %s (ret %d, %zu diagnostics)\n",
		    want, got, ret, d.n);
		for (size_t i = 1; i < d.n; i++) {
			rs_diag_format(&d.v[i], got, sizeof(got));
			print_error("also: %s\n", got);
		}
	}
	rs_diags_free(&d);
	rs_policy_free(p);
	return bad;
}

static void test_invalid_fixtures(void **state)
{
	glob_t g;
	int failed = 0;

	(void)state;
	assert_int_equal(glob("tests/fixtures/invalid/*.yaml", 0, NULL, &g),
	    0);
	assert_true(g.gl_pathc >= 35);
	for (size_t i = 0; i < g.gl_pathc; i++)
		failed += check_fixture(g.gl_pathv[i]);
	globfree(&g);
	assert_int_equal(failed, 0);
}

/* Every file shipped under policy/ must load without a single error. */
static void test_shipped_policies(void **state)
{
	const char *pats[] = { "policy/*.yaml", "policy/*/*.yaml",
		"policy/*/*/*.yaml" };
	size_t total = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]); k++) {
		glob_t g;

		if (glob(pats[k], 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++, total++)
			rs_policy_free(load_ok(g.gl_pathv[i]));
		globfree(&g);
	}
	assert_true(total >= 4);
}

static void test_builtin_equals_file(void **state)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	char *buf;
	size_t len;

	(void)state;
	assert_int_equal(rs_sys_read_file("policy/default.yaml", 1 << 20,
	    &buf, &len), 0);
	assert_int_equal(rs_default_policy_len, len);
	assert_memory_equal(rs_default_policy, buf, len);
	assert_int_equal(rs_default_policy[len], '\0');
	free(buf);
	assert_int_equal(rs_policy_load_default(&p, &d), 0);
	assert_int_equal(d.n, 0);
	assert_string_equal(p->path, "<built-in>");
	assert_int_equal(p->nrules, 0);
	assert_spec_defaults(&p->defaults);
	rs_policy_free(p);
	rs_diags_free(&d);
}

/* Loads path and checks its one diagnostic against want. */
static void expect_one(const char *path, int err, const char *want)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	char got[512];

	assert_int_equal(rs_policy_load_file(path, &p, &d), err);
	assert_null(p);
	assert_int_equal(d.n, 1);
	rs_diag_format(&d.v[0], got, sizeof(got));
	assert_string_equal(got, want);
	rs_diags_free(&d);
}

static void test_unreadable(void **state)
{
	char dir[] = "/tmp/rs-test-XXXXXX", path[256], want[512];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	expect_one("tests/fixtures/no-such-file.yaml", -ENOENT,
	    "tests/fixtures/no-such-file.yaml: error: cannot read: "
	    "No such file or directory");
	snprintf(want, sizeof(want), "%s: error: cannot read: Is a directory",
	    dir);
	expect_one(dir, -EISDIR, want);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(want, sizeof(want), "%s: error: cannot read: not a regular "
	    "file", path);
	expect_one(path, -EINVAL, want);
	unlink(path);
	snprintf(path, sizeof(path), "%s/big.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "version: 1\n");
	for (int i = 0; i < 70000; i++)
		fprintf(f, "# padding line\n");
	fclose(f);
	snprintf(want, sizeof(want), "%s: error: cannot read: larger than "
	    "1 MiB (1048576 bytes)", path);
	expect_one(path, -EFBIG, want);
	unlink(path);
	snprintf(path, sizeof(path), "%s/empty.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(want, sizeof(want), "%s:1:1: error: empty policy: expected "
	    "a mapping with 'version: 1'", path);
	expect_one(path, -EINVAL, want);
	unlink(path);
	rmdir(dir);
}

/* Errors do not stop the loader: all of them are reported, in order. */
static void test_many_errors(void **state)
{
	static const char text[] =
	    "version: 1\n"
	    "hosts:\n"
	    "  - match: db:99999\n"
	    "    attempts: 20\n"
	    "defaults:\n"
	    "  conect_timeout: 1s\n"
	    "  read_timeout: 5\n";
	static const char *const want[] = {
		"t:3:12: error: invalid match 'db:99999': invalid port "
		"(expected 1..65535 or LOW-HIGH)",
		"t:4:15: error: 'attempts' must be between 1 and 10, got 20",
		"t:6:3: error: unknown key 'conect_timeout' (did you mean "
		"'connect_timeout'?)",
		"t:7:17: error: bare number 5 needs a unit: 5ms, 5s or 5m",
	};
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	char got[512];

	(void)state;
	assert_int_equal(rs_policy_load_buffer("t", text, sizeof(text) - 1,
	    &p, &d), -EINVAL);
	assert_null(p);
	assert_int_equal(d.n, 4);
	for (size_t i = 0; i < d.n; i++) {
		rs_diag_format(&d.v[i], got, sizeof(got));
		assert_string_equal(got, want[i]);
	}
	rs_diags_free(&d);
}

/* A flood of errors is cut off rather than reported without end. */
static void test_error_cap(void **state)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;
	size_t cap = 20 + 300 * 16, n;
	char *text = malloc(cap);

	(void)state;
	n = (size_t)snprintf(text, cap, "version: 1\ndefaults:\n");
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(text + n, cap - n, "  bad%04d: 1\n", i);
	assert_int_equal(rs_policy_load_buffer("t", text, n, &p, &d),
	    -EINVAL);
	assert_int_equal(d.n, 101);
	rs_diags_free(&d);
	free(text);
}

/*
 * Deep nesting is cut off, not followed down the stack, and ends the load
 * (libyaml would spend seconds on the rest).
 */
static void test_deep_nesting(void **state)
{
	size_t depth = 100000, n = 0;
	char *text = malloc(2 * depth + 32), got[512];
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;

	(void)state;
	n += (size_t)sprintf(text, "version: 1\nhosts: ");
	memset(text + n, '[', depth);
	memset(text + n + depth, ']', depth);
	n += 2 * depth;
	assert_int_equal(rs_policy_load_buffer("t", text, n, &p, &d),
	    -EINVAL);
	/* The load stops there: nothing after the cut-off is parsed. */
	assert_int_equal(d.n, 1);
	rs_diag_format(&d.v[0], got, sizeof(got));
	assert_string_equal(got, "t:2:39: error: nested too deeply");
	rs_diags_free(&d);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inheritance),
		cmocka_unit_test(test_invalid_fixtures),
		cmocka_unit_test(test_breaker),
		cmocka_unit_test(test_failover_and_dns),
		cmocka_unit_test(test_shipped_policies),
		cmocka_unit_test(test_builtin_equals_file),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_many_errors),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_deep_nesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
