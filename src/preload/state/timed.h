/* SPDX-License-Identifier: MIT */
/*
 * timed.h - whether a socket's reads and writes can be timed at all: a
 * fact about the policy (a read or write timeout) and the process (a
 * deadline that may bind it), asked by the connect engine, the resolver
 * and the read/write timeouts alike, so it lives below all three.
 *
 * Inline and lock-free: a few loads.  Times are monotonic milliseconds.
 */
#ifndef RS_TIMED_H
#define RS_TIMED_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "policy.h"
#include "runtime.h"
#include "tdeadline.h"

/*
 * Returns the calling thread's deadline: the process deadline
 * (RESOLUTE_DEADLINE) or an earlier one from a request it read, or RS_NEVER.
 * Two loads when no deadline can bind the thread.
 */
static inline int64_t rs_io_process_deadline(void)
{
	return rs_tdeadline_none() ? RS_NEVER : rs_tdeadline_get();
}

/* Whether settings s have a read or write timeout. */
static inline bool rs_io_settings_timed(const struct rs_settings *s)
{
	return (s->read_timeout_ms & s->write_timeout_ms) != RS_OFF;
}

/*
 * Returns whether rs_io_deadline() can ever be other than RS_NEVER for a
 * socket connected under settings s in the process of runtime rt: s has
 * a read or write timeout, or a deadline may bind the process.  Only such
 * a socket's timeouts act on its number, and so ask which socket it is
 * (rs_fd_same_socket).
 */
static inline bool rs_io_may_time(const struct rs_runtime *rt,
    const struct rs_settings *s)
{
	return rs_io_settings_timed(s) || rs_tdeadline_possible(rt);
}

#endif /* RS_TIMED_H */
