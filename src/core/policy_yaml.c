/*
 * policy_yaml.c - YAML text to a struct rs_policy, with exact diagnostics.
 *
 * Two passes: libyaml's event parser builds a small tree of nodes that
 * keeps every node's line and column (anchors, aliases, tags and extra
 * documents are refused on the way), then a table-driven walk checks the
 * tree and fills the policy.  Thread-safe: all state lives in one load.
 */
#include "policy_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "default_policy.h"
#include "sysio.h"

/* Past this many problems a file is not worth reading further. */
#define MAX_DIAGS 100
/* Nodes nested deeper than this end the load, keeping the recursion small. */
#define MAX_DEPTH 32

enum ntype { N_SCALAR, N_MAP, N_SEQ, N_IGNORED };

/* One YAML node; a mapping's kids alternate key, value. */
struct node {
	enum ntype type;
	unsigned line, col;
	char *value;
	bool quoted;
	struct node **kids;
	size_t nkids;
};

struct loader {
	const char *name;
	struct rs_diags *d;
	size_t first;		/* index of this load's first diagnostic */
	unsigned nerr;
	const char *buf;
	size_t len;
	yaml_parser_t parser;
};

static int diags_push(struct rs_diags *d, const char *file, unsigned line,
    unsigned col, const char *msg)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct rs_diag *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	struct rs_diag *dg = &d->v[d->n];

	dg->file = strdup(file);
	dg->msg = strdup(msg);
	if (!dg->file || !dg->msg) {
		free(dg->file);
		free(dg->msg);
		return -ENOMEM;
	}
	dg->line = line;
	dg->col = col;
	d->n++;
	return 0;
}

__attribute__((format(printf, 4, 5)))
static void err_at(struct loader *l, unsigned line, unsigned col,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (l->nerr++ > MAX_DIAGS)
		return;
	if (l->nerr > MAX_DIAGS) {
		diags_push(l->d, l->name, line, col,
		    "too many errors; the rest are not reported");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diags_push(l->d, l->name, line, col, msg);
}

#define err_node(l, n, ...) err_at(l, (n)->line, (n)->col, __VA_ARGS__)

static void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n->value);
	free(n);
}

static int node_add(struct node *parent, struct node *kid)
{
	struct node **v = realloc(parent->kids,
	    (parent->nkids + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[parent->nkids++] = kid;
	parent->kids = v;
	return 0;
}

/* Converts a byte offset into a 1-based line and column (in characters). */
static void offset_to_pos(const char *buf, size_t len, size_t off,
    unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n') {
			(*line)++;
			*col = 1;
		} else if ((c & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

/* Reports libyaml's own error: bad encoding, or a syntax error. */
static void syntax_error(struct loader *l)
{
	yaml_parser_t *p = &l->parser;
	const char *problem = p->problem ? p->problem : "unknown error";
	unsigned line, col;

	if (p->error == YAML_MEMORY_ERROR) {
		err_at(l, 1, 1, "out of memory");
	} else if (p->error == YAML_READER_ERROR) {
		offset_to_pos(l->buf, l->len, p->problem_offset, &line, &col);
		if (p->problem_value >= 0)
			err_at(l, line, col, "%s (byte 0x%02X)", problem,
			    (unsigned)p->problem_value & 0xff);
		else
			err_at(l, line, col, "%s", problem);
	} else if (p->context) {
		err_at(l, (unsigned)p->problem_mark.line + 1,
		    (unsigned)p->problem_mark.column + 1,
		    "YAML syntax error: %s %s (line %u)", problem, p->context,
		    (unsigned)p->context_mark.line + 1);
	} else {
		err_at(l, (unsigned)p->problem_mark.line + 1,
		    (unsigned)p->problem_mark.column + 1,
		    "YAML syntax error: %s", problem);
	}
}

static int next_event(struct loader *l, yaml_event_t *ev)
{
	if (yaml_parser_parse(&l->parser, ev))
		return 0;
	syntax_error(l);
	return -EINVAL;
}

/* Anchors and tags would let a policy say things the checker cannot see. */
static void check_anchor_tag(struct loader *l, const struct node *n,
    const yaml_char_t *anchor, const yaml_char_t *tag, bool implicit)
{
	if (anchor)
		err_node(l, n, "YAML anchors are not supported ('&%s')",
		    (const char *)anchor);
	if (tag && !implicit)
		err_node(l, n, "YAML tags are not supported ('%s')",
		    (const char *)tag);
}

static int build(struct loader *l, yaml_event_t *ev, unsigned depth,
    struct node **out);

static int build_collection(struct loader *l, struct node *n, unsigned depth)
{
	yaml_event_t ev;
	struct node *kid;

	for (;;) {
		if (next_event(l, &ev) < 0)
			return -EINVAL;
		if (ev.type == YAML_SEQUENCE_END_EVENT ||
		    ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		int ret = build(l, &ev, depth + 1, &kid);

		yaml_event_delete(&ev);
		if (ret < 0) {
			node_free(kid);
			return ret;
		}
		if (node_add(n, kid) < 0) {
			node_free(kid);
			return -ENOMEM;
		}
	}
}

static void init_scalar(struct loader *l, struct node *n, yaml_event_t *ev)
{
	n->type = N_SCALAR;
	n->value = strndup((const char *)ev->data.scalar.value,
	    ev->data.scalar.length);
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	check_anchor_tag(l, n, ev->data.scalar.anchor, ev->data.scalar.tag,
	    ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit);
}

/* Builds the node that starts with event ev (which the caller deletes). */
static int build(struct loader *l, yaml_event_t *ev, unsigned depth,
    struct node **out)
{
	struct node *n = calloc(1, sizeof(*n));
	int ret = 0;

	*out = n;
	if (!n)
		return -ENOMEM;
	n->line = (unsigned)ev->start_mark.line + 1;
	n->col = (unsigned)ev->start_mark.column + 1;
	n->type = N_IGNORED;
	if (ev->type == YAML_SCALAR_EVENT) {
		init_scalar(l, n, ev);
		return n->value ? 0 : -ENOMEM;
	}
	if (ev->type == YAML_ALIAS_EVENT) {
		err_node(l, n, "YAML aliases are not supported ('*%s')",
		    (const char *)ev->data.alias.anchor);
		return 0;
	}
	if (ev->type == YAML_SEQUENCE_START_EVENT) {
		n->type = N_SEQ;
		check_anchor_tag(l, n, ev->data.sequence_start.anchor,
		    ev->data.sequence_start.tag,
		    ev->data.sequence_start.implicit);
	} else {
		n->type = N_MAP;
		check_anchor_tag(l, n, ev->data.mapping_start.anchor,
		    ev->data.mapping_start.tag,
		    ev->data.mapping_start.implicit);
	}
	if (depth >= MAX_DEPTH) {
		/*
		 * Stop here rather than skip the rest: libyaml checks every
		 * open flow level on each token, so reading past 100,000
		 * nested '[' takes it seconds of CPU (O(depth^2)) in every
		 * process that starts with such a policy.
		 */
		err_node(l, n, "nested too deeply");
		n->type = N_IGNORED;
		ret = -EINVAL;
	} else {
		ret = build_collection(l, n, depth);
	}
	return ret;
}

/* Reads one document's root; refuses an empty stream and extra documents. */
static int build_document(struct loader *l, struct node **root)
{
	yaml_event_t ev;
	int ret;

	*root = NULL;
	if (next_event(l, &ev) < 0)	/* STREAM-START */
		return -EINVAL;
	yaml_event_delete(&ev);
	if (next_event(l, &ev) < 0)
		return -EINVAL;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		err_at(l, 1, 1, "empty policy: expected a mapping with "
		    "'version: 1'");
		return -EINVAL;
	}
	yaml_event_delete(&ev);	/* DOCUMENT-START */
	if (next_event(l, &ev) < 0)
		return -EINVAL;
	ret = build(l, &ev, 0, root);
	yaml_event_delete(&ev);
	if (ret < 0 || next_event(l, &ev) < 0)	/* DOCUMENT-END */
		return -EINVAL;
	yaml_event_delete(&ev);
	if (next_event(l, &ev) < 0)
		return -EINVAL;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		err_at(l, (unsigned)ev.start_mark.line + 1,
		    (unsigned)ev.start_mark.column + 1,
		    "only one YAML document is allowed in a policy");
	yaml_event_delete(&ev);
	return 0;
}

/*
 * Optimal string alignment distance (Damerau-Levenshtein without
 * repeated edits of one substring), case-insensitive, for suggestions.
 */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned d[33][33];
	size_t n = strlen(a), m = strlen(b);

	if (n > 32 || m > 32)
		return 99;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			unsigned cost = tolower((unsigned char)a[i - 1]) !=
			    tolower((unsigned char)b[j - 1]);
			unsigned v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[n][m];
}

/* Returns the nearest of names[] to word, or NULL when none is close. */
static const char *suggest(const char *word, const char *const *names,
    size_t n)
{
	const char *best = NULL;
	unsigned best_d = 99;

	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		unsigned limit = len <= 4 ? 1 : len < 10 ? 2 : 3;
		unsigned dist = edit_distance(word, names[i]);

		if (dist <= limit && dist < best_d) {
			best = names[i];
			best_d = dist;
		}
	}
	return best;
}

/* What a key's value is, and so how it is checked and stored. */
enum ftype { F_DUR, F_UINT, F_NUM, F_ENUM, F_CLASSES, F_MAP, F_BOOL, F_MATCH };

struct level;

struct field {
	const char *name;
	enum ftype type;
	unsigned bit;			/* enum rs_key */
	size_t off;			/* into struct rs_settings */
	double min, max;		/* F_DUR in ms, F_UINT, F_NUM */
	bool off_ok;			/* F_DUR: `off` is allowed */
	bool host_only;
	const char *const *names;	/* F_ENUM, F_CLASSES: index = value */
	size_t nnames;
	const char *expect;		/* F_ENUM, F_CLASSES: for messages */
	const struct level *sub;	/* F_MAP */
};

struct level {
	const struct field *f;
	size_t n;
	const char *const *names;	/* the keys, for suggestions */
};

#define OFF(m) offsetof(struct rs_settings, m)
#define FIELD(n, t, b, o, lo, hi) \
	.name = n, .type = t, .bit = b, .off = o, .min = lo, .max = hi
#define DAY_MS 86400000.0
#define HOUR_MS 3600000.0
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const jitters[] = { "equal", "full", "decorrelated",
	"none" };
static const char *const scopes[] = { "machine", "process" };
static const char *const classes[] = { "refused", "timeout", "unreachable",
	"reset" };

/* Shorthands for the tables: a duration, a number, a list of names. */
#define DUR(n, b, o, lo, hi, off) \
	{ FIELD(n, F_DUR, b, OFF(o), lo, hi), .off_ok = off }
#define NUM(n, t, b, o, lo, hi) { FIELD(n, t, b, OFF(o), lo, hi) }
#define NAMES(n, t, b, o, v, e) \
	{ FIELD(n, t, b, OFF(o), 0, 0), .names = v, .nnames = NELEM(v), \
	  .expect = e }

static const struct field backoff_fields[] = {
	DUR("base", RS_KEY_BACKOFF_BASE, backoff.base_ms, 1, HOUR_MS, false),
	DUR("cap", RS_KEY_BACKOFF_CAP, backoff.cap_ms, 1, HOUR_MS, false),
	NUM("multiplier", F_NUM, RS_KEY_BACKOFF_MULTIPLIER,
	    backoff.multiplier, 1, 10),
	NAMES("jitter", F_ENUM, RS_KEY_BACKOFF_JITTER, backoff.jitter,
	    jitters, "equal, full, decorrelated or none"),
};
static const char *const backoff_names[] = { "base", "cap", "multiplier",
	"jitter" };
static const struct level backoff_level = { backoff_fields,
	NELEM(backoff_fields), backoff_names };

static const struct field budget_fields[] = {
	NUM("ratio", F_NUM, RS_KEY_RETRY_BUDGET_RATIO, budget.ratio, 0, 1000),
	NUM("min_per_second", F_UINT, RS_KEY_RETRY_BUDGET_MIN,
	    budget.min_per_second, 0, 1000000),
	DUR("window", RS_KEY_RETRY_BUDGET_WINDOW, budget.window_ms, 1000,
	    HOUR_MS, false),
	NAMES("scope", F_ENUM, RS_KEY_RETRY_BUDGET_SCOPE, budget.scope,
	    scopes, "machine or process"),
};
static const char *const budget_names[] = { "ratio", "min_per_second",
	"window", "scope" };
static const struct level budget_level = { budget_fields,
	NELEM(budget_fields), budget_names };

static const struct field settings_fields[] = {
	{ FIELD("match", F_MATCH, 0, 0, 0, 0), .host_only = true },
	DUR("connect_timeout", RS_KEY_CONNECT_TIMEOUT, connect_timeout_ms, 1,
	    DAY_MS, true),
	DUR("read_timeout", RS_KEY_READ_TIMEOUT, read_timeout_ms, 1, DAY_MS,
	    true),
	DUR("write_timeout", RS_KEY_WRITE_TIMEOUT, write_timeout_ms, 1,
	    DAY_MS, true),
	NUM("attempts", F_UINT, RS_KEY_ATTEMPTS, attempts, 1, 10),
	NAMES("retry_on", F_CLASSES, RS_KEY_RETRY_ON, retry_on, classes,
	    "refused, timeout, unreachable or reset"),
	{ FIELD("backoff", F_MAP, 0, 0, 0, 0), .sub = &backoff_level },
	DUR("connect_budget", RS_KEY_CONNECT_BUDGET, connect_budget_ms, 1,
	    DAY_MS, true),
	{ FIELD("retry_budget", F_MAP, 0, 0, 0, 0), .sub = &budget_level },
	{ FIELD("passthrough", F_BOOL, RS_KEY_PASSTHROUGH, OFF(passthrough),
	    0, 0), .host_only = true },
};
static const char *const settings_names[] = { "match", "connect_timeout",
	"read_timeout", "write_timeout", "attempts", "retry_on", "backoff",
	"connect_budget", "retry_budget", "passthrough" };
static const struct level settings_level = { settings_fields,
	NELEM(settings_fields), settings_names };

/* The state of one walk over `defaults:` or one host rule. */
struct ctx {
	struct loader *l;
	struct rs_settings *s;
	unsigned set;
	bool host;
	const struct node *base_val, *cap_val;
	const struct node *match_key, *match_val;
};

static bool is_null(const struct node *n)
{
	return n->type == N_SCALAR && !n->quoted &&
	    (!n->value[0] || !strcmp(n->value, "~") ||
	     !strcmp(n->value, "null"));
}

static const char *type_name(const struct node *n)
{
	return n->type == N_MAP ? "mapping" : n->type == N_SEQ ? "list"
							       : "value";
}

/* Returns whether val is a single value; reports it otherwise. */
static bool want_scalar(struct loader *l, const char *key,
    const struct node *val)
{
	if (val->type == N_SCALAR)
		return true;
	if (val->type != N_IGNORED)
		err_node(l, val, "'%s' must be a single value, not a %s", key,
		    type_name(val));
	return false;
}

/* Stores a uint32_t; struct fields of type unsigned are the same size. */
static void store_u32(struct ctx *c, const struct field *f, uint32_t v)
{
	memcpy((char *)c->s + f->off, &v, sizeof(v));
	c->set |= f->bit;
}

/* The digits of a duration: "12" or "1.25"; returns 0 or -EINVAL. */
static int duration_digits(const char **sp, uint64_t *mant, unsigned *frac)
{
	const char *s = *sp;
	unsigned ndig = 0;

	*mant = 0;
	*frac = 0;
	for (; isdigit((unsigned char)*s); s++, ndig++)
		*mant = *mant * 10 + (uint64_t)(*s - '0') * (ndig < 14);
	if (ndig == 0)
		return -EINVAL;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s))
			return -EINVAL;
		for (; isdigit((unsigned char)*s); s++, ndig++, (*frac)++)
			*mant = *mant * 10 + (uint64_t)(*s - '0') * (ndig < 14);
	}
	*sp = s;
	return ndig > 13 || *frac > 6 ? -ERANGE : 0;
}

static uint32_t unit_ms(const char *u)
{
	return !strcmp(u, "ms") ? 1 : !strcmp(u, "s") ? 1000
			  : !strcmp(u, "m") ? 60000 : 0;
}

/* Refuses an empty or negative duration before its digits are read. */
static int duration_sign(struct loader *l, const struct node *val)
{
	const char *s = val->value;

	if (!*s) {
		err_node(l, val, "empty duration (expected a number with a "
		    "unit: 250ms, 1.5s or 2m, or off)");
		return -EDOM;
	}
	if (*s == '-' && isdigit((unsigned char)s[1])) {
		err_node(l, val, "duration %s is negative", s);
		return -EDOM;
	}
	return 0;
}

/* Parses "250ms", "1.5s", "2m" into *ms (no range check). */
static int parse_duration(struct loader *l, const struct node *val,
    uint64_t *ms)
{
	const char *s = val->value, *u = s;
	uint64_t mant, pow10 = 1;
	unsigned frac;
	int ret = duration_sign(l, val);

	if (ret == 0)
		ret = duration_digits(&u, &mant, &frac);

	if (ret == -EDOM)
		return -EINVAL;
	if (ret == -ERANGE) {
		err_node(l, val, "duration %s is too large or too precise",
		    s);
		return ret;
	}
	if (ret < 0) {
		err_node(l, val, "invalid duration '%s' (expected a number "
		    "with a unit: 250ms, 1.5s or 2m, or off)", s);
		return ret;
	}
	if (!*u) {
		err_node(l, val, "bare number %s needs a unit: %sms, %ss or "
		    "%sm", s, s, s, s);
		return -EINVAL;
	}
	if (!unit_ms(u)) {
		err_node(l, val, "unknown unit '%s' in '%s' (use ms, s or m)",
		    u, s);
		return -EINVAL;
	}
	for (unsigned i = 0; i < frac; i++)
		pow10 *= 10;
	if (mant * unit_ms(u) % pow10 != 0) {
		err_node(l, val, "duration %s is not a whole number of "
		    "milliseconds", s);
		return -EINVAL;
	}
	*ms = mant * unit_ms(u) / pow10;
	return 0;
}

static void apply_duration(struct ctx *c, const struct field *f,
    const struct node *val)
{
	char lo[32], hi[32];
	uint64_t ms;

	if (!strcmp(val->value, "off")) {
		if (f->off_ok)
			store_u32(c, f, RS_OFF);
		else
			err_node(c->l, val, "'%s' cannot be off", f->name);
		return;
	}
	if (parse_duration(c->l, val, &ms) < 0)
		return;
	if (ms < f->min || ms > f->max) {
		err_node(c->l, val, "'%s' must be between %s and %s%s, got %s",
		    f->name, rs_duration_format((uint32_t)f->min, lo, 32),
		    rs_duration_format((uint32_t)f->max, hi, 32),
		    f->off_ok ? " (or off)" : "", val->value);
		return;
	}
	store_u32(c, f, (uint32_t)ms);
	if (f->bit == RS_KEY_BACKOFF_BASE)
		c->base_val = val;
	if (f->bit == RS_KEY_BACKOFF_CAP)
		c->cap_val = val;
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

/* Parses an integer or a number in [f->min, f->max] into *v. */
static int parse_number(struct loader *l, const struct field *f,
    const struct node *val, bool integer, double *v)
{
	const char *what = integer ? "an integer" : "a number";

	if (val->quoted) {
		err_node(l, val, "'%s' must be %s, not a quoted string",
		    f->name, what);
		return -EINVAL;
	}
	if (!numeric_text(val->value, integer)) {
		err_node(l, val, "'%s' must be %s, got '%s'", f->name, what,
		    val->value);
		return -EINVAL;
	}
	*v = strtod(val->value, NULL);
	if (*v < f->min || *v > f->max) {
		err_node(l, val, "'%s' must be between %g and %g, got %s",
		    f->name, f->min, f->max, val->value);
		return -ERANGE;
	}
	return 0;
}

/* Returns the index of val in f->names, or reports it and returns -1. */
static int parse_name(struct loader *l, const struct field *f,
    const struct node *val, const char *what)
{
	const char *near;

	for (size_t i = 0; i < f->nnames; i++)
		if (!strcmp(val->value, f->names[i]))
			return (int)i;
	near = suggest(val->value, f->names, f->nnames);
	if (near)
		err_node(l, val, "unknown %s '%s' (did you mean '%s'?)", what,
		    val->value, near);
	else
		err_node(l, val, "unknown %s '%s' (expected %s)", what,
		    val->value, f->expect);
	return -1;
}

static void apply_classes(struct ctx *c, const struct field *f,
    const struct node *val)
{
	unsigned bits = 0;
	bool ok = true;

	if (val->type != N_SEQ) {
		err_node(c->l, val, "'retry_on' must be a list, like "
		    "[refused, timeout]");
		return;
	}
	for (size_t i = 0; i < val->nkids; i++) {
		const struct node *it = val->kids[i];
		int k;

		if (!want_scalar(c->l, "retry_on", it) ||
		    (k = parse_name(c->l, f, it, "failure class")) < 0) {
			ok = false;
			continue;
		}
		if (bits & (1u << k))
			err_node(c->l, it, "'%s' is listed twice in retry_on",
			    it->value);
		bits |= 1u << k;
	}
	if (ok)
		store_u32(c, f, bits);
}

static void apply_bool(struct ctx *c, const struct field *f,
    const struct node *val)
{
	bool v = !strcmp(val->value, "true");

	if (val->quoted || (!v && strcmp(val->value, "false"))) {
		err_node(c->l, val, "'%s' must be true or false, got %s%s%s",
		    f->name, val->quoted ? "'\"" : "'", val->value,
		    val->quoted ? "\"'" : "'");
		return;
	}
	memcpy((char *)c->s + f->off, &v, sizeof(v));
	c->set |= f->bit;
}

static void walk_map(struct ctx *c, const struct node *map,
    const struct level *lv);

static void apply_scalar(struct ctx *c, const struct field *f,
    const struct node *val)
{
	double v;
	int k;

	switch (f->type) {
	case F_DUR:
		apply_duration(c, f, val);
		break;
	case F_UINT:
	case F_NUM:
		if (parse_number(c->l, f, val, f->type == F_UINT, &v) < 0)
			break;
		if (f->type == F_UINT)
			store_u32(c, f, (uint32_t)v);
		else
			memcpy((char *)c->s + f->off, &v, sizeof(v));
		c->set |= f->bit;
		break;
	case F_ENUM:
		if ((k = parse_name(c->l, f, val, f->name)) >= 0)
			store_u32(c, f, (uint32_t)k);
		break;
	case F_BOOL:
		apply_bool(c, f, val);
		break;
	default:
		break;
	}
}

static void apply(struct ctx *c, const struct field *f,
    const struct node *key, const struct node *val)
{
	if (f->type == F_MATCH) {
		c->match_key = key;
		c->match_val = val;
	} else if (f->type == F_CLASSES) {
		apply_classes(c, f, val);
	} else if (f->type == F_MAP) {
		if (val->type == N_MAP)
			walk_map(c, val, f->sub);
		else if (val->type != N_IGNORED)
			err_node(c->l, val, "'%s' must be a mapping, not a %s",
			    f->name, type_name(val));
	} else if (want_scalar(c->l, f->name, val)) {
		apply_scalar(c, f, val);
	}
}

/* Returns whether pair i of map has a usable key; reports it otherwise. */
static bool check_key(struct loader *l, const struct node *map, size_t i)
{
	const struct node *key = map->kids[i];

	if (key->type != N_SCALAR) {
		if (key->type != N_IGNORED)
			err_node(l, key, "a key must be a plain name, not a %s",
			    type_name(key));
		return false;
	}
	for (size_t j = 0; j < i; j += 2) {
		const struct node *k = map->kids[j];

		if (k->type == N_SCALAR && !strcmp(k->value, key->value)) {
			err_node(l, key, "duplicate key '%s' (first at line "
			    "%u)", key->value, k->line);
			return false;
		}
	}
	return true;
}

static void unknown_key(struct loader *l, const struct node *key,
    const struct level *lv)
{
	const char *near = suggest(key->value, lv->names, lv->n);

	if (near)
		err_node(l, key, "unknown key '%s' (did you mean '%s'?)",
		    key->value, near);
	else
		err_node(l, key, "unknown key '%s'", key->value);
}

static const struct field *find_field(const struct level *lv,
    const char *name)
{
	for (size_t i = 0; i < lv->n; i++)
		if (!strcmp(lv->f[i].name, name))
			return &lv->f[i];
	return NULL;
}

static void walk_map(struct ctx *c, const struct node *map,
    const struct level *lv)
{
	for (size_t i = 0; i + 1 < map->nkids; i += 2) {
		const struct node *key = map->kids[i], *val = map->kids[i + 1];
		const struct field *f;

		if (!check_key(c->l, map, i))
			continue;
		f = find_field(lv, key->value);
		if (!f)
			unknown_key(c->l, key, lv);
		else if (f->host_only && !c->host)
			err_node(c->l, key, "'%s' is only allowed in a host "
			    "rule, not in defaults", f->name);
		else if (is_null(val))
			err_node(c->l, key, "'%s' has no value", f->name);
		else
			apply(c, f, key, val);
	}
}

/* cap < base is reported where it was written: at cap, else at base. */
static void check_cap(struct ctx *c)
{
	const struct rs_backoff *b = &c->s->backoff;
	char base[32], cap[32];

	if (b->cap_ms >= b->base_ms)
		return;
	rs_duration_format(b->base_ms, base, sizeof(base));
	rs_duration_format(b->cap_ms, cap, sizeof(cap));
	if (c->cap_val)
		err_node(c->l, c->cap_val, "backoff cap %s is smaller than "
		    "base %s", cap, base);
	else if (c->base_val)
		err_node(c->l, c->base_val, "backoff base %s is larger than "
		    "cap %s", base, cap);
}

static void load_defaults(struct loader *l, const struct node *key,
    const struct node *val, struct rs_policy *p)
{
	struct ctx c = { .l = l, .s = &p->defaults };

	p->defaults_line = key->line;
	if (val->type != N_MAP) {
		err_node(l, val, "'defaults' must be a mapping, not a %s",
		    type_name(val));
		return;
	}
	walk_map(&c, val, &settings_level);
	check_cap(&c);
}

static int add_rule(struct rs_policy *p, const struct rs_rule *r)
{
	struct rs_rule *v = realloc(p->rules, (p->nrules + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[p->nrules++] = *r;
	p->rules = v;
	return 0;
}

/* Parses the rule's `match:` value; returns 0 when it is usable. */
static int rule_match(struct ctx *c, const struct node *item,
    struct rs_rule *r)
{
	const struct node *val = c->match_val;
	const char *why = NULL;

	if (!val) {
		err_node(c->l, item, "host rule has no 'match' key");
		return -EINVAL;
	}
	if (!want_scalar(c->l, "match", val))
		return -EINVAL;
	if (rs_match_parse(&r->match, val->value, &why) < 0) {
		err_node(c->l, val, "invalid match '%s': %s", val->value, why);
		return -EINVAL;
	}
	r->line = c->match_key->line;
	r->col = c->match_key->col;
	return 0;
}

static void load_rule(struct loader *l, const struct node *item,
    struct rs_policy *p)
{
	struct rs_rule r = { .settings = p->defaults };
	struct ctx c = { .l = l, .s = &r.settings, .host = true };

	if (item->type != N_MAP) {
		if (item->type != N_IGNORED)
			err_node(l, item, "a host rule must be a mapping with "
			    "a 'match' key, not a %s", type_name(item));
		return;
	}
	walk_map(&c, item, &settings_level);
	check_cap(&c);
	if (rule_match(&c, item, &r) < 0)
		return;
	r.set = c.set;
	if (add_rule(p, &r) < 0) {
		rs_match_free(&r.match);
		err_node(l, item, "out of memory");
	}
}

static void load_hosts(struct loader *l, const struct node *val,
    struct rs_policy *p)
{
	if (val->type != N_SEQ) {
		err_node(l, val, "'hosts' must be a list of rules, not a %s",
		    type_name(val));
		return;
	}
	for (size_t i = 0; i < val->nkids; i++)
		load_rule(l, val->kids[i], p);
}

static void check_version(struct loader *l, const struct node *root,
    const struct node *key, const struct node *val)
{
	static const struct field f = {
		FIELD("version", F_UINT, 0, 0, 0, 1e9)
	};
	double v;

	if (!key)
		err_node(l, root, "missing 'version: 1' at the top of the "
		    "policy");
	else if (is_null(val))
		err_node(l, key, "'version' has no value");
	else if (want_scalar(l, "version", val) &&
	    parse_number(l, &f, val, true, &v) == 0 && v != 1)
		err_node(l, val, "unsupported policy version %s (this resolute "
		    "reads version 1)", val->value);
}

static void top_unknown(struct loader *l, const struct node *key)
{
	static const char *const names[] = { "version", "defaults", "hosts" };
	static const struct level top = { NULL, NELEM(names), names };

	if (find_field(&settings_level, key->value))
		err_node(l, key, "'%s' belongs under 'defaults:' or in a host "
		    "rule", key->value);
	else
		unknown_key(l, key, &top);
}

/* The top level: version first, then defaults, then the rules. */
static void check_root(struct loader *l, const struct node *root,
    struct rs_policy *p)
{
	const struct node *k[3] = { NULL }, *v[3] = { NULL };
	static const char *const names[] = { "version", "defaults", "hosts" };

	for (size_t i = 0; i + 1 < root->nkids; i += 2) {
		size_t j = 0;

		if (!check_key(l, root, i))
			continue;
		while (j < 3 && strcmp(root->kids[i]->value, names[j]))
			j++;
		if (j == 3) {
			top_unknown(l, root->kids[i]);
			continue;
		}
		k[j] = root->kids[i];
		v[j] = root->kids[i + 1];
	}
	check_version(l, root, k[0], v[0]);
	if (k[1] && is_null(v[1]))
		err_node(l, k[1], "'defaults' has no value");
	else if (k[1])
		load_defaults(l, k[1], v[1], p);
	if (k[2] && is_null(v[2]))
		err_node(l, k[2], "'hosts' has no value");
	else if (k[2])
		load_hosts(l, v[2], p);
}

/* Orders this load's diagnostics by position (a stable insertion sort). */
static void sort_diags(struct loader *l)
{
	struct rs_diag *v = l->d->v;

	for (size_t i = l->first + 1; i < l->d->n; i++) {
		struct rs_diag x = v[i];
		size_t j = i;

		while (j > l->first && (v[j - 1].line > x.line ||
		    (v[j - 1].line == x.line && v[j - 1].col > x.col))) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* Parses the text and checks the tree into p; returns 0 or -errno. */
static int load_into(struct loader *l, struct rs_policy *p)
{
	struct node *root = NULL;
	int ret;

	if (!yaml_parser_initialize(&l->parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&l->parser,
	    (const unsigned char *)l->buf, l->len);
	ret = build_document(l, &root);
	yaml_parser_delete(&l->parser);
	if (ret == 0 && root && root->type == N_MAP)
		check_root(l, root, p);
	else if (ret == 0 && root && is_null(root))
		err_node(l, root, "empty policy: expected a mapping with "
		    "'version: 1'");
	else if (ret == 0 && root && root->type != N_IGNORED)
		err_node(l, root, "a policy must be a mapping with "
		    "'version: 1', not a %s", type_name(root));
	node_free(root);
	return ret == -ENOMEM ? ret : 0;
}

int rs_policy_load_buffer(const char *name, const char *buf, size_t len,
    struct rs_policy **out, struct rs_diags *d)
{
	struct loader l = { .name = name, .d = d, .first = d->n,
		.buf = buf, .len = len };
	struct rs_policy *p;
	int ret;

	*out = NULL;
	if (len > RS_POLICY_MAX_BYTES) {
		diags_push(d, name, 0, 0, "larger than 1 MiB (1048576 bytes)");
		return -EFBIG;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(name))) {
		free(p);
		return -ENOMEM;
	}
	rs_settings_init(&p->defaults);
	ret = load_into(&l, p);
	sort_diags(&l);
	if (ret == 0 && l.nerr)
		ret = -EINVAL;
	if (ret < 0) {
		rs_policy_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

int rs_policy_load_file(const char *path, struct rs_policy **out,
    struct rs_diags *d)
{
	char *buf, msg[160], ebuf[128];
	size_t len;
	int ret;

	*out = NULL;
	ret = rs_sys_read_file(path, RS_POLICY_MAX_BYTES, &buf, &len);
	if (ret < 0) {
		if (ret == -EINVAL)
			snprintf(msg, sizeof(msg), "cannot read: not a regular "
			    "file");
		else if (ret == -EFBIG)
			snprintf(msg, sizeof(msg), "cannot read: larger than "
			    "1 MiB (1048576 bytes)");
		else
			snprintf(msg, sizeof(msg), "cannot read: %s",
			    strerror_r(-ret, ebuf, sizeof(ebuf)));
		diags_push(d, path, 0, 0, msg);
		return ret;
	}
	ret = rs_policy_load_buffer(path, buf, len, out, d);
	free(buf);
	return ret;
}

int rs_policy_load_default(struct rs_policy **out, struct rs_diags *d)
{
	return rs_policy_load_buffer("<built-in>", rs_default_policy,
	    (size_t)rs_default_policy_len, out, d);
}

int rs_diag_format(const struct rs_diag *dg, char *buf, size_t len)
{
	if (dg->line == 0)
		return snprintf(buf, len, "%s: error: %s", dg->file, dg->msg);
	return snprintf(buf, len, "%s:%u:%u: error: %s", dg->file, dg->line,
	    dg->col, dg->msg);
}

void rs_diags_free(struct rs_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}
