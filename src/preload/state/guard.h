/* SPDX-License-Identifier: MIT */
/*
 * guard.h - a thread-local guard against re-entering our own wrappers.
 *
 * While the library itself works (reading the policy, logging, resolving a
 * symbol), any libc call that lands in one of our wrappers must go straight
 * to the real function.  The counter is initial-exec TLS so that reading it
 * never allocates.  Per-thread, so naturally thread-safe.
 */
#ifndef RS_GUARD_H
#define RS_GUARD_H

extern __thread int rs_guard_depth __attribute__((tls_model("initial-exec")));

/* Returns whether the calling thread is inside the library. */
static inline int rs_guard_active(void)
{
	return rs_guard_depth > 0;
}

static inline void rs_guard_enter(void)
{
	rs_guard_depth++;
}

static inline void rs_guard_leave(void)
{
	rs_guard_depth--;
}

#endif /* RS_GUARD_H */
