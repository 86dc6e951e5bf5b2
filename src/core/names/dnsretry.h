/* SPDX-License-Identifier: MIT */
/*
 * dnsretry.h - retries of transient name-resolution failures (SPEC 5d).
 *
 * A lookup that fails with EAI_AGAIN or TRY_AGAIN is tried again after the
 * backoff of the rule of its name (and port, when the service is numeric),
 * up to `attempts` lookups in all, within connect_budget and the process
 * deadline, each retry taken from the rule's retry budget.  This module
 * decides and logs; the caller makes the lookups and sleeps.  A struct
 * rs_dnsretry belongs to one call on one thread; the rest is thread-safe.
 * Times are monotonic milliseconds.
 */
#ifndef RS_DNSRETRY_H
#define RS_DNSRETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "policy.h"

/* The retries of one lookup. */
struct rs_dnsretry {
	const struct rs_policy *policy;
	const struct rs_settings *settings;
	const struct rs_rule *rule;	/* NULL: the defaults */
	unsigned lookups;		/* made so far, the first included */
	uint32_t prev_wait_ms;		/* for decorrelated jitter */
	int64_t deadline_ms;		/* connect_budget, process deadline */
	char name[RS_HOST_MAX];
	char service[16];		/* the numeric port, or "" */
};

/* Whether getaddrinfo()'s result is transient (EAI_AGAIN). */
bool rs_dnsretry_gai_transient(int gai_error);

/* Whether a gethostbyname*() h_errno is transient (TRY_AGAIN). */
bool rs_dnsretry_h_transient(int h_error);

/*
 * Prepares the retries of a lookup of name (service may be NULL) that has
 * just failed transiently for the first time, at now_ms.  Returns false
 * when none apply: no policy, no name, a passthrough rule, or `dns` not
 * in the rule's retry_on.
 */
bool rs_dnsretry_begin(struct rs_dnsretry *d, const struct rs_policy *p,
    const char *name, const char *service, int64_t now_ms,
    int64_t process_deadline_ms);

/*
 * After lookup d->lookups failed transiently with the description `error`:
 * returns the milliseconds to wait before the next lookup (counted as a
 * retry and a dns_retry), or -1 when there is none -- attempts used up, no
 * time left, or the retry budget spent -- each logged as for a connect.
 * The caller then makes the lookup and calls rs_dnsretry_lookup_made().
 */
int64_t rs_dnsretry_next(struct rs_dnsretry *d, const char *error,
    int64_t now_ms);

/* Records that one more lookup was made; on success, logs it at info. */
void rs_dnsretry_lookup_made(struct rs_dnsretry *d, bool ok);

#endif /* RS_DNSRETRY_H */
