/* SPDX-License-Identifier: MIT */
/*
 * policy_keys.h - the keys a policy may set, as tables the checker walks.
 *
 * One row per key: its name, the kind of value (duration, integer, name,
 * list of failure classes, nested mapping, boolean), the enum rs_key bit
 * it sets and where it lands in struct rs_settings, with its bounds.  The
 * rows are in policy_keys.c; policy_walk.c checks a mapping against them.
 * Constant data; thread-safe.
 */
#ifndef RS_POLICY_KEYS_H
#define RS_POLICY_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a key's value is, and so how it is checked and stored. */
enum rs_key_kind {
	RS_KIND_DURATION,	/* "250ms", "1.5s", "2m"; `off` if off_ok */
	RS_KIND_UINT,		/* a whole number in [min, max] */
	RS_KIND_NUMBER,		/* a decimal number (a double) in [min, max] */
	RS_KIND_NAME,		/* one of names[], stored as its index */
	RS_KIND_CLASSES,	/* a list of names[], stored as a bit set */
	RS_KIND_MAP,		/* a nested mapping, checked against sub */
	RS_KIND_BOOL,		/* true or false */
	RS_KIND_MATCH,		/* a rule's `match:`, parsed by the caller */
	RS_KIND_STATUSES,	/* a list of HTTP status codes, a bit set */
	RS_KIND_HEADER,		/* a header name, or `off` (stored as "") */
};

struct rs_keytab;

struct rs_keydef {
	const char *name;
	enum rs_key_kind kind;
	uint64_t bit;			/* enum rs_key (policy.h) */
	size_t off;			/* into struct rs_settings */
	double min, max;		/* durations in ms, numbers */
	bool off_ok;			/* durations, MAP: `off` is allowed
					   (a MAP's off is a bool at off) */
	bool host_only;			/* refused under `defaults:` */
	unsigned auto_bit;		/* durations: `auto` is allowed, and
					   sets this enum rs_auto_bit */
	const char *const *names;	/* NAME, CLASSES: index = value */
	size_t nnames;
	const char *expect;		/* NAME, CLASSES: for messages */
	const struct rs_keytab *sub;	/* MAP */
};

/* The keys of one mapping level. */
struct rs_keytab {
	const struct rs_keydef *keys;
	size_t n;
};

/* The keys of `defaults:` and of a host rule. */
extern const struct rs_keytab rs_settings_keys;

/* Returns the row called name in t, or NULL. */
const struct rs_keydef *rs_key_find(const struct rs_keytab *t,
    const char *name);

#endif /* RS_POLICY_KEYS_H */
