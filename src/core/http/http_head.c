/* SPDX-License-Identifier: MIT */
/*
 * http_head.c - what the tracker does with a complete head: look a header
 * up, add or replace one in the kept request, read Retry-After, make an
 * Idempotency-Key.
 *
 * Pure and not thread-safe (one connection, one caller at a time), like
 * the rest of http.h.  A kept head was accepted by llhttp in strict mode,
 * so its lines end in CRLF and its header lines are "name: value".
 */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Head edits may add this much above the keep limit. */
#define RS_HTTP_EDIT_SLACK 512

/* One header line of a kept head: [name, colon) and [value, value_end). */
struct line {
	size_t start, colon, value, value_end, end;	/* end: after LF */
};

/* Finds the header `name` in head[0..len); returns whether it is there. */
static bool find(const char *head, size_t len, const char *name,
    struct line *l)
{
	size_t nlen = strlen(name), pos, next;
	const char *lf = memchr(head, '\n', len);

	/* Header lines start after the request line and end at the blank one. */
	for (pos = lf ? (size_t)(lf - head) + 1 : len; pos < len; pos = next) {
		lf = memchr(head + pos, '\n', len - pos);
		if (lf == NULL || head[pos] == '\r' || head[pos] == '\n')
			return false;
		next = (size_t)(lf - head) + 1;
		l->start = pos;
		l->end = next;
		l->value_end = l->end - 1;
		if (l->value_end > pos && head[l->value_end - 1] == '\r')
			l->value_end--;
		if (l->end - pos <= nlen || head[pos + nlen] != ':' ||
		    strncasecmp(head + pos, name, nlen) != 0)
			continue;
		l->colon = pos + nlen;
		l->value = l->colon + 1;
		while (l->value < l->value_end && (head[l->value] == ' ' ||
		    head[l->value] == '\t'))
			l->value++;
		while (l->value_end > l->value && (head[l->value_end - 1] ==
		    ' ' || head[l->value_end - 1] == '\t'))
			l->value_end--;
		return true;
	}
	return false;
}

static bool head_kept(const struct rs_http *h)
{
	return h->cfg.keep && h->req.head_done && !h->pass &&
	    h->kept_len >= h->req.head_len && h->req.head_len >= 4;
}

int rs_http_head_get(const struct rs_http *h, const char *name, char *buf,
    size_t cap)
{
	struct line l;
	size_t n;

	if (!head_kept(h))
		return -EAGAIN;
	if (!find(h->kept, h->req.head_len, name, &l))
		return -ENOENT;
	n = l.value_end - l.value;
	if (cap > 0) {
		size_t c = n < cap - 1 ? n : cap - 1;
		memcpy(buf, h->kept + l.value, c);
		buf[c] = '\0';
	}
	return (int)n;
}

static bool clean(const char *s)
{
	return strpbrk(s, "\r\n") == NULL;
}

/* Replaces kept[at, at + old) with `with` (wlen bytes). */
static int splice(struct rs_http *h, size_t at, size_t old, const char *with,
    size_t wlen)
{
	int rc = 0;

	if (wlen > old)
		rc = rs_http_reserve(h, wlen - old, RS_HTTP_EDIT_SLACK);
	if (rc != 0) {
		rs_http_pass(h, rc == -E2BIG ? RS_HTTP_WHY_OVERSIZE :
		    RS_HTTP_WHY_MEMORY);
		return rc;
	}
	memmove(h->kept + at + wlen, h->kept + at + old,
	    h->kept_len - at - old);
	memcpy(h->kept + at, with, wlen);
	h->kept_len = h->kept_len - old + wlen;
	h->req.head_len = h->req.head_len - old + wlen;
	h->kept_delta += (long)wlen - (long)old;
	return 0;
}

int rs_http_head_put(struct rs_http *h, const char *name, const char *value,
    bool replace)
{
	char line[2 * RS_HTTP_VALUE_MAX + 8];
	struct line l;
	int n;

	if (!head_kept(h))
		return -EAGAIN;
	if (!clean(name) || !clean(value) || *name == '\0' ||
	    strchr(name, ':') != NULL)
		return -EINVAL;
	if (find(h->kept, h->req.head_len, name, &l)) {
		if (!replace)
			return 0;
		return splice(h, l.value, l.value_end - l.value, value,
		    strlen(value));
	}
	n = snprintf(line, sizeof(line), "%s: %s\r\n", name, value);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EINVAL;
	/* The new line goes just before the blank line that ends the head. */
	return splice(h, h->req.head_len - 2, 0, line, (size_t)n);
}

static int month(const char *m)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	const char *p;

	if (strlen(m) != 3)
		return -1;
	for (p = names; *p != '\0'; p += 3)
		if (strncmp(p, m, 3) == 0)
			return (int)(p - names) / 3;
	return -1;
}

/*
 * Parses the three HTTP-date forms (RFC 9110 5.6.7) into epoch seconds.
 * Returns 0 or -EINVAL.
 */
static int http_date(const char *s, int64_t *epoch_s)
{
	char wd[16], mon[4];
	struct tm tm = { 0 };
	int end = -1, year = 0;

	if (sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", wd,
	    &tm.tm_mday, mon, &year, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
	    &end) == 7 && end > 0 && s[end] == '\0') {
	} else if (sscanf(s, "%9[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d GMT%n",
	    wd, &tm.tm_mday, mon, &year, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
	    &end) == 7 && end > 0 && s[end] == '\0') {
		year += year < 70 ? 2000 : 1900;
	} else if (sscanf(s, "%3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", wd,
	    mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &year,
	    &end) == 7 && end > 0 && s[end] == '\0') {
	} else {
		return -EINVAL;
	}
	tm.tm_mon = month(mon);
	if (tm.tm_mon < 0 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 ||
	    year < 1970 || year > 9999)
		return -EINVAL;
	tm.tm_year = year - 1900;
	*epoch_s = (int64_t)timegm(&tm);
	return 0;
}

static uint32_t clamp_ms(uint64_t ms)
{
	return ms >= UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)ms;
}

int rs_http_retry_after_ms(const char *value, int64_t now_epoch_ms,
    uint32_t *wait_ms)
{
	uint64_t secs = 0;
	int64_t when_s, ms;
	const char *p;

	if (*value >= '0' && *value <= '9') {
		for (p = value; *p >= '0' && *p <= '9'; p++)
			secs = secs > UINT32_MAX ? secs : secs * 10 +
			    (uint64_t)(*p - '0');
		if (*p != '\0')
			return -EINVAL;
		*wait_ms = clamp_ms(secs * 1000);
		return 0;
	}
	if (http_date(value, &when_s) != 0)
		return -EINVAL;
	ms = when_s * 1000 - now_epoch_ms;
	*wait_ms = ms <= 0 ? 0 : clamp_ms((uint64_t)ms);
	return 0;
}

void rs_http_uuid4(const uint8_t random16[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[16];
	size_t i, o = 0;

	memcpy(b, random16, sizeof(b));
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);	/* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);	/* variant RFC 4122 */
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 0x0f];
	}
	out[o] = '\0';
}
