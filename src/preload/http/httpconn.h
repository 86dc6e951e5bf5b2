/* SPDX-License-Identifier: MIT */
/*
 * httpconn.h - HTTP/1.x connections the library follows for deadlines
 * (SPEC 10): accepted connections of a server whose policy sets
 * inbound_deadline, and managed client connections whose rule sets
 * deadline_header.  Everything else is never looked at.
 *
 * One entry per descriptor number, made when tracking starts and reused
 * (never freed) when the number is, so a racing reader never meets freed
 * memory.  An entry is used by one thread at a time: a thread that finds
 * it busy (two threads on one connection at once) stops tracking that
 * connection for good instead of waiting.  When no policy asks for any of
 * this, a lookup is one relaxed load.
 */
#ifndef RS_HTTPCONN_H
#define RS_HTTPCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fdtable.h"
#include "http.h"
#include "runtime.h"

struct rs_httpconn {
	uint32_t busy;		/* taken by one thread; see rs_httpconn_try */
	bool used;		/* tracking this descriptor now */
	bool inbound;		/* accepted: the program reads requests */
	bool lost;		/* a call went unseen: pass through for good */
	bool holding;		/* outbound: a request head is being held */
	const void *records;	/* the followed TLS session whose records the
				   socket carries (its plaintext is fed by
				   tls/), or NULL */
	size_t held;		/* outbound: head bytes earlier writes gave */
	uintptr_t holder;	/* holdcount.h: counted, by this thread */
	const char *header;	/* the deadline header (policy storage) */
	const struct rs_rule *rule;	/* outbound: for the counters */
	struct rs_http h;
};

/* The table, NULL until tracking starts (see httpconn.c). */
extern struct rs_httpconn **rs_httpconn_table;

/* Returns the entry of a tracked descriptor, or NULL.  Lock-free. */
static inline struct rs_httpconn *rs_httpconn_get(int fd)
{
	struct rs_httpconn **t;
	struct rs_httpconn *c;

	if (!(rs_runtime_rare_get() & RS_RARE_HTTPCONN) || fd < 0 ||
	    fd >= RS_FD_MAX)
		return NULL;
	t = __atomic_load_n(&rs_httpconn_table, __ATOMIC_ACQUIRE);
	c = t ? __atomic_load_n(&t[fd], __ATOMIC_ACQUIRE) : NULL;
	return c && __atomic_load_n(&c->used, __ATOMIC_ACQUIRE) ? c : NULL;
}

/*
 * fd carries the records of TLS session `session`, which the library
 * follows (NULL: none now): while it does, the bytes of fd's socket calls
 * are never fed to its tracker, whichever TLS call moves them (GnuTLS
 * reads records in gnutls_session_get_data2, for one); the session's
 * wrappers feed its plaintext instead.
 */
/* rs_httpconn's records before its session is known (a memory BIO's). */
#define RS_HTTPCONN_RECORDS_UNNAMED ((const void *)1)

static inline void rs_httpconn_records(int fd, const void *session)
{
	struct rs_httpconn *c = rs_httpconn_get(fd);

	if (c != NULL)
		__atomic_store_n(&c->records, session, __ATOMIC_RELAXED);
}

/* An accepted connection: tracked when the policy sets inbound_deadline. */
void rs_httpconn_accepted(int fd);

/* A managed connect on fd: tracked when its rule sets deadline_header. */
void rs_httpconn_connecting(int fd, const struct rs_fd *e);

/* Stops tracking fd (close, or its number reused); ends its deadline. */
void rs_httpconn_forget(int fd);

/* Stops tracking every descriptor in [first, last]. */
void rs_httpconn_forget_range(unsigned first, unsigned last);

/*
 * Takes entry c for the calling thread; returns false (and marks the
 * connection lost) when another thread has it.  rs_httpconn_put() gives
 * it back.
 */
bool rs_httpconn_try(struct rs_httpconn *c);
void rs_httpconn_put(struct rs_httpconn *c);

/*
 * The program wrote p[0..n) of a response on inbound fd through its TLS
 * session: feeds the tracker, so that the end of the response ends the
 * thread's deadline.  errno is preserved.
 */
void rs_httpconn_wrote(struct rs_httpconn *c, int fd, const void *p, size_t n);

/*
 * The program read r bytes (0: end of file) into iov on tracked fd:
 * feeds them to the tracker, and on an inbound request head takes or ends
 * the calling thread's deadline.  errno is preserved.
 */
void rs_httpconn_read(struct rs_httpconn *c, int fd, const struct iovec *iov,
    int cnt, ssize_t r);

/*
 * The send of msg as the program's call would make it: through the HTTP
 * retry engine and the io engine when e is managed (so an edited head is
 * what the retries keep and replay), else the real call.
 */
ssize_t rs_httpconn_raw_send(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags);

/*
 * Feeds the first n bytes of iov to c's tracker in direction dir, acting
 * on each event (inbound deadlines).  With stop_at_head, stops right
 * after a request head instead, with *ev = RS_HTTP_EV_HEAD.  Returns the
 * bytes consumed; *ev is the last event (RS_HTTP_EV_PASS: gave up).
 */
size_t rs_httpconn_feed(struct rs_httpconn *c, int fd, enum rs_http_dir dir,
    const struct iovec *iov, int cnt, size_t n, bool stop_at_head,
    enum rs_http_event *ev);

/*
 * Whether c's tracker has given up (passes everything through): also when
 * a call went unseen (another thread had the entry), which it then gives
 * up for good.  With c taken.
 */
bool rs_httpconn_lost(struct rs_httpconn *c);


#endif /* RS_HTTPCONN_H */
