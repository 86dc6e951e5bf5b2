/* SPDX-License-Identifier: MIT */
/*
 * connect_breaker.h - the circuit breaker (SPEC 12) as the connect steps
 * meet it: before each attempt, whether its address is open (then, with
 * failover, the name's next address at once), and after each attempt,
 * its outcome.
 *
 * Called with the entry's lock held, from connect_step.c only; what these
 * take is lock-free (breakers.h).  A rule with `breaker: off` never gets
 * here: the callers test rs_breakers_on() first, one predictable branch.
 */
#ifndef RS_CONNECT_BREAKER_H
#define RS_CONNECT_BREAKER_H

#include <stdint.h>

#include "breakers.h"
#include "fdtable.h"

/*
 * Before an attempt of e's connect on fd: returns 0 when it may go to
 * e->addr (e->breaker_probe says whether as a probe), having moved
 * e->addr past open addresses of the name when failover allows; or the
 * errno that opened the breaker when every address it may try is open.
 */
int rs_connect_breaker_gate(int fd, struct rs_fd *e, int64_t now_ms);

/*
 * The kernel path's first attempt (no failover before a first attempt):
 * returns false when e->addr is open; else true, as rs_connect_breaker_
 * gate() would, without counting a reject.
 */
bool rs_connect_breaker_lets(struct rs_fd *e, int64_t now_ms);

/*
 * Records the outcome of the attempt on e->addr (err 0: connected), and
 * returns whether e->addr's breaker is open now.  A success needs
 * recording only where the gate found an entry: a healthy address has
 * none, and its connects cost no second look-up.
 */
bool rs_connect_breaker_note(const struct rs_fd *e, int err, int64_t now_ms);

/*
 * Whether a connected attempt is left for the response's status to judge
 * (an `http` rule with on_status): then a connect alone neither closes a
 * breaker nor resets its count.
 */
static inline bool rs_connect_breaker_by_status(const struct rs_fd *e)
{
	return e->settings->http.enabled &&
	    rs_breaker_settings_has_status(&e->settings->breaker);
}

/* Whether a connected attempt's success is to be recorded now. */
static inline bool rs_connect_breaker_success_counts(const struct rs_fd *e)
{
	return e->breaker_known && !rs_connect_breaker_by_status(e);
}

/*
 * The HTTP engine judged a response with this status on e: a status in
 * on_status is a failure of e->addr, any other a success.  Inline: a rule
 * without a breaker pays one test per response.
 */
void rs_connect_breaker_judge(struct rs_fd *e, unsigned status);

static inline void rs_connect_breaker_status(struct rs_fd *e, unsigned status)
{
	if (rs_breakers_on(e->settings) && status)
		rs_connect_breaker_judge(e, status);
}

#endif /* RS_CONNECT_BREAKER_H */
