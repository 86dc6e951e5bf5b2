/* SPDX-License-Identifier: MIT */
/*
 * httpretry.h - HTTP/1.x status retries on managed client connections
 * (SPEC 9): the engine that does the system calls for the pure retry
 * machine (http_retry.h).
 *
 * Only connections whose rule enables `http` ever get a struct rs_hconn
 * (made at the first write); on every other one the read and write paths
 * pay one test of a pointer.  A response is judged where it lies in the
 * receive queue (MSG_PEEK): one the program will see is left there, so
 * its bytes reach the program exactly as without the library; only a
 * retried response is consumed here.  On a blocking socket the retry
 * itself (consume the response, wait, reconnect if needed, send again,
 * judge the next) runs inside the program's read call that would have
 * returned the response; on a non-blocking one it is stepped by the waits
 * and reads without blocking (httpwait.h).  Either way a program never
 * sees a byte of a retried response.
 *
 * Thread-safety: a connection is used by one thread at a time; a second
 * thread that enters while another is inside makes the connection pass
 * through for good (HTTP/1.x clients do not share a connection so).
 */
#ifndef RS_HTTPRETRY_H
#define RS_HTTPRETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "fdtable.h"
#include "httpbreaker.h"
#include "http_retry.h"
#include "httppoll.h"
#include "httpstate.h"

/*
 * Before the program reads from fd: makes sure that what it reads next is
 * a response it may see, retrying as the rule allows.  dontwait is true
 * for MSG_DONTWAIT.  Returns 0 (go on with the read), -EAGAIN (nothing to
 * read yet, non-blocking, or the program's own SO_RCVTIMEO passed),
 * -ETIMEDOUT (read_timeout or the deadline), or another -errno from a
 * reconnect or a resend.  For a blocking socket (httpio.c sends reads of
 * non-blocking ones to httpwait.h); the caller has set h->own_until for
 * the call.
 */
int rs_hconn_settle(struct rs_hconn *h, struct rs_fd *e, int fd,
    bool dontwait);

/*
 * The program writes p[0..n): sends it, holding a request head while it
 * must be edited (idempotency_key: inject).  Returns the bytes taken, or
 * -errno.
 */
ssize_t rs_hconn_write(struct rs_hconn *h, struct rs_fd *e, int fd,
    const char *p, size_t n, int flags);

/*
 * What h holds of the program's bytes (a head kept for an edit, the rest
 * of a flush) goes now, unedited: the connection ends, or the program
 * waits for the answer.  Returns 0 or -errno.
 */
int rs_hconn_release(struct rs_hconn *h, struct rs_fd *e, int fd);


/*
 * A RETRY verdict: asks the deadline and the retry budget, logs and
 * counts.  Returns the wait before the resend in ms, or -1 when the
 * response goes to the program (phase DELIVER).
 */
int64_t rs_hconn_allow(struct rs_fd *e, struct rs_hconn *h);

/*
 * The request must go on a new connection: dissolves the old one and
 * starts a logical connect on fd, run to its end when block is true, else
 * left to the waits (-EINPROGRESS).  Returns 0 or -errno; when fd is no
 * longer managed afterwards the state is orphaned (freed on leave).
 */
int rs_hconn_reconnect(struct rs_fd *e, int fd, bool block);

/*
 * The request must go on a new connection that h's transport cannot make
 * its session for (renews() false): no reconnect; the connection passes,
 * and the transport hands the retried response over as it came.  Returns
 * -ECANCELED (the program reads it), or -errno.
 */
int rs_hconn_hand_over(struct rs_hconn *h);

/* A SHOW verdict: logs a give-up when the status was a retried one. */
void rs_hconn_shown(const struct rs_fd *e, struct rs_hconn *h);

#endif /* RS_HTTPRETRY_H */
