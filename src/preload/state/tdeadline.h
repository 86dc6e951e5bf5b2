/* SPDX-License-Identifier: MIT */
/*
 * tdeadline.h - the deadline of the calling thread: the process deadline
 * (RESOLUTE_DEADLINE), or an earlier one the thread took from a request it
 * read (SPEC 10, inbound), whichever ends first.
 *
 * Thread-local, so naturally thread-safe: a thread-per-request server's
 * threads each carry their own request's deadline.  The record is
 * initial-exec TLS, so reading it never allocates.
 */
#ifndef RS_TDEADLINE_H
#define RS_TDEADLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "runtime.h"

/*
 * Returns true when no deadline can bind the calling thread, so that
 * rs_tdeadline_get() would return RS_NEVER; false when one may.
 */
static inline bool rs_tdeadline_none(void)
{
	return !(rs_runtime_rare_get() & (RS_RARE_DEADLINE | RS_RARE_TDEADLINE));
}

/*
 * Returns whether a deadline may ever bind a thread of the process: it
 * has a process deadline, or its policy takes inbound ones (one of its
 * threads may read a request that carries one).  rt is the runtime,
 * active.  Unlike rs_tdeadline_none(), true before any thread took one.
 */
static inline bool rs_tdeadline_possible(const struct rs_runtime *rt)
{
	return rt->deadline_ms != RS_NEVER || rt->policy->inbound_header[0];
}

/*
 * Returns the calling thread's deadline on the monotonic clock: the
 * earlier of the process deadline and the thread's inbound one, RS_NEVER
 * for neither.  Cheap: two loads when the thread has none.
 */
int64_t rs_tdeadline_get(void);

/*
 * Returns the same deadline as Unix epoch ms, for a header; RS_NEVER for
 * none.  An inbound deadline is returned exactly as it was received.
 */
int64_t rs_tdeadline_epoch(void);

/*
 * The calling thread takes the deadline of a request read on fd: mono_ms
 * on the monotonic clock, epoch_ms as it will be passed on.  Replaces any
 * inbound deadline the thread had.
 */
void rs_tdeadline_take(int fd, int64_t mono_ms, int64_t epoch_ms);

/*
 * Ends the calling thread's inbound deadline if it came from fd (the
 * response ended, the next request began, the connection closed).
 */
void rs_tdeadline_drop(int fd);

/*
 * Ends the calling thread's inbound deadline whatever it came from: the
 * thread is reading a new request, so it no longer serves the old one.
 */
void rs_tdeadline_clear(void);

/* Returns the descriptor the thread's inbound deadline came from, or -1. */
int rs_tdeadline_fd(void);

#endif /* RS_TDEADLINE_H */
