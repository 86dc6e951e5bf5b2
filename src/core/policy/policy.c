/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the rules of a policy and how a destination is matched to them.
 *
 * Pure: no I/O and no locks.  A policy is immutable once built, so lookups
 * may run in any number of threads.  The only state is the per-thread
 * buffer that rs_target_from_sockaddr() uses for AF_UNIX paths.
 */
#include "policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "hot.h"

/*
 * Initial-exec TLS: a dynamically allocated TLS block may call malloc on
 * first access, which must never happen inside someone else's connect().
 */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* Room for "@" + a full abstract name + NUL. */
static TLS char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 2];

void rs_settings_init(struct rs_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->connect_timeout_ms = 3000;
	s->read_timeout_ms = RS_OFF;
	s->write_timeout_ms = RS_OFF;
	s->auto_timeout.multiplier = 3;
	s->auto_timeout.quantile = 0.99;
	s->auto_timeout.min_ms = 100;
	s->auto_timeout.max_ms = 30000;
	s->auto_timeout.samples = 200;
	s->auto_timeout.half_life_ms = 600000;
	s->connect_budget_ms = 10000;
	s->attempts = 3;
	s->retry_on = RS_CLASS_ALL;
	s->backoff.base_ms = 100;
	s->backoff.cap_ms = 30000;
	s->backoff.multiplier = 2.0;
	s->backoff.jitter = RS_JITTER_EQUAL;
	s->budget.ratio = 0.2;
	s->budget.min_per_second = 10;
	s->budget.window_ms = 10000;
	s->budget.scope = RS_SCOPE_MACHINE;
	rs_http_settings_init(&s->http);
	rs_breaker_settings_init(&s->breaker);
	s->passthrough = false;
	s->failover = 1;
}

/*
 * An abstract socket's name starts with a NUL byte and is not terminated;
 * it is shown as "@name" (as ss(8) does).  A pathname socket's address may
 * or may not include the terminating NUL, so the copy stops at either.
 */
static int target_from_unix(struct rs_target *t, const struct sockaddr *sa,
    socklen_t len)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)sa;
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n = len > off ? len - off : 0;

	if (n > sizeof(sun->sun_path))
		n = sizeof(sun->sun_path);
	if (n > 0 && sun->sun_path[0] == '\0') {
		unix_path[0] = '@';
		memcpy(unix_path + 1, sun->sun_path + 1, n - 1);
		unix_path[n] = '\0';
	} else {
		size_t k = strnlen(sun->sun_path, n);

		memcpy(unix_path, sun->sun_path, k);
		unix_path[k] = '\0';
	}
	t->family = AF_UNIX;
	t->path = unix_path;
	return 0;
}

static int target_from_in6(struct rs_target *t, const struct sockaddr *sa,
    socklen_t len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	if (len < sizeof(*s6))
		return -EINVAL;
	t->port = ntohs(s6->sin6_port);
	/* IPv4-mapped addresses are IPv4 peers; IPv4 rules must see them. */
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		t->family = AF_INET;
		memcpy(t->addr, s6->sin6_addr.s6_addr + 12, 4);
	} else {
		t->family = AF_INET6;
		memcpy(t->addr, s6->sin6_addr.s6_addr, 16);
	}
	return 0;
}

RS_HOT int rs_target_from_sockaddr(struct rs_target *t,
    const struct sockaddr *sa, socklen_t len)
{
	memset(t, 0, sizeof(*t));
	if (!sa || len < sizeof(sa_family_t))
		return -EINVAL;
	switch (sa->sa_family) {
	case AF_INET: {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		if (len < sizeof(*s4))
			return -EINVAL;
		t->family = AF_INET;
		t->port = ntohs(s4->sin_port);
		memcpy(t->addr, &s4->sin_addr, 4);
		return 0;
	}
	case AF_INET6:
		return target_from_in6(t, sa, len);
	case AF_UNIX:
		return target_from_unix(t, sa, len);
	default:
		return -EAFNOSUPPORT;
	}
}

/* Parses a decimal port 1..65535; returns 0 or -EINVAL. */
static int parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Parses "PORT" or "LOW-HIGH" after the colon. */
static int parse_ports(struct rs_match *m, const char *s, const char **why)
{
	const char *dash = strchr(s, '-');
	size_t n = dash ? (size_t)(dash - s) : strlen(s);

	*why = "invalid port (expected 1..65535 or LOW-HIGH)";
	if (parse_port(s, n, &m->port_lo) < 0)
		return -EINVAL;
	m->port_hi = m->port_lo;
	if (dash && parse_port(dash + 1, strlen(dash + 1), &m->port_hi) < 0)
		return -EINVAL;
	if (m->port_hi < m->port_lo) {
		*why = "port range is reversed (LOW must not exceed HIGH)";
		return -EINVAL;
	}
	return 0;
}

/* Parses "/N" (or nothing: a single address) for a family of `bits`. */
static int parse_prefix(struct rs_match *m, const char *s, size_t n,
    unsigned bits, const char **why)
{
	unsigned long v = 0;

	m->prefix_len = bits;
	if (n == 0)
		return 0;
	*why = "invalid prefix length after '/'";
	if (n < 2 || n > 4 || s[0] != '/')
		return -EINVAL;
	for (size_t i = 1; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > bits) {
		*why = bits == 32 ? "IPv4 prefix length must be 0..32"
				  : "IPv6 prefix length must be 0..128";
		return -EINVAL;
	}
	m->prefix_len = (unsigned)v;
	return 0;
}

/* Returns whether the first `prefix` bits of a and b are equal. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
	unsigned whole = prefix / 8, rest = prefix % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xffu << (8 - rest));

	return ((a[whole] ^ b[whole]) & mask) == 0;
}

/*
 * A network written with host bits set ("10.0.0.1/8") is most likely a
 * typo for a single address or a different prefix, so it is refused
 * rather than silently widened.
 */
static int check_host_bits(struct rs_match *m, const char **why)
{
	unsigned bytes = m->family == AF_INET ? 4 : 16;
	uint8_t masked[16];

	memcpy(masked, m->addr, 16);
	for (unsigned i = 0; i < bytes * 8; i++)
		if (i >= m->prefix_len)
			masked[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
	if (memcmp(masked, m->addr, bytes) != 0) {
		*why = "address has bits set beyond the prefix length";
		return -EINVAL;
	}
	return 0;
}

/* Parses an address of `family` from s[0..n) into m->addr. */
static int parse_addr(struct rs_match *m, int family, const char *s, size_t n,
    const char **why)
{
	char tmp[INET6_ADDRSTRLEN + 1];

	*why = family == AF_INET ? "invalid IPv4 address"
				 : "invalid IPv6 address";
	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (inet_pton(family, tmp, m->addr) != 1)
		return -EINVAL;
	m->family = family;
	m->kind = RS_MATCH_CIDR;
	return 0;
}

/* "[v6]", "[v6]/N", each optionally ":PORTS". */
static int parse_v6(struct rs_match *m, const char *s, const char **why)
{
	const char *end = strchr(s, ']');
	const char *colon;

	*why = "missing ']' after IPv6 address";
	if (!end)
		return -EINVAL;
	if (parse_addr(m, AF_INET6, s + 1, (size_t)(end - s - 1), why) < 0)
		return -EINVAL;
	colon = strchr(end, ':');
	if (parse_prefix(m, end + 1,
	    colon ? (size_t)(colon - end - 1) : strlen(end + 1), 128, why) < 0)
		return -EINVAL;
	if (check_host_bits(m, why) < 0)
		return -EINVAL;
	return colon ? parse_ports(m, colon + 1, why) : 0;
}

/* Returns whether s[0..n) is a valid host name: LDH labels, '_' allowed. */
static bool valid_hostname(const char *s, size_t n)
{
	size_t label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label > 0;
}

/* "10.0.0.256" is a bad address rather than a host name. */
static bool looks_like_ipv4(const char *s, size_t n)
{
	bool digit = false;

	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]) && s[i] != '.')
			return false;
		digit |= s[i] != '.';
	}
	return digit;
}

/* Stores a lower-cased copy of s[0..n) (a trailing dot dropped) in m->name. */
static int set_name(struct rs_match *m, const char *s, size_t n)
{
	if (n > 1 && s[n - 1] == '.')
		n--;
	m->name = strndup(s, n);
	if (!m->name)
		return -ENOMEM;
	for (char *p = m->name; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return 0;
}

/* "*", "*.suffix", "host", "1.2.3.4", "10.0.0.0/8", without the ports. */
static int parse_plain(struct rs_match *m, const char *s, size_t n,
    const char **why)
{
	const char *slash = memchr(s, '/', n);

	if (n == 1 && s[0] == '*') {
		m->kind = RS_MATCH_ANY;
		return 0;
	}
	if (slash || looks_like_ipv4(s, n)) {
		size_t an = slash ? (size_t)(slash - s) : n;

		if (parse_addr(m, AF_INET, s, an, why) < 0 ||
		    parse_prefix(m, s + an, n - an, 32, why) < 0)
			return -EINVAL;
		return check_host_bits(m, why);
	}
	if (n > 2 && s[0] == '*' && s[1] == '.') {
		*why = "invalid domain suffix after '*.'";
		if (!valid_hostname(s + 2, s[n - 1] == '.' ? n - 3 : n - 2))
			return -EINVAL;
		m->kind = RS_MATCH_SUFFIX;
		return set_name(m, s + 1, n - 1);
	}
	*why = memchr(s, '*', n) ? "'*' is only allowed alone or as '*.suffix'"
				 : "invalid host name";
	if (!valid_hostname(s, s[n - 1] == '.' ? n - 1 : n))
		return -EINVAL;
	m->kind = RS_MATCH_HOST;
	return set_name(m, s, n);
}

static int parse_match(struct rs_match *m, const char *text, const char **why)
{
	const char *colon;

	*why = "empty match";
	if (!*text)
		return -EINVAL;
	if (strncmp(text, "unix:", 5) == 0) {
		*why = "empty path glob after 'unix:'";
		if (!text[5])
			return -EINVAL;
		m->kind = RS_MATCH_UNIX;
		m->name = strdup(text + 5);
		return m->name ? 0 : -ENOMEM;
	}
	if (text[0] == '[')
		return parse_v6(m, text, why);
	colon = strchr(text, ':');
	if (colon && strchr(colon + 1, ':')) {
		*why = "IPv6 addresses must be written in brackets: [::1]:443";
		return -EINVAL;
	}
	*why = "missing host or address before ':'";
	if (colon == text)
		return -EINVAL;
	if (parse_plain(m, text, colon ? (size_t)(colon - text) : strlen(text),
	    why) < 0)
		return -EINVAL;
	return colon ? parse_ports(m, colon + 1, why) : 0;
}

int rs_match_parse(struct rs_match *m, const char *text, const char **why)
{
	const char *dummy;
	int ret;

	if (!why)
		why = &dummy;
	memset(m, 0, sizeof(*m));
	m->port_lo = 0;
	m->port_hi = 65535;
	ret = parse_match(m, text, why);
	if (ret == 0) {
		m->text = strdup(text);
		if (!m->text)
			ret = -ENOMEM;
	}
	if (ret == -ENOMEM)
		*why = "out of memory";
	if (ret < 0)
		rs_match_free(m);
	return ret;
}

void rs_match_free(struct rs_match *m)
{
	free(m->text);
	free(m->name);
	m->text = NULL;
	m->name = NULL;
}

/* Compares t->host, minus any trailing dot, to a lower-case name. */
static bool host_equal(const char *host, size_t n, const char *name)
{
	if (n > 1 && host[n - 1] == '.')
		n--;
	return strlen(name) == n && strncasecmp(host, name, n) == 0;
}

/* "*.example.com" matches "a.example.com", never "example.com" itself. */
static bool host_has_suffix(const char *host, const char *suffix)
{
	size_t n = strlen(host), k = strlen(suffix);

	if (n > 1 && host[n - 1] == '.')
		n--;
	return n > k && strncasecmp(host + n - k, suffix, k) == 0;
}

/*
 * Unix globs use fnmatch() without FNM_PATHNAME or FNM_PERIOD: a star
 * also matches "/" and a leading dot, so the glob "/run/postgresql/" plus
 * a star covers "/run/postgresql/.s.PGSQL.5432", and "/run/" plus a star
 * covers everything below /run.
 */
bool rs_match_test(const struct rs_match *m, const struct rs_target *t)
{
	if (m->kind == RS_MATCH_UNIX)
		return t->family == AF_UNIX && t->path &&
		    fnmatch(m->name, t->path, 0) == 0;
	if (t->family != AF_INET && t->family != AF_INET6)
		return false;
	if (t->port < m->port_lo || t->port > m->port_hi)
		return false;
	switch (m->kind) {
	case RS_MATCH_ANY:
		return true;
	case RS_MATCH_HOST:
		return t->host && host_equal(t->host, strlen(t->host), m->name);
	case RS_MATCH_SUFFIX:
		return t->host && host_has_suffix(t->host, m->name);
	case RS_MATCH_CIDR:
		return !t->name_only && t->family == m->family &&
		    prefix_equal(t->addr, m->addr, m->prefix_len);
	default:
		return false;
	}
}

RS_HOT const struct rs_settings *rs_policy_lookup(const struct rs_policy *p,
    const struct rs_target *t, const struct rs_rule **rule)
{
	const struct rs_rule *r = NULL;

	for (size_t i = 0; i < p->nrules; i++) {
		if (rs_match_test(&p->rules[i].match, t)) {
			r = &p->rules[i];
			break;
		}
	}
	if (rule)
		*rule = r;
	if (r)
		return r->settings.passthrough ? NULL : &r->settings;
	/* Unix sockets are managed only where a rule asks for it. */
	if (t->family == AF_UNIX)
		return NULL;
	return &p->defaults;
}

unsigned rs_policy_generation_n;

void rs_policy_free(struct rs_policy *p)
{
	if (!p)
		return;
	__atomic_add_fetch(&rs_policy_generation_n, 1, __ATOMIC_ACQ_REL);
	for (size_t i = 0; i < p->nrules; i++)
		rs_match_free(&p->rules[i].match);
	free(p->rules);
	free(p->path);
	free(p);
}

const char *rs_class_name(unsigned c)
{
	switch (c) {
	case RS_CLASS_REFUSED:
		return "refused";
	case RS_CLASS_TIMEOUT:
		return "timeout";
	case RS_CLASS_UNREACHABLE:
		return "unreachable";
	case RS_CLASS_RESET:
		return "reset";
	case RS_CLASS_DNS:
		return "dns";
	default:
		return NULL;
	}
}
