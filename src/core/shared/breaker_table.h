/* SPDX-License-Identifier: MIT */
/*
 * breaker_table.h - a fixed table of circuit breakers, one per rule and
 * destination address:port, in shared memory (scope: machine, shm.h) or
 * in the process (scope: process).
 *
 * Lock-free and allocation-free: a slot is claimed by one CAS on its key,
 * its state is one word changed by CAS (breaker.h), and every loop is
 * bounded, so nothing here ever waits for another thread or process, and
 * one that dies anywhere leaves nothing held.  A slot is looked for in a
 * neighbourhood of RS_BREAKER_WAYS slots from its hash; when none is free,
 * a closed one is taken over (one with no failures first), never an open
 * one.  Taking over a slot that another process is about to update may
 * give the new address one count meant for the old one; that is all a
 * race can do.  Thread-safe.
 */
#ifndef RS_BREAKER_TABLE_H
#define RS_BREAKER_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "breaker.h"

#define RS_BREAKER_SLOTS 512
#define RS_BREAKER_WAYS 16

/* One breaker.  Fields other than key and word are for display. */
struct rs_breaker_slot {
	uint64_t key;		/* 0: free; see rs_breaker_key() */
	uint64_t word;		/* the state (breaker.h) */
	uint64_t rule_key;	/* the rule's metrics key (shm.c) */
	int64_t since_ms;	/* monotonic: when it last opened */
	uint32_t opens;		/* how often it opened: tells openings apart */
	uint32_t open_ms;	/* the jittered period it last opened for */
	uint32_t failures;	/* the failures in a row that opened it */
	uint16_t port;		/* host order */
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t pad;
	uint8_t addr[16];
};

struct rs_breaker_table {
	struct rs_breaker_slot slots[RS_BREAKER_SLOTS];
};

/* A destination as the table keys it. */
struct rs_breaker_dest {
	uint64_t rule_key;	/* rs_shm_rule_key() of the rule */
	int family;		/* AF_INET or AF_INET6 (v4-mapped: AF_INET) */
	uint8_t addr[16];
	uint16_t port;		/* host order */
};

/* Returns the key of a destination (never 0). */
uint64_t rs_breaker_key(const struct rs_breaker_dest *d);

/* Returns the slot of d's key, or NULL; never writes. */
struct rs_breaker_slot *rs_breaker_find(struct rs_breaker_table *t,
    const struct rs_breaker_dest *d, uint64_t key);

/*
 * Returns the slot of d's key, claiming a free or closed one when it has
 * none; NULL when every slot of its neighbourhood is open.
 */
struct rs_breaker_slot *rs_breaker_claim(struct rs_breaker_table *t,
    const struct rs_breaker_dest *d, uint64_t key);

/*
 * Decides an attempt on slot sl at now_ms (one CAS when a probe is taken).
 * *err gets the opening errno for a reject.
 */
enum rs_breaker_verdict rs_breaker_slot_admit(struct rs_breaker_slot *sl,
    const struct rs_breaker_settings *s, int64_t now_ms, int *err);

/*
 * Applies an outcome (rs_breaker_outcome()) to sl; on an opening, also
 * stamps the display fields.  Returns the event; *opens gets the slot's
 * opening count after it.
 */
enum rs_breaker_event rs_breaker_slot_record(struct rs_breaker_slot *sl,
    const struct rs_breaker_settings *s, int err, bool probe, int64_t now_ms,
    double u, uint32_t *opens);

#endif /* RS_BREAKER_TABLE_H */
