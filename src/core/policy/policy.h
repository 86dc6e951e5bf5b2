/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the rules of a policy and how a destination is matched to them.
 *
 * Pure: no I/O.  A struct rs_policy is built once (by policy_yaml.c or by
 * hand in tests), is never modified afterwards and may then be read by any
 * number of threads without locking.  Durations are in milliseconds.
 */
#ifndef RS_POLICY_H
#define RS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "backoff.h"
#include "breaker_settings.h"
#include "deadline.h"
#include "duration.h"
#include "http_settings.h"

/* Failure classes, as named in retry_on. */
enum rs_class {
	RS_CLASS_NONE = 0,
	RS_CLASS_REFUSED = 1u << 0,
	RS_CLASS_TIMEOUT = 1u << 1,
	RS_CLASS_UNREACHABLE = 1u << 2,
	RS_CLASS_RESET = 1u << 3,
	RS_CLASS_DNS = 1u << 4,		/* a lookup's EAI_AGAIN, TRY_AGAIN */
};
#define RS_CLASS_ALL 0x1fu

enum rs_scope { RS_SCOPE_MACHINE, RS_SCOPE_PROCESS };

struct rs_retry_budget {
	double ratio;			/* 0 .. 1000 */
	uint32_t min_per_second;	/* 0 .. 1000000 */
	uint32_t window_ms;		/* 1s .. 1h */
	enum rs_scope scope;
};

/* Bits of struct rs_rule.set: which keys a host rule itself sets. */
enum rs_key {
	RS_KEY_CONNECT_TIMEOUT = 1u << 0,
	RS_KEY_READ_TIMEOUT = 1u << 1,
	RS_KEY_WRITE_TIMEOUT = 1u << 2,
	RS_KEY_ATTEMPTS = 1u << 3,
	RS_KEY_RETRY_ON = 1u << 4,
	RS_KEY_BACKOFF_BASE = 1u << 5,
	RS_KEY_BACKOFF_CAP = 1u << 6,
	RS_KEY_BACKOFF_MULTIPLIER = 1u << 7,
	RS_KEY_BACKOFF_JITTER = 1u << 8,
	RS_KEY_CONNECT_BUDGET = 1u << 9,
	RS_KEY_RETRY_BUDGET_RATIO = 1u << 10,
	RS_KEY_RETRY_BUDGET_MIN = 1u << 11,
	RS_KEY_RETRY_BUDGET_WINDOW = 1u << 12,
	RS_KEY_RETRY_BUDGET_SCOPE = 1u << 13,
	RS_KEY_PASSTHROUGH = 1u << 14,
	RS_KEY_HTTP = 1u << 15,		/* `http:` (a mapping, or off) */
	RS_KEY_HTTP_STATUS = 1u << 16,
	RS_KEY_HTTP_ATTEMPTS = 1u << 17,
	RS_KEY_HTTP_RETRY_AFTER_CAP = 1u << 18,
	RS_KEY_HTTP_MAX_REPLAY = 1u << 19,
	RS_KEY_HTTP_IDEMPOTENCY_KEY = 1u << 20,
	RS_KEY_FAILOVER = 1u << 21,
	RS_KEY_DEADLINE_HEADER = 1u << 22,
	RS_KEY_AUTO_MULTIPLIER = 1u << 23,	/* auto_timeout: (SPEC 13) */
	RS_KEY_AUTO_QUANTILE = 1u << 24,
	RS_KEY_AUTO_MIN = 1u << 25,
	RS_KEY_AUTO_MAX = 1u << 26,
	RS_KEY_AUTO_SAMPLES = 1u << 27,
	RS_KEY_AUTO_HALF_LIFE = 1u << 28,
	RS_KEY_HTTP_ALPN = 1u << 29,
};

/*
 * The breaker's keys (SPEC 12), beyond what an enum constant may hold
 * (an int): struct rs_rule.set is 64 bits wide.
 */
#define RS_KEY_BREAKER (UINT64_C(1) << 30)	/* `breaker:` (a mapping, or off) */
#define RS_KEY_BREAKER_FAILURES (UINT64_C(1) << 31)
#define RS_KEY_BREAKER_OPEN_FOR (UINT64_C(1) << 32)
#define RS_KEY_BREAKER_MAX_OPEN_FOR (UINT64_C(1) << 33)
#define RS_KEY_BREAKER_PROBES (UINT64_C(1) << 34)
#define RS_KEY_BREAKER_ON_STATUS (UINT64_C(1) << 35)
#define RS_KEY_BREAKER_SCOPE (UINT64_C(1) << 36)
_Static_assert(RS_KEY_BREAKER > (uint64_t)RS_KEY_HTTP_ALPN,
    "the breaker's key bits come after the enum's last");

/* Bits of struct rs_settings.auto_mask: which timeouts are `auto`. */
enum rs_auto_bit {
	RS_AUTO_CONNECT = 1u << 0,
	RS_AUTO_READ = 1u << 1,
	RS_AUTO_WRITE = 1u << 2,
};

/* SPEC 13: auto = clamp(multiplier x quantile, min, max), max until
   `samples` are learned; a sample's weight halves after half_life. */
struct rs_auto_timeout {
	double multiplier;		/* 1 .. 100 */
	double quantile;		/* 0.5 .. 0.9999 */
	uint32_t min_ms;
	uint32_t max_ms;
	uint32_t samples;
	uint32_t half_life_ms;
};

/* The effective settings for one destination. */
struct rs_settings {
	uint32_t connect_timeout_ms;	/* one attempt; RS_OFF: none */
	uint32_t read_timeout_ms;	/* RS_OFF: none */
	uint32_t write_timeout_ms;	/* RS_OFF: none */
	/* SPEC 13: the timeouts that are `auto` (enum rs_auto_bit); each
	   such *_timeout_ms holds auto_timeout.max_ms, the value before
	   anything is learned and the bound of every learned one.  Beside
	   the timeouts, which every timed read loads: one cache line. */
	uint32_t auto_mask;
	uint32_t connect_budget_ms;	/* all attempts and waits; RS_OFF */
	unsigned attempts;		/* 1 .. 10, the first included */
	unsigned retry_on;		/* enum rs_class bits */
	struct rs_backoff backoff;
	struct rs_retry_budget budget;
	bool passthrough;
	struct rs_http_settings http;	/* SPEC 9 */
	uint32_t failover;		/* 1 (on): retries go to the name's
					   next address; 0 (off) */
	/* SPEC 10: the header outbound requests carry the deadline in; "" off */
	char deadline_header[RS_HEADER_NAME_MAX];
	struct rs_breaker_settings breaker;	/* SPEC 12 */
	struct rs_auto_timeout auto_timeout;	/* SPEC 13 */
};

enum rs_match_kind {
	RS_MATCH_ANY,		/* "*" */
	RS_MATCH_HOST,		/* "db.internal" */
	RS_MATCH_SUFFIX,	/* "*.example.com" */
	RS_MATCH_CIDR,		/* "10.0.0.5", "10.0.0.0/8", "[::1]", ... */
	RS_MATCH_UNIX,		/* "unix:/run/app.sock", globs allowed */
};

struct rs_match {
	enum rs_match_kind kind;
	char *text;		/* as written, for messages */
	char *name;		/* HOST: lower case, no trailing dot;
				   SUFFIX: ".example.com"; UNIX: the glob */
	int family;		/* CIDR: AF_INET or AF_INET6 */
	uint8_t addr[16];	/* CIDR: network address, host bits zero */
	unsigned prefix_len;	/* CIDR: 0..32 or 0..128 */
	uint16_t port_lo;	/* 0 and 65535 when no port was given */
	uint16_t port_hi;
};

struct rs_rule {
	struct rs_match match;
	struct rs_settings settings;	/* resolved: defaults + own keys */
	uint64_t set;			/* enum rs_key bits (and RS_KEY_BREAKER*)
					   set by the rule */
	unsigned line;			/* of the rule's `match:` key */
	unsigned col;
};

struct rs_policy {
	char *path;			/* "<built-in>" for the compiled-in one */
	struct rs_settings defaults;
	unsigned defaults_line;		/* 0 when the file has no defaults */
	struct rs_rule *rules;
	size_t nrules;
	/* SPEC 10: the header inbound requests carry a deadline in ("" off),
	   and how far from now a received one may be at most. */
	char inbound_header[RS_HEADER_NAME_MAX];
	uint32_t inbound_max_ms;
};

/* A destination, as seen by connect(). */
struct rs_target {
	int family;		/* AF_INET, AF_INET6 or AF_UNIX */
	uint8_t addr[16];	/* AF_INET: the first 4 bytes */
	uint16_t port;		/* host byte order */
	const char *host;	/* the name the program resolved, or NULL */
	const char *path;	/* AF_UNIX: the socket path ("@name" for
				   abstract sockets), else NULL */
	bool name_only;		/* a lookup: no address is known yet, so
				   address rules never match */
};

/* Fills *s with the built-in settings of SPEC §4 (used under a file's keys). */
void rs_settings_init(struct rs_settings *s);

/*
 * Builds *t from a socket address.  IPv4-mapped IPv6 addresses become
 * AF_INET so that IPv4 rules apply to them.  Returns 0, or -EAFNOSUPPORT
 * for other families and -EINVAL for a truncated address.  t->path points
 * into a static per-thread buffer for AF_UNIX.
 */
int rs_target_from_sockaddr(struct rs_target *t, const struct sockaddr *sa,
    socklen_t len);

/*
 * Parses a `match:` value into *m (allocating m->text and m->name).
 * Returns 0, or -EINVAL with a static message in *why.
 */
int rs_match_parse(struct rs_match *m, const char *text, const char **why);
void rs_match_free(struct rs_match *m);

/* Returns whether rule match m applies to target t. */
bool rs_match_test(const struct rs_match *m, const struct rs_target *t);

/*
 * Returns the settings that apply to t, and in *rule (if not NULL) the first
 * matching host rule, or NULL when the defaults apply.  Returns NULL when the
 * library must leave the connection alone: AF_UNIX without a `unix:` rule,
 * or a passthrough rule (then *rule is still set).
 */
const struct rs_settings *rs_policy_lookup(const struct rs_policy *p,
    const struct rs_target *t, const struct rs_rule **rule);

void rs_policy_free(struct rs_policy *p);

/*
 * Counts the policies freed so far.  A cache of facts derived from a
 * policy's rules, keyed by their addresses, is stale once this moves: a
 * later policy may be allocated where a freed one was.  Inline: every
 * connect's budget accounting asks it.
 */
extern unsigned rs_policy_generation_n __attribute__((visibility("hidden")));

static inline unsigned rs_policy_generation(void)
{
	return __atomic_load_n(&rs_policy_generation_n, __ATOMIC_ACQUIRE);
}

/* Returns the name of one class ("refused"), or NULL for none/several. */
const char *rs_class_name(unsigned c);

#endif /* RS_POLICY_H */
