/* SPDX-License-Identifier: MIT */
/*
 * httppoll.h - the HTTP engines' looks at one socket: a wait for a
 * blocking call of the program's (httpretry.c, and httpwait.c for a
 * program's blocking call mid-retry), and whether the peer has ended.
 * Thread-safe: each call looks at its own descriptor.
 */
#ifndef RS_HTTPPOLL_H
#define RS_HTTPPOLL_H

#include <stdbool.h>
#include <stdint.h>

#include "fdtable.h"
#include "httpstate.h"

/*
 * Returns whether the peer has sent all it ever will on fd (its FIN or a
 * reset came): a response head still incomplete then never completes.
 * A peek cannot tell, as it returns the queued bytes and not the end
 * behind them; one poll with no wait can.
 */
bool rs_hconn_peer_done(int fd);

/*
 * Waits, for a blocking call of the program's, until fd has `events` (fd
 * -1: none, a sleep), or until the monotonic time `until` (RS_NEVER: no
 * limit).  Returns 1, 0 on timeout, or -errno.  own is the program's own
 * socket timeout for the call (RS_NEVER: none): when it comes first the
 * wait ends with -EAGAIN, as the kernel's blocking call would.  A signal
 * ends the wait with -EINTR where the kernel's call would have been
 * interrupted (a handler without SA_RESTART, or the program's own
 * timeout set): a program's alarm() must still cut its read short.  The
 * engine's state stays where it was; the next call goes on from it.
 * -EBADF: the descriptor was closed meanwhile (rs_hconn_closed()).
 */
int rs_hconn_wait(const struct rs_fd *e, const struct rs_hconn *h, int fd,
    short events, int64_t until, int64_t own);

#endif /* RS_HTTPPOLL_H */
