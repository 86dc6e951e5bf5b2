/* SPDX-License-Identifier: MIT */
/*
 * http_retry.h - the decisions of HTTP/1.x status retries (SPEC 9) for one
 * client connection, without any I/O.
 *
 * Pure: the preload engine (src/preload/http/httpretry.c) does the system calls
 * and tells this machine what it saw; the machine says what to do next.
 * The fuzz target drives the same machine, so "nothing is replayed after
 * a response byte reached the program" is checked on the real decisions.
 * Not thread-safe: one connection, one caller at a time.
 *
 * The response is judged where it lies, in the socket's receive queue
 * (the engine peeks at it): a status the rule does not retry is left there
 * for the program to read at once; only a retried response is consumed,
 * by the library, and never shown.
 *
 *   IDLE --request complete--> AWAIT --judge: SHOW--> DELIVER --end--> IDLE
 *                                |  ^
 *                  judge: RETRY  v  | resend (rs_hr_resend)
 *                              DRAIN --response consumed--> WAIT
 *   anything not understood, any phase: PASS, for good.
 */
#ifndef RS_HTTP_RETRY_H
#define RS_HTTP_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "http_settings.h"

enum rs_hr_phase {
	RS_HR_IDLE,	/* writes are tracked as requests */
	RS_HR_AWAIT,	/* a request was sent; its response is not judged */
	RS_HR_DELIVER,	/* the response goes to the program as it comes */
	RS_HR_DRAIN,	/* a retried response is being consumed */
	RS_HR_WAIT,	/* consumed; waiting to send the request again */
	RS_HR_PASS,	/* pass-through for good */
};

enum rs_hr_verdict {
	RS_HR_MORE,	/* judge/drain: more bytes are needed */
	RS_HR_SHOW,	/* judge: the program gets this response */
	RS_HR_RETRY,	/* judge: retry, if the deadline and budget allow */
	RS_HR_DONE,	/* drain: the retried response is consumed */
};

struct rs_hr {
	struct rs_http t;
	const struct rs_http_settings *s;
	enum rs_hr_phase phase;
	unsigned attempt;	/* tries of the current request, 1-based */
	bool delivered;		/* a response byte reached the program */
	size_t judged;		/* queued response bytes the tracker has seen
				   but neither the program nor a drain took */
	uint32_t wait_ms;	/* RETRY: Retry-After, or RS_HR_BACKOFF */
	bool reconnect;		/* WAIT: the connection cannot be reused */
	bool gave_up;		/* judge: SHOW of a status that was retryable */
	bool inject;		/* this request got an Idempotency-Key */
	bool released;		/* this head's held bytes went unedited: the
				   rest of it is not held (rs_hr_release()) */
};

/* wait_ms when the response said nothing: the rule's backoff applies. */
#define RS_HR_BACKOFF UINT32_MAX

/*
 * Prepares r for a new connection of a rule with settings s (referenced;
 * must outlive r).  watch is the deadline header to record, or NULL.
 */
void rs_hr_init(struct rs_hr *r, const struct rs_http_settings *s,
    const char *watch);

/* Releases what r holds. */
void rs_hr_free(struct rs_hr *r);

/*
 * Whether the bytes the program writes next must be held until the head
 * is complete (idempotency_key: inject, at the start or in the middle of
 * a request head), rather than sent as they come.
 */
bool rs_hr_holding(const struct rs_hr *r);

/*
 * Returns how many bytes of a request head r holds now (kept, not sent):
 * 0 unless holding and part of a head was taken.
 */
size_t rs_hr_held(const struct rs_hr *r);

/*
 * The held bytes (rs_http_kept(), rs_hr_held() of them) are to go now as
 * they are: the connection ends, or the program waits for the answer.
 * The rest of the head is not held (nor edited).  Returns whether any
 * were held.
 */
bool rs_hr_release(struct rs_hr *r);

/*
 * Holding: takes up to n bytes of the head the program writes (none are
 * sent yet) and returns how many it took.  *flush is set when the kept
 * bytes (rs_http_kept()) must now be sent whole: the head is complete and
 * edited (an Idempotency-Key made from random16 when a POST or PATCH had
 * none), tracking gave up, or the head's method cannot be POST or PATCH
 * (nothing to edit: the rest of the head goes as it comes).  The rest of the program's bytes go the
 * usual way (sent, then rs_hr_sent()).
 */
size_t rs_hr_hold(struct rs_hr *r, const char *p, size_t n,
    const uint8_t random16[16], bool *flush);

/* The program's bytes p[0..n) were sent (not held): tracks them. */
void rs_hr_sent(struct rs_hr *r, const char *p, size_t n);

/*
 * AWAIT: judges the response from the start of the receive queue, p[0..n)
 * (what a peek returned; bytes before `judged` were seen by an earlier
 * call).  full is true when the engine cannot look further (its peek
 * buffer is full, or the peer closed: eof).  Returns MORE (look again when
 * more bytes came), SHOW (phase DELIVER), or RETRY: the engine asks the
 * deadline and retry budget and calls rs_hr_retry() or rs_hr_give_up().
 */
enum rs_hr_verdict rs_hr_judge(struct rs_hr *r, const char *p, size_t n,
    bool full, bool eof, int64_t now_epoch_ms);

/* RETRY was not allowed (deadline, budget): the program gets it (DELIVER). */
void rs_hr_give_up(struct rs_hr *r);

/* RETRY goes ahead: phase DRAIN. */
void rs_hr_retry(struct rs_hr *r);

/*
 * DRAIN: the engine consumed p[0..n) from the queue (n == 0: end of file).
 * Returns MORE or DONE (phase WAIT; r->reconnect says whether the request
 * must go on a new connection).  *rest gets how many of the bytes were
 * past the end of the response (then the connection is not reused).
 */
enum rs_hr_verdict rs_hr_drain(struct rs_hr *r, const char *p, size_t n,
    size_t *rest);

/*
 * WAIT: the request is about to be sent again (the engine reconnected if
 * it had to).  Returns the bytes to send (*len of them) and makes the
 * phase AWAIT for attempt + 1; NULL if nothing can be resent (PASS).
 */
const char *rs_hr_resend(struct rs_hr *r, size_t *len);

/*
 * The program read p[0..n) (n == 0: end of file) from the connection in
 * phase DELIVER, IDLE or PASS: tracks the response to its end.
 */
void rs_hr_read(struct rs_hr *r, const char *p, size_t n);

/*
 * AWAIT, after a resend on a reused connection: the peer closed it before
 * a byte of the response (it had timed the idle connection out).  The
 * request is to go again on a new connection, as the same attempt:
 * phase WAIT with reconnect set.  Returns false (nothing changes) unless
 * the request was resent and nothing of its response was seen.
 */
bool rs_hr_lost(struct rs_hr *r);

/* Gives up for good (dup of the descriptor, bytes the engine cannot see). */
void rs_hr_pass(struct rs_hr *r, enum rs_http_why why);

#endif /* RS_HTTP_RETRY_H */
