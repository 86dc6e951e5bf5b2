/*
 * init.h - lazy start-up: environment, policy, logging, fork handlers.
 *
 * Nothing is read until the first call that needs it (a connect()), so a
 * process that never connects never parses a policy.  rs_init() is
 * thread-safe and idempotent; its result never changes afterwards, except
 * in a fork child, which keeps its parent's.
 */
#ifndef RS_INIT_H
#define RS_INIT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

struct rs_runtime {
	bool active;			/* false: pass everything through */
	bool secure;			/* AT_SECURE: environment distrusted */
	const struct rs_policy *policy;	/* NULL when !active */
	int64_t deadline_ms;		/* monotonic; RS_NEVER for none */
};

/*
 * Returns the runtime, initialising it on first call.  Never NULL.  When
 * the policy is invalid and RESOLUTE_STRICT=1, the process exits with
 * status 78 (EX_CONFIG) instead.
 */
const struct rs_runtime *rs_init(void);

/* Returns the runtime if rs_init() has completed, else NULL. Lock-free. */
const struct rs_runtime *rs_runtime(void);

#endif /* RS_INIT_H */
