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
#include "http_retry.h"
#include "log.h"

/* How much of a response head the engine can look at (bigger: shown). */
#define RS_HCONN_PEEK 16384

struct rs_hconn;

/*
 * Where the engine's own reads and writes of a connection go when they
 * are not the socket's: the plaintext of the program's TLS session
 * (tls/tlstx.h).  Each call follows libc's convention (-1 and errno,
 * EAGAIN when it would block, 0 at the end of the stream); none blocks
 * unless block is given.  One engine, two byte sources: the HTTP logic
 * never knows which it is fed from.
 */
struct rs_htx {
	/* The response so far, from its first byte not yet read (MSG_PEEK). */
	ssize_t (*peek)(struct rs_hconn *h, int fd, char *buf, size_t cap,
	    bool block);
	/* Consumes up to cap bytes of it (a drain). */
	ssize_t (*recv)(struct rs_hconn *h, int fd, char *buf, size_t cap);
	/* Sends p[0..n) or part of it. */
	ssize_t (*send)(struct rs_hconn *h, int fd, const char *p, size_t n);
	/* Whether bytes wait that a poll of fd would not report. */
	bool (*ready)(const struct rs_hconn *h);
	/* After a reconnect on fd: the session anew (-errno on failure). */
	int (*renew)(struct rs_hconn *h, struct rs_fd *e, int fd);
	/* Whether renew can ever succeed (false: never reconnect). */
	bool (*renews)(const struct rs_hconn *h);
};

struct rs_hconn {
	struct rs_hr m;
	const struct rs_htx *tx;	/* NULL: the socket's own bytes */
	void *tx_ctx;			/* the transport's, for this one */
	uint32_t prev_wait_ms;		/* decorrelated jitter */
	int busy;			/* HCONN_IDLE, _HELD, _DROPPED (atomic) */
	uint32_t fd_gen;		/* the entry's generation when entered */
	bool conflict;			/* another one came meanwhile */
	bool orphan;			/* its descriptor is no longer managed */
	bool reused;			/* the last resend reused the connection */
	int64_t own_until;		/* the program's SO_RCVTIMEO, this call */
	/* The non-blocking retry, driven by the waits (httpwait.h). */
	int64_t retry_at_ms;		/* WAIT: when the request goes again */
	const char *out;		/* a resend's bytes not sent yet */
	size_t out_left;
	bool connecting;		/* WAIT: a reconnect is under way */
	bool fresh;			/* WAIT: ... and the resend goes on it */
	bool lowat_set;			/* SO_RCVLOWAT is ours for now */
	int lowat_old;			/* the program's SO_RCVLOWAT */
	char buf[RS_HCONN_PEEK];
};

/*
 * Enters the engine for e: returns its connection state, made on first use
 * when e's rule enables http, or NULL when the call should go the plain
 * way (no http, pass-through, another thread inside).  Pair with
 * rs_hconn_leave().
 */
struct rs_hconn *rs_hconn_enter(struct rs_fd *e);

/*
 * Enters the engine for e as a connection fed by transport tx (ctx: its
 * own state): as rs_hconn_enter(), but the state is made (or one that the
 * socket's bytes had made is started afresh) with tx, and only a state of
 * that transport and ctx is returned.  The socket's own calls on such a
 * connection go the plain way (rs_hconn_enter() returns NULL for them).
 */
struct rs_hconn *rs_hconn_enter_tx(struct rs_fd *e, const struct rs_htx *tx,
    void *ctx);
void rs_hconn_leave(struct rs_fd *e, struct rs_hconn *h);

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

/*
 * Enters the engine for a wait: as rs_hconn_enter(), except that a thread
 * already inside is no conflict (the wait looks again later): *busy is
 * set and NULL returned.
 */
struct rs_hconn *rs_hconn_enter_wait(struct rs_fd *e, bool *busy);

/*
 * Whether the descriptor was closed since h was entered: another thread
 * closed it while this one waited in the engine, and the number may be
 * another socket's now, its entry another connection's.  The waiting call
 * ends with EBADF and leaves h (which the close left to it to free).
 */
bool rs_hconn_closed(const struct rs_fd *e, const struct rs_hconn *h);

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
 * Logs the judged response of h at level: a retry after wait_ms, or
 * (wait_ms < 0) a give-up; outcome ends the line (httplog.c).
 */
void rs_hconn_log(const struct rs_fd *e, const struct rs_hconn *h,
    enum rs_log_level level, int64_t wait_ms, const char *outcome);

/* A SHOW verdict: logs a give-up when the status was a retried one. */
void rs_hconn_shown(const struct rs_fd *e, struct rs_hconn *h);

/* Releases e's connection state (close, dup, reuse of the number). */
void rs_hconn_drop(struct rs_fd *e);

#endif /* RS_HTTPRETRY_H */
