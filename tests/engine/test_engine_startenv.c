/* SPDX-License-Identifier: MIT */
/*
 * test_engine_startenv.c - the library's variables as the process started
 * with them: the copy outlives clearenv() and setenv(), holds only the
 * library's own variables, and answers as getenv() did at start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "startenv.h"

static void test_copy_outlives_the_environment(void **state)
{
	(void)state;
	/* The first call takes the copy; a later one changes nothing. */
	setenv("RESOLUTE_POLICY", "/tmp/start.yaml", 1);
	setenv("RESOLUTE_LOG", "info", 1);
	setenv("RESOLUTE_EMPTY", "", 1);
	setenv("JOURNAL_STREAM", "8:1234", 1);
	setenv("RESOLUTE_TEST_UNRELATED_X", "1", 1);
	setenv("HOME_OF_SOMETHING", "/x", 1);
	unsetenv("RESOLUTE_DISABLE");
	rs_startenv_capture();
	clearenv();
	setenv("RESOLUTE_POLICY", "/tmp/later.yaml", 1);
	rs_startenv_capture();
	assert_string_equal(rs_startenv_get("RESOLUTE_POLICY"),
	    "/tmp/start.yaml");
	assert_string_equal(rs_startenv_get("RESOLUTE_LOG"), "info");
	assert_string_equal(rs_startenv_get("RESOLUTE_EMPTY"), "");
	assert_string_equal(rs_startenv_get("JOURNAL_STREAM"), "8:1234");
	assert_null(rs_startenv_get("RESOLUTE_DISABLE"));
	assert_null(rs_startenv_get("HOME_OF_SOMETHING"));
	/* A name that is a prefix of a copied one is not it. */
	assert_null(rs_startenv_get("RESOLUTE_LO"));
	assert_true(rs_startenv_is("RESOLUTE_LOG", "info"));
	assert_false(rs_startenv_is("RESOLUTE_LOG", "inf"));
	assert_false(rs_startenv_is("RESOLUTE_DISABLE", "1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_outlives_the_environment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
