/* SPDX-License-Identifier: MIT */
/*
 * httpout.h - what the program sends on a tracked HTTP connection: the
 * request heads it writes (with the deadline header, SPEC 10) and, on an
 * inbound connection, the responses that end the thread's deadline.
 *
 * Above httpconn.h, which it uses and which knows nothing of it.  Called
 * by the boundary's send wrappers; thread-safe as httpconn.h says.
 */
#ifndef RS_HTTPOUT_H
#define RS_HTTPOUT_H

#include <sys/socket.h>
#include <sys/types.h>

#include "fdtable.h"
#include "httpconn.h"

/*
 * The program sends msg on tracked fd (e: its managed entry, or NULL).
 * Outbound, a request head is held until complete and then sent with the
 * deadline header (httpout.c); inbound, the end of a response ends the
 * thread's deadline.  Returns what the send returns (-errno on failure).
 */
ssize_t rs_httpconn_send(struct rs_httpconn *c, struct rs_fd *e, int fd,
    const struct msghdr *msg, int flags);

#endif /* RS_HTTPOUT_H */
