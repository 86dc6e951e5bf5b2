/* SPDX-License-Identifier: MIT */
/*
 * explain_http.c - the `http:` part of `resolute explain` (SPEC 9): the
 * rule's HTTP retry settings, each marked with where it comes from, and
 * what the library cannot see.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "duration.h"

static void line(const struct rs_rule *r, unsigned key, const char *name,
    const char *value)
{
	printf("  %-28s%-12s%s\n", name, value,
	    r && (r->set & key) ? "(rule)" : "(defaults)");
}

/* Formats retry_on_status as "429, 503" ("none" when empty). */
static void statuses(const struct rs_http_settings *h, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned c = RS_HTTP_STATUS_MIN; c <= RS_HTTP_STATUS_MAX; c++) {
		if (!rs_http_settings_retries(h, c))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%u",
		    used ? ", " : "", c);
		if (used >= len)
			return;
	}
	if (!used)
		snprintf(buf, len, "none");
}

void rs_cli_explain_http(const struct rs_rule *r, const struct rs_settings *s)
{
	const struct rs_http_settings *h = &s->http;
	char buf[160];

	printf("\nhttp:\n");
	if (!h->enabled) {
		line(r, RS_KEY_HTTP, "http", "off");
		return;
	}
	statuses(h, buf, sizeof(buf));
	line(r, RS_KEY_HTTP_STATUS, "http.retry_on_status", buf);
	snprintf(buf, sizeof(buf), "%u", h->attempts);
	line(r, RS_KEY_HTTP_ATTEMPTS, "http.attempts", buf);
	line(r, RS_KEY_HTTP_RETRY_AFTER_CAP, "http.retry_after_cap",
	    rs_duration_format(h->retry_after_cap_ms, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%" PRIu32, h->max_replay);
	line(r, RS_KEY_HTTP_MAX_REPLAY, "http.max_replay", buf);
	line(r, RS_KEY_HTTP_IDEMPOTENCY_KEY, "http.idempotency_key",
	    h->idempotency_key == RS_HTTP_KEY_INJECT ? "inject" : "off");
	line(r, RS_KEY_HTTP_ALPN, "http.alpn",
	    h->alpn == RS_HTTP_ALPN_KEEP ? "keep" : "http/1.1");
	printf("  HTTP/1.0 and 1.1, in plain text and over TLS through the "
	    "system's OpenSSL or GnuTLS\n  (curl, wget, python, PHP); out of "
	    "reach, passed through: HTTP/2 (alpn: keep),\n  memory-BIO TLS "
	    "(node, asyncio), Java's JSSE, statically linked TLS (Go),\n"
	    "  BoringSSL and NSS builds (doc/tls.md)\n");
}
