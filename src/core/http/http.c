/* SPDX-License-Identifier: MIT */
/*
 * http.c - the HTTP/1.x message tracker: llhttp callbacks and the feed.
 *
 * llhttp does the parsing (strict mode); this file decides what the
 * tracker understands.  Its callbacks record the facts of each head and
 * pause the parser at every boundary the caller must act on, so that
 * rs_http_feed() can say at which byte a status, a head or a message
 * ended.  Not thread-safe: one connection, one caller at a time.
 */
#include "http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The struct behind a parser, and which direction the parser reads. */
static struct rs_http *tracker(llhttp_t *p)
{
	return p->data;
}

static enum rs_http_dir dir_of(llhttp_t *p)
{
	return p->type == HTTP_REQUEST ? RS_HTTP_REQ : RS_HTTP_RES;
}

/*
 * Stops the parser with a reason: the callback's non-zero return makes
 * llhttp_execute() fail, and rs_http_feed() turns that into pass-through.
 */
static int refuse(llhttp_t *p, enum rs_http_why why)
{
	tracker(p)->why = why;
	return -1;
}

static void append(char *dst, size_t *len, size_t cap, const char *at,
    size_t n, bool lower)
{
	while (n-- > 0 && *len + 1 < cap) {
		char c = *at++;
		if (lower && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		dst[(*len)++] = c;
	}
	dst[*len] = '\0';
}

static int on_message_begin(llhttp_t *p)
{
	struct rs_http *h = tracker(p);

	/* A new request starts a new exchange: its response, its copy. */
	if (dir_of(p) == RS_HTTP_REQ) {
		memset(&h->req, 0, sizeof(h->req));
		h->kept_len = 0;
		h->req_seen = 0;
		h->kept_delta = 0;
	}
	memset(&h->res, 0, sizeof(h->res));
	h->field_len = 0;
	h->value = NULL;
	return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
	struct rs_http_request *r = &tracker(p)->req;
	size_t len = strlen(r->target);

	append(r->target, &len, sizeof(r->target), at, n, false);
	if (len + 1 == sizeof(r->target))
		memcpy(r->target + len - 3, "...", 3);
	return 0;
}

static int on_status_complete(llhttp_t *p)
{
	tracker(p)->res.status = p->status_code;
	tracker(p)->event = RS_HTTP_EV_STATUS;
	return HPE_PAUSED;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
	struct rs_http *h = tracker(p);

	append(h->field, &h->field_len, sizeof(h->field), at, n, true);
	return 0;
}

/* Where the value of the header just named goes, if it is of interest. */
static int on_header_field_complete(llhttp_t *p)
{
	struct rs_http *h = tracker(p);
	bool req = dir_of(p) == RS_HTTP_REQ;

	h->value = NULL;
	h->value_len = 0;
	if (req && strcmp(h->field, "idempotency-key") == 0) {
		h->req.idempotency_key = true;
	} else if (req && strcmp(h->field, "expect") == 0) {
		h->value = h->scratch;
		h->value_seen = &h->expect_seen;
	} else if (req && h->cfg.watch != NULL &&
	    strcasecmp(h->field, h->cfg.watch) == 0) {
		h->value = h->req.watch;
		h->value_seen = &h->req.has_watch;
	} else if (!req && strcmp(h->field, "retry-after") == 0) {
		h->value = h->res.retry_after;
		h->value_seen = &h->res.has_retry_after;
	}
	return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
	struct rs_http *h = tracker(p);

	if (h->value != NULL)
		append(h->value, &h->value_len, RS_HTTP_VALUE_MAX, at, n,
		    false);
	return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
	struct rs_http *h = tracker(p);

	if (h->value != NULL) {
		while (h->value_len > 0 && (h->value[h->value_len - 1] == ' ' ||
		    h->value[h->value_len - 1] == '\t'))
			h->value[--h->value_len] = '\0';
		h->value[h->value_len] = '\0';
		*h->value_seen = true;
		if (h->value == h->scratch &&
		    strcasecmp(h->scratch, "100-continue") == 0)
			h->req.expect_continue = true;
	}
	h->value = NULL;
	h->field_len = 0;
	return 0;
}

/* Whether the message whose head just ended has a body to follow. */
static bool has_body(const llhttp_t *p)
{
	if (p->flags & F_SKIPBODY)
		return false;
	if (p->flags & F_CHUNKED)
		return true;
	if (p->flags & F_CONTENT_LENGTH)
		return p->content_length > 0;
	return llhttp_message_needs_eof(p);
}

static int request_head(llhttp_t *p, struct rs_http *h)
{
	if (p->method == HTTP_CONNECT || p->upgrade)
		return refuse(p, RS_HTTP_WHY_UPGRADE);
	if (h->req.expect_continue)
		return refuse(p, RS_HTTP_WHY_CONTINUE);
	h->req.method = p->method;
	h->req.major = p->http_major;
	h->req.minor = p->http_minor;
	h->req.keep_alive = llhttp_should_keep_alive(p);
	h->req.head_done = true;
	h->req.done = !has_body(p);
	return 0;
}

static int response_head(llhttp_t *p, struct rs_http *h)
{
	if (p->status_code < 200 || p->upgrade)
		return refuse(p, RS_HTTP_WHY_UPGRADE);
	/* A response to HEAD has no body, whatever its Content-Length says. */
	if (h->req.method == HTTP_HEAD)
		p->flags |= F_SKIPBODY;
	h->res.keep_alive = llhttp_should_keep_alive(p);
	h->res.until_close = llhttp_message_needs_eof(p);
	h->res.head_done = true;
	h->res.done = !has_body(p);
	return 0;
}

/*
 * The head is complete: check what only the whole head can tell, then
 * pause so that the caller learns where the head ends.  A message without
 * a body is complete here too (done is set now and no EV_END follows).
 */
static int on_headers_complete(llhttp_t *p)
{
	struct rs_http *h = tracker(p);
	int rc;

	if (p->http_major != 1 || p->http_minor > 1)
		return refuse(p, RS_HTTP_WHY_VERSION);
	if (dir_of(p) == RS_HTTP_REQ) {
		rc = request_head(p, h);
		if (rc == 0 && h->req.done)
			h->requests++;
	} else {
		rc = response_head(p, h);
		if (rc == 0 && h->res.done)
			h->responses++;
	}
	if (rc != 0)
		return rc;
	h->ended_at_head[dir_of(p)] = dir_of(p) == RS_HTTP_REQ ? h->req.done :
	    h->res.done;
	h->event = RS_HTTP_EV_HEAD;
	return HPE_PAUSED;
}

static int on_message_complete(llhttp_t *p)
{
	struct rs_http *h = tracker(p);
	bool *done = dir_of(p) == RS_HTTP_REQ ? &h->req.done : &h->res.done;

	/*
	 * A body-less message was reported with its head.  llhttp calls
	 * this only when it next runs, maybe after the other direction
	 * began a new exchange (and reset `done`): the flag, not `done`,
	 * says whether this completion is one already reported.
	 */
	if (h->ended_at_head[dir_of(p)] || *done) {
		h->ended_at_head[dir_of(p)] = false;
		return 0;
	}
	*done = true;
	if (dir_of(p) == RS_HTTP_REQ)
		h->requests++;
	else
		h->responses++;
	h->event = RS_HTTP_EV_END;
	return HPE_PAUSED;
}

static const llhttp_settings_t callbacks = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_message_complete = on_message_complete,
	.on_status_complete = on_status_complete,
	.on_header_field_complete = on_header_field_complete,
	.on_header_value_complete = on_header_value_complete,
};

void rs_http_init(struct rs_http *h, const struct rs_http_config *cfg)
{
	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	llhttp_init(&h->parser[RS_HTTP_REQ], HTTP_REQUEST, &callbacks);
	llhttp_init(&h->parser[RS_HTTP_RES], HTTP_RESPONSE, &callbacks);
	h->parser[RS_HTTP_REQ].data = h;
	h->parser[RS_HTTP_RES].data = h;
}

void rs_http_free(struct rs_http *h)
{
	free(h->kept);
	h->kept = NULL;
	h->kept_len = h->kept_cap = 0;
}

void rs_http_pass(struct rs_http *h, enum rs_http_why why)
{
	if (h->pass)
		return;
	h->pass = true;
	h->why = why;
}

/*
 * Whether bytes of direction dir fit the one exchange the tracker follows
 * (a request, then its response, then the next request): a request while
 * a response is awaited is pipelining, a response without a complete
 * request is early (or a server speaking first).
 */
static enum rs_http_why out_of_turn(const struct rs_http *h,
    enum rs_http_dir dir)
{
	if (dir == RS_HTTP_REQ)
		return h->req.done && !h->res.done ? RS_HTTP_WHY_PIPELINE :
		    RS_HTTP_WHY_NONE;
	return h->req.done && !h->res.done ? RS_HTTP_WHY_NONE :
	    RS_HTTP_WHY_EARLY;
}

/* How many bytes of one request may be kept. */
static size_t keep_limit(const struct rs_http *h)
{
	return h->cfg.max_replay > 0 ? h->cfg.max_replay : RS_HTTP_HEAD_MAX;
}

/*
 * Makes room for `more` bytes in the copy.  Returns 0, -E2BIG past the
 * limit (plus `slack` bytes head edits may add) or -ENOMEM.
 */
int rs_http_reserve(struct rs_http *h, size_t more, size_t slack)
{
	size_t want = h->kept_len + more, cap;
	char *p;

	if (want > keep_limit(h) + slack)
		return -E2BIG;
	if (want <= h->kept_cap)
		return 0;
	cap = h->kept_cap > 0 ? h->kept_cap : 1024;
	while (cap < want)
		cap *= 2;
	p = realloc(h->kept, cap);
	if (p == NULL)
		return -ENOMEM;
	h->kept = p;
	h->kept_cap = cap;
	return 0;
}

/* Copies request bytes just parsed into the kept request. */
static void keep(struct rs_http *h, const char *p, size_t n, bool in_head)
{
	int rc;

	if (!h->cfg.keep || n == 0 || (!in_head && h->cfg.max_replay == 0))
		return;
	rc = rs_http_reserve(h, n, 0);
	if (rc != 0) {
		rs_http_pass(h, rc == -E2BIG ? RS_HTTP_WHY_OVERSIZE :
		    RS_HTTP_WHY_MEMORY);
		return;
	}
	memcpy(h->kept + h->kept_len, p, n);
	h->kept_len += n;
}

/* Runs llhttp over the bytes; returns how many it took before pausing. */
static size_t execute(struct rs_http *h, enum rs_http_dir dir, const char *p,
    size_t len)
{
	llhttp_t *ps = &h->parser[dir];
	enum llhttp_errno e = llhttp_execute(ps, p, len);

	if (e == HPE_OK)
		return len;
	if (e == HPE_PAUSED) {
		llhttp_resume(ps);
		return (size_t)(llhttp_get_error_pos(ps) - p);
	}
	rs_http_pass(h, h->why != RS_HTTP_WHY_NONE ? h->why :
	    e == HPE_INVALID_VERSION || e == HPE_PAUSED_H2_UPGRADE ?
	    RS_HTTP_WHY_VERSION : RS_HTTP_WHY_MALFORMED);
	return len;
}

size_t rs_http_feed(struct rs_http *h, enum rs_http_dir dir, const char *p,
    size_t len, enum rs_http_event *ev)
{
	enum rs_http_why why;
	bool in_head;
	size_t n;

	*ev = RS_HTTP_EV_NONE;
	if (len == 0 && !h->pass)
		return 0;
	why = h->pass ? RS_HTTP_WHY_NONE : out_of_turn(h, dir);
	if (why != RS_HTTP_WHY_NONE)
		rs_http_pass(h, why);
	if (h->pass) {
		*ev = RS_HTTP_EV_PASS;
		return len;
	}
	/* A request that is done starts over at its next byte. */
	in_head = dir == RS_HTTP_REQ && (!h->req.head_done || h->req.done);
	h->event = RS_HTTP_EV_NONE;
	n = execute(h, dir, p, len);
	if (h->pass && dir == RS_HTTP_RES)
		h->pass_res = true;
	if (dir == RS_HTTP_REQ && !h->pass) {
		keep(h, p, n, in_head);
		h->req_seen += n;
		if (h->event == RS_HTTP_EV_HEAD)
			h->req.head_len = h->req_seen + (size_t)h->kept_delta;
	}
	*ev = h->pass ? RS_HTTP_EV_PASS : h->event;
	return n;
}

enum rs_http_event rs_http_eof(struct rs_http *h, enum rs_http_dir dir)
{
	llhttp_t *ps = &h->parser[dir];
	bool *done = dir == RS_HTTP_REQ ? &h->req.done : &h->res.done;
	enum llhttp_errno e;

	if (h->pass)
		return RS_HTTP_EV_PASS;
	if (*done || ps->finish == HTTP_FINISH_SAFE)
		return RS_HTTP_EV_NONE;
	h->event = RS_HTTP_EV_NONE;
	e = llhttp_finish(ps);
	if ((e == HPE_OK || e == HPE_PAUSED) && *done)
		return RS_HTTP_EV_END;
	rs_http_pass(h, RS_HTTP_WHY_MALFORMED);
	h->pass_res = dir == RS_HTTP_RES;
	return RS_HTTP_EV_PASS;
}

/* Whether the request was fed whole and kept whole. */
static bool kept_whole(const struct rs_http *h)
{
	return h->cfg.keep && h->req.done && h->cfg.max_replay > 0 &&
	    (long)h->kept_len == (long)h->req_seen + h->kept_delta;
}

int rs_http_rewind(struct rs_http *h)
{
	if (!kept_whole(h) || (h->pass && !h->pass_res))
		return -EINVAL;
	h->pass = false;
	h->pass_res = false;
	h->why = RS_HTTP_WHY_NONE;
	llhttp_reset(&h->parser[RS_HTTP_RES]);
	h->ended_at_head[RS_HTTP_RES] = false;
	h->parser[RS_HTTP_RES].data = h;
	memset(&h->res, 0, sizeof(h->res));
	h->field_len = 0;
	h->value = NULL;
	h->replays++;
	return 0;
}

bool rs_http_idempotent(const struct rs_http *h)
{
	switch (h->req.method) {
	case HTTP_GET:
	case HTTP_HEAD:
	case HTTP_OPTIONS:
	case HTTP_TRACE:
	case HTTP_PUT:
	case HTTP_DELETE:
		return true;
	default:
		return false;
	}
}

bool rs_http_replayable(const struct rs_http *h)
{
	if (h->pass || !kept_whole(h))
		return false;
	return rs_http_idempotent(h) || h->req.idempotency_key;
}

const char *rs_http_kept(const struct rs_http *h, size_t *len)
{
	*len = h->kept_len;
	return h->kept_len > 0 ? h->kept : NULL;
}

const char *rs_http_method_name(unsigned method)
{
	switch (method) {
#define RS_METHOD_CASE(num, name, string) case num: return #string;
	HTTP_METHOD_MAP(RS_METHOD_CASE)
#undef RS_METHOD_CASE
	default:
		return "?";
	}
}

const char *rs_http_why_name(enum rs_http_why why)
{
	static const char *const names[] = {
		[RS_HTTP_WHY_NONE] = "none",
		[RS_HTTP_WHY_MALFORMED] = "not HTTP/1.x",
		[RS_HTTP_WHY_VERSION] = "not HTTP/1.0 or 1.1",
		[RS_HTTP_WHY_PIPELINE] = "pipelining",
		[RS_HTTP_WHY_EARLY] = "response before the request ended",
		[RS_HTTP_WHY_CONTINUE] = "Expect: 100-continue",
		[RS_HTTP_WHY_UPGRADE] = "upgrade or CONNECT",
		[RS_HTTP_WHY_OVERSIZE] = "request above max_replay",
		[RS_HTTP_WHY_MEMORY] = "out of memory",
		[RS_HTTP_WHY_CUT] = "a head cut short by the program's timeout",
	};

	return (unsigned)why < sizeof(names) / sizeof(names[0]) ?
	    names[why] : "?";
}
