/* SPDX-License-Identifier: MIT */
/*
 * connect_wait.h - a blocking caller drives a pending connect to its end.
 *
 * Thread-safe per descriptor: the entry's lock is taken only inside the
 * steps, never across a poll.
 */
#ifndef RS_CONNECT_WAIT_H
#define RS_CONNECT_WAIT_H

#include <stdbool.h>

#include "fdtable.h"

/*
 * Runs a blocking logical connect (flags: the program's file flags) on a
 * socket made non-blocking for the duration, to its end or, as the
 * kernel's connect, until a signal whose handler lacks SA_RESTART (-EINTR)
 * or the program's SO_SNDTIMEO (-EINPROGRESS).  Then the state is kept: a
 * later connect() resumes the same logical connect, or the program's waits
 * drive it.  Returns 0 when connected or -errno; a failed connect's entry
 * is forgotten.
 */
int rs_connect_run_blocking(int fd, struct rs_fd *e, int flags);

/*
 * For a blocking read or write on a socket whose logical connect is under
 * way: drives it to its end, as the kernel makes such a call wait for the
 * connect, with the program's file flags restored afterwards.  Returns 0
 * when it ended (connected or failed: see the entry's state), or -errno
 * (EINTR, unless every handler has SA_RESTART).
 */
/*
 * rs_connect_run_blocking() for a plain socket (born.h): its first
 * attempt is the kernel's blocking connect (rs_connect_step_kernel), and
 * only an attempt that has to be waited for further, or that failed, goes
 * on as rs_connect_run_blocking() with the file flags read then.  now
 * and the counting of the connect: as for rs_connect_step_kernel().
 */
int rs_connect_run_kernel(int fd, struct rs_fd *e, int64_t now);

int rs_connect_wait(int fd, struct rs_fd *e);

/*
 * Brings a logical connect under way (CONNECTING, BACKOFF) as far as it
 * can go before a read or write; may_block is false for a non-blocking
 * call.  Returns 0 when connected, 1 when the real call should answer (the
 * connect failed and its error was already taken), -EAGAIN while it is
 * still under way (as the kernel says), or another -errno: for a failed
 * connect (FAILED), its error the first time.
 */
int rs_connect_settle(int fd, struct rs_fd *e, bool may_block);

#endif /* RS_CONNECT_WAIT_H */
