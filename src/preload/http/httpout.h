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
 * Outbound, a request head that begins while a deadline applies to the
 * thread is held until complete and then sent with the deadline header;
 * inbound, the end of a response ends the
 * thread's deadline.  Returns what the send returns (-errno on failure).
 */
ssize_t rs_httpconn_send(struct rs_httpconn *c, struct rs_fd *e, int fd,
    const struct msghdr *msg, int flags);

/*
 * A head held for the deadline header goes now, as it is (the connection
 * ends, or the program waits for the answer); the rest of it goes as it
 * comes.  With c taken.  Returns 0 or -errno.
 */
int rs_httpout_release(struct rs_httpconn *c, struct rs_fd *e, int fd);

#endif /* RS_HTTPOUT_H */
