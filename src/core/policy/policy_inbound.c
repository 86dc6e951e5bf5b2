/* SPDX-License-Identifier: MIT */
/*
 * policy_inbound.c - the top-level keys inbound_deadline and
 * inbound_deadline_max (SPEC 10).
 *
 * They are top-level, not per rule, because an accepted connection matches
 * no host rule: the deadline belongs to the server process as a whole.
 * Thread-safe: all state is in the caller's loader.
 */
#include "policy_inbound.h"

#include <stdint.h>
#include <string.h>

#include "duration.h"
#include "policy_walk.h"

/* The clamp's bounds: a second (below that, skew eats it) to a day. */
#define MAX_LO_MS 1000u
#define MAX_HI_MS 86400000u

static void load_header(struct rs_yload *l, const struct rs_ynode *key,
    const struct rs_ynode *val, struct rs_policy *p)
{
	if (rs_ydoc_is_null(val))
		rs_ydoc_err(l, key, "'inbound_deadline' has no value");
	else if (rs_ydoc_want_scalar(l, "inbound_deadline", val))
		rs_walk_header(l, "inbound_deadline", val, p->inbound_header);
}

static void load_max(struct rs_yload *l, const struct rs_ynode *key,
    const struct rs_ynode *val, struct rs_policy *p)
{
	char why[256];
	uint64_t ms;

	if (rs_ydoc_is_null(val)) {
		rs_ydoc_err(l, key, "'inbound_deadline_max' has no value");
		return;
	}
	if (!rs_ydoc_want_scalar(l, "inbound_deadline_max", val))
		return;
	if (!strcmp(val->value, "off")) {
		rs_ydoc_err(l, val, "'inbound_deadline_max' cannot be off: a "
		    "received deadline is always clamped");
		return;
	}
	if (rs_duration_parse(val->value, &ms, why, sizeof(why)) < 0) {
		rs_ydoc_err(l, val, "%s", why);
		return;
	}
	if (ms < MAX_LO_MS || ms > MAX_HI_MS) {
		rs_ydoc_err(l, val, "'inbound_deadline_max' must be between "
		    "1s and 1440m, got %s", val->value);
		return;
	}
	p->inbound_max_ms = (uint32_t)ms;
}

void rs_policy_load_inbound(struct rs_yload *l,
    const struct rs_ynode *const key[2], const struct rs_ynode *const val[2],
    struct rs_policy *p)
{
	if (key[0])
		load_header(l, key[0], val[0], p);
	if (key[1])
		load_max(l, key[1], val[1], p);
}
