/* SPDX-License-Identifier: MIT */
/*
 * breaker_settings.c - the `breaker:` settings' built-in values and the
 * on_status set.  Pure; see breaker_settings.h.
 */
#include "breaker_settings.h"

#include <string.h>

#include "http_settings.h"

void rs_breaker_settings_init(struct rs_breaker_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->failures = 5;
	s->open_for_ms = 10000;
	s->max_open_for_ms = 300000;
	s->probes = 1;
}

bool rs_breaker_settings_fails(const struct rs_breaker_settings *s,
    unsigned status)
{
	if (status < RS_HTTP_STATUS_MIN || status > RS_HTTP_STATUS_MAX)
		return false;
	return (s->on_status[status / 64] >> (status % 64)) & 1;
}

bool rs_breaker_settings_has_status(const struct rs_breaker_settings *s)
{
	for (size_t i = 0; i < sizeof(s->on_status) / sizeof(s->on_status[0]);
	    i++)
		if (s->on_status[i])
			return true;
	return false;
}
