/* SPDX-License-Identifier: MIT */
/*
 * duration.h - the one duration grammar: "250ms", "1.5s", "2m", and back.
 *
 * A duration is a decimal number (at most 13 digits, at most 6 after the
 * point) and a unit (ms, s or m) that together make a whole number of
 * milliseconds.  The policy loader and the command-line tool both parse
 * with rs_duration_parse(), so they accept exactly the same texts.
 * Pure and thread-safe.
 */
#ifndef RS_DURATION_H
#define RS_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* A duration set to `off`. */
#define RS_OFF UINT32_MAX

/*
 * Parses text into *ms (no range check: the caller knows its bounds).
 * Returns 0, or -EINVAL (not a duration, no unit, unknown unit, not whole
 * milliseconds, negative) or -ERANGE (too many digits), and then writes a
 * full-sentence reason that quotes the text into why (why may be NULL).
 * "off" is not a duration here; callers that allow it check first.
 */
int rs_duration_parse(const char *text, uint64_t *ms, char *why,
    size_t why_len);

/* Formats a duration ("250ms", "1.5s", "2m", "off") into buf; returns buf. */
char *rs_duration_format(uint32_t ms, char *buf, size_t len);

#endif /* RS_DURATION_H */
