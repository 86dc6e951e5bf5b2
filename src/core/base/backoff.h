/* SPDX-License-Identifier: MIT */
/*
 * backoff.h - delays between connect attempts.
 *
 * Pure: nothing here sleeps, reads a clock or draws a random number; the
 * caller passes the random draw in, so every result is reproducible.
 * All times are in milliseconds.  Thread-safe (no state).
 */
#ifndef RS_BACKOFF_H
#define RS_BACKOFF_H

#include <stdint.h>

enum rs_jitter {
	RS_JITTER_EQUAL,
	RS_JITTER_FULL,
	RS_JITTER_DECORRELATED,
	RS_JITTER_NONE,
};

struct rs_backoff {
	uint32_t base_ms;
	uint32_t cap_ms;
	double multiplier;
	enum rs_jitter jitter;
};

/*
 * Returns the wait before retry n (0 is the first retry), given a uniform
 * draw u in [0, 1) and, for decorrelated jitter, the previous wait (pass 0
 * for the first retry; base_ms is used then).  Never exceeds cap_ms; never
 * overflows, whatever n is.
 */
uint32_t rs_backoff_wait_ms(const struct rs_backoff *b, unsigned n, double u,
    uint32_t prev_ms);

/*
 * Stores in *lo_ms and *hi_ms the shortest and longest wait that retry n can
 * draw.  For decorrelated jitter the bounds assume every earlier draw was at
 * its own extreme (the widest possible range).
 */
void rs_backoff_bounds_ms(const struct rs_backoff *b, unsigned n,
    uint32_t *lo_ms, uint32_t *hi_ms);

/* Returns the jitter's name as written in a policy ("equal", ...). */
const char *rs_jitter_name(enum rs_jitter j);

#endif /* RS_BACKOFF_H */
