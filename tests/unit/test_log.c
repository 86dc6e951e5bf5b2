/* SPDX-License-Identifier: MIT */
/*
 * test_log.c - log lines: text and JSON forms, levels, escaping, one write
 * per line, errno preserved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static char path[64];

/* Points the log at a fresh file with the given level and format. */
static void setup_log(const char *level, const char *format)
{
	snprintf(path, sizeof(path), "/tmp/rs-test-log-%d", (int)getpid());
	unlink(path);
	setenv("RESOLUTE_LOG", level, 1);
	setenv("RESOLUTE_LOG_FORMAT", format, 1);
	setenv("RESOLUTE_LOG_FILE", path, 1);
	unsetenv("JOURNAL_STREAM");
	assert_int_equal(rs_log_configure(false), 0);
}

static char *slurp(void)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static void text_line_has_pid_level_and_message(void **state)
{
	(void)state;
	setup_log("info", "text");
	errno = EBADF;
	rs_log(RS_LOG_WARN, NULL, "connect %s attempt %d/%d", "db", 2, 3);
	assert_int_equal(errno, EBADF);
	char want[128];

	snprintf(want, sizeof(want), "resolute[%d]: warn: connect db attempt "
	    "2/3\n", (int)getpid());
	assert_string_equal(slurp(), want);
}

static void levels_filter_lines(void **state)
{
	(void)state;
	setup_log("warn", "text");
	rs_log(RS_LOG_INFO, NULL, "hidden");
	rs_log(RS_LOG_DEBUG, NULL, "hidden too");
	assert_string_equal(slurp(), "");
	assert_true(rs_log_enabled(RS_LOG_ERROR));
	assert_false(rs_log_enabled(RS_LOG_INFO));
}

static void json_carries_fields_and_escapes(void **state)
{
	(void)state;
	setup_log("debug", "json");
	struct rs_log_fields f = { .event = "retry", .host = "db.\"internal\"",
		.addr = "10.0.0.5:5432", .attempt = 2, .attempts = 3,
		.error = "connection refused", .wait_ms = 143 };

	rs_log(RS_LOG_WARN, &f, "tab\there");
	char *line = slurp();

	assert_non_null(strstr(line, "\"level\":\"warn\""));
	assert_non_null(strstr(line, "\"event\":\"retry\""));
	assert_non_null(strstr(line, "\"host\":\"db.\\\"internal\\\"\""));
	assert_non_null(strstr(line, "\"addr\":\"10.0.0.5:5432\""));
	assert_non_null(strstr(line, "\"attempt\":2,\"attempts\":3"));
	assert_non_null(strstr(line, "\"error\":\"connection refused\""));
	assert_non_null(strstr(line, "\"wait_ms\":143"));
	assert_non_null(strstr(line, "\"msg\":\"tab\\u0009here\"}\n"));
	assert_int_equal(line[0], '{');
}

static void long_messages_are_cut_to_one_line(void **state)
{
	(void)state;
	setup_log("info", "text");
	char big[4000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	rs_log(RS_LOG_ERROR, NULL, "%s", big);
	rs_log(RS_LOG_ERROR, NULL, "second");
	char *line = slurp();
	char *nl = strchr(line, '\n');

	assert_non_null(nl);
	assert_true(nl - line < 1024);
	assert_non_null(strstr(nl + 1, "error: second\n"));
}

/*
 * Held lines are written by the flush, in order, and not before it;
 * lines past the holding room are counted in one line after them.
 */
static void held_lines_wait_for_flush(void **state)
{
	char want[256];
	int n = 0;

	(void)state;
	setup_log("info", "text");
	rs_log_hold();
	rs_log(RS_LOG_WARN, NULL, "first");
	rs_log(RS_LOG_ERROR, NULL, "second");
	assert_string_equal(slurp(), "");
	rs_log_flush();
	snprintf(want, sizeof(want), "resolute[%d]: warn: first\n"
	    "resolute[%d]: error: second\n", (int)getpid(), (int)getpid());
	assert_string_equal(slurp(), want);
	setup_log("info", "text");
	rs_log_hold();
	for (int i = 0; i < 40; i++)
		rs_log(RS_LOG_WARN, NULL, "%0400d", i);
	rs_log_flush();
	for (const char *s = slurp(); (s = strstr(s, ": warn: 0")); s++)
		n++;
	assert_true(n > 0 && n < 40);
	snprintf(want, sizeof(want), "%d start-up log lines dropped", 40 - n);
	assert_non_null(strstr(slurp(), want));
}

static void level_names_parse(void **state)
{
	(void)state;
	assert_int_equal(rs_log_level_parse("error"), RS_LOG_ERROR);
	assert_int_equal(rs_log_level_parse("warn"), RS_LOG_WARN);
	assert_int_equal(rs_log_level_parse("info"), RS_LOG_INFO);
	assert_int_equal(rs_log_level_parse("debug"), RS_LOG_DEBUG);
	assert_int_equal(rs_log_level_parse("loud"), -1);
}

/*
 * "warning" is a synonym of "warn" for RESOLUTE_LOG and `resolute run
 * --log` alike (both call rs_log_level_parse); other spellings are not.
 */
static void warning_is_warn(void **state)
{
	(void)state;
	assert_int_equal(rs_log_level_parse("warning"), RS_LOG_WARN);
	assert_int_equal(rs_log_level_parse("WARN"), -1);
	assert_int_equal(rs_log_level_parse("warnings"), -1);
	assert_int_equal(rs_log_level_parse(""), -1);
}

static void bad_values_keep_defaults(void **state)
{
	(void)state;
	setenv("RESOLUTE_LOG", "loud", 1);
	setenv("RESOLUTE_LOG_FORMAT", "xml", 1);
	assert_int_equal(rs_log_configure(false), -EINVAL);
	assert_true(rs_log_enabled(RS_LOG_WARN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_line_has_pid_level_and_message),
		cmocka_unit_test(levels_filter_lines),
		cmocka_unit_test(json_carries_fields_and_escapes),
		cmocka_unit_test(long_messages_are_cut_to_one_line),
		cmocka_unit_test(held_lines_wait_for_flush),
		cmocka_unit_test(level_names_parse),
		cmocka_unit_test(warning_is_warn),
		cmocka_unit_test(bad_values_keep_defaults),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	unlink(path);
	return r;
}
