/* SPDX-License-Identifier: MIT */
/*
 * http_retry.c - the phases of one client connection under status retries
 * (SPEC 9): which bytes are requests, when a response is judged, retried,
 * drained or shown.  Pure and not thread-safe; see http_retry.h.
 */
#include "http_retry.h"

#include <string.h>

#include "policy.h"

void rs_hr_init(struct rs_hr *r, const struct rs_http_settings *s,
    const char *watch)
{
	const struct rs_http_config cfg = {
		.keep = true,
		.max_replay = s->max_replay,
		.watch = watch,
	};

	memset(r, 0, sizeof(*r));
	rs_http_init(&r->t, &cfg);
	r->s = s;
	r->phase = RS_HR_IDLE;
}

void rs_hr_free(struct rs_hr *r)
{
	rs_http_free(&r->t);
}

void rs_hr_pass(struct rs_hr *r, enum rs_http_why why)
{
	rs_http_pass(&r->t, why);
	r->phase = RS_HR_PASS;
}

/* A request event happened: a complete request starts its exchange. */
static void request_event(struct rs_hr *r, enum rs_http_event ev)
{
	if (ev == RS_HTTP_EV_PASS) {
		r->phase = RS_HR_PASS;
		return;
	}
	if ((ev == RS_HTTP_EV_HEAD || ev == RS_HTTP_EV_END) && r->t.req.done) {
		r->released = false;
		r->phase = RS_HR_AWAIT;
		r->attempt = 1;
		r->delivered = false;
		r->judged = 0;
		r->gave_up = false;
	}
}

bool rs_hr_holding(const struct rs_hr *r)
{
	const struct rs_http_request *q = &r->t.req;

	return r->s->idempotency_key == RS_HTTP_KEY_INJECT &&
	    r->phase == RS_HR_IDLE && !r->t.pass && !r->released &&
	    (!q->head_done || q->done);
}

size_t rs_hr_held(const struct rs_hr *r)
{
	if (!rs_hr_holding(r) || r->t.req.head_done || !r->t.kept)
		return 0;
	return r->t.kept_len;
}

bool rs_hr_release(struct rs_hr *r)
{
	if (rs_hr_held(r) == 0)
		return false;
	r->released = true;
	return true;
}

/* Whether n bytes at p can begin "word" (or begin with it). */
static bool may_begin(const char *p, size_t n, const char *word)
{
	size_t w = strlen(word);

	return memcmp(p, word, n < w ? n : w) == 0;
}

/*
 * Whether the head held so far may still need a key: its method may be
 * POST or PATCH (HTTP methods are case-sensitive).  Any other is known
 * from its first bytes, and its head is not held a moment longer.
 */
static bool may_need_key(const struct rs_hr *r)
{
	const char *k = r->t.kept;
	size_t n = r->t.kept_len;

	return k == NULL || may_begin(k, n, "POST ") ||
	    may_begin(k, n, "PATCH ");
}

/* The head is complete: a POST or PATCH without a key gets one. */
static void inject(struct rs_hr *r, const uint8_t random16[16])
{
	char uuid[37];

	r->inject = false;
	if (r->t.req.idempotency_key || (r->t.req.method != HTTP_POST &&
	    r->t.req.method != HTTP_PATCH))
		return;
	rs_http_uuid4(random16, uuid);
	if (rs_http_head_put(&r->t, "Idempotency-Key", uuid, false) == 0) {
		r->t.req.idempotency_key = true;
		r->inject = true;
	}
}

size_t rs_hr_hold(struct rs_hr *r, const char *p, size_t n,
    const uint8_t random16[16], bool *flush)
{
	enum rs_http_event ev;
	size_t off = 0, k;

	*flush = false;
	while (off < n) {
		k = rs_http_feed(&r->t, RS_HTTP_REQ, p + off, n - off, &ev);
		if (ev == RS_HTTP_EV_PASS) {
			/* Those bytes were not kept: the caller sends them. */
			r->phase = RS_HR_PASS;
			*flush = true;
			return off;
		}
		off += k;
		if (ev == RS_HTTP_EV_HEAD) {
			inject(r, random16);
			*flush = true;
			request_event(r, ev);
			return off;
		}
	}
	/* A head that will not be edited goes now, as it is. */
	if (!may_need_key(r)) {
		r->released = true;
		*flush = true;
	}
	return off;
}

void rs_hr_sent(struct rs_hr *r, const char *p, size_t n)
{
	enum rs_http_event ev;
	size_t off = 0;

	while (off < n && r->phase != RS_HR_PASS) {
		off += rs_http_feed(&r->t, RS_HTTP_REQ, p + off, n - off, &ev);
		request_event(r, ev);
	}
}

/* Whether a response with this status may be retried at all. */
static bool candidate(const struct rs_hr *r)
{
	return !r->delivered && r->attempt < r->s->attempts &&
	    rs_http_settings_retries(r->s, r->t.res.status) &&
	    rs_http_replayable(&r->t);
}

static enum rs_hr_verdict show(struct rs_hr *r, bool gave_up)
{
	r->phase = RS_HR_DELIVER;
	r->gave_up = gave_up;
	return RS_HR_SHOW;
}

/* The head of a retryable response is complete: Retry-After decides. */
static enum rs_hr_verdict head(struct rs_hr *r, int64_t now_epoch_ms)
{
	const struct rs_http_response *s = &r->t.res;
	uint32_t ms;

	r->wait_ms = RS_HR_BACKOFF;
	if (s->has_retry_after &&
	    rs_http_retry_after_ms(s->retry_after, now_epoch_ms, &ms) == 0) {
		if (r->s->retry_after_cap_ms != RS_OFF &&
		    ms > r->s->retry_after_cap_ms)
			return show(r, true);
		r->wait_ms = ms;
	}
	/* Connection: close from either side ends the connection. */
	r->reconnect = !s->keep_alive || s->until_close ||
	    !r->t.req.keep_alive;
	return RS_HR_RETRY;
}

enum rs_hr_verdict rs_hr_judge(struct rs_hr *r, const char *p, size_t n,
    bool full, bool eof, int64_t now_epoch_ms)
{
	enum rs_http_event ev;

	if (r->phase != RS_HR_AWAIT)
		return r->phase == RS_HR_PASS ? RS_HR_SHOW : RS_HR_MORE;
	while (r->judged < n) {
		r->judged += rs_http_feed(&r->t, RS_HTTP_RES, p + r->judged,
		    n - r->judged, &ev);
		if (ev == RS_HTTP_EV_PASS) {
			r->phase = RS_HR_PASS;
			return RS_HR_SHOW;
		}
		/* Out of attempts, a retryable status is a give-up. */
		if (ev == RS_HTTP_EV_STATUS && !candidate(r))
			return show(r, !r->delivered &&
			    rs_http_settings_retries(r->s, r->t.res.status) &&
			    rs_http_replayable(&r->t));
		if (ev == RS_HTTP_EV_HEAD)
			return head(r, now_epoch_ms);
	}
	if (full || eof)
		return show(r, r->t.res.status != 0);
	return RS_HR_MORE;
}

void rs_hr_give_up(struct rs_hr *r)
{
	show(r, true);
}

void rs_hr_retry(struct rs_hr *r)
{
	if (r->phase == RS_HR_AWAIT && !r->delivered)
		r->phase = RS_HR_DRAIN;
}

/* The retried response is behind us; `rest` bytes came after it. */
static enum rs_hr_verdict drained(struct rs_hr *r, size_t rest, bool cut)
{
	r->phase = RS_HR_WAIT;
	if (rest > 0 || cut)
		r->reconnect = true;
	return RS_HR_DONE;
}

enum rs_hr_verdict rs_hr_drain(struct rs_hr *r, const char *p, size_t n,
    size_t *rest)
{
	enum rs_http_event ev;
	size_t off;

	*rest = 0;
	if (r->phase != RS_HR_DRAIN)
		return RS_HR_DONE;
	if (n == 0) {
		rs_http_eof(&r->t, RS_HTTP_RES);
		return drained(r, 0, true);
	}
	off = n < r->judged ? n : r->judged;
	r->judged -= off;
	while (!r->t.res.done && off < n) {
		off += rs_http_feed(&r->t, RS_HTTP_RES, p + off, n - off, &ev);
		if (ev == RS_HTTP_EV_PASS)
			return drained(r, 0, true);
	}
	if (!r->t.res.done || r->judged > 0)
		return RS_HR_MORE;
	*rest = n - off;
	return drained(r, *rest, false);
}

const char *rs_hr_resend(struct rs_hr *r, size_t *len)
{
	*len = 0;
	if (r->phase != RS_HR_WAIT || r->delivered ||
	    rs_http_rewind(&r->t) != 0) {
		rs_hr_pass(r, RS_HTTP_WHY_EARLY);
		return NULL;
	}
	r->phase = RS_HR_AWAIT;
	r->attempt++;
	r->judged = 0;
	r->reconnect = false;
	r->gave_up = false;
	return rs_http_kept(&r->t, len);
}

void rs_hr_read(struct rs_hr *r, const char *p, size_t n)
{
	enum rs_http_event ev;
	size_t off;

	if (r->phase == RS_HR_PASS)
		return;
	if (r->phase == RS_HR_AWAIT)
		r->phase = RS_HR_DELIVER;	/* read without a judgement */
	if (r->phase == RS_HR_DELIVER)
		r->delivered = true;
	if (n == 0) {
		ev = rs_http_eof(&r->t, RS_HTTP_RES);
		r->phase = ev == RS_HTTP_EV_PASS ? RS_HR_PASS : RS_HR_IDLE;
		return;
	}
	off = n < r->judged ? n : r->judged;
	r->judged -= off;
	while (off < n && r->phase != RS_HR_PASS) {
		off += rs_http_feed(&r->t, RS_HTTP_RES, p + off, n - off, &ev);
		if (ev == RS_HTTP_EV_PASS)
			r->phase = RS_HR_PASS;
	}
	if (r->phase == RS_HR_DELIVER && r->t.res.done && r->judged == 0)
		r->phase = RS_HR_IDLE;
}

bool rs_hr_lost(struct rs_hr *r)
{
	if (r->phase != RS_HR_AWAIT || r->attempt < 2 || r->judged > 0 ||
	    r->delivered || r->t.res.status != 0)
		return false;
	r->attempt--;
	r->reconnect = true;
	r->phase = RS_HR_WAIT;
	return true;
}
