/* SPDX-License-Identifier: MIT */
/*
 * deadline.h - deadlines carried across hops in a request header (SPEC 10).
 *
 * The header's value is an absolute Unix epoch time in milliseconds, so a
 * deadline means the same instant on every machine whose clock is
 * synchronised; a received one is clamped to at most inbound_deadline_max
 * from now, which bounds what a skewed or hostile sender can ask for.
 * Pure and thread-safe: the caller passes the clocks in.
 */
#ifndef RS_DEADLINE_H
#define RS_DEADLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest header name a policy may give (deadline_header, ...). */
#define RS_HEADER_NAME_MAX 64

/* Room for an epoch time in ms as text: 19 digits and a NUL. */
#define RS_DEADLINE_TEXT_MAX 21

/*
 * Parses a header value: decimal digits only (1 to 15 of them, blanks
 * around allowed), a positive epoch time in ms.  Returns 0 and sets
 * *epoch_ms, or -EINVAL for anything else (a sign, a fraction, a unit,
 * an empty value, a number past the year 33658).
 */
int rs_deadline_parse(const char *value, int64_t *epoch_ms);

/* Formats an epoch time in ms as decimal digits into out; returns out. */
char *rs_deadline_format(int64_t epoch_ms, char out[RS_DEADLINE_TEXT_MAX]);

/*
 * The deadline a received header gives, on the monotonic clock: the sent
 * epoch time converted with the clocks now_epoch_ms and now_mono_ms read
 * together, never later than max_ms from now (the clamp) nor than
 * limit_mono_ms (the process deadline; INT64_MAX for none).  A deadline
 * already past stays in the past (an expired request).  The two readings
 * are whole milliseconds, each cut short by up to one, so their sum is
 * off by less than one either way: the result is RS_CLOCK_PAIR_MS later,
 * so that it is never before the moment sent (clock.h).
 */
int64_t rs_deadline_clamp(int64_t sent_epoch_ms, int64_t now_epoch_ms,
    int64_t now_mono_ms, uint32_t max_ms, int64_t limit_mono_ms);

/* Converts a monotonic deadline back to epoch ms, with the same clocks. */
int64_t rs_deadline_to_epoch(int64_t mono_ms, int64_t now_epoch_ms,
    int64_t now_mono_ms);

/*
 * Whether an outbound request's own header value (as the program wrote
 * it) must be replaced by ours: when it is later than ours, or not a
 * valid deadline at all.  An earlier or equal value is kept (SPEC 10).
 */
bool rs_deadline_replaces(const char *program_value, int64_t ours_epoch_ms);

/*
 * Whether name is a valid header name (an RFC 9110 token) of 1 to
 * RS_HEADER_NAME_MAX - 1 characters.
 */
bool rs_deadline_header_name_ok(const char *name);

#endif /* RS_DEADLINE_H */
