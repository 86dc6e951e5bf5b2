/* SPDX-License-Identifier: MIT */
/*
 * connect_breaker.c - the breaker before and after each connect attempt
 * (connect_breaker.h).
 *
 * An open address costs no packet: the gate answers from the breaker's
 * word.  With failover (SPEC 5c), a rejected address is noted as failed
 * (so that failover's choice skips it) and the attempt moves on to the
 * name's next address at once, at most once per address of the name.
 */
#include "connect_breaker.h"

#include <errno.h>
#include <string.h>

#include "clock.h"
#include "names.h"
#include "retarget.h"
#include "runtime.h"

/* The verdict for e->addr now; a reject is counted and logged. */
static enum rs_breaker_verdict ask(const struct rs_fd *e, int64_t now_ms,
    int *err)
{
	const struct rs_runtime *rt = rs_runtime_peek();

	return rs_breakers_admit(rt ? rt->policy : NULL, e->rule, e->settings,
	    (const struct sockaddr *)&e->addr, e->addrlen, now_ms, err);
}

int rs_connect_breaker_gate(int fd, struct rs_fd *e, int64_t now_ms)
{
	int err = 0;

	for (unsigned i = 0; i <= RS_NAMES_PER_NAME; i++) {
		enum rs_breaker_verdict v = ask(e, now_ms, &err);
		struct sockaddr_storage before;
		socklen_t len = e->addrlen;

		if (v != RS_BREAKER_REJECT) {
			e->breaker_probe = v == RS_BREAKER_PROBE;
			e->breaker_known = v != RS_BREAKER_ABSENT;
			return 0;
		}
		rs_retarget_note(e, err, now_ms);
		memcpy(&before, &e->addr, len);
		rs_retarget_next(fd, e, now_ms);
		if (e->addrlen == len && memcmp(&before, &e->addr, len) == 0)
			break;
	}
	return err ? err : ETIMEDOUT;
}

bool rs_connect_breaker_lets(struct rs_fd *e, int64_t now_ms)
{
	const struct rs_runtime *rt = rs_runtime_peek();
	int err;
	enum rs_breaker_verdict v;

	v = rs_breakers_peek(rt ? rt->policy : NULL, e->rule, e->settings,
	    (const struct sockaddr *)&e->addr, e->addrlen, now_ms, &err);
	e->breaker_probe = v == RS_BREAKER_PROBE;
	e->breaker_known = v != RS_BREAKER_ABSENT;
	return v != RS_BREAKER_REJECT;
}

bool rs_connect_breaker_note(const struct rs_fd *e, int err, int64_t now_ms)
{
	const struct rs_runtime *rt = rs_runtime_peek();

	return rs_breakers_record(rt ? rt->policy : NULL, e->rule, e->settings,
	    (const struct sockaddr *)&e->addr, e->addrlen, err,
	    e->breaker_probe, now_ms);
}

void rs_connect_breaker_judge(struct rs_fd *e, unsigned status)
{
	const struct rs_breaker_settings *b = &e->settings->breaker;

	if (!rs_connect_breaker_by_status(e))
		return;
	rs_connect_breaker_note(e, rs_breaker_settings_fails(b, status) ?
	    ECONNREFUSED : 0, rs_clock_now_ms());
	/* Later responses on the connection are no probe's. */
	e->breaker_probe = false;
}
