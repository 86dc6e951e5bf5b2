/* SPDX-License-Identifier: MIT */
/*
 * waitpoll.h - what the select translation (waitselect.c) uses of the
 * poll engine (wait.c).  Thread-safe, as wait.h.
 */
#ifndef RS_WAITPOLL_H
#define RS_WAITPOLL_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "fdtable.h"

/*
 * Returns whether a wait for events on e must be looked after: its
 * connect is pending, or failed and not yet reported, or a read/write
 * deadline applies.  No clock.
 */
bool rs_wait_involved(const struct rs_fd *e, short events);

/*
 * Runs a wait on fds until end_ms (RS_NEVER: none), managed when a
 * descriptor is involved: as rs_wait_ppoll() returns.  Its real waits are
 * poll, or when as_ppoll is true (a program's pselect) ppoll with the
 * signal mask (NULL: the thread's).
 */
int rs_wait_poll_common(struct pollfd *fds, nfds_t n, int64_t end_ms,
    bool as_ppoll, const sigset_t *mask);

#endif /* RS_WAITPOLL_H */
