/* SPDX-License-Identifier: MIT */
/*
 * breaker_settings.h - the `breaker:` settings of a rule (SPEC 12), and
 * their built-in values.
 *
 * Pure data, part of struct rs_settings (policy.h); read-only once a policy
 * is built, so any thread may read it.  Durations are in milliseconds.
 */
#ifndef RS_BREAKER_SETTINGS_H
#define RS_BREAKER_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

/* Bounds a policy may set; the state word (breaker.h) is sized for them. */
#define RS_BREAKER_FAILURES_MAX 1000
#define RS_BREAKER_PROBES_MAX 10
#define RS_BREAKER_OPEN_MIN_MS 100
#define RS_BREAKER_OPEN_MAX_MS 86400000u

struct rs_breaker_settings {
	bool enabled;			/* `breaker:` given and not `off` */
	uint32_t failures;		/* consecutive failures that open it */
	uint32_t open_for_ms;		/* the first open period */
	uint32_t max_open_for_ms;	/* what doubling stops at */
	uint32_t probes;		/* trial connects once half-open */
	uint64_t on_status[10];		/* bit s % 64 of word s / 64 */
	uint32_t scope;			/* enum rs_scope (policy.h) */
};

/* Fills *s with the built-in values (off; 5, 10s, 5m, 1, [], machine). */
void rs_breaker_settings_init(struct rs_breaker_settings *s);

/* Returns whether an HTTP status counts as a failure (on_status). */
bool rs_breaker_settings_fails(const struct rs_breaker_settings *s,
    unsigned status);

/* Returns whether on_status lists any status at all. */
bool rs_breaker_settings_has_status(const struct rs_breaker_settings *s);

#endif /* RS_BREAKER_SETTINGS_H */
