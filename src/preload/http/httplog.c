/* SPDX-License-Identifier: MIT */
/*
 * httplog.c - the log lines of the HTTP/1.x status retry engine
 * (httplog.h).
 */
#include "httplog.h"

#include <stdio.h>
#include <string.h>

#include "dest.h"
#include "log.h"

/* Formats "host:port" (or the address) for log lines, into dest. */
static void describe(const struct rs_fd *e, struct rs_dest *d, char *dest,
    size_t dlen)
{
	const char *port;

	rs_dest_format(e, d);
	port = strrchr(d->addr, ':');
	if (e->host[0] != '\0' && port != NULL)
		snprintf(dest, dlen, "%s%s", e->host, port);
	else
		snprintf(dest, dlen, "%s", d->addr);
}

/* Copies s for a JSON string: quotes, backslashes and controls become '?'. */
static void json_safe(char *out, size_t cap, const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i + 1 < cap; i++)
		out[i] = (s[i] == '"' || s[i] == '\\' ||
		    (unsigned char)s[i] < 0x20) ? '?' : s[i];
	out[i] = '\0';
}

void rs_hconn_log(const struct rs_fd *e, const struct rs_hconn *h,
    enum rs_log_level level, int64_t wait_ms, const char *outcome)
{
	const struct rs_http_response *res = &h->m.t.res;
	const char *method = rs_http_method_name(h->m.t.req.method);
	char dest[RS_HOST_MAX + 16], target[RS_HTTP_TARGET_MAX], extra[512];
	char after[RS_HTTP_VALUE_MAX];
	struct rs_dest d;
	struct rs_log_fields f;

	if (!rs_log_enabled(level))
		return;
	describe(e, &d, dest, sizeof(dest));
	f = rs_dest_log_fields(e, &d, wait_ms >= 0 ? "http_retry" :
	    "http_give_up");
	f.attempt = (int)h->m.attempt;
	f.attempts = (int)h->m.s->attempts;
	f.wait_ms = wait_ms;
	f.json_extra = extra;
	json_safe(target, sizeof(target), h->m.t.req.target);
	json_safe(after, sizeof(after), res->retry_after);
	snprintf(extra, sizeof(extra), "\"status\":%u,\"method\":\"%s\","
	    "\"target\":\"%s\",\"retry_after\":%s%s%s", res->status, method,
	    target, res->has_retry_after ? "\"" : "null",
	    res->has_retry_after ? after : "",
	    res->has_retry_after ? "\"" : "");
	rs_log(level, &f, "http %u from %s %s %s attempt %u/%u; %s",
	    res->status, dest, method, h->m.t.req.target, h->m.attempt,
	    h->m.s->attempts, outcome);
}
