/* SPDX-License-Identifier: MIT */
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
 * The rare features of the process, a bit each, set once and never
 * cleared (a fork child keeps its parent's): a process deadline (set by
 * start-up before the runtime is published), an inbound deadline some
 * thread took (tdeadline.h), HTTP tracking (httpconn.h).  One word, so
 * that the read and write fast paths, which need none of them, ask with
 * one load: 0 is none.
 */
enum {
	RS_RARE_DEADLINE = 1,		/* RESOLUTE_DEADLINE */
	RS_RARE_TDEADLINE = 2,		/* a thread took a request's deadline */
	RS_RARE_HTTPCONN = 4,		/* a descriptor is HTTP-tracked */
	RS_RARE_HTTPRULE = 8,		/* a connect of an `http` rule: TLS
					   sessions may need following */
};

extern unsigned rs_runtime_rare __attribute__((visibility("hidden")));

/* Returns the rare features switched on (RS_RARE_*), one relaxed load. */
static inline unsigned rs_runtime_rare_get(void)
{
	return __atomic_load_n(&rs_runtime_rare, __ATOMIC_RELAXED);
}

/* Switches feature bit on, for good; release, for what it publishes. */
static inline void rs_runtime_rare_set(unsigned bit)
{
	__atomic_fetch_or(&rs_runtime_rare, bit, __ATOMIC_RELEASE);
}

/*
 * Fork handlers (init.c): the start-up lock is held across fork() so that
 * the child never inherits it held; release is for the parent and the
 * child alike.
 */
void rs_runtime_fork_prepare(void);
void rs_runtime_fork_release(void);

#endif /* RS_RUNTIME_H */
