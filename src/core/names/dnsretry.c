/* SPDX-License-Identifier: MIT */
/*
 * dnsretry.c - when to look a name up again after a transient failure.
 *
 * The rule is matched by name alone (address rules cannot apply before
 * there is an address) and by the port when the service is a number, as
 * connect() would match it later.  The wait and every limit are those of a
 * connect retry, so one schedule in the policy serves both.
 */
#include "dnsretry.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "budget.h"
#include "clock.h"
#include "log.h"
#include "rng.h"
#include "stats.h"

bool rs_dnsretry_gai_transient(int gai_error)
{
	return gai_error == EAI_AGAIN;
}

bool rs_dnsretry_h_transient(int h_error)
{
	return h_error == TRY_AGAIN;
}

/* Parses a numeric service ("5432"); returns the port or -1. */
static int numeric_port(const char *service)
{
	char *end;

	if (!service || !*service || strlen(service) > 5)
		return -1;
	long v = strtol(service, &end, 10);

	return *end == '\0' && v > 0 && v <= 65535 ? (int)v : -1;
}

bool rs_dnsretry_begin(struct rs_dnsretry *d, const struct rs_policy *p,
    const char *name, const char *service, int64_t now_ms,
    int64_t process_deadline_ms)
{
	struct rs_target t = { .family = AF_INET, .host = name,
		.name_only = true };
	int port = numeric_port(service);

	if (!p || !name || !*name)
		return false;
	memset(d, 0, sizeof(*d));
	if (port > 0)
		t.port = (uint16_t)port;
	d->settings = rs_policy_lookup(p, &t, &d->rule);
	if (!d->settings || !(d->settings->retry_on & RS_CLASS_DNS))
		return false;
	d->policy = p;
	d->lookups = 1;
	d->deadline_ms = process_deadline_ms;
	if (d->settings->connect_budget_ms != RS_OFF)
		d->deadline_ms = rs_clock_min(d->deadline_ms,
		    now_ms + d->settings->connect_budget_ms);
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (port > 0)
		snprintf(d->service, sizeof(d->service), ":%d", port);
	return true;
}

/* Logs the end of the retries or one retry; wait_ms < 0: no retry. */
static void log_retry(const struct rs_dnsretry *d, const char *error,
    int64_t wait_ms, const char *event, const char *tail)
{
	enum rs_log_level lv = wait_ms >= 0 || d->lookups > 1 ?
	    RS_LOG_WARN : RS_LOG_INFO;

	if (!rs_log_enabled(lv))
		return;
	struct rs_log_fields f = { .event = event, .host = d->name,
		.attempt = (int)d->lookups,
		.attempts = (int)d->settings->attempts, .error = error,
		.wait_ms = wait_ms };
	if (wait_ms >= 0)
		rs_log(lv, &f, "resolve %s%s lookup %u/%u failed: %s; "
		    "retrying in %lld ms", d->name, d->service, d->lookups,
		    d->settings->attempts, error, (long long)wait_ms);
	else
		rs_log(lv, &f, "resolve %s%s lookup %u/%u failed: %s%s",
		    d->name, d->service, d->lookups, d->settings->attempts,
		    error, tail);
}

int64_t rs_dnsretry_next(struct rs_dnsretry *d, const char *error,
    int64_t now_ms)
{
	const struct rs_settings *s = d->settings;

	if (d->lookups >= s->attempts) {
		log_retry(d, error, -1, "give_up",
		    d->lookups > 1 ? "; giving up" : "");
		return -1;
	}
	uint32_t wait = rs_backoff_wait_ms(&s->backoff, d->lookups - 1,
	    rs_rng_uniform(), d->prev_wait_ms);

	if (now_ms + wait >= d->deadline_ms) {
		log_retry(d, error, -1, "deadline",
		    "; no time left for another lookup");
		return -1;
	}
	if (!rs_budget_take_retry(d->policy, d->rule, s, now_ms)) {
		rs_stats_add(d->rule, RS_STAT_BUDGET_DENIALS);
		log_retry(d, error, -1, "budget_exhausted",
		    "; retry budget exhausted");
		return -1;
	}
	rs_stats_add(d->rule, RS_STAT_DNS_RETRIES);
	log_retry(d, error, wait, "dns_retry", "");
	d->prev_wait_ms = wait;
	return wait;
}

void rs_dnsretry_lookup_made(struct rs_dnsretry *d, bool ok)
{
	d->lookups++;
	if (ok && rs_log_enabled(RS_LOG_INFO)) {
		struct rs_log_fields f = { .event = "resolved",
			.host = d->name, .attempt = (int)d->lookups,
			.attempts = (int)d->settings->attempts,
			.wait_ms = -1 };

		rs_log(RS_LOG_INFO, &f, "resolve %s%s succeeded on lookup "
		    "%u/%u", d->name, d->service, d->lookups,
		    d->settings->attempts);
	}
}
