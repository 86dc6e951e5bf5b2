/* SPDX-License-Identifier: MIT */
/*
 * policy_keys.c - the keys a policy may set: one table row per key.
 *
 * Adding a key: add its field to struct rs_settings and its bit to enum
 * rs_key (policy.h), its default to rs_settings_init() (policy.c), then a
 * row here.  A scalar key needs nothing else; a nested mapping (like
 * `backoff:`) is a row of kind RS_KIND_MAP pointing at a table of its own.
 * The rows' order is the order suggestions are tried in.  Constant data.
 */
#include "policy_keys.h"

#include <string.h>

#include "policy.h"

#define OFF(m) offsetof(struct rs_settings, m)
#define DAY_MS 86400000.0
#define HOUR_MS 3600000.0
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Shorthands for the rows: a duration, a number, one or several names. */
#define ROW(n, k, b, o, lo, hi) \
	.name = n, .kind = k, .bit = b, .off = o, .min = lo, .max = hi
#define DUR(n, b, o, lo, hi, off) \
	{ ROW(n, RS_KIND_DURATION, b, OFF(o), lo, hi), .off_ok = off }
#define NUM(n, k, b, o, lo, hi) { ROW(n, k, b, OFF(o), lo, hi) }
#define NAMES(n, k, b, o, v, e) \
	{ ROW(n, k, b, OFF(o), 0, 0), .names = v, .nnames = NELEM(v), \
	  .expect = e }
#define TABLE(rows) { rows, NELEM(rows) }

/* Index = the enum value stored (enum rs_jitter, rs_scope, class bits). */
static const char *const jitters[] = { "equal", "full", "decorrelated",
	"none" };
static const char *const scopes[] = { "machine", "process" };
static const char *const classes[] = { "refused", "timeout", "unreachable",
	"reset", "dns" };
static const char *const switches[] = { "off", "on" };

static const struct rs_keydef backoff_rows[] = {
	DUR("base", RS_KEY_BACKOFF_BASE, backoff.base_ms, 1, HOUR_MS, false),
	DUR("cap", RS_KEY_BACKOFF_CAP, backoff.cap_ms, 1, HOUR_MS, false),
	NUM("multiplier", RS_KIND_NUMBER, RS_KEY_BACKOFF_MULTIPLIER,
	    backoff.multiplier, 1, 10),
	NAMES("jitter", RS_KIND_NAME, RS_KEY_BACKOFF_JITTER, backoff.jitter,
	    jitters, "equal, full, decorrelated or none"),
};
static const struct rs_keytab backoff_keys = TABLE(backoff_rows);

static const struct rs_keydef budget_rows[] = {
	NUM("ratio", RS_KIND_NUMBER, RS_KEY_RETRY_BUDGET_RATIO, budget.ratio,
	    0, 1000),
	NUM("min_per_second", RS_KIND_UINT, RS_KEY_RETRY_BUDGET_MIN,
	    budget.min_per_second, 0, 1000000),
	DUR("window", RS_KEY_RETRY_BUDGET_WINDOW, budget.window_ms, 1000,
	    HOUR_MS, false),
	NAMES("scope", RS_KIND_NAME, RS_KEY_RETRY_BUDGET_SCOPE, budget.scope,
	    scopes, "machine or process"),
};
static const struct rs_keytab budget_keys = TABLE(budget_rows);

/* SPEC 13: how `auto` timeouts are computed. */
static const struct rs_keydef auto_rows[] = {
	NUM("multiplier", RS_KIND_NUMBER, RS_KEY_AUTO_MULTIPLIER,
	    auto_timeout.multiplier, 1, 100),
	NUM("quantile", RS_KIND_NUMBER, RS_KEY_AUTO_QUANTILE,
	    auto_timeout.quantile, 0.5, 0.9999),
	DUR("min", RS_KEY_AUTO_MIN, auto_timeout.min_ms, 1, DAY_MS, false),
	DUR("max", RS_KEY_AUTO_MAX, auto_timeout.max_ms, 1, DAY_MS, false),
	NUM("samples", RS_KIND_UINT, RS_KEY_AUTO_SAMPLES, auto_timeout.samples,
	    1, 1000000000),
	DUR("half_life", RS_KEY_AUTO_HALF_LIFE, auto_timeout.half_life_ms,
	    1000, 7 * DAY_MS, false),
};
static const struct rs_keytab auto_keys = TABLE(auto_rows);

static const char *const key_modes[] = { "off", "inject" };
static const char *const alpn_modes[] = { "http/1.1", "keep" };

/* SPEC 9; the values land in struct rs_http_settings (http_settings.h). */
static const struct rs_keydef http_rows[] = {
	{ ROW("retry_on_status", RS_KIND_STATUSES, RS_KEY_HTTP_STATUS,
	    OFF(http.retry_on_status), RS_HTTP_STATUS_MIN,
	    RS_HTTP_STATUS_MAX) },
	NUM("attempts", RS_KIND_UINT, RS_KEY_HTTP_ATTEMPTS, http.attempts, 1,
	    10),
	DUR("retry_after_cap", RS_KEY_HTTP_RETRY_AFTER_CAP,
	    http.retry_after_cap_ms, 1, DAY_MS, true),
	NUM("max_replay", RS_KIND_UINT, RS_KEY_HTTP_MAX_REPLAY, http.max_replay,
	    0, RS_HTTP_MAX_REPLAY),
	NAMES("idempotency_key", RS_KIND_NAME, RS_KEY_HTTP_IDEMPOTENCY_KEY,
	    http.idempotency_key, key_modes, "off or inject"),
	NAMES("alpn", RS_KIND_NAME, RS_KEY_HTTP_ALPN, http.alpn, alpn_modes,
	    "http/1.1 or keep"),
};
static const struct rs_keytab http_keys = TABLE(http_rows);

/* SPEC 12; the values land in struct rs_breaker_settings. */
static const struct rs_keydef breaker_rows[] = {
	NUM("failures", RS_KIND_UINT, RS_KEY_BREAKER_FAILURES,
	    breaker.failures, 1, RS_BREAKER_FAILURES_MAX),
	DUR("open_for", RS_KEY_BREAKER_OPEN_FOR, breaker.open_for_ms,
	    RS_BREAKER_OPEN_MIN_MS, DAY_MS, false),
	DUR("max_open_for", RS_KEY_BREAKER_MAX_OPEN_FOR,
	    breaker.max_open_for_ms, RS_BREAKER_OPEN_MIN_MS, DAY_MS, false),
	NUM("probes", RS_KIND_UINT, RS_KEY_BREAKER_PROBES, breaker.probes, 1,
	    RS_BREAKER_PROBES_MAX),
	{ ROW("on_status", RS_KIND_STATUSES, RS_KEY_BREAKER_ON_STATUS,
	    OFF(breaker.on_status), RS_HTTP_STATUS_MIN, RS_HTTP_STATUS_MAX) },
	NAMES("scope", RS_KIND_NAME, RS_KEY_BREAKER_SCOPE, breaker.scope,
	    scopes, "machine or process"),
};
static const struct rs_keytab breaker_keys = TABLE(breaker_rows);

static const struct rs_keydef settings_rows[] = {
	{ ROW("match", RS_KIND_MATCH, 0, 0, 0, 0), .host_only = true },
	{ ROW("connect_timeout", RS_KIND_DURATION, RS_KEY_CONNECT_TIMEOUT,
	    OFF(connect_timeout_ms), 1, DAY_MS), .off_ok = true,
	  .auto_bit = RS_AUTO_CONNECT },
	{ ROW("read_timeout", RS_KIND_DURATION, RS_KEY_READ_TIMEOUT,
	    OFF(read_timeout_ms), 1, DAY_MS), .off_ok = true,
	  .auto_bit = RS_AUTO_READ },
	{ ROW("write_timeout", RS_KIND_DURATION, RS_KEY_WRITE_TIMEOUT,
	    OFF(write_timeout_ms), 1, DAY_MS), .off_ok = true,
	  .auto_bit = RS_AUTO_WRITE },
	NUM("attempts", RS_KIND_UINT, RS_KEY_ATTEMPTS, attempts, 1, 10),
	NAMES("retry_on", RS_KIND_CLASSES, RS_KEY_RETRY_ON, retry_on, classes,
	    "refused, timeout, unreachable, reset or dns"),
	{ ROW("backoff", RS_KIND_MAP, 0, 0, 0, 0), .sub = &backoff_keys },
	DUR("connect_budget", RS_KEY_CONNECT_BUDGET, connect_budget_ms, 1,
	    DAY_MS, true),
	{ ROW("retry_budget", RS_KIND_MAP, 0, 0, 0, 0), .sub = &budget_keys },
	{ ROW("passthrough", RS_KIND_BOOL, RS_KEY_PASSTHROUGH,
	    OFF(passthrough), 0, 0), .host_only = true },
	{ ROW("http", RS_KIND_MAP, RS_KEY_HTTP, OFF(http.enabled), 0, 0),
	  .sub = &http_keys, .off_ok = true },
	NAMES("failover", RS_KIND_NAME, RS_KEY_FAILOVER, failover, switches,
	    "on or off"),
	{ ROW("deadline_header", RS_KIND_HEADER, RS_KEY_DEADLINE_HEADER,
	    OFF(deadline_header), 0, 0) },
	{ ROW("breaker", RS_KIND_MAP, RS_KEY_BREAKER, OFF(breaker.enabled), 0,
	    0), .sub = &breaker_keys, .off_ok = true },
	{ ROW("auto_timeout", RS_KIND_MAP, 0, 0, 0, 0), .sub = &auto_keys },
};
const struct rs_keytab rs_settings_keys = TABLE(settings_rows);

const struct rs_keydef *rs_key_find(const struct rs_keytab *t,
    const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->keys[i].name, name))
			return &t->keys[i];
	return NULL;
}
