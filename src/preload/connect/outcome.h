/* SPDX-License-Identifier: MIT */
/*
 * outcome.h - what the kernel says about a connect attempt, read without
 * changing what the program will be told.
 *
 * An attempt's outcome is the socket's state when the library first looks,
 * not the clock: a socket found established is connected, even when the
 * program looks after connect_timeout.  A connection the peer reset after
 * sending data is connected too (SPEC 5): the program reads the data, then
 * the reset, as without the library.  Stateless; safe from any thread.
 */
#ifndef RS_OUTCOME_H
#define RS_OUTCOME_H

#include <sys/socket.h>

/*
 * Returns 0 when the attempt on fd (of family) has connected, 1 while it
 * is still in progress, or the errno value of its failure, which the
 * kernel then no longer holds (SO_ERROR was read).  A connection that was
 * established and has since ended -- reset or closed by the peer after it
 * sent data -- counts as connected and its pending error is left for the
 * program.
 */
int rs_outcome_attempt(int fd, int family);

/*
 * Dissolves the attempt on fd, which failed with err, so that the socket
 * can connect again, and leaves no trace: Linux sets ECONNRESET as the
 * pending error when connect(AF_UNSPEC) aborts an attempt in SYN_SENT
 * (tcp_disconnect), which the program would otherwise find in SO_ERROR or
 * its first read or write after the last attempt; it is read away.  errno
 * is preserved.
 */
void rs_outcome_dissolve(int fd, int family, int err);

#endif /* RS_OUTCOME_H */
