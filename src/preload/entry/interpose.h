/* SPDX-License-Identifier: MIT */
/*
 * interpose.h - what the files of exported names share (interpose.c: the
 * descriptor bookkeeping and the waits; interpose_io.c: the reads and
 * writes): the libc convention at the boundary and the "act or not" test.
 *
 * Included by those files only.  Thread-safe: the guard is per-thread.
 */
#ifndef RS_INTERPOSE_H
#define RS_INTERPOSE_H

#include <errno.h>

#include "fdtable.h"
#include "guard.h"
#include "httphold.h"

#define EXPORT __attribute__((visibility("default")))

/* The fortified entry points that _FORTIFY_SOURCE builds call fail so. */
extern void __chk_fail(void) __attribute__((noreturn));

/*
 * The calling thread's errno.  Its address never changes for the thread
 * (a fork child's thread has the same), so it is asked of the C library
 * once per thread and then kept: the wrappers read errno before every
 * engine call, and a call into libc there would make them spill their
 * arguments around it.  Initial-exec TLS, as the guard's.
 */
extern __thread int *rs_errno_at __attribute__((tls_model("initial-exec"),
    visibility("hidden")));

static inline int *rs_errno(void)
{
	int *p = rs_errno_at;

	if (__builtin_expect(p == NULL, 0))
		p = rs_errno_at = &errno;
	return p;
}

/*
 * Converts an engine result (-errno on failure) to the libc convention.
 * On success errno is left as the program had it: an engine may have met
 * EAGAIN on its way (a non-blocking first try) before succeeding.
 */
#define LIBC_RET(expr)                                                  \
	({                                                              \
		int *errp_ = rs_errno();                                \
		int save_ = *errp_;                                     \
		__typeof__(expr) r_ = (expr);                           \
		if (r_ < 0) {                                           \
			*errp_ = (int)-r_;                              \
			r_ = -1;                                        \
		} else {                                                \
			*errp_ = save_;                                 \
		}                                                       \
		r_;                                                     \
	})

/* e (an entry, or NULL) when the library should act on this call, else
   NULL: never inside the library's own calls. */
static inline struct rs_fd *acting(struct rs_fd *e)
{
	return e && !rs_guard_active() ? e : NULL;
}

/*
 * acting() for a read on fd: a program that reads waits for the answer,
 * so a request head held back goes first (httphold.h).
 */
static inline struct rs_fd *reading(struct rs_fd *e, int fd)
{
	rs_hold_fd(fd);
	return acting(e);
}

/* The entry of fd when the library should act on this call, else NULL. */
static inline struct rs_fd *managed(int fd)
{
	return acting(rs_fd_get(fd));
}

#endif /* RS_INTERPOSE_H */
