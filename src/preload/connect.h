/*
 * connect.h - one logical connect: attempts, timeouts, backoff waits.
 *
 * A program's connect() on a managed socket becomes up to `attempts`
 * kernel connects on the same descriptor, each bounded by connect_timeout,
 * separated by backoff waits, all bounded by connect_budget and the process
 * deadline.  Blocking sockets run the whole sequence inside connect();
 * non-blocking ones are advanced by the waits (wait.c) through
 * rs_connect_step().  Thread-safe per descriptor: callers hold the entry's
 * lock only inside this module, never across a wait.
 */
#ifndef RS_CONNECT_H
#define RS_CONNECT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fdtable.h"

/* What a pending connect wants from the wait that drives it. */
enum rs_connect_want {
	RS_WANT_NOTHING,	/* finished: report rs_connect_revents() */
	RS_WANT_WRITABLE,	/* an attempt is in flight: watch for POLLOUT */
	RS_WANT_TIMER,		/* backing off: hide the socket until then */
};

/*
 * The connect() wrapper's engine.  Returns 0 or -errno (-EINPROGRESS for a
 * non-blocking socket whose connect goes on in the background).  Sockets the
 * policy does not manage are passed to the real connect unchanged.
 */
int rs_connect(int fd, const struct sockaddr *sa, socklen_t len);

/*
 * Advances the pending connect of e (state CONNECTING or BACKOFF) as far as
 * it can without blocking.  ready is true when a wait reported the socket
 * (writable, error or hang-up).  Returns what the connect wants next.
 */
enum rs_connect_want rs_connect_step(int fd, struct rs_fd *e, int ready,
    int64_t now_ms);

/*
 * Returns the monotonic time at which the pending connect next needs a
 * step even without an event (attempt timeout or end of backoff), or
 * RS_NEVER when it is finished.
 */
int64_t rs_connect_next_ms(const struct rs_fd *e);

/*
 * For a finished connect, the poll events the program should see: POLLOUT
 * when connected, POLLOUT|POLLERR|POLLHUP when it failed.
 */
short rs_connect_revents(const struct rs_fd *e);

/*
 * For a blocking read or write on a socket whose logical connect is under
 * way: drives it to its end, as the kernel makes such a call wait for the
 * connect, with the program's file flags restored afterwards.  Returns 0
 * when it ended (connected or failed: see the entry's state), or -errno
 * (EINTR, unless every handler has SA_RESTART).
 */
int rs_connect_wait(int fd, struct rs_fd *e);

/*
 * getsockopt(SO_ERROR) on a failed managed connect: returns the error the
 * program must see (once, as the kernel does) and clears it, or -1 when the
 * real getsockopt should answer.
 */
int rs_connect_take_error(struct rs_fd *e);

/*
 * Formats e's destination for a log line: addr gets "10.0.0.5:5432",
 * "[::1]:80" or "unix:/path"; dest gets "host:port (addr)" when the program
 * resolved a name, else the address alone.  Both are always terminated.
 */
void rs_connect_format_dest(const struct rs_fd *e, char *addr, size_t alen,
    char *dest, size_t dlen);

/*
 * Returns whether every installed handler of an asynchronous signal has
 * SA_RESTART: then a wait the library does on the program's behalf goes
 * on after EINTR, as the kernel restarts the blocking call it replaces.
 */
bool rs_connect_signals_restart(void);

/* Returns the failure class of errno err for a socket of family. */
unsigned rs_connect_classify(int err, int family);

#endif /* RS_CONNECT_H */
