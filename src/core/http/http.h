/* SPDX-License-Identifier: MIT */
/*
 * http.h - a strict, incremental HTTP/1.x message tracker for one connection.
 *
 * Pure: no I/O, no clock, no randomness; the caller feeds the bytes it sees
 * in each direction and acts on the events returned.  One struct rs_http per
 * connection, used by one thread at a time (the caller serialises).  The
 * parsing is Node's llhttp (Debian's node-llhttp sources, strict mode),
 * linked into this module with its symbols renamed (rs_llhttp_*) and hidden,
 * so a host program with its own llhttp or http_parser is not disturbed.
 *
 * Two directions: RS_HTTP_REQ carries requests, RS_HTTP_RES responses.  A
 * client connection (retries, SPEC 9; outbound deadline headers, SPEC 10)
 * feeds what the program writes as REQ and what it reads as RES; a server
 * connection (inbound deadlines, SPEC 10) feeds what the program reads as
 * REQ and what it writes as RES.  Both share this one API:
 *
 *   - rs_http_feed() stops at each event (status known, head complete,
 *     message complete, pass-through), so the caller learns the exact byte
 *     offset of every boundary;
 *   - the facts of the current request head (method, target, version, the
 *     headers of interest, including one caller-chosen "watch" header such
 *     as X-Request-Deadline) and of the current response head (status,
 *     keep-alive, Retry-After) are in struct rs_http after RS_HTTP_EV_HEAD;
 *   - with `keep` set, the bytes of the current request are kept (the head
 *     always, the body up to max_replay) so that a client can replay them,
 *     and rs_http_head_put() edits the kept head in place (adding an
 *     Idempotency-Key, adding or replacing a deadline header) before it is
 *     sent.
 *
 * Anything not fully understood - pipelining, Expect: 100-continue,
 * Upgrade, CONNECT, HTTP/2, TLS, a version other than 1.0/1.1, a response
 * before its request was complete, a malformed message, a request larger
 * than max_replay - turns the tracker into pass-through for good
 * (RS_HTTP_EV_PASS, then h->pass stays set and every feed consumes all).
 */
#ifndef RS_HTTP_H
#define RS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llhttp.h"

/* The longest header name or kept value the tracker records. */
#define RS_HTTP_VALUE_MAX 128
/* The longest request target kept for log lines (longer: cut with "..."). */
#define RS_HTTP_TARGET_MAX 96
/* The largest request head kept when bodies are not (no max_replay). */
#define RS_HTTP_HEAD_MAX 16384

enum rs_http_dir { RS_HTTP_REQ, RS_HTTP_RES };

enum rs_http_event {
	RS_HTTP_EV_NONE,	/* every byte consumed, nothing to report */
	RS_HTTP_EV_STATUS,	/* RES: the status code is known */
	RS_HTTP_EV_HEAD,	/* a head is complete (ends at the offset) */
	RS_HTTP_EV_END,		/* a message is complete (ends at the offset) */
	RS_HTTP_EV_PASS,	/* not understood: pass-through from here on */
};

/* Why the tracker gave up (h->why), for log lines and tests. */
enum rs_http_why {
	RS_HTTP_WHY_NONE,
	RS_HTTP_WHY_MALFORMED,	/* llhttp rejected the bytes (TLS, garbage) */
	RS_HTTP_WHY_VERSION,	/* not HTTP/1.0 or 1.1 (HTTP/2 preface) */
	RS_HTTP_WHY_PIPELINE,	/* a request before the last response ended */
	RS_HTTP_WHY_EARLY,	/* a response before its request was sent */
	RS_HTTP_WHY_CONTINUE,	/* Expect: 100-continue */
	RS_HTTP_WHY_UPGRADE,	/* Upgrade, CONNECT, or a 1xx response */
	RS_HTTP_WHY_OVERSIZE,	/* the request outgrew what may be kept */
	RS_HTTP_WHY_MEMORY,	/* no memory for the copy */
	RS_HTTP_WHY_CUT,	/* the program's own SO_SNDTIMEO cut a head */
	RS_HTTP_WHY_ENDED,	/* the peer ended inside a response head */
};

struct rs_http_config {
	bool keep;		/* keep the request bytes (head, and body up
				   to max_replay) for replay and head edits */
	uint32_t max_replay;	/* bytes of one whole request that may be
				   kept; 0 with keep: the head only */
	const char *watch;	/* one more header to record ("X-Request-
				   Deadline"), or NULL; must outlive h */
};

/* The facts of the current (or last) request head. */
struct rs_http_request {
	uint8_t method;		/* enum llhttp_method */
	uint8_t major, minor;
	bool head_done;		/* RS_HTTP_EV_HEAD was reported */
	bool done;		/* the whole request was seen */
	bool idempotency_key;	/* carries an Idempotency-Key header */
	bool expect_continue;	/* Expect: 100-continue (then passed) */
	bool keep_alive;	/* the client lets the connection live on */
	bool has_watch;		/* carries the watch header ... */
	char watch[RS_HTTP_VALUE_MAX];	/* ... with this value (cut) */
	char target[RS_HTTP_TARGET_MAX];
	size_t head_len;	/* bytes of the head, final CRLF included */
};

/* The facts of the current (or last) response head. */
struct rs_http_response {
	unsigned status;	/* 0 until RS_HTTP_EV_STATUS */
	bool head_done;
	bool done;
	bool keep_alive;	/* valid after the head */
	bool until_close;	/* the body ends when the connection does */
	bool has_retry_after;
	char retry_after[RS_HTTP_VALUE_MAX];
};

struct rs_http {
	llhttp_t parser[2];	/* indexed by enum rs_http_dir */
	struct rs_http_config cfg;
	struct rs_http_request req;
	struct rs_http_response res;
	bool pass;		/* gave up: pass-through for good */
	bool pass_res;		/* ... because of a response's bytes */
	/* Per direction: a body-less message ended with its head, and
	   llhttp's completion callback for it is still to come. */
	bool ended_at_head[2];
	enum rs_http_why why;
	enum rs_http_event event;	/* set by the callbacks of one feed */
	/* Header capture (both directions share it: one header at a time). */
	char field[RS_HTTP_VALUE_MAX];
	size_t field_len;
	char *value;		/* where the current value goes, or NULL */
	size_t value_len;
	bool *value_seen;
	char scratch[RS_HTTP_VALUE_MAX];	/* Expect's value */
	bool expect_seen;
	/* The kept request (cfg.keep): kept_len bytes in kept[0..kept_cap). */
	char *kept;
	size_t kept_len;
	size_t kept_cap;
	size_t req_seen;	/* bytes of the current request fed so far */
	long kept_delta;	/* bytes head edits added to the copy */
	uint64_t requests;	/* complete requests seen on the connection */
	uint64_t responses;	/* complete responses seen */
	uint64_t replays;	/* rs_http_rewind() calls */
};

/*
 * Prepares h for a new connection with the settings in cfg (copied; watch
 * is referenced).  Never fails; memory for the kept bytes is taken on
 * first use.
 */
void rs_http_init(struct rs_http *h, const struct rs_http_config *cfg);

/* Releases the kept bytes.  h may be passed to rs_http_init() again. */
void rs_http_free(struct rs_http *h);

/*
 * Feeds len bytes of direction dir, as they appear on the connection.
 * Stops at the first event and returns how many bytes it consumed: the
 * event happened right after the last of them; *ev says which.  Returns
 * len with RS_HTTP_EV_NONE when all was consumed without an event; in
 * pass-through, always returns len with RS_HTTP_EV_PASS.  The caller loops
 * until the bytes are used up.  For a message without a body, the head
 * completes the message: after RS_HTTP_EV_HEAD its `done` is already set
 * and no RS_HTTP_EV_END follows.  With cfg.keep, request bytes are kept
 * as they are fed.
 */
size_t rs_http_feed(struct rs_http *h, enum rs_http_dir dir, const char *p,
    size_t len, enum rs_http_event *ev);

/*
 * Tells the tracker the connection ended (EOF) in direction dir.  Returns
 * RS_HTTP_EV_END when that completed a message whose body runs until
 * close, RS_HTTP_EV_PASS when a message was cut short, else
 * RS_HTTP_EV_NONE.
 */
enum rs_http_event rs_http_eof(struct rs_http *h, enum rs_http_dir dir);

/*
 * Gives up tracking (pass-through for good) for a reason the caller found,
 * such as bytes it could not see.  Idempotent.
 */
void rs_http_pass(struct rs_http *h, enum rs_http_why why);

/*
 * Makes room in the kept copy for `more` bytes beyond kept_len, allowing
 * `slack` bytes above the keep limit (what head edits may add).  Returns
 * 0, -E2BIG or -ENOMEM.  Used by the head edits (http_head.c).
 */
int rs_http_reserve(struct rs_http *h, size_t more, size_t slack);

/* Returns whether the current request's method is idempotent (SPEC 9). */
bool rs_http_idempotent(const struct rs_http *h);

/*
 * Returns whether the current request may be sent again: not in
 * pass-through, kept whole (cfg.keep, the request complete and within
 * max_replay), and idempotent or carrying an Idempotency-Key.
 */
bool rs_http_replayable(const struct rs_http *h);

/*
 * The response to the current request was abandoned (consumed and not
 * shown, or cut off) and the kept request is to be sent again, on this
 * connection or a new one: forgets the response side, including a
 * pass-through that its bytes caused.  Returns 0, or -EINVAL when the
 * request is not kept whole or the tracker gave up on a request.
 */
int rs_http_rewind(struct rs_http *h);

/*
 * The kept bytes of the current request, *len of them; NULL when nothing
 * is kept.  After a head edit they are the bytes to send.
 */
const char *rs_http_kept(const struct rs_http *h, size_t *len);

/*
 * Looks up header `name` (case-insensitive) in the kept head of the
 * current request and copies its value (surrounding blanks removed, cut to
 * cap - 1 bytes) into buf.  Returns the value's full length, or -ENOENT
 * when absent, -EAGAIN when the head is not complete or not kept.
 */
int rs_http_head_get(const struct rs_http *h, const char *name, char *buf,
    size_t cap);

/*
 * Edits the kept head of the current request: with a header `name`
 * already present and replace set, its value becomes `value`; with it
 * present and replace clear, nothing changes; absent, "name: value" is
 * added as the head's last header.  Only between RS_HTTP_EV_HEAD and the
 * moment the head is sent (the caller holds the head until then).
 * Returns 0, -EAGAIN (no complete kept head), -EINVAL (a name or value
 * with CR, LF or NUL), -E2BIG (the kept copy would outgrow its limit; the
 * tracker passes through), or -ENOMEM.
 */
int rs_http_head_put(struct rs_http *h, const char *name, const char *value,
    bool replace);

/*
 * Parses a Retry-After value: delta-seconds, or an HTTP-date (IMF-fixdate,
 * RFC 850 or asctime form) taken relative to now_epoch_ms.  Stores the
 * wait in *wait_ms (0 for a date in the past; saturates at UINT32_MAX - 1)
 * and returns 0, or -EINVAL when the value is neither.
 */
int rs_http_retry_after_ms(const char *value, int64_t now_epoch_ms,
    uint32_t *wait_ms);

/*
 * Formats 16 random bytes as a version 4, variant 1 UUID (36 characters
 * and a NUL) into out, setting the version and variant bits.
 */
void rs_http_uuid4(const uint8_t random16[16], char out[37]);

/* Returns the method's name ("GET"), or "?" for an unknown value. */
const char *rs_http_method_name(unsigned method);

/* Returns a short name for why ("pipelining"), for log lines. */
const char *rs_http_why_name(enum rs_http_why why);

#endif /* RS_HTTP_H */
