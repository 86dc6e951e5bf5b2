/* SPDX-License-Identifier: MIT */
/*
 * cmd_suggest.c - `resolute suggest [--policy FILE] [--multiplier N]`: the
 * policy printed back with the lesson's rule applied (SPEC 13): for each
 * rule (and the defaults) with at least auto_timeout.samples samples, a
 * concrete connect_timeout and read_timeout of N x p99 (N: the rule's
 * multiplier unless given), rounded up to two significant digits, with its
 * evidence in a comment; a rule with fewer keeps its value, and a comment
 * says how many samples are missing.
 *
 * The policy's own text is edited, so comments, order and layout stay:
 * a timeout line of the rule's mapping is replaced, or a new one inserted
 * after the rule's `match:` (or `defaults:`) line, at its keys' indent.
 * A mapping written in flow style ({...}) is left as it is, with a note.
 * Single-threaded.
 */
#include "cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "default_policy.h"
#include "learn.h"
#include "learn_cli.h"

#define MAX_LINES 20000

struct text {
	char **line;		/* without their line feeds */
	size_t n;
};

/* Splits buf (len bytes) into lines; returns 0 or -1. */
static int split(const char *buf, size_t len, struct text *t)
{
	size_t start = 0;

	t->line = calloc(MAX_LINES, sizeof(*t->line));
	if (!t->line)
		return -1;
	for (size_t i = 0; i <= len && t->n < MAX_LINES - 64; i++) {
		if (i < len && buf[i] != '\n')
			continue;
		if (i == len && i == start)
			break;
		t->line[t->n++] = strndup(buf + start, i - start);
		start = i + 1;
	}
	return 0;
}

static int read_source(const char *path, struct text *t)
{
	FILE *f;
	char *buf;
	size_t len = 0, cap = 1 << 16;
	int rc;

	if (!path)
		return split(rs_default_policy, (size_t)rs_default_policy_len,
		    t);
	if (!(f = fopen(path, "r")) || !(buf = malloc(cap)))
		return -1;
	while ((rc = (int)fread(buf + len, 1, cap - len, f)) > 0) {
		len += (size_t)rc;
		if (len == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				break;
			buf = b;
		}
	}
	fclose(f);
	rc = split(buf, len, t);
	free(buf);
	return rc;
}

static size_t indent_of(const char *s)
{
	size_t i = 0;

	while (s[i] == ' ')
		i++;
	return i;
}

/* A line that holds YAML content (not blank, not only a comment). */
static bool content(const char *s)
{
	s += indent_of(s);
	return *s && *s != '#';
}

/* Inserts text as line at (0-based), moving the rest down. */
static void insert(struct text *t, size_t at, char *text)
{
	memmove(&t->line[at + 1], &t->line[at],
	    (t->n - at) * sizeof(*t->line));
	t->line[at] = text;
	t->n++;
}

/* ms rounded up to two significant digits, as a policy duration. */
static void round_up(double ms, char *buf, size_t len)
{
	uint32_t v = rs_learn_round_ms(ms);

	if (v < 1000)
		snprintf(buf, len, "%ums", (unsigned)v);
	else
		snprintf(buf, len, "%gs", (double)v / 1000);
}

struct scope {
	const struct rs_rule *rule;		/* NULL: the defaults */
	const struct rs_settings *s;
	const struct rs_shm_learn *l;
	size_t key_line;			/* 0-based; SIZE_MAX: none */
	double multiplier;
};

/* The value and comment of one timeout line for kind k. */
static void proposal(const struct scope *sc, enum rs_learn_kind k,
    const char *name, char *out, size_t len)
{
	struct rs_learn_stat st;
	char val[32], p99[32], since[64] = "";
	uint32_t cur = k == RS_LEARN_CONNECT ? sc->s->connect_timeout_ms :
	    sc->s->read_timeout_ms;
	bool is_auto = sc->s->auto_mask & (1u << k);

	rs_learn_stat(sc->l, k, sc->s, rs_clock_now_ms(), &st);
	if (sc->l) {
		time_t when = (time_t)(sc->l->since_ms / 1000);
		struct tm tm;

		strftime(since, sizeof(since), "%Y-%m-%d %H:%M UTC",
		    gmtime_r(&when, &tm));
	}
	if (st.samples >= sc->s->auto_timeout.samples) {
		round_up(sc->multiplier * st.p99_us / 1000, val, sizeof(val));
		snprintf(out, len, "%s: %s  # resolute suggest: %g x p99 %s, "
		    "%.0f samples since %s", name, val, sc->multiplier,
		    rs_cli_fmt_us(st.p99_us, p99, sizeof(p99)), st.samples,
		    since);
		return;
	}
	if (is_auto)
		snprintf(val, sizeof(val), "auto");
	else if (cur == RS_OFF)
		snprintf(val, sizeof(val), "off");
	else
		round_up(cur, val, sizeof(val));
	snprintf(out, len, "%s: %s  # resolute suggest: kept; %.0f of %u "
	    "samples learned, %.0f more needed", name, val, st.samples,
	    (unsigned)sc->s->auto_timeout.samples,
	    (double)sc->s->auto_timeout.samples - st.samples);
}

/* Sets key `name` of the mapping whose first key is at key_line. */
static void set_key(struct text *t, const struct scope *sc,
    enum rs_learn_kind k, const char *name)
{
	char buf[512], *line;
	size_t at = sc->key_line, ind, end, nlen = strlen(name);
	const char *first = t->line[at];

	ind = indent_of(first) + (strncmp(first + indent_of(first), "- ", 2) ?
	    0 : 2);
	if (!sc->rule) {	/* defaults: the indent of its first key */
		ind = 2;
		for (size_t i = at + 1; i < t->n; i++)
			if (content(t->line[i])) {
				ind = indent_of(t->line[i]);
				break;
			}
	}
	proposal(sc, k, name, buf, sizeof(buf));
	for (end = at + 1; end < t->n; end++) {
		const char *s = t->line[end];

		if (content(s) && indent_of(s) < ind)
			break;
		if (content(s) && indent_of(s) == ind &&
		    !strncmp(s + ind, name, nlen) && s[ind + nlen] == ':') {
			if (asprintf(&line, "%*s%s", (int)ind, "", buf) < 0)
				return;
			free(t->line[end]);
			t->line[end] = line;
			return;
		}
	}
	if (asprintf(&line, "%*s%s", (int)ind, "", buf) >= 0)
		insert(t, at + 1, line);
}

/* Edits one scope's timeouts into t. */
static void edit_scope(struct text *t, const struct scope *sc)
{
	if (strchr(t->line[sc->key_line], '{')) {
		char *note;

		if (asprintf(&note, "# resolute suggest: the rule below is in "
		    "flow style; not edited") >= 0)
			insert(t, sc->key_line, note);
		return;
	}
	if (sc->s->read_timeout_ms != RS_OFF)
		set_key(t, sc, RS_LEARN_READ, "read_timeout");
	set_key(t, sc, RS_LEARN_CONNECT, "connect_timeout");
}

static int suggest_args(int argc, char **argv, const char **policy,
    double *mult)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		char *end;

		if ((v = rs_cli_opt_value(argc, argv, &i, "--policy"))) {
			*policy = v;
		} else if ((v = rs_cli_opt_value(argc, argv, &i,
		    "--multiplier"))) {
			*mult = strtod(v, &end);
			if (*end || !(*mult >= 1 && *mult <= 100))
				return rs_cli_usage_error("suggest: "
				    "--multiplier must be a number from 1 to "
				    "100, not '%s'", v);
		} else {
			return rs_cli_usage_error("suggest: unknown option or "
			    "missing value: '%s'", argv[i]);
		}
	}
	return 0;
}

/* Edits the rules from the last up, so that earlier lines stay put. */
static void edit_all(struct text *t, const struct rs_policy *p,
    struct rs_shm_table *tab, double mult)
{
	for (size_t i = p->nrules + 1; i-- > 0;) {
		const struct rs_rule *r = i ? &p->rules[i - 1] : NULL;
		struct scope sc = { r, r ? &r->settings : &p->defaults, NULL,
			r ? r->line - 1 : p->defaults_line - 1, mult };

		if (r && r->settings.passthrough)
			continue;
		if (!sc.multiplier)
			sc.multiplier = sc.s->auto_timeout.multiplier;
		if (tab)
			sc.l = rs_shm_learn(tab, r, sc.s, false);
		if (!r && !p->defaults_line) {
			char *line = strdup("defaults:");

			t->line[t->n++] = line;
			sc.key_line = t->n - 1;
		}
		if (sc.key_line < t->n)
			edit_scope(t, &sc);
	}
}

int rs_cmd_suggest(int argc, char **argv)
{
	const char *path = NULL;
	double mult = 0;
	struct rs_policy *p = NULL;
	struct text t = { 0 };
	struct rs_shm_table *tab;
	int rc = suggest_args(argc, argv, &path, &mult);

	if (rc)
		return rc;
	if (!path && getenv("RESOLUTE_POLICY") && *getenv("RESOLUTE_POLICY"))
		path = getenv("RESOLUTE_POLICY");
	if (!path && access("/etc/resolute/policy.yaml", R_OK) == 0)
		path = "/etc/resolute/policy.yaml";
	if ((path ? rs_cli_load_policy(path, &p) : rs_cli_load_builtin(&p)) ||
	    read_source(path, &t) < 0) {
		fprintf(stderr, "resolute: suggest: cannot read %s\n",
		    path ? path : "the built-in policy");
		return RS_EXIT_FAIL;
	}
	tab = rs_cli_learn_table(p);
	edit_all(&t, p, tab, mult);
	for (size_t i = 0; i < t.n; i++)
		printf("%s\n", t.line[i]);
	rs_shm_detach(tab);
	rs_policy_free(p);
	return RS_EXIT_OK;
}
