/* SPDX-License-Identifier: MIT */
/*
 * breaker.h - the circuit breaker of one rule and address (SPEC 12), as a
 * pure state machine over one 64-bit word.
 *
 * The whole state that decisions read lives in one word, so that a
 * decision is one compare-and-swap on memory that many processes share,
 * and a process that dies between any two instructions leaves it whole.
 * Pure: the time (monotonic ms; CLOCK_MONOTONIC is machine-wide) and the
 * random draw are passed in.  Thread-safe (no state of its own).
 *
 *   CLOSED --failures in a row--> OPEN --open period over: a probe-->
 *   HALF_OPEN --probe connects--> CLOSED
 *             --probe fails-----> OPEN (period doubled, up to max_open_for)
 *   A probe that never reports (its process died) holds its place for one
 *   open period (its lease); then another probe is let through.
 */
#ifndef RS_BREAKER_H
#define RS_BREAKER_H

#include <stdbool.h>
#include <stdint.h>

#include "breaker_settings.h"

enum rs_breaker_state {
	RS_BREAKER_CLOSED,
	RS_BREAKER_OPEN,
	RS_BREAKER_HALF_OPEN,	/* probes handed out, none reported yet */
};

/* The word, unpacked.  until: the end of the open period or of the
   probes' lease, in ms modulo 2^36 (wraps after 795 days; compared
   modulo, so periods up to a day are safe across the wrap). */
struct rs_breaker_view {
	unsigned state;		/* enum rs_breaker_state */
	unsigned probes_out;	/* 0 .. RS_BREAKER_PROBES_MAX */
	int err;		/* the errno that opened it */
	unsigned failures;	/* consecutive, saturating at 1023 */
	unsigned doublings;	/* failed probes since it opened, up to 15 */
	uint64_t until;		/* ms, modulo 2^36 */
};

/* What an attempt to an address may do. */
enum rs_breaker_verdict {
	RS_BREAKER_PASS,	/* closed: go ahead */
	RS_BREAKER_PROBE,	/* half-open: go ahead as a probe */
	RS_BREAKER_REJECT,	/* open: fail at once with the opening error */
	RS_BREAKER_ABSENT,	/* no breaker kept for it (breakers.h): go
				   ahead; its success has nothing to reset */
};

/* What an outcome did to the breaker. */
enum rs_breaker_event {
	RS_BREAKER_NO_EVENT,
	RS_BREAKER_OPENED,	/* closed -> open, or a probe failed */
	RS_BREAKER_CLOSED_EV,	/* open or half-open -> closed */
};

void rs_breaker_unpack(uint64_t w, struct rs_breaker_view *v);
uint64_t rs_breaker_pack(const struct rs_breaker_view *v);

/* Returns whether monotonic ms now is before until (modulo 2^36). */
bool rs_breaker_before(int64_t now_ms, uint64_t until);

/*
 * Returns the open period after `doublings` failed probes: open_for
 * doubled that often, capped at max_open_for, then jittered by +-10%
 * with the uniform draw u in [0, 1).
 */
uint32_t rs_breaker_period_ms(const struct rs_breaker_settings *s,
    unsigned doublings, double u);

/*
 * Decides an attempt at now_ms.  Returns the verdict, and in *next the
 * word to store (equal to w when nothing changes: a pass or a reject).
 */
enum rs_breaker_verdict rs_breaker_decide(uint64_t w,
    const struct rs_breaker_settings *s, int64_t now_ms, uint64_t *next);

/*
 * Applies an attempt's outcome at now_ms: err 0 connected (or a status
 * outside on_status), else the errno of a failure in a retry_on class
 * (ECONNREFUSED for a status in on_status).  probe: the attempt was let
 * through as a probe.  u: a uniform draw for the jitter.  Returns the new
 * word (w when nothing changes) and sets *ev.
 */
uint64_t rs_breaker_outcome(uint64_t w, const struct rs_breaker_settings *s,
    int err, bool probe, int64_t now_ms, double u,
    enum rs_breaker_event *ev);

/* Returns the state the word shows at now_ms, an open one whose period
   is over counting as half-open.  */
enum rs_breaker_state rs_breaker_state_at(uint64_t w, int64_t now_ms);

/* Returns the ms from now_ms to the word's `until`, 0 once it passed. */
uint32_t rs_breaker_left_ms(uint64_t w, int64_t now_ms);

/* Returns "closed", "open" or "half-open". */
const char *rs_breaker_state_name(enum rs_breaker_state st);

#endif /* RS_BREAKER_H */
