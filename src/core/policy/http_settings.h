/* SPDX-License-Identifier: MIT */
/*
 * http_settings.h - the `http:` settings of a rule (SPEC 9), and their
 * built-in values.
 *
 * Pure data, part of struct rs_settings (policy.h); read-only once a policy
 * is built, so any thread may read it.  Durations are in milliseconds.
 */
#ifndef RS_HTTP_SETTINGS_H
#define RS_HTTP_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

/* Status codes that retry_on_status may list. */
#define RS_HTTP_STATUS_MIN 100
#define RS_HTTP_STATUS_MAX 599

/* idempotency_key: off | inject (the index is the policy's name). */
enum rs_http_key_mode { RS_HTTP_KEY_OFF, RS_HTTP_KEY_INJECT };

/*
 * alpn: http/1.1 | keep (the index is the policy's name): over TLS, an
 * offer of h2 and http/1.1 becomes http/1.1 alone, or is left alone.
 */
enum rs_http_alpn { RS_HTTP_ALPN_H1, RS_HTTP_ALPN_KEEP };

/* The largest max_replay a policy may set. */
#define RS_HTTP_MAX_REPLAY (16u << 20)

struct rs_http_settings {
	bool enabled;			/* `http:` given and not `off` */
	uint64_t retry_on_status[10];	/* bit s % 64 of word s / 64 */
	unsigned attempts;		/* 1 .. 10, the first included */
	uint32_t retry_after_cap_ms;	/* RS_OFF: no cap */
	uint32_t max_replay;		/* bytes of one request, 0 .. 16 MiB */
	uint32_t idempotency_key;	/* enum rs_http_key_mode */
	uint32_t alpn;			/* enum rs_http_alpn */
};

/* Fills *s with the built-in values (off; [429, 503], 3, 30s, 64 KiB). */
void rs_http_settings_init(struct rs_http_settings *s);

/* Adds status to retry_on_status; returns 0 or -ERANGE (not 100..599). */
int rs_http_settings_add_status(struct rs_http_settings *s, unsigned status);

/* Returns whether status is listed in retry_on_status. */
bool rs_http_settings_retries(const struct rs_http_settings *s,
    unsigned status);

#endif /* RS_HTTP_SETTINGS_H */
