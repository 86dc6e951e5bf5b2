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

/* The statuses retry_on_status lists, for rs_cli_status_list(). */
static bool retries(const void *set, unsigned status)
{
	return rs_http_settings_retries(set, status);
}

void rs_cli_explain_http(const struct rs_rule *r, const struct rs_settings *s)
{
	const struct rs_http_settings *h = &s->http;
	char buf[160];

	printf("\nhttp:\n");
	if (!h->enabled) {
		rs_cli_setting_line(r, RS_KEY_HTTP, "http", "off");
		return;
	}
	rs_cli_status_list(retries, h, buf, sizeof(buf));
	rs_cli_setting_line(r, RS_KEY_HTTP_STATUS, "http.retry_on_status", buf);
	snprintf(buf, sizeof(buf), "%u", h->attempts);
	rs_cli_setting_line(r, RS_KEY_HTTP_ATTEMPTS, "http.attempts", buf);
	rs_cli_setting_line(r, RS_KEY_HTTP_RETRY_AFTER_CAP, "http.retry_after_cap",
	    rs_duration_format(h->retry_after_cap_ms, buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "%" PRIu32, h->max_replay);
	rs_cli_setting_line(r, RS_KEY_HTTP_MAX_REPLAY, "http.max_replay", buf);
	rs_cli_setting_line(r, RS_KEY_HTTP_IDEMPOTENCY_KEY, "http.idempotency_key",
	    h->idempotency_key == RS_HTTP_KEY_INJECT ? "inject" : "off");
	rs_cli_setting_line(r, RS_KEY_HTTP_ALPN, "http.alpn",
	    h->alpn == RS_HTTP_ALPN_KEEP ? "keep" : "http/1.1");
	printf("  HTTP/1.0 and 1.1, in plain text and over TLS through the "
	    "system's OpenSSL or GnuTLS\n  (curl, wget, git, python and "
	    "asyncio, Debian's node, PHP); out of reach, passed\n  through: "
	    "HTTP/2 (alpn: keep), Java's JSSE, statically linked TLS (Go,\n"
	    "  nodesource's node), BoringSSL and NSS builds (doc/tls.md)\n");
}
