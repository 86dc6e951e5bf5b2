/* SPDX-License-Identifier: MIT */
/*
 * policy_walk.c - checks one mapping of the YAML tree against a key table
 * and stores the values it finds.
 *
 * Each kind of key (policy_keys.h) has its own apply_*(); a problem is
 * reported at the node that caused it and the walk goes on, so one load
 * reports every mistake.  Thread-safe: all state is in struct rs_walk.
 */
#include "policy_walk.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "policy_keys.h"
#include "suggest.h"

static void walk_map(struct rs_walk *w, const struct rs_ynode *map,
    const struct rs_keytab *t);

/* Stores a uint32_t; fields of type unsigned are the same size. */
static void store_u32(struct rs_walk *w, const struct rs_keydef *f,
    uint32_t v)
{
	memcpy((char *)w->s + f->off, &v, sizeof(v));
	w->set |= f->bit;
}

static void apply_duration(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	char lo[32], hi[32], why[256];
	uint64_t ms;

	if (f->auto_bit && !strcmp(val->value, "auto")) {
		w->s->auto_mask |= f->auto_bit;
		w->set |= f->bit;
		return;
	}
	w->s->auto_mask &= ~f->auto_bit;
	if (!strcmp(val->value, "off")) {
		if (f->off_ok)
			store_u32(w, f, RS_OFF);
		else
			rs_ydoc_err(w->l, val, "'%s' cannot be off", f->name);
		return;
	}
	if (rs_duration_parse(val->value, &ms, why, sizeof(why)) < 0) {
		rs_ydoc_err(w->l, val, "%s", why);
		return;
	}
	if (ms < f->min || ms > f->max) {
		rs_ydoc_err(w->l, val, "'%s' must be between %s and %s%s, "
		    "got %s", f->name,
		    rs_duration_format((uint32_t)f->min, lo, 32),
		    rs_duration_format((uint32_t)f->max, hi, 32),
		    f->off_ok ? (f->auto_bit ? " (or off, or auto)" :
			" (or off)") : "", val->value);
		return;
	}
	store_u32(w, f, (uint32_t)ms);
	if (f->bit == RS_KEY_AUTO_MIN)
		w->min_val = val;
	if (f->bit == RS_KEY_AUTO_MAX)
		w->max_val = val;
	if (f->bit == RS_KEY_BACKOFF_BASE)
		w->base_val = val;
	if (f->bit == RS_KEY_BACKOFF_CAP)
		w->cap_val = val;
	if (f->bit == RS_KEY_BREAKER_OPEN_FOR)
		w->open_val = val;
	if (f->bit == RS_KEY_BREAKER_MAX_OPEN_FOR)
		w->max_open_val = val;
}

/* Accepts -?[0-9]+ (integer) or -?[0-9]+(.[0-9]+)? (number). */
static bool numeric_text(const char *s, bool integer)
{
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	if (*s == '.' && !integer && isdigit((unsigned char)s[1]))
		for (s++; isdigit((unsigned char)*s); s++)
			;
	return *s == '\0';
}

/* Parses an integer or a number in [lo, hi] into *v. */
static int parse_number(struct rs_yload *l, const char *key,
    const struct rs_ynode *val, bool integer, double lo, double hi,
    double *v)
{
	const char *what = integer ? "an integer" : "a number";

	if (val->quoted) {
		rs_ydoc_err(l, val, "'%s' must be %s, not a quoted string",
		    key, what);
		return -EINVAL;
	}
	if (!numeric_text(val->value, integer)) {
		rs_ydoc_err(l, val, "'%s' must be %s, got '%s'", key, what,
		    val->value);
		return -EINVAL;
	}
	*v = strtod(val->value, NULL);
	if (*v < lo || *v > hi) {
		rs_ydoc_err(l, val, "'%s' must be between %.15g and %.15g, got %s",
		    key, lo, hi, val->value);
		return -ERANGE;
	}
	return 0;
}

/* Returns the index of val in f->names, or reports it and returns -1. */
static int parse_name(struct rs_yload *l, const struct rs_keydef *f,
    const struct rs_ynode *val, const char *what)
{
	const char *near;

	for (size_t i = 0; i < f->nnames; i++)
		if (!strcmp(val->value, f->names[i]))
			return (int)i;
	near = rs_suggest(val->value, f->names, f->nnames);
	if (near)
		rs_ydoc_err(l, val, "unknown %s '%s' (did you mean '%s'?)",
		    what, val->value, near);
	else
		rs_ydoc_err(l, val, "unknown %s '%s' (expected %s)", what,
		    val->value, f->expect);
	return -1;
}

static void apply_classes(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	unsigned bits = 0;
	bool ok = true;

	if (val->type != RS_YNODE_SEQ) {
		rs_ydoc_err(w->l, val, "'retry_on' must be a list, like "
		    "[refused, timeout]");
		return;
	}
	for (size_t i = 0; i < val->nkids; i++) {
		const struct rs_ynode *it = val->kids[i];
		int k;

		if (!rs_ydoc_want_scalar(w->l, "retry_on", it) ||
		    (k = parse_name(w->l, f, it, "failure class")) < 0) {
			ok = false;
			continue;
		}
		if (bits & (1u << k))
			rs_ydoc_err(w->l, it, "'%s' is listed twice in "
			    "retry_on", it->value);
		bits |= 1u << k;
	}
	if (ok)
		store_u32(w, f, bits);
}

/* retry_on_status: a list of status codes, [] included (no retries). */
static void apply_statuses(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	uint64_t bits[10] = { 0 };
	bool ok = true;
	double v;

	if (val->type != RS_YNODE_SEQ) {
		rs_ydoc_err(w->l, val, "'%s' must be a list, like [429, 503]",
		    f->name);
		return;
	}
	for (size_t i = 0; i < val->nkids; i++) {
		const struct rs_ynode *it = val->kids[i];
		unsigned c;

		if (!rs_ydoc_want_scalar(w->l, f->name, it) ||
		    parse_number(w->l, f->name, it, true, f->min, f->max,
		    &v) < 0) {
			ok = false;
			continue;
		}
		c = (unsigned)v;
		if (bits[c / 64] & (UINT64_C(1) << (c % 64)))
			rs_ydoc_err(w->l, it, "%u is listed twice in %s", c,
			    f->name);
		bits[c / 64] |= UINT64_C(1) << (c % 64);
	}
	if (!ok)
		return;
	memcpy((char *)w->s + f->off, bits, sizeof(bits));
	w->set |= f->bit;
}

/*
 * A nested mapping; one that may be `off` (http:) keeps a bool at f->off
 * saying whether it is on.
 */
static void apply_map(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	bool on = true;

	if (f->off_ok && val->type == RS_YNODE_SCALAR && !val->quoted &&
	    !strcmp(val->value, "off"))
		on = false;
	else if (val->type == RS_YNODE_MAP)
		walk_map(w, val, f->sub);
	else if (val->type != RS_YNODE_IGNORED)
		rs_ydoc_err(w->l, val, "'%s' must be a mapping%s, not a %s",
		    f->name, f->off_ok ? " or off" : "",
		    rs_ydoc_type_name(val));
	if (f->off_ok && (val->type == RS_YNODE_MAP || !on)) {
		memcpy((char *)w->s + f->off, &on, sizeof(on));
		w->set |= f->bit;
	}
}

static void apply_bool(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	bool v = !strcmp(val->value, "true");

	if (val->quoted || (!v && strcmp(val->value, "false"))) {
		rs_ydoc_err(w->l, val, "'%s' must be true or false, got "
		    "%s%s%s", f->name, val->quoted ? "'\"" : "'", val->value,
		    val->quoted ? "\"'" : "'");
		return;
	}
	memcpy((char *)w->s + f->off, &v, sizeof(v));
	w->set |= f->bit;
}

/* A header name, or `off`, stored as text ("" for off). */
static void apply_header(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	char *dst = (char *)w->s + f->off;

	if (rs_walk_header(w->l, f->name, val, dst) == 0)
		w->set |= f->bit;
}

int rs_walk_header(struct rs_yload *l, const char *key,
    const struct rs_ynode *val, char out[RS_HEADER_NAME_MAX])
{
	if (!val->quoted && !strcmp(val->value, "off")) {
		out[0] = '\0';
		return 0;
	}
	if (!rs_deadline_header_name_ok(val->value)) {
		rs_ydoc_err(l, val, "'%s' must be a header name such as "
		    "X-Request-Deadline (letters, digits, '-'; at most %d "
		    "characters) or off, not '%s'", key,
		    RS_HEADER_NAME_MAX - 1, val->value);
		return -EINVAL;
	}
	snprintf(out, RS_HEADER_NAME_MAX, "%s", val->value);
	return 0;
}

static void apply_scalar(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *val)
{
	double v;
	int k;

	switch (f->kind) {
	case RS_KIND_DURATION:
		apply_duration(w, f, val);
		break;
	case RS_KIND_UINT:
	case RS_KIND_NUMBER:
		if (parse_number(w->l, f->name, val, f->kind == RS_KIND_UINT,
		    f->min, f->max, &v) < 0)
			break;
		if (f->kind == RS_KIND_UINT)
			store_u32(w, f, (uint32_t)v);
		else
			memcpy((char *)w->s + f->off, &v, sizeof(v));
		w->set |= f->bit;
		break;
	case RS_KIND_NAME:
		if ((k = parse_name(w->l, f, val, f->name)) >= 0)
			store_u32(w, f, (uint32_t)k);
		break;
	case RS_KIND_BOOL:
		apply_bool(w, f, val);
		break;
	case RS_KIND_HEADER:
		apply_header(w, f, val);
		break;
	default:
		break;
	}
}

static void apply(struct rs_walk *w, const struct rs_keydef *f,
    const struct rs_ynode *key, const struct rs_ynode *val)
{
	if (f->kind == RS_KIND_MATCH) {
		w->match_key = key;
		w->match_val = val;
	} else if (f->kind == RS_KIND_CLASSES) {
		apply_classes(w, f, val);
	} else if (f->kind == RS_KIND_STATUSES) {
		apply_statuses(w, f, val);
	} else if (f->kind == RS_KIND_MAP) {
		apply_map(w, f, val);
	} else if (rs_ydoc_want_scalar(w->l, f->name, val)) {
		apply_scalar(w, f, val);
	}
}

void rs_walk_unknown_key(struct rs_yload *l, const struct rs_ynode *key,
    const char *const *names, size_t n)
{
	const char *near = rs_suggest(key->value, names, n);

	if (near)
		rs_ydoc_err(l, key, "unknown key '%s' (did you mean '%s'?)",
		    key->value, near);
	else
		rs_ydoc_err(l, key, "unknown key '%s'", key->value);
}

/* Reports an unknown key of table t, suggesting the nearest of its keys. */
static void unknown_key(struct rs_yload *l, const struct rs_ynode *key,
    const struct rs_keytab *t)
{
	const char *names[32];
	size_t n = 0;

	for (; n < t->n && n < 32; n++)
		names[n] = t->keys[n].name;
	rs_walk_unknown_key(l, key, names, n);
}

static void walk_map(struct rs_walk *w, const struct rs_ynode *map,
    const struct rs_keytab *t)
{
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct rs_ynode *key = map->kids[i];
		const struct rs_ynode *val = map->kids[i + 1];
		const struct rs_keydef *f;

		if (!rs_ydoc_check_key(w->l, map, i))
			continue;
		f = rs_key_find(t, key->value);
		if (!f)
			unknown_key(w->l, key, t);
		else if (f->host_only && !w->host)
			rs_ydoc_err(w->l, key, "'%s' is only allowed in a host "
			    "rule, not in defaults", f->name);
		else if (rs_ydoc_is_null(val))
			rs_ydoc_err(w->l, key, "'%s' has no value", f->name);
		else
			apply(w, f, key, val);
	}
}

/* cap < base is reported where it was written: at cap, else at base. */
static void check_cap(struct rs_walk *w)
{
	const struct rs_backoff *b = &w->s->backoff;
	char base[32], cap[32];

	if (b->cap_ms >= b->base_ms)
		return;
	rs_duration_format(b->base_ms, base, sizeof(base));
	rs_duration_format(b->cap_ms, cap, sizeof(cap));
	if (w->cap_val)
		rs_ydoc_err(w->l, w->cap_val, "backoff cap %s is smaller "
		    "than base %s", cap, base);
	else if (w->base_val)
		rs_ydoc_err(w->l, w->base_val, "backoff base %s is larger "
		    "than cap %s", base, cap);
}

/* Likewise a breaker's max_open_for below its open_for. */
static void check_open_for(struct rs_walk *w)
{
	const struct rs_breaker_settings *b = &w->s->breaker;
	char open[32], max[32];

	if (b->max_open_for_ms >= b->open_for_ms)
		return;
	rs_duration_format(b->open_for_ms, open, sizeof(open));
	rs_duration_format(b->max_open_for_ms, max, sizeof(max));
	if (w->max_open_val)
		rs_ydoc_err(w->l, w->max_open_val, "breaker max_open_for %s "
		    "is smaller than open_for %s", max, open);
	else if (w->open_val)
		rs_ydoc_err(w->l, w->open_val, "breaker open_for %s is larger "
		    "than max_open_for %s", open, max);
}

/*
 * An `auto` timeout stands for auto_timeout.max until something is
 * learned, and is bounded by it after (SPEC 13): the field holds max, so
 * that whatever reads it alone sees that bound.  Done after the walk, as
 * auto_timeout may follow the timeouts, or come from the defaults.
 */
static void resolve_auto(struct rs_walk *w)
{
	struct rs_settings *s = w->s;
	const struct rs_auto_timeout *a = &s->auto_timeout;
	char min[32], max[32];

	if (a->min_ms > a->max_ms) {
		rs_duration_format(a->min_ms, min, sizeof(min));
		rs_duration_format(a->max_ms, max, sizeof(max));
		if (w->max_val || w->min_val)
			rs_ydoc_err(w->l, w->max_val ? w->max_val : w->min_val,
			    "auto_timeout max %s is smaller than min %s", max,
			    min);
	}
	if (s->auto_mask & RS_AUTO_CONNECT)
		s->connect_timeout_ms = a->max_ms;
	if (s->auto_mask & RS_AUTO_READ)
		s->read_timeout_ms = a->max_ms;
	if (s->auto_mask & RS_AUTO_WRITE)
		s->write_timeout_ms = a->max_ms;
}

void rs_walk_settings(struct rs_walk *w, const struct rs_ynode *map)
{
	walk_map(w, map, &rs_settings_keys);
	check_cap(w);
	check_open_for(w);
	resolve_auto(w);
}

bool rs_walk_is_setting(const char *name)
{
	return rs_key_find(&rs_settings_keys, name) != NULL;
}

int rs_walk_integer(struct rs_yload *l, const char *key,
    const struct rs_ynode *val, double lo, double hi, double *v)
{
	return parse_number(l, key, val, true, lo, hi, v);
}
