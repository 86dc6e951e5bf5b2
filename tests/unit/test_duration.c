/* SPDX-License-Identifier: MIT */
/*
 * test_duration.c - the one duration grammar (duration.c), which the
 * policy loader and `resolute run --deadline` share: what it accepts, what
 * it refuses and why, and the shortest spelling printed back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "duration.h"

static void accepted_texts(void **state)
{
	static const struct {
		const char *text;
		uint64_t ms;
	} ok[] = {
		{ "250ms", 250 }, { "1.5s", 1500 }, { "2m", 120000 },
		{ "0ms", 0 }, { "0.1s", 100 }, { "1.000s", 1000 },
		{ "1.234s", 1234 }, { "0.001s", 1 },
		{ "1.5m", 90000 }, { "9999999999999ms", 9999999999999ull },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t ms = 7;

		assert_int_equal(rs_duration_parse(ok[i].text, &ms, NULL, 0), 0);
		assert_true(ms == ok[i].ms);
	}
}

static void refused_texts_say_why(void **state)
{
	static const struct {
		const char *text;
		int err;
		const char *why;
	} bad[] = {
		{ "", -EINVAL, "empty duration" },
		{ "5", -EINVAL, "bare number 5 needs a unit: 5ms, 5s or 5m" },
		{ "-1s", -EINVAL, "duration -1s is negative" },
		{ "1e3ms", -EINVAL, "unknown unit 'e3ms' in '1e3ms'" },
		{ "0.0001s", -EINVAL, "not a whole number of milliseconds" },
		{ "0.5ms", -EINVAL, "not a whole number of milliseconds" },
		{ "1.5h", -EINVAL, "unknown unit 'h'" },
		{ "1.s", -EINVAL, "invalid duration '1.s'" },
		{ ".5s", -EINVAL, "invalid duration '.5s'" },
		{ "off", -EINVAL, "invalid duration 'off'" },
		{ " 1s", -EINVAL, "invalid duration ' 1s'" },
		{ "99999999999999ms", -ERANGE, "too large or too precise" },
		{ "1.0000001s", -ERANGE, "too large or too precise" },
	};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ms = 7;

		why[0] = '\0';
		assert_int_equal(rs_duration_parse(bad[i].text, &ms, why,
		    sizeof(why)), bad[i].err);
		assert_non_null(strstr(why, bad[i].why));
		assert_true(ms == 7);
	}
}

static void shortest_spelling(void **state)
{
	static const struct {
		uint32_t ms;
		const char *text;
	} rows[] = {
		{ 250, "250ms" }, { 1500, "1.5s" }, { 120000, "2m" },
		{ 0, "0ms" }, { RS_OFF, "off" }, { 1234, "1.234s" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t back;

		assert_string_equal(rs_duration_format(rows[i].ms, buf,
		    sizeof(buf)), rows[i].text);
		if (rows[i].ms != RS_OFF) {
			assert_int_equal(rs_duration_parse(buf, &back, NULL, 0),
			    0);
			assert_true(back == rows[i].ms);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepted_texts),
		cmocka_unit_test(refused_texts_say_why),
		cmocka_unit_test(shortest_spelling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
