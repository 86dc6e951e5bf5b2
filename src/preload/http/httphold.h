/* SPDX-License-Identifier: MIT */
/*
 * httphold.h - the release of the program's bytes that the request layer
 * holds back (a request head kept for an edit: the deadline header of
 * httpout.c, the Idempotency-Key of the retry engine): the program was
 * told they were sent, so at any end of the connection -- close,
 * close_range, dup2 or dup3 over it, shutdown, exec, exit, fork -- and
 * whenever the program waits for the answer (a read on it, a wait for its
 * input), they go out as they are, before anything else happens to the
 * socket, and the rest of their head goes as it comes.
 *
 * Thread-safe: a connection another thread is inside is left to it.  Each
 * function costs one load while nothing is held (holdcount.h).
 */
#ifndef RS_HTTPHOLD_H
#define RS_HTTPHOLD_H

#include <poll.h>
#include <sys/select.h>

#include "holdcount.h"

/* Releases what is held for fd (both layers).  errno is kept. */
void rs_hold_release(int fd);

/* Releases what is held for every descriptor in [first, last]. */
void rs_hold_release_range(unsigned first, unsigned last);

/* rs_hold_release() of fd when anything is held. */
static inline void rs_hold_fd(int fd)
{
	if (__builtin_expect(rs_holdcount_any(), 0))
		rs_hold_release(fd);
}

/* Everything held, of every descriptor (exec, exit, fork). */
static inline void rs_hold_all(void)
{
	if (__builtin_expect(rs_holdcount_any(), 0))
		rs_hold_release_range(0, (unsigned)-1);
}

/*
 * The waits: a thread that waits for input releases the heads it wrote
 * itself (another thread may be between two writes of its own) on the
 * descriptors it waits to read -- an epoll wait's are the kernel's to
 * know, so all of them.
 */
void rs_hold_release_mine(void);

static inline void rs_hold_mine(void)
{
	if (__builtin_expect(rs_holdcount_any(), 0))
		rs_hold_release_mine();
}

/* A poll for n descriptors (fds is not written; not const, as glibc
   declares poll()'s array write-only). */
void rs_hold_polled(struct pollfd *fds, unsigned long n);

/* A select: the descriptors below n in r (may be NULL). */
void rs_hold_selected(int n, const fd_set *r);

#endif /* RS_HTTPHOLD_H */
