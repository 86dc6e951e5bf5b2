/* SPDX-License-Identifier: MIT */
/*
 * cmd_explain.c - `resolute explain [--policy FILE] TARGET`: which rule
 * applies to a destination, the settings it gets, and its backoff schedule.
 *
 * The target goes through rs_target_from_sockaddr() and rs_policy_lookup(),
 * the library's own conversion and matcher, so the answer is the library's.
 */
#include "cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "learn_cli.h"
#include "policy_source.h"
#include "policy_yaml.h"


/* What the user typed, parsed. */
struct spec {
	struct rs_target t;
	char host[300];		/* a hostname target, else "" */
	bool has_port;
};

/* Parses a decimal port 1..65535; returns 0 or -EINVAL. */
static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	long v;

	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Whether s looks like a DNS name (letters, digits, '-', '_', '.'). */
static bool is_hostname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253 || s[0] == '.' || s[0] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

static int spec_unix(struct spec *sp, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	if (!*path || strlen(path) >= sizeof(sun.sun_path))
		return -EINVAL;
	memcpy(sun.sun_path, path, strlen(path));
	/* An "@name" target means the abstract socket "\0name". */
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	return rs_target_from_sockaddr(&sp->t, (struct sockaddr *)&sun,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path)));
}

/* Fills sp from an address literal or a hostname, and a port (0: any). */
static int spec_inet(struct spec *sp, const char *host, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	sin.sin_port = sin6.sin6_port = htons(port);
	if (inet_pton(AF_INET6, host, &sin6.sin6_addr) == 1)
		return rs_target_from_sockaddr(&sp->t,
		    (struct sockaddr *)&sin6, sizeof(sin6));
	if (inet_pton(AF_INET, host, &sin.sin_addr) == 1)
		return rs_target_from_sockaddr(&sp->t,
		    (struct sockaddr *)&sin, sizeof(sin));
	if (!is_hostname(host))
		return -EINVAL;
	/*
	 * A name: the library matches it by the name the program resolved.
	 * Address rules are left out of the lookup (see lookup()), so the
	 * placeholder address 0.0.0.0 never matches anything by itself.
	 */
	snprintf(sp->host, sizeof(sp->host), "%s", host);
	if (rs_target_from_sockaddr(&sp->t, (struct sockaddr *)&sin,
	    sizeof(sin)) < 0)
		return -EINVAL;
	sp->t.host = sp->host;
	return 0;
}

/* Splits "[v6]:port", "[v6]", "host:port", "host" and bare IPv6. */
static int parse_target(const char *arg, struct spec *sp)
{
	char buf[300];
	char *host = buf, *colon;
	uint16_t port = 0;

	memset(sp, 0, sizeof(*sp));
	if (strncmp(arg, "unix:", 5) == 0)
		return spec_unix(sp, arg + 5);
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -EINVAL;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -EINVAL;
		*close = '\0';
		host = buf + 1;
		colon = close[1] ? close + 1 : NULL;
	} else {
		colon = strchr(buf, ':');
		/* Two colons or more without brackets: a bare IPv6 address. */
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;
	}
	if (colon) {
		*colon = '\0';
		if (parse_port(colon + 1, &port) < 0)
			return -EINVAL;
		sp->has_port = true;
	}
	return spec_inet(sp, host, port);
}

/*
 * Loads the policy the library would use (rs_policy_choose(), the same
 * code): --policy, $RESOLUTE_POLICY, the system file when it exists, else
 * the compiled-in default.
 */
static int load(const char *opt, struct rs_policy **p)
{
	const char *path = rs_policy_choose(opt, false);

	return path ? rs_cli_load_policy(path, p) : rs_cli_load_builtin(p);
}

/*
 * Looks the target up.  For a name, address rules are left out: they match
 * the addresses the name resolves to, which explain does not guess.  The
 * filtered copy shares the rules' contents and is freed shallowly.
 */
static const struct rs_settings *lookup(const struct rs_policy *p,
    const struct spec *sp, const struct rs_rule **rule)
{
	struct rs_policy names = *p;
	const struct rs_settings *s;
	const struct rs_rule **map;
	struct rs_rule *v;
	size_t n = 0;

	if (!sp->host[0])
		return rs_policy_lookup(p, &sp->t, rule);
	v = calloc(p->nrules + 1, sizeof(*v));
	map = calloc(p->nrules + 1, sizeof(*map));
	if (!v || !map) {
		perror("resolute");
		exit(RS_EXIT_FAIL);
	}
	for (size_t i = 0; i < p->nrules; i++) {
		if (p->rules[i].match.kind == RS_MATCH_CIDR)
			continue;
		map[n] = &p->rules[i];
		v[n++] = p->rules[i];
	}
	names.rules = v;
	names.nrules = n;
	s = rs_policy_lookup(&names, &sp->t, rule);
	if (*rule)
		*rule = map[*rule - v];
	if (s && *rule)
		s = &(*rule)->settings;
	else if (s)
		s = &p->defaults;
	free(v);
	free(map);
	return s;
}

/*
 * Prints s left-aligned in `width` columns, counting UTF-8 characters (the
 * dash of a range takes three bytes), and at least one space after it.
 */
static void cell(const char *s, int width)
{
	int chars = 0;

	for (const char *c = s; *c; c++)
		chars += ((unsigned char)*c & 0xc0) != 0x80;
	fputs(s, stdout);
	do
		putchar(' ');
	while (++chars < width);
}

static void print_target(const struct spec *sp)
{
	char addr[INET6_ADDRSTRLEN] = "";
	char port[32] = "any port";

	if (sp->has_port)
		snprintf(port, sizeof(port), "port %u", sp->t.port);
	if (sp->t.family == AF_UNIX) {
		printf("target:  unix socket %s\n", sp->t.path);
		return;
	}
	if (sp->host[0]) {
		printf("target:  %s, %s (by name; address rules apply to the "
		    "addresses it resolves to and are not considered here)\n",
		    sp->host, port);
		return;
	}
	inet_ntop(sp->t.family, sp->t.addr, addr, sizeof(addr));
	printf("target:  %s, %s (by address)\n", addr, port);
}

/*
 * Notes the rules that name this host or address but are restricted to
 * ports, when no port was given: port 0 stands for "any port" and matches
 * none of them.
 */
static void print_port_rules(const struct rs_policy *p, const struct spec *sp)
{
	if (sp->has_port || sp->t.family == AF_UNIX)
		return;
	printf("note:    no port given (any port): rules restricted to ports "
	    "do not match\n");
	for (size_t i = 0; i < p->nrules; i++) {
		struct rs_match m = p->rules[i].match;

		if (m.kind == RS_MATCH_UNIX ||
		    (m.port_lo == 0 && m.port_hi == 65535))
			continue;
		if (sp->host[0] && m.kind == RS_MATCH_CIDR)
			continue;
		m.port_lo = 0;
		m.port_hi = 65535;
		if (rs_match_test(&m, &sp->t))
			printf("         match: %s (%s:%u) would apply on its "
			    "ports\n", p->rules[i].match.text, p->path,
			    p->rules[i].line);
	}
}

/* Prints the rule line; returns whether the connection is managed. */
static bool print_rule(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s)
{
	if (r && !s) {
		printf("rule:    passthrough rule match: %s (%s:%u): "
		    "connections are left alone\n", r->match.text, p->path,
		    r->line);
		return false;
	}
	if (r) {
		printf("rule:    match: %s (%s:%u)\n", r->match.text, p->path,
		    r->line);
		return true;
	}
	if (!s) {
		printf("rule:    none: not managed (unix sockets are managed "
		    "only where a unix: rule matches)\n");
		return false;
	}
	if (p->defaults_line)
		printf("rule:    defaults (%s:%u)\n", p->path, p->defaults_line);
	else
		printf("rule:    defaults (built-in values; %s has no "
		    "defaults section)\n", p->path);
	return true;
}

/* Formats whole and fractional seconds, trailing zeros dropped ("6.15"). */
static int seconds(uint32_t ms, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u.%03u", (unsigned)(ms / 1000),
	    (unsigned)(ms % 1000));

	while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && (size_t)n < len && buf[n - 1] == '.')
		buf[--n] = '\0';
	return n;
}

/*
 * Formats a duration for people: "100ms", "6.1s", "2m", "1m30.5s", "off".
 * rs_duration_format() writes the shortest policy spelling ("0.1s",
 * "0.36m"), which is right for a file but hard to read down a column.
 */
static char *dur(uint32_t ms, char *buf, size_t len)
{
	char s[16];	/* at most "4294967.295" */

	if (ms == RS_OFF) {
		snprintf(buf, len, "off");
	} else if (ms < 1000) {
		snprintf(buf, len, "%ums", (unsigned)ms);
	} else if (ms < 60000) {
		seconds(ms, s, sizeof(s));
		snprintf(buf, len, "%ss", s);
	} else if (ms % 60000 == 0) {
		snprintf(buf, len, "%um", (unsigned)(ms / 60000));
	} else {
		seconds(ms % 60000, s, sizeof(s));
		snprintf(buf, len, "%um%ss", (unsigned)(ms / 60000), s);
	}
	return buf;
}

/* Prints one setting, marked with where its value comes from. */
static void setting(const struct rs_rule *r, unsigned key, const char *name,
    const char *value)
{
	printf("  ");
	cell(name, 28);
	cell(value, 12);
	printf("%s\n", r && (r->set & key) ? "(rule)" : "(defaults)");
}

static void setting_ms(const struct rs_rule *r, unsigned key,
    const char *name, uint32_t ms)
{
	char buf[32];

	setting(r, key, name, dur(ms, buf, sizeof(buf)));
}

static void setting_num(const struct rs_rule *r, unsigned key,
    const char *name, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%g", v);
	setting(r, key, name, buf);
}

/* Formats the retry_on classes as "refused, timeout" ("none" if empty). */
static void classes(unsigned set, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned bit = 1; bit <= RS_CLASS_ALL; bit <<= 1) {
		if (!(set & bit) || !rs_class_name(bit))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    used ? ", " : "", rs_class_name(bit));
		if (used >= len)
			return;
	}
	if (!used)
		snprintf(buf, len, "none");
}

/*
 * A timeout of kind k: its value, or what `auto` stands for now and why
 * (SPEC 13), from the policy's segment t (NULL: nothing learned yet).
 */
static void setting_timeout(const struct rs_rule *r, unsigned key,
    const char *name, uint32_t ms, const struct rs_settings *s,
    enum rs_learn_kind k, const struct rs_shm_table *t)
{
	char buf[160];

	if (!(s->auto_mask & (1u << k))) {
		setting_ms(r, key, name, ms);
		return;
	}
	rs_cli_auto_text(t ? rs_shm_learn((struct rs_shm_table *)t, r, s,
	    false) : NULL, k, s, buf, sizeof(buf));
	setting(r, key, name, buf);
}

static void print_settings(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *s)
{
	struct rs_shm_table *t = s->auto_mask ? rs_cli_learn_table(p) : NULL;
	char buf[96];

	printf("\nsettings:\n");
	setting_timeout(r, RS_KEY_CONNECT_TIMEOUT, "connect_timeout",
	    s->connect_timeout_ms, s, RS_LEARN_CONNECT, t);
	setting_timeout(r, RS_KEY_READ_TIMEOUT, "read_timeout",
	    s->read_timeout_ms, s, RS_LEARN_READ, t);
	setting_timeout(r, RS_KEY_WRITE_TIMEOUT, "write_timeout",
	    s->write_timeout_ms, s, RS_LEARN_WRITE, t);
	rs_shm_detach(t);
	if (s->auto_mask)
		setting(r, RS_KEY_AUTO_MULTIPLIER | RS_KEY_AUTO_QUANTILE |
		    RS_KEY_AUTO_MIN | RS_KEY_AUTO_MAX | RS_KEY_AUTO_SAMPLES |
		    RS_KEY_AUTO_HALF_LIFE, "auto_timeout",
		    rs_cli_auto_settings(s, buf, sizeof(buf)));
	setting_num(r, RS_KEY_ATTEMPTS, "attempts", s->attempts);
	classes(s->retry_on, buf, sizeof(buf));
	setting(r, RS_KEY_RETRY_ON, "retry_on", buf);
	setting_ms(r, RS_KEY_BACKOFF_BASE, "backoff.base", s->backoff.base_ms);
	setting_ms(r, RS_KEY_BACKOFF_CAP, "backoff.cap", s->backoff.cap_ms);
	setting_num(r, RS_KEY_BACKOFF_MULTIPLIER, "backoff.multiplier",
	    s->backoff.multiplier);
	setting(r, RS_KEY_BACKOFF_JITTER, "backoff.jitter",
	    rs_jitter_name(s->backoff.jitter));
	setting_ms(r, RS_KEY_CONNECT_BUDGET, "connect_budget",
	    s->connect_budget_ms);
	setting(r, RS_KEY_FAILOVER, "failover", s->failover ? "on" : "off");
}

static void print_budget(const struct rs_rule *r, const struct rs_settings *s)
{
	const struct rs_retry_budget *b = &s->budget;
	char win[32];

	printf("\nretry budget:\n");
	setting_num(r, RS_KEY_RETRY_BUDGET_RATIO, "retry_budget.ratio",
	    b->ratio);
	setting_num(r, RS_KEY_RETRY_BUDGET_MIN, "retry_budget.min_per_second",
	    b->min_per_second);
	setting_ms(r, RS_KEY_RETRY_BUDGET_WINDOW, "retry_budget.window",
	    b->window_ms);
	setting(r, RS_KEY_RETRY_BUDGET_SCOPE, "retry_budget.scope",
	    b->scope == RS_SCOPE_MACHINE ? "machine" : "process");
	printf("  retries may add at most %g%% to the connects of the last %s, "
	    "but %u per second are always allowed;\n  shared %s\n",
	    b->ratio * 100, dur(b->window_ms, win, sizeof(win)),
	    b->min_per_second, b->scope == RS_SCOPE_MACHINE ?
	    "by the processes of this user using the same policy file" :
	    "by nothing: each process keeps its own");
}

/* Formats a worst-case elapsed time; RS_OFF and beyond is "unbounded". */
static char *elapsed_fmt(uint64_t ms, char *buf, size_t len)
{
	if (ms >= RS_OFF) {
		snprintf(buf, len, "unbounded");
		return buf;
	}
	return dur((uint32_t)ms, buf, len);
}

static void row(const char *attempt, const char *retry, const char *timeout,
    const char *wait, const char *total)
{
	printf("  ");
	cell(attempt, 9);
	cell(retry, 7);
	cell(timeout, 9);
	cell(wait, 22);
	printf("%s\n", total);
}

/*
 * Formats the wait before attempt k (k >= 2) into buf and stores its upper
 * bound in *hi_ms.  Retry n = k - 2 is the n-th retry counted from 0.
 */
static void wait_cell(const struct rs_settings *s, unsigned k, char *buf,
    size_t len, uint32_t *hi_ms)
{
	char lo[32], hi[32];
	uint32_t l;

	rs_backoff_bounds_ms(&s->backoff, k - 2, &l, hi_ms);
	snprintf(buf, len, "%s\u2013%s", dur(l, lo, sizeof(lo)),
	    dur(*hi_ms, hi, sizeof(hi)));
}

/*
 * Prints the worst case of one connect(): every attempt times out and every
 * wait is its longest.  The library starts no wait that would end after
 * connect_budget and cuts an attempt at it, failing with ETIMEDOUT.
 */
static void print_schedule(const struct rs_policy *p, const struct rs_rule *r,
    const struct rs_settings *orig)
{
	/* An `auto` connect_timeout: the schedule of the value it stands
	   for now. */
	struct rs_settings eff = *orig;
	const struct rs_settings *s = &eff;

	if (orig->auto_mask & RS_AUTO_CONNECT)
		eff.connect_timeout_ms = rs_cli_auto_ms(p, r, orig,
		    RS_LEARN_CONNECT);
	uint64_t at = 0, budget = s->connect_budget_ms;
	char k_s[16], n_s[16], t[32], w[80], total[32], b[32];
	uint32_t hi = 0;

	dur(s->connect_timeout_ms, t, sizeof(t));
	dur(s->connect_budget_ms, b, sizeof(b));
	printf("\nbackoff schedule (worst case: every attempt times out, "
	    "every wait is its longest):\n");
	row("attempt", "retry", "timeout", "wait before (lo\u2013hi)",
	    "cumulative worst case");
	for (unsigned k = 1; k <= s->attempts; k++) {
		snprintf(k_s, sizeof(k_s), "%u", k);
		snprintf(n_s, sizeof(n_s), k > 1 ? "%u" : "-", k - 2);
		snprintf(w, sizeof(w), "-");
		if (k > 1)
			wait_cell(s, k, w, sizeof(w), &hi);
		if (k > 1 && budget != RS_OFF && at + hi > budget) {
			row(k_s, n_s, t, w, "-");
			printf("  the longest wait before attempt %u would end "
			    "after the %s connect_budget: connect() fails with "
			    "ETIMEDOUT at %s instead of waiting\n", k, b,
			    elapsed_fmt(at, total, sizeof(total)));
			return;
		}
		at += (k > 1 ? hi : 0) + (uint64_t)s->connect_timeout_ms;
		if (budget != RS_OFF && at > budget) {
			row(k_s, n_s, t, w, b);
			printf("  attempt %u would end after the %s "
			    "connect_budget: connect() fails with ETIMEDOUT "
			    "at %s\n", k, b, b);
			return;
		}
		row(k_s, n_s, t, w, elapsed_fmt(at, total, sizeof(total)));
	}
	if (at >= RS_OFF)
		printf("  no connect_timeout and no connect_budget: an "
		    "attempt lasts as long as the kernel keeps trying (about "
		    "2 minutes\n  for unanswered SYNs), or until "
		    "RESOLUTE_DEADLINE\n");
}

/* Parses the options and the one TARGET; returns 0 or an exit status. */
static int explain_args(int argc, char **argv, const char **policy,
    const char **target)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strncmp(argv[i], "--policy=", 9) == 0)
			*policy = argv[i] + 9;
		else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
			*policy = argv[++i];
		else if (strcmp(argv[i], "--policy") == 0)
			return rs_cli_usage_error("explain: --policy needs a "
			    "FILE");
		else
			return rs_cli_usage_error("explain: unknown option "
			    "'%s'", argv[i]);
	}
	if (i != argc - 1)
		return rs_cli_usage_error("explain: expected one TARGET");
	*target = argv[i];
	return 0;
}

int rs_cmd_explain(int argc, char **argv)
{
	const char *policy = NULL, *target = NULL;
	const struct rs_settings *s;
	const struct rs_rule *r = NULL;
	struct rs_policy *p;
	struct spec sp;
	bool managed;
	int rc = explain_args(argc, argv, &policy, &target);

	if (rc)
		return rc;
	if (parse_target(target, &sp) < 0)
		return rs_cli_usage_error("explain: cannot parse target '%s' "
		    "(HOST[:PORT], IP[:PORT], [IPv6][:PORT] or unix:PATH)",
		    target);
	if (load(policy, &p) < 0)
		return RS_EXIT_FAIL;
	printf("policy:  %s\n", p->path);
	print_target(&sp);
	s = lookup(p, &sp, &r);
	managed = print_rule(p, r, s);
	print_port_rules(p, &sp);
	if (managed) {
		print_settings(p, r, s);
		print_budget(r, s);
		rs_cli_budget_live(p, r, s);
		rs_cli_explain_http(r, s);
		rs_cli_explain_breaker(p, r, s, &sp.t);
		print_schedule(p, r, s);
		rs_cli_explain_failover(sp.host, s);
		if (sp.host[0])
			rs_cli_explain_dns(s);
	}
	rs_policy_free(p);
	return RS_EXIT_OK;
}
