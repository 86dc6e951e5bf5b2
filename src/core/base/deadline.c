/* SPDX-License-Identifier: MIT */
/*
 * deadline.c - parsing, clamping and comparing deadline header values.
 *
 * Pure and thread-safe; see deadline.h.  The parser is strict on purpose:
 * a value it does not fully understand gives no deadline at all rather
 * than a guessed one.
 */
#include "deadline.h"

#include <errno.h>
#include <string.h>

#include "clock.h"

/* 15 digits reach the year 33658, far beyond any real deadline. */
#define MAX_DIGITS 15

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

int rs_deadline_parse(const char *value, int64_t *epoch_ms)
{
	const char *p = value;
	int64_t v = 0;
	int digits = 0;

	if (!p)
		return -EINVAL;
	while (blank(*p))
		p++;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > MAX_DIGITS)
			return -EINVAL;
		v = v * 10 + (*p - '0');
	}
	while (blank(*p))
		p++;
	if (*p || digits == 0 || v <= 0)
		return -EINVAL;
	*epoch_ms = v;
	return 0;
}

char *rs_deadline_format(int64_t epoch_ms, char out[RS_DEADLINE_TEXT_MAX])
{
	char tmp[RS_DEADLINE_TEXT_MAX];
	size_t n = 0, i;
	uint64_t v = epoch_ms > 0 ? (uint64_t)epoch_ms : 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof(tmp) - 1);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
	return out;
}

int64_t rs_deadline_clamp(int64_t sent_epoch_ms, int64_t now_epoch_ms,
    int64_t now_mono_ms, uint32_t max_ms, int64_t limit_mono_ms)
{
	/* Both operands are bounded (15 digits), so this cannot overflow. */
	int64_t left = sent_epoch_ms - now_epoch_ms;
	int64_t when;

	if (left > (int64_t)max_ms)
		left = max_ms;
	when = now_mono_ms + left + RS_CLOCK_PAIR_MS;
	return when < limit_mono_ms ? when : limit_mono_ms;
}

int64_t rs_deadline_to_epoch(int64_t mono_ms, int64_t now_epoch_ms,
    int64_t now_mono_ms)
{
	return now_epoch_ms + (mono_ms - now_mono_ms);
}

bool rs_deadline_replaces(const char *program_value, int64_t ours_epoch_ms)
{
	int64_t theirs;

	if (rs_deadline_parse(program_value, &theirs) < 0)
		return true;
	return theirs > ours_epoch_ms;
}

bool rs_deadline_header_name_ok(const char *name)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";
	size_t n = strlen(name);

	if (n == 0 || n >= RS_HEADER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z');

		if (!alnum && !strchr(extra, c))
			return false;
	}
	return true;
}
