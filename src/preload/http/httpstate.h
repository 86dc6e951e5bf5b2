/* SPDX-License-Identifier: MIT */
/*
 * httpstate.h - the HTTP retry engine's state of one connection (struct
 * rs_hconn): made on the first call that wants it, held by one thread at a
 * time, attached to its descriptor's entry and freed with it, through the
 * release hook this module registers with the table (fdtable.h).
 *
 * Thread-safety: a connection is used by one thread at a time; a second
 * thread that enters while another is inside makes the connection pass
 * through for good (HTTP/1.x clients do not share a connection so).
 */
#ifndef RS_HTTPSTATE_H
#define RS_HTTPSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdtable.h"
#include "http_retry.h"

/* How much of a response head the engine can look at (bigger: shown). */
#define RS_HCONN_PEEK 16384

struct rs_hconn;

/*
 * Where the engine's own reads and writes of a connection go when they
 * are not the socket's: the plaintext of the program's TLS session
 * (tls/tlstx.h), which the http/ layer knows only as this table.  Each call follows libc's convention (-1 and errno,
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
	/*
	 * Whether the transport holds bytes the program reads next (a
	 * response shown or handed over): the waits report fd readable
	 * while it does.  Calls nothing; any thread may ask.
	 */
	bool (*shows)(const struct rs_hconn *h);
	/* What the socket must be ready for before the call that last
	   failed with EAGAIN can go on (POLLIN or POLLOUT): a TLS library
	   may want to read in a write and to write in a read. */
	short (*want)(const struct rs_hconn *h);
	/*
	 * After a reconnect on fd: the session anew (-errno on failure).
	 * block false: one step; -EAGAIN when it must wait for the socket
	 * (want()), and the next call goes on from there.
	 */
	int (*renew)(struct rs_hconn *h, struct rs_fd *e, int fd, bool block);
	/*
	 * Whether the program moves the session's records itself (memory
	 * BIOs it pumps): its read of the socket is what brings them, so
	 * the waits never hide the socket's readability, nor report it
	 * without the kernel (httpwait.c).  NULL: never.
	 */
	bool (*pumped)(const struct rs_hconn *h);
	/* Whether renew can ever succeed (false: never reconnect). */
	bool (*renews)(const struct rs_hconn *h);
	/*
	 * The request needs a new connection and renews() is false: the
	 * last response the transport's drain took goes to the program as
	 * it came, and after it the connection as it now is.  Returns
	 * -ECANCELED (the program reads it), or -errno.
	 */
	int (*hand_over)(struct rs_hconn *h);
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
	bool spoke;			/* the program wrote on it */
	int64_t own_until;		/* the program's SO_RCVTIMEO, this call */
	/* The non-blocking retry, driven by the waits (httpwait.h). */
	int64_t retry_at_ms;		/* WAIT: when the request goes again */
	const char *out;		/* a resend's bytes not sent yet */
	size_t out_left;
	bool connecting;		/* WAIT: a reconnect is under way */
	bool fresh;			/* WAIT: ... and the resend goes on it */
	bool renewing;			/* WAIT: the transport's session is
					   made anew on the new connection */
	bool lowat_set;			/* SO_RCVLOWAT is ours for now */
	uint8_t last_want;		/* what the last step waited for
					   (enum rs_hw_want, httpwait.h) */
	uintptr_t driver;		/* the thread that last called into the
					   transport's session (rs_hconn_me()),
					   the only one whose waits may step it */
	uintptr_t holder;		/* holdcount.h: counted, by whom */
	int lowat_old;			/* the program's SO_RCVLOWAT */
	char buf[RS_HCONN_PEEK];
};

/* The calling thread, as rs_hconn's driver knows it. */
uintptr_t rs_hconn_me(void);

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

/* Releases e's connection state (close, dup, reuse of the number). */
void rs_hconn_drop(struct rs_fd *e);

/*
 * Attaches h to e (e->http), with e's lock held or e not yet seen by
 * another thread, and marks e so that the table's release hook frees h
 * with the entry.
 */
void rs_hconn_attach(struct rs_fd *e, struct rs_hconn *h);

#endif /* RS_HTTPSTATE_H */
