/* SPDX-License-Identifier: MIT */
/*
 * duration.c - the one duration grammar, parsed exactly and printed back.
 *
 * Parsing counts in integers (a mantissa and a number of decimals), never
 * in floating point, so that "0.1s" is 100 ms exactly and "1.0001s" is
 * refused rather than rounded.  Pure and thread-safe.
 */
#include "duration.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Writes the reason (when asked for) and returns -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The digits of a duration: "12" or "1.25"; returns 0 or -EINVAL. */
static int duration_digits(const char **sp, uint64_t *mant, unsigned *frac)
{
	const char *s = *sp;
	unsigned ndig = 0;

	*mant = 0;
	*frac = 0;
	for (; isdigit((unsigned char)*s); s++, ndig++)
		*mant = *mant * 10 + (uint64_t)(*s - '0') * (ndig < 14);
	if (ndig == 0)
		return -EINVAL;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return -EINVAL;
		for (; isdigit((unsigned char)*s); s++, ndig++, (*frac)++)
			*mant = *mant * 10 + (uint64_t)(*s - '0') * (ndig < 14);
	}
	*sp = s;
	return ndig > 13 || *frac > 6 ? -ERANGE : 0;
}

/* Returns the milliseconds in one unit ("ms", "s", "m"), or 0. */
static uint32_t unit_ms(const char *u)
{
	return !strcmp(u, "ms") ? 1 : !strcmp(u, "s") ? 1000
			  : !strcmp(u, "m") ? 60000 : 0;
}

/* Refuses an empty or negative duration before its digits are read. */
static int duration_sign(const char *s, char *why, size_t len)
{
	if (!*s)
		return fail(why, len, "empty duration (expected a number with "
		    "a unit: 250ms, 1.5s or 2m, or off)");
	if (*s == '-' && isdigit((unsigned char)s[1]))
		return fail(why, len, "duration %s is negative", s);
	return 0;
}

/* The unit after the digits, and whether the whole is exact in ms. */
static int duration_unit(const char *s, const char *u, uint64_t mant,
    unsigned frac, uint64_t *ms, char *why, size_t len)
{
	uint64_t pow10 = 1;
	uint32_t unit = unit_ms(u);

	if (!*u)
		return fail(why, len, "bare number %s needs a unit: %sms, %ss "
		    "or %sm", s, s, s, s);
	if (!unit)
		return fail(why, len, "unknown unit '%s' in '%s' (use ms, s or "
		    "m)", u, s);
	for (unsigned i = 0; i < frac; i++)
		pow10 *= 10;
	if (mant * unit % pow10 != 0)
		return fail(why, len, "duration %s is not a whole number of "
		    "milliseconds", s);
	*ms = mant * unit / pow10;
	return 0;
}

int rs_duration_parse(const char *s, uint64_t *ms, char *why, size_t len)
{
	const char *u = s;
	uint64_t mant = 0;
	unsigned frac = 0;
	int ret = duration_sign(s, why, len);

	if (ret < 0)
		return ret;
	ret = duration_digits(&u, &mant, &frac);
	if (ret == -ERANGE) {
		fail(why, len, "duration %s is too large or too precise", s);
		return -ERANGE;
	}
	if (ret < 0)
		return fail(why, len, "invalid duration '%s' (expected a "
		    "number with a unit: 250ms, 1.5s or 2m, or off)", s);
	return duration_unit(s, u, mant, frac, ms, why, len);
}

/*
 * Writes ms in `unit` (1, 1000 or 60000 ms) into out when it is exact to
 * three decimals, trailing zeros dropped; returns its length or 0.
 */
static int format_in_unit(uint32_t ms, uint32_t unit, const char *suffix,
    char *out, size_t len)
{
	uint64_t milli = (uint64_t)ms * 1000;
	uint64_t v, ip, frac;
	int n;

	/* "0.5s" is shorter than "500ms" but harder to read. */
	if (milli % unit != 0 || ms < unit)
		return 0;
	v = milli / unit;
	ip = v / 1000;
	frac = v % 1000;
	if (frac == 0)
		n = snprintf(out, len, "%llu%s", (unsigned long long)ip,
		    suffix);
	else if (frac % 100 == 0)
		n = snprintf(out, len, "%llu.%llu%s", (unsigned long long)ip,
		    (unsigned long long)frac / 100, suffix);
	else if (frac % 10 == 0)
		n = snprintf(out, len, "%llu.%02llu%s", (unsigned long long)ip,
		    (unsigned long long)frac / 10, suffix);
	else
		n = snprintf(out, len, "%llu.%03llu%s", (unsigned long long)ip,
		    (unsigned long long)frac, suffix);
	return n > 0 && (size_t)n < len ? n : 0;
}

/*
 * Picks the shortest exact form that does not start with "0."; on a tie
 * the larger unit wins ("1.234s" over "1234ms").
 */
char *rs_duration_format(uint32_t ms, char *buf, size_t len)
{
	static const struct {
		uint32_t unit;
		const char *suffix;
	} units[] = { { 60000, "m" }, { 1000, "s" }, { 1, "ms" } };
	char best[32] = "", cand[32];
	int best_n = 0;

	if (len == 0)
		return buf;
	if (ms == RS_OFF || ms == 0) {
		snprintf(buf, len, ms ? "off" : "0ms");
		return buf;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		int n = format_in_unit(ms, units[i].unit, units[i].suffix,
		    cand, sizeof(cand));

		if (n > 0 && (best_n == 0 || n < best_n)) {
			memcpy(best, cand, (size_t)n + 1);
			best_n = n;
		}
	}
	snprintf(buf, len, "%s", best);
	return buf;
}
