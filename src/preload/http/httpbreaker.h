/* SPDX-License-Identifier: MIT */
/*
 * httpbreaker.h - the HTTP engines' judgement of a response, told to the
 * circuit breaker (SPEC 12): a status in the rule's on_status is a failure
 * of the connection's address, any other a success.
 *
 * rs_hb_judge() is rs_hr_judge() (http_retry.h) for the engines of both
 * kinds of socket, blocking (httpretry.c) and driven by the waits
 * (httpwait.c): once a response is judged, its status goes to the breaker.
 * Inline: a rule without a breaker pays one test per response.  Same
 * thread-safety as the engines (one connection, one caller at a time).
 */
#ifndef RS_HTTPBREAKER_H
#define RS_HTTPBREAKER_H

#include "connect_breaker.h"
#include "http_retry.h"

static inline enum rs_hr_verdict rs_hb_judge(struct rs_fd *e, struct rs_hr *m,
    const char *p, size_t n, bool full, bool eof, int64_t now_epoch_ms)
{
	enum rs_hr_verdict v = rs_hr_judge(m, p, n, full, eof, now_epoch_ms);

	if (v != RS_HR_MORE)
		rs_connect_breaker_status(e, m->t.res.status);
	return v;
}

#endif /* RS_HTTPBREAKER_H */
