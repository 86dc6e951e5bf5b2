/* SPDX-License-Identifier: MIT */
/*
 * io_timeout.c - when a read or write on a connected managed socket times
 * out, for the blocking calls (io_block.c) and the waits alike.
 *
 * A timeout reported by a wait (rs_io_wait_expired) makes the next read
 * (write) fail with ETIMEDOUT once; the flag is then cleared, so that a
 * program that chooses to wait longer can.  Thread-safe: nothing here takes
 * a lock; the flags and last activity are atomics of the entry.
 */
#include "io_timeout.h"

#include <poll.h>

#include "clock.h"
#include "dest.h"
#include "log.h"
#include "stats.h"
#include "tdeadline.h"

void rs_io_log_timeout(const struct rs_fd *e, bool out, int64_t now)
{
	const struct rs_settings *s = e->settings;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms;

	t = rs_learn_timeout_ms(e->rule, s, out ? RS_LEARN_WRITE :
	    RS_LEARN_READ, t, rs_fd_last_activity(e));
	bool by_deadline = t == RS_OFF ||
	    now < rs_clock_after(rs_fd_last_activity(e), t);
	struct rs_dest d;

	rs_stats_add(e->rule, out ? RS_STAT_WRITE_TIMEOUTS :
	    RS_STAT_READ_TIMEOUTS);
	if (!rs_log_enabled(RS_LOG_WARN))
		return;
	struct rs_log_fields f = rs_dest_log_fields(e, &d,
	    out ? "write_timeout" : "read_timeout");

	f.error = "timed out";
	if (by_deadline && rs_tdeadline_fd() >= 0)
		rs_log(RS_LOG_WARN, &f, "%s %s timed out: the deadline of the "
		    "request read on fd %d passed", out ? "write to" :
		    "read from", d.text, rs_tdeadline_fd());
	else if (by_deadline)
		rs_log(RS_LOG_WARN, &f, "%s %s timed out: process deadline "
		    "passed", out ? "write to" : "read from", d.text);
	else
		rs_log(RS_LOG_WARN, &f, "%s %s timed out: no progress for "
		    "%u ms", out ? "write to" : "read from", d.text, t);
}

/* Marks direction out timed out if its time has come; logs it once. */
static bool expire(struct rs_fd *e, bool out, int64_t now)
{
	bool *flag = out ? &e->write_timed_out : &e->read_timed_out;

	if (now < rs_io_wait_deadline(e, out ? POLLOUT : POLLIN, now))
		return false;
	if (!__atomic_exchange_n(flag, true, __ATOMIC_ACQ_REL))
		rs_io_log_timeout(e, out, now);
	return true;
}

short rs_io_wait_expired(struct rs_fd *e, short events, int64_t now)
{
	short rev = 0;

	if (rs_fd_state(e) != RS_FD_CONNECTED)
		return 0;
	if ((events & POLLIN) && expire(e, false, now))
		rev |= POLLIN;
	if ((events & POLLOUT) && expire(e, true, now))
		rev |= POLLOUT;
	return rev;
}
