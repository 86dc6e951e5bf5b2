/*
 * runtime.h - what the library decided at start-up: whether it is active,
 * the policy, the process deadline.  The one thing the engines need from
 * start-up, and all they see of it.
 *
 * Started lazily by the first call that needs it (a connect()), so a
 * process that never connects never parses a policy.  rs_runtime_get() is
 * thread-safe and idempotent; the runtime never changes afterwards, except
 * in a fork child, which keeps its parent's.
 */
#ifndef RS_RUNTIME_H
#define RS_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

struct rs_runtime {
	bool active;			/* false: pass everything through */
	bool secure;			/* AT_SECURE: environment distrusted */
	const struct rs_policy *policy;	/* NULL when !active */
	int64_t deadline_ms;		/* monotonic; RS_NEVER for none */
	int64_t deadline_epoch_ms;	/* the same as given, 0 for none */
};

/*
 * Returns the runtime, starting it on first call.  Never NULL.  When the
 * policy is invalid and RESOLUTE_STRICT=1, the process exits with status
 * 78 (EX_CONFIG) instead.
 */
const struct rs_runtime *rs_runtime_get(void);

/* Returns the runtime if it has been started, else NULL.  Lock-free. */
const struct rs_runtime *rs_runtime_peek(void);

/*
 * Nonzero once start-up found a process deadline (set before the runtime
 * is published, never cleared): the read and write fast paths test it
 * with one load instead of a call.
 */
extern int rs_runtime_deadline_set __attribute__((visibility("hidden")));

/*
 * Fork handlers (init.c): the start-up lock is held across fork() so that
 * the child never inherits it held; release is for the parent and the
 * child alike.
 */
void rs_runtime_fork_prepare(void);
void rs_runtime_fork_release(void);

#endif /* RS_RUNTIME_H */
