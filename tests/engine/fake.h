/* SPDX-License-Identifier: MIT */
/*
 * fake.h - a scripted stand-in for the kernel under the engines.
 *
 * The engine tests link every preload object except the boundary, the
 * real-call table and start-up; these fakes take their place:
 *
 *   - rs_real_*() (fake_real.c, fake_wait.c, fake_script.c): calls that decide what an engine does
 *     next -- connect, the waits, getsockopt(SO_ERROR), getpeername and the
 *     transfers -- follow a script of expected steps, each checked for its
 *     descriptor and, where given, its timeout, flags and length.  Calls
 *     that only carry state -- fcntl, the other socket options, epoll_ctl --
 *     are answered from a small model of each socket and of each epoll
 *     instance's interest list, which the tests then inspect.
 *   - the monotonic clock (fake_env.c): moves only when a fake wait says
 *     so (a wait that times out advances it by its timeout), so every
 *     timing is exact.
 *   - the runtime (policy, process deadline) and the statistics counters.
 *
 * A call that does not match the script is recorded and answered with
 * EIO, never with a jump out of the engine (which may hold a lock); the
 * test fails at fk_done().  Single-threaded.
 */
#ifndef RS_TEST_FAKE_H
#define RS_TEST_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "fdtable.h"
#include "policy.h"
#include "stats.h"

/* The scripted calls. */
enum fk_fn {
	FK_END = 0,	/* the end of a script */
	FK_CONNECT,
	FK_POLL,
	FK_PPOLL,
	FK_SELECT,
	FK_PSELECT,
	FK_EPOLL_PWAIT,
	FK_EPOLL_PWAIT2,
	FK_SO_ERROR,	/* getsockopt(SOL_SOCKET, SO_ERROR) */
	FK_GETPEERNAME,
	FK_READ,
	FK_READV,
	FK_RECV,
	FK_RECVFROM,
	FK_RECVMSG,
	FK_RECVMMSG,
	FK_WRITE,
	FK_WRITEV,
	FK_SEND,
	FK_SENDTO,
	FK_SENDMSG,
	FK_SENDMMSG,
	FK_GETADDRINFO,	/* ret: the EAI code (0: one answer, 127.0.0.1) */
	FK_GETHOSTBYNAME, /* gethostbyname*(): ret, the h_errno (0: one
				   answer); the _r forms: err, their result */
	FK_NFN
};

/* What a wait finds ready: poll events, or epoll events. */
struct fk_ready {
	int fd;
	unsigned events;
};

#define FK_MAX_READY 4

/* One expected call and its result. */
struct fk_step {
	enum fk_fn fn;
	int fd;			/* expected descriptor (the epfd of a wait) */
	int err;		/* the call fails with this errno */
	long ret;		/* result; transfers: bytes moved (-1: all) */
	bool unspec;		/* connect: expects AF_UNSPEC (a dissolve) */
	int so_error;		/* FK_SO_ERROR: the pending error */
	bool check_tmo;		/* waits: the timeout must be tmo_ms */
	int tmo_ms;		/* (-1: none) */
	int64_t advance_ms;	/* the clock moves this much in the call;
				   a wait that finds nothing moves it by its
				   timeout when this is 0 */
	struct fk_ready ready[FK_MAX_READY];
	const char *data;	/* reads: the bytes delivered */
	int flags;		/* transfers: flags that must be set */
	size_t len;		/* transfers: the length offered, 0: any */
	void (*during)(void);	/* run as the call starts: what happens
				   while it is under way */
	int max;		/* epoll waits: expected maxevents, 0: any */
	size_t part;		/* sendmmsg: bytes of the last message
				   counted, when it went in part (0: whole) */
};

/* Step builders, so that a script reads as what the kernel does. */
#define FK_STOP { .fn = FK_END }
#define FK_CONNECT_START(f) \
	{ .fn = FK_CONNECT, .fd = (f), .err = EINPROGRESS }
#define FK_CONNECT_NOW(f) { .fn = FK_CONNECT, .fd = (f) }
#define FK_CONNECT_FAIL(f, e) { .fn = FK_CONNECT, .fd = (f), .err = (e) }
#define FK_DISSOLVE(f) { .fn = FK_CONNECT, .fd = (f), .unspec = true }
/* Dissolving an attempt that may still be in SYN_SENT (after a timeout or
   an ICMP error): AF_UNSPEC, then the ECONNRESET it leaves is read away. */
#define FK_ABORT(f) FK_DISSOLVE(f), FK_SO_ERROR_IS((f), ECONNRESET)
/* An attempt that the kernel says is still in SYN_SENT at connect_timeout
   (no error, no peer) is timed out and aborted. */
#define FK_TIMED_OUT(f) FK_SO_ERROR_IS((f), 0), FK_NO_PEER(f), FK_ABORT(f)
#define FK_SO_ERROR_IS(f, e) { .fn = FK_SO_ERROR, .fd = (f), .so_error = (e) }
#define FK_PEER(f) { .fn = FK_GETPEERNAME, .fd = (f) }
#define FK_NO_PEER(f) { .fn = FK_GETPEERNAME, .fd = (f), .err = ENOTCONN }
/* The signal mask of the last scripted ppoll. */
extern const sigset_t *fk_ppoll_mask;

/* A poll (ppoll) with timeout t that finds nothing: the clock moves t. */
#define FK_POLL_QUIET(t) \
	{ .fn = FK_POLL, .fd = -1, .check_tmo = true, .tmo_ms = (t) }
#define FK_PPOLL_QUIET(t) \
	{ .fn = FK_PPOLL, .fd = -1, .check_tmo = true, .tmo_ms = (t) }
/* A poll (ppoll) with timeout t that finds f ready with ev after a ms. */
#define FK_POLL_READY(t, a, f, ev) \
	{ .fn = FK_POLL, .fd = -1, .check_tmo = true, .tmo_ms = (t), \
	  .advance_ms = (a), .ready = { { (f), (ev) } } }
#define FK_PPOLL_READY(t, a, f, ev) \
	{ .fn = FK_PPOLL, .fd = -1, .check_tmo = true, .tmo_ms = (t), \
	  .advance_ms = (a), .ready = { { (f), (ev) } } }
/* A poll (ppoll) interrupted by a signal after a ms. */
#define FK_POLL_EINTR(a) \
	{ .fn = FK_POLL, .fd = -1, .err = EINTR, .advance_ms = (a) }
#define FK_PPOLL_EINTR(a) \
	{ .fn = FK_PPOLL, .fd = -1, .err = EINTR, .advance_ms = (a) }

/*
 * A policy for the tests, as YAML text: connect_timeout 1s, backoff 100 ms
 * then 200 ms (no jitter), a per-process retry budget; attempts and the
 * read and write timeouts as given ("3", "500ms", "off").
 */
#define FK_POLICY(att, rt, wt)                                          \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: 1s\n"                                       \
	"  read_timeout: " rt "\n"                                      \
	"  write_timeout: " wt "\n"                                     \
	"  attempts: " att "\n"                                         \
	"  backoff:\n"                                                  \
	"    base: 100ms\n"                                             \
	"    jitter: none\n"                                            \
	"  retry_budget:\n"                                             \
	"    scope: process\n"

/*
 * The part of a test policy's defaults that the HTTP, deadline and
 * resolver cases share: backoff 100 ms then 200 ms (no jitter), a retry
 * budget that never denies, per process.
 */
#define FK_GENEROUS_RETRIES                                             \
	"  backoff:\n"                                                  \
	"    base: 100ms\n"                                             \
	"    jitter: none\n"                                            \
	"  retry_budget:\n"                                             \
	"    ratio: 1000\n"                                             \
	"    min_per_second: 1000\n"                                    \
	"    scope: process\n"

/* Sets the script (terminated by FK_END); resets model, clock, counters. */
void fk_script(const struct fk_step *steps);

/*
 * Asserts (cmocka) that every step ran and no call was unexpected, and
 * forgets every managed descriptor the test made.
 */
void fk_done(void);

/* How many calls the script has consumed. */
size_t fk_consumed(void);

/* The model of one socket (fd 0 .. FK_MAX_FD - 1). */
#define FK_MAX_FD 256

struct fk_sock {
	int flags;			/* F_GETFL */
	int type;			/* SO_TYPE; SOCK_STREAM by default */
	unsigned user_timeout;		/* TCP_USER_TIMEOUT */
	unsigned user_timeout_peak;	/* the largest value ever set */
	int user_timeout_sets;		/* setsockopt calls for it */
	struct timeval sndtimeo, rcvtimeo;
	int setfl_calls;		/* F_SETFL calls */
	int inq;			/* FIONREAD: peer bytes queued */
	int rcvlowat;			/* SO_RCVLOWAT (1 by default) */
	int rcvlowat_peak;		/* the largest value ever set */
	int rcvlowat_sets;		/* setsockopt calls for it */
};

struct fk_sock *fk_sock(int fd);

/* The kernel's copy of one epoll registration, or NULL when absent. */
struct fk_epreg {
	int epfd, fd;
	uint32_t events;
	uint64_t data;
	bool disarmed;			/* EPOLLONESHOT delivered */
};

const struct fk_epreg *fk_epoll_reg(int epfd, int fd);

/* epoll_ctl calls of each op (ADD 1, DEL 2, MOD 3) since fk_script(). */
int fk_epoll_ctl_count(int op);

/*
 * What the i-th wait of the test (0-based, poll and epoll alike) watched
 * on fd: its poll events or the events of its epoll registration, or -1
 * when fd was not watched (absent, negated, or a disarmed one-shot).
 */
int fk_watched(int i, int fd);

/* How many waits the test made. */
int fk_waits(void);

/* Everything the engines sent, in order. */
const char *fk_sent(size_t *len);

/* Returns whether the log of the test has a line containing text. */
bool fk_log_has(const char *text);

/* The clock: milliseconds since the test's start (rounded down). */
int64_t fk_now(void);
void fk_advance(int64_t ms);
/* The same in microseconds, and what each reading of it costs (0). */
int64_t fk_now_us(void);
void fk_advance_us(int64_t us);
void fk_clock_cost_us(int64_t us);
/* How many times the engines have read the (fine) clock so far. */
unsigned fk_clock_reads(void);

/*
 * The runtime: loads policy YAML text (kept until the next call) and makes
 * the runtime active with it; deadline_ms is relative to now, or RS_NEVER.
 * Returns the policy.
 */
const struct rs_policy *fk_policy(const char *yaml);
void fk_deadline(int64_t in_ms);

/* How many times counter k was added to since fk_script(). */
unsigned fk_stat(enum rs_stat k);

/* A stream socket address on 127.0.0.1:port, for connect(). */
void fk_addr(struct sockaddr_storage *ss, socklen_t *len, unsigned port);

/* A unix socket address for path ("@name": abstract, no terminator). */
void fk_unix_addr(struct sockaddr_storage *ss, socklen_t *len,
    const char *path);

/*
 * Makes fd a managed socket connected now to 127.0.0.1:5432 under the
 * defaults of p, as a finished connect leaves it.  Returns its entry.
 */
struct rs_fd *fk_connected(int fd, const struct rs_policy *p,
    bool nonblocking);

/*
 * Starts a managed connect of fd to 127.0.0.1:5432 (rs_connect(), then
 * what the boundary does after it).  Returns rs_connect()'s result.
 */
int fk_connect(int fd, bool nonblocking);

/* The SIGUSR1 handler a test installs: none, without or with SA_RESTART. */
enum fk_handler { FK_NO_HANDLER, FK_PLAIN_HANDLER, FK_RESTART_HANDLER };
void fk_handler(enum fk_handler kind);

/*
 * A table of cases: one cmocka test per row, each row a struct whose first
 * member is its name (const char *), run by run with the row as *state.
 */
struct fk_table {
	const void *rows;
	size_t n, size;
	void (*run)(void **state);
};

#define FK_TABLE(a, f) { (a), sizeof(a) / sizeof((a)[0]), sizeof((a)[0]), (f) }

/*
 * Runs the rows of the tables, then the tests in more, as one group; each
 * test without a teardown gets one that forgets what the test left
 * behind (it may have failed half way).  Returns cmocka's result.
 */
struct CMUnitTest;
#define FK_RUN(name, tables, more)                                      \
	fk_run_group((name), (tables), sizeof(tables) / sizeof((tables)[0]), \
	    (more), sizeof(more) / sizeof((more)[0]))
int fk_run_group(const char *name, const struct fk_table *tables,
    size_t ntables, const struct CMUnitTest *more, size_t nmore);

/*
 * The sleeps the engines made (clock_nanosleep, wrapped): each advances
 * the clock by its length.  Returns how many, and their lengths in ms.
 */
int fk_sleeps(const int64_t **ms);

/* For fake_script.c: resets (forgets) the environment's part of a test. */
void fk_env_reset(void);
void fk_env_forget(void);

#endif /* RS_TEST_FAKE_H */
