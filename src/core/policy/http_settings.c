/* SPDX-License-Identifier: MIT */
/*
 * http_settings.c - the `http:` settings' built-in values and the status
 * set.  Pure; see http_settings.h.
 */
#include "http_settings.h"

#include <errno.h>
#include <string.h>

void rs_http_settings_init(struct rs_http_settings *s)
{
	memset(s, 0, sizeof(*s));
	rs_http_settings_add_status(s, 429);
	rs_http_settings_add_status(s, 503);
	s->attempts = 3;
	s->retry_after_cap_ms = 30000;
	s->max_replay = 65536;
}

int rs_http_settings_add_status(struct rs_http_settings *s, unsigned status)
{
	if (status < RS_HTTP_STATUS_MIN || status > RS_HTTP_STATUS_MAX)
		return -ERANGE;
	s->retry_on_status[status / 64] |= UINT64_C(1) << (status % 64);
	return 0;
}

bool rs_http_settings_retries(const struct rs_http_settings *s,
    unsigned status)
{
	if (status < RS_HTTP_STATUS_MIN || status > RS_HTTP_STATUS_MAX)
		return false;
	return (s->retry_on_status[status / 64] >> (status % 64)) & 1;
}
