/* SPDX-License-Identifier: MIT */
/*
 * policy_walk.h - checks a mapping of the YAML tree against a key table
 * (policy_keys.h) and stores what it finds into a struct rs_settings.
 *
 * Every problem is reported at the node that caused it, and the walk goes
 * on.  Thread-safe: all state lives in the caller's struct rs_walk.
 */
#ifndef RS_POLICY_WALK_H
#define RS_POLICY_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "ydoc.h"

/* The state of one walk over `defaults:` or one host rule. */
struct rs_walk {
	struct rs_yload *l;
	struct rs_settings *s;		/* filled in place */
	uint64_t set;			/* enum rs_key bits set */
	bool host;			/* a host rule: host-only keys ok */
	const struct rs_ynode *base_val, *cap_val;
	const struct rs_ynode *open_val, *max_open_val;	/* breaker */
	const struct rs_ynode *min_val, *max_val;	/* auto_timeout */
	const struct rs_ynode *match_key, *match_val;	/* for the caller */
};

/*
 * Walks the settings keys of map into w->s (with w->set), then checks
 * backoff cap >= base and breaker max_open_for >= open_for.  A host rule's `match:` is only remembered in
 * w->match_key / match_val.
 */
void rs_walk_settings(struct rs_walk *w, const struct rs_ynode *map);

/* Returns whether name is a settings key (for "belongs under defaults"). */
bool rs_walk_is_setting(const char *name);

/*
 * Parses an unquoted integer in [lo, hi] into *v; returns 0, or reports it
 * (naming key) and returns -EINVAL or -ERANGE.
 */
int rs_walk_integer(struct rs_yload *l, const char *key,
    const struct rs_ynode *val, double lo, double hi, double *v);

/*
 * Parses a header name or `off` into out ("" for off); returns 0, or
 * reports it (naming key) and returns -EINVAL.
 */
int rs_walk_header(struct rs_yload *l, const char *key,
    const struct rs_ynode *val, char out[RS_HEADER_NAME_MAX]);

/* Reports an unknown key, with the nearest of names[] when one is close. */
void rs_walk_unknown_key(struct rs_yload *l, const struct rs_ynode *key,
    const char *const *names, size_t n);

#endif /* RS_POLICY_WALK_H */
