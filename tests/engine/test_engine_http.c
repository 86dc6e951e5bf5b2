/* SPDX-License-Identifier: MIT */
/*
 * test_engine_http.c - the blocking HTTP/1.x status retry engine
 * (httpretry.c, through httpio.c) against the scripted kernel: the
 * program writes one request and reads once, and the script is every
 * system call the library makes in between -- the peeks that judge a
 * response, the drain of a retried one, the sleep of Retry-After or the
 * backoff, a reconnect on the same descriptor, the resend -- then the
 * program's own read.  What reached the wire is checked byte for byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "fake.h"
#include "fdtable.h"
#include "httpio.h"
#include "httpretry.h"

#define FD 103

/* A policy with `http` in the defaults: attempts, read_timeout, and the
   rest of the http map (idempotency_key, retry_after_cap). */
#define HPOLICY(att, rt, key, cap)                                      \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: 1s\n"                                       \
	"  read_timeout: " rt "\n"                                      \
	"  attempts: 3\n"                                               \
	FK_GENEROUS_RETRIES                                             \
	"  http:\n"                                                     \
	"    retry_on_status: [429, 503]\n"                             \
	"    attempts: " att "\n"                                       \
	"    retry_after_cap: " cap "\n"                                \
	"    idempotency_key: " key "\n"

#define PLAIN HPOLICY("3", "off", "off", "5s")
/* No retry budget at all: every retry is denied. */
#define NO_BUDGET "version: 1\n" \
	"defaults:\n" \
	"  retry_budget:\n" \
	"    ratio: 0\n" \
	"    min_per_second: 0\n" \
	"    scope: process\n" \
	"  http:\n" \
	"    retry_on_status: [503]\n"

#define GET "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
#define POST "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
#define R503 "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
#define R503_AFTER(s) \
	"HTTP/1.1 503 Busy\r\nRetry-After: " s "\r\nContent-Length: 0\r\n\r\n"
#define R503_CLOSE \
	"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
#define R503_BODY "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy"
#define R200 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

/* The library's calls, spelled as the kernel answers them. */
#define SENT { .fn = FK_SEND, .fd = FD, .ret = -1 }
#define SEND_FAILS(e) { .fn = FK_SEND, .fd = FD, .err = (e) }
#define PEEK(d) { .fn = FK_RECV, .fd = FD, .data = (d), .ret = -1, \
	.flags = MSG_PEEK }
#define PEEK_NONE(e) { .fn = FK_RECV, .fd = FD, .err = (e), .flags = MSG_PEEK }
#define CONSUME(d) { .fn = FK_RECV, .fd = FD, .data = (d), .ret = -1, \
	.flags = MSG_DONTWAIT }
#define READ(d) { .fn = FK_READ, .fd = FD, .data = (d), .ret = -1 }
/* The program's read on a timed socket (a deadline, read_timeout). */
#define RECV(d) { .fn = FK_RECV, .fd = FD, .data = (d), .ret = -1 }
#define READ_FAILS(e) { .fn = FK_READ, .fd = FD, .err = (e) }
#define SLEEP(t) FK_POLL_QUIET(t)
/* After an incomplete head: has the peer ended?  Not yet, or it has. */
#define OPEN FK_POLL_QUIET(0)
#define ENDED FK_POLL_READY(0, 0, FD, POLLIN | POLLRDHUP)
#define READABLE(t, a) FK_POLL_READY((t), (a), FD, POLLIN)
/* A blocking logical connect that succeeds at once. */
#define RECONNECT FK_DISSOLVE(FD), FK_CONNECT_START(FD), \
	FK_POLL_READY(1001, 1, FD, POLLOUT), FK_SO_ERROR_IS(FD, 0), FK_PEER(FD)

/* Which of the program's calls write the request and read the response. */
enum wcall { W_WRITE, W_WRITEV, W_SENDMSG, W_SEND, W_SENDTO };
enum rcall { R_READ, R_READV, R_RECVMSG, R_RECVFROM };

struct http_case {
	const char *name;
	enum wcall wcall;
	enum rcall rcall;
	bool keyed;		/* an Idempotency-Key was injected: want_sent is
				   the request it went into, sent twice */
	const char *policy;
	const char *request;	/* what the program writes */
	int64_t deadline_in_ms;	/* process deadline; 0: none */
	int read_flags;		/* recv() instead of read() when set */
	int64_t idle_ms;	/* the program's time between write and read */
	enum fk_handler handler;	/* installed during the case */
	struct fk_step steps[32];
	long want;		/* the read's result */
	const char *want_data;	/* what the program read */
	const char *want_sent;	/* everything that reached the wire */
	int64_t want_ms;	/* how long it all took */
	unsigned retries, give_ups, read_timeouts;
	int lowat_peak;		/* the largest SO_RCVLOWAT set (0: never) */
	const char *log;	/* a text the log must contain, or NULL */
	bool second_read;	/* a second read follows, answered READ("") */
};

#define RETRIED(w, r, first, last) { \
	.name = "503 then 200 through " #w " and " #r, .policy = PLAIN, \
	.request = GET, .wcall = (w), .rcall = (r), \
	.steps = { { .fn = (first), .fd = FD, .ret = -1 }, PEEK(R503), \
		CONSUME(R503), SLEEP(101), SENT, PEEK(R200), \
		{ .fn = (last), .fd = FD, .data = R200, .ret = -1 } }, \
	.want = sizeof(R200) - 1, .want_data = R200, .want_sent = GET GET, \
	.want_ms = 101, .retries = 1 }

static const struct http_case cases[] = {
	RETRIED(W_WRITEV, R_READV, FK_WRITEV, FK_READV),
	RETRIED(W_SENDMSG, R_RECVMSG, FK_SENDMSG, FK_RECVMSG),
	RETRIED(W_SEND, R_RECVFROM, FK_SEND, FK_RECVFROM),
	RETRIED(W_SENDTO, R_READ, FK_SEND, FK_READ),
	{
		.name = "idempotency_key: inject: a POST gets one key, replayed",
		.policy = HPOLICY("3", "off", "inject", "5s"), .request = POST,
		.steps = { SENT, SENT, PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = POST, .keyed = true, .want_ms = 101,
		.retries = 1,
	},
	{
		.name = "idempotency_key: inject through writev, buffer by buffer",
		.policy = HPOLICY("3", "off", "inject", "5s"), .request = POST,
		.wcall = W_WRITEV,
		.steps = { SENT, SENT, PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = POST, .keyed = true, .want_ms = 101,
		.retries = 1,
	},
	{
		.name = "503 then 200 on the same connection after the backoff",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 101, .retries = 1,
		.log = "retrying in 100 ms (backoff)",
	},
	{
		.name = "Retry-After in seconds is waited out exactly",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503_AFTER("2")),
			CONSUME(R503_AFTER("2")), SLEEP(2001), SENT,
			PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 2001, .retries = 1,
		.log = "(Retry-After)",
	},
	{
		.name = "Retry-After above retry_after_cap goes to the program",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503_AFTER("60")),
			READ(R503_AFTER("60")) },
		.want = sizeof(R503_AFTER("60")) - 1,
		.want_data = R503_AFTER("60"), .want_sent = GET,
		.give_ups = 1, .log = "Retry-After above retry_after_cap",
	},
	{
		.name = "attempts run out: the program gets the last 503",
		.policy = HPOLICY("2", "off", "off", "5s"), .request = GET,
		.steps = { SENT, PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(R503), READ(R503) },
		.want = sizeof(R503) - 1, .want_data = R503,
		.want_sent = GET GET, .want_ms = 101, .retries = 1,
		.give_ups = 1, .log = "giving up (attempts)",
	},
	{
		.name = "the backoff grows with each retry of one request",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(R503), CONSUME(R503), SLEEP(201), SENT,
			PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET GET, .want_ms = 302, .retries = 2,
	},
	{
		.name = "Connection: close: the request goes on a new connection",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503_CLOSE), CONSUME(R503_CLOSE),
			SLEEP(101), RECONNECT, SENT, PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 102, .retries = 1,
	},
	{
		.name = "a reused connection the server closed: once more, anew",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(""), RECONNECT, SENT, PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET GET, .want_ms = 102, .retries = 1,
	},
	{
		.name = "a resend the closed connection refuses goes anew",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503), CONSUME(R503), SLEEP(101),
			SEND_FAILS(EPIPE), RECONNECT, SENT, PEEK(R200),
			READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 102, .retries = 1,
	},
	{
		.name = "a POST is not replayable: its 503 is the program's",
		.policy = PLAIN, .request = POST,
		.steps = { SENT, PEEK(R503), READ(R503) },
		.want = sizeof(R503) - 1, .want_data = R503,
		.want_sent = POST,
	},
	{
		.name = "a partial head: SO_RCVLOWAT waits for the rest",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK("HTTP/1.1 50"), OPEN, READABLE(-1, 30),
			PEEK(R503), CONSUME(R503), SLEEP(101), SENT,
			PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 131, .retries = 1,
		.lowat_peak = 12,
	},
	{
		/* Found by the soak: the peek saw "HTTP/" however often the
		   peer's end woke the wait, and the read spun for ever. */
		.name = "a head the peer ends: shown as it came, at once",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK("HTTP/"), ENDED, READ("HTTP/") },
		.want = 5, .want_data = "HTTP/", .want_sent = GET,
	},
	{
		.name = "the process deadline refuses the retry",
		.policy = PLAIN, .request = GET, .deadline_in_ms = 50,
		.steps = { SENT, PEEK_NONE(EAGAIN), READABLE(50, 10),
			PEEK(R503), RECV(R503) },
		.want = sizeof(R503) - 1, .want_data = R503, .want_sent = GET,
		.want_ms = 10, .give_ups = 1, .log = "giving up (deadline)",
	},
	{
		.name = "read_timeout: a silent server fails the read",
		.policy = HPOLICY("3", "500ms", "off", "5s"), .request = GET,
		.steps = { SENT, PEEK_NONE(EAGAIN), SLEEP(501) },
		.want = -ETIMEDOUT, .want_sent = GET, .want_ms = 501,
		.read_timeouts = 1, .log = "timed out: no progress for 500 ms",
	},
	{
		.name = "read_timeout counts from the request, not from the read",
		.policy = HPOLICY("3", "500ms", "off", "5s"), .request = GET,
		.idle_ms = 300,
		.steps = { SENT, PEEK_NONE(EAGAIN), SLEEP(201) },
		.want = -ETIMEDOUT, .want_sent = GET, .want_ms = 501,
		.read_timeouts = 1,
	},
	{
		.name = "read_timeout: bytes of a slow head move it on",
		.policy = HPOLICY("3", "500ms", "off", "5s"), .request = GET,
		.steps = { SENT, PEEK_NONE(EAGAIN), READABLE(501, 400),
			PEEK("HTTP/1.1 20"), OPEN, READABLE(501, 400),
			PEEK(R200), RECV(R200) },
		.want = sizeof(R200) - 1, .want_data = R200, .want_sent = GET,
		.want_ms = 800, .lowat_peak = 12,
	},
	{
		/* The kernel gives a socket's error once (the peek takes
		   it): the read fails with it without asking again. */
		.name = "a reset while judging: the program's read says why",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK_NONE(ECONNRESET) },
		.want = -ECONNRESET, .want_sent = GET,
	},
	{
		.name = "not HTTP: the connection passes through for good",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK("SSH-2.0-x\r\n"), READ("SSH-2.0-x\r\n"),
			READ("") },
		.want = 11, .want_data = "SSH-2.0-x\r\n", .want_sent = GET,
		.second_read = true,
	},
	{
		.name = "MSG_DONTWAIT on an empty queue: EAGAIN, nothing taken",
		.policy = PLAIN, .request = GET, .read_flags = MSG_DONTWAIT,
		.steps = { SENT, PEEK_NONE(EAGAIN) },
		.want = -EAGAIN, .want_sent = GET,
	},
	{
		.name = "the retry budget refuses the retry",
		.policy = NO_BUDGET, .request = GET,
		.steps = { SENT, PEEK(R503), READ(R503) },
		.want = sizeof(R503) - 1, .want_data = R503, .want_sent = GET,
		.give_ups = 1, .log = "giving up (budget_exhausted)",
	},
	{
		.name = "a resend waits for room in the socket",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503), CONSUME(R503), SLEEP(101),
			{ .fn = FK_SEND, .fd = FD, .ret = 5 },
			{ .fn = FK_SEND, .fd = FD, .err = EAGAIN },
			FK_POLL_READY(-1, 20, FD, POLLOUT), SENT, PEEK(R200),
			READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 121, .retries = 1,
	},
	{
		.name = "a retried response drained in pieces",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503_BODY), CONSUME("HTTP/1.1 503 B"),
			{ .fn = FK_RECV, .fd = FD, .err = EINTR },
			{ .fn = FK_RECV, .fd = FD, .err = EAGAIN },
			READABLE(-1, 40), CONSUME(&R503_BODY[14]), SLEEP(101),
			SENT, PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 141, .retries = 1,
	},
	{
		.name = "a drain silent past read_timeout: anew on a new connection",
		.policy = HPOLICY("3", "500ms", "off", "5s"), .request = GET,
		.steps = { SENT, PEEK(R503_BODY), CONSUME("HTTP/1.1 503 B"),
			{ .fn = FK_RECV, .fd = FD, .err = EAGAIN }, SLEEP(501),
			SLEEP(101), RECONNECT, SENT, PEEK(R200), RECV(R200) },
		.want = sizeof(R200) - 1, .want_data = R200,
		.want_sent = GET GET, .want_ms = 603, .retries = 1,
	},
	{
		.name = "a reconnect that is refused: the read fails",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R503_CLOSE), CONSUME(R503_CLOSE),
			SLEEP(101), FK_DISSOLVE(FD),
			FK_CONNECT_FAIL(FD, ECONNREFUSED), FK_DISSOLVE(FD),
			SLEEP(101), FK_CONNECT_FAIL(FD, ECONNREFUSED),
			FK_DISSOLVE(FD), SLEEP(201),
			FK_CONNECT_FAIL(FD, ECONNREFUSED), FK_DISSOLVE(FD) },
		.want = -ECONNRESET, .want_sent = GET, .want_ms = 403,
		.retries = 1,
	},
	{
		.name = "a signal in the peek: SA_RESTART goes on",
		.policy = PLAIN, .request = GET, .handler = FK_RESTART_HANDLER,
		.steps = { SENT, PEEK_NONE(EINTR), PEEK(R200), READ(R200) },
		.want = sizeof(R200) - 1, .want_data = R200, .want_sent = GET,
	},
	{
		.name = "a signal in the peek without SA_RESTART: EINTR",
		.policy = PLAIN, .request = GET, .handler = FK_PLAIN_HANDLER,
		.steps = { SENT, PEEK_NONE(EINTR) },
		.want = -EINTR, .want_sent = GET,
	},
	{
		.name = "the program's SO_RCVTIMEO ends a blocking peek: EAGAIN",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK_NONE(EAGAIN) },
		.want = -EAGAIN, .want_sent = GET,
	},
	{
		.name = "a 200 at once costs one peek",
		.policy = PLAIN, .request = GET,
		.steps = { SENT, PEEK(R200), READ(R200), READ("") },
		.want = sizeof(R200) - 1, .want_data = R200, .want_sent = GET,
		.second_read = true,
	},
};

/* The program's write of the request, cut in two for the vectors. */
static ssize_t program_write(const struct http_case *c, struct rs_fd *e)
{
	const char *p = c->request;
	size_t n = strlen(p), half = n / 2;
	struct iovec v[2] = { { (void *)p, half }, { (void *)(p + half),
		n - half } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };

	switch (c->wcall) {
	case W_WRITEV:
		return rs_hio_writev(e, FD, v, 2);
	case W_SENDMSG:
		return rs_hio_sendmsg(e, FD, &m, 0);
	case W_SEND:
		return rs_hio_send(e, FD, p, n, 0);
	case W_SENDTO:
		return rs_hio_sendto(e, FD, p, n, 0, NULL, 0);
	case W_WRITE:
		break;
	}
	return rs_hio_write(e, FD, p, n);
}

static ssize_t program_read(const struct http_case *c, struct rs_fd *e,
    char *buf, size_t cap)
{
	struct iovec v[2] = { { buf, 10 }, { buf + 10, cap - 10 } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };

	if (c->read_flags)
		return rs_hio_recv(e, FD, buf, cap, c->read_flags);
	switch (c->rcall) {
	case R_READV:
		return rs_hio_readv(e, FD, v, 2);
	case R_RECVMSG:
		return rs_hio_recvmsg(e, FD, &m, 0);
	case R_RECVFROM:
		return rs_hio_recvfrom(e, FD, buf, cap, 0, NULL, NULL);
	case R_READ:
		break;
	}
	return rs_hio_read(e, FD, buf, cap);
}

/* Both tries carry the same key, a UUID v4, in the program's request. */
static void assert_keyed(const struct http_case *c, const char *s, size_t n)
{
	const char *key = "Idempotency-Key: ";
	size_t one = strlen(c->want_sent) + strlen(key) + 36 + 2;

	assert_int_equal(n, 2 * one);
	assert_memory_equal(s, s + one, one);
	const char *k = memmem(s, one, key, strlen(key));

	assert_non_null(k);
	assert_int_equal(k[strlen(key) + 14], '4');
	assert_memory_equal(s + one - 2, "hi", 2);
}

static void run_case(void **state)
{
	const struct http_case *c = *state;
	static char buf[RS_HCONN_PEEK];
	size_t n;

	fk_script(c->steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(c->policy), false);

	if (c->deadline_in_ms)
		fk_deadline(c->deadline_in_ms);
	fk_handler(c->handler);
	assert_int_equal(program_write(c, e), strlen(c->request));
	memset(buf, 0, sizeof(buf));
	fk_advance(c->idle_ms);
	e = rs_fd_get(FD);
	long r = program_read(c, e, buf, sizeof(buf) - 1);

	assert_int_equal(r, c->want);
	if (c->want_data)
		assert_string_equal(buf, c->want_data);
	if (c->second_read && (e = rs_fd_get(FD)) != NULL)
		assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf) - 1), 0);
	const char *s = fk_sent(&n);

	if (c->keyed) {
		assert_keyed(c, s, n);
	} else {
		assert_int_equal(n, strlen(c->want_sent));
		assert_memory_equal(s, c->want_sent, n);
	}
	assert_int_equal(fk_now(), c->want_ms);
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), c->retries);
	assert_int_equal(fk_stat(RS_STAT_HTTP_GIVE_UPS), c->give_ups);
	assert_int_equal(fk_stat(RS_STAT_READ_TIMEOUTS), c->read_timeouts);
	/* SO_RCVLOWAT is the program's again (raised for partial heads). */
	assert_int_equal(fk_sock(FD)->rcvlowat, 1);
	assert_int_equal(fk_sock(FD)->rcvlowat_peak, c->lowat_peak);
	if (c->log)
		assert_true(fk_log_has(c->log));
	fk_done();
}

/* A send that takes n bytes, one that finds no room, and a wait for room
   that the program's own SO_SNDTIMEO of 80 ms ends. */
#define SENT_PART(n) { .fn = FK_SEND, .fd = FD, .ret = (n) }
#define SEND_FULL { .fn = FK_SEND, .fd = FD, .err = EAGAIN }
#define OWN_80MS_ENDS FK_POLL_QUIET(81)

/*
 * A blocking program with SO_SNDTIMEO 80 ms writes a request whose head
 * is held (idempotency_key: inject): the flush of the head ends when the
 * program's own time does, not at write_timeout (off: never).  Returns
 * the entry.
 */
static struct rs_fd *own_sndtimeo_write(const struct fk_step *steps,
    const char *request, ssize_t want)
{
	fk_script(steps);
	fk_sock(FD)->sndtimeo.tv_usec = 80 * 1000;
	struct rs_fd *e = fk_connected(FD, fk_policy(HPOLICY("3", "off",
	    "inject", "5s")), false);

	assert_int_equal(rs_hio_write(e, FD, request, strlen(request)), want);
	assert_int_equal(fk_now(), 81);
	return e;
}

/*
 * The POST's head took its 80 ms: the write returns the head's bytes as
 * taken (a short write), the body's write sends the rest of the head
 * first, then the body, and the response is the program's.
 */
static void test_own_sndtimeo_ends_flush(void **state)
{
	static const struct fk_step steps[] = {
		SENT_PART(10), SEND_FULL, OWN_80MS_ENDS, SENT, SENT,
		PEEK(R200), READ(R200), FK_STOP,
	};
	char buf[128] = { 0 };
	size_t n, head = strlen(POST) - 2;

	(void)state;
	struct rs_fd *e = own_sndtimeo_write(steps, POST, (ssize_t)head);

	assert_int_equal(rs_hio_write(e, FD, &POST[head], 2), 2);
	assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf) - 1),
	    sizeof(R200) - 1);
	const char *s = fk_sent(&n);

	assert_true(n > strlen(POST) && memcmp(s, "POST /p", 7) == 0);
	assert_non_null(memmem(s, n, "Idempotency-Key: ", 17));
	assert_memory_equal(s + n - 6, "\r\n\r\nhi", 6);
	fk_done();
}

/*
 * A GET's head, all of the call's bytes: the call is told they all went,
 * so the rest goes in it too, past the program's 80 ms (a shutdown or
 * close next would lose it otherwise); the read is then the plain one.
 */
static void test_own_sndtimeo_get_goes_whole(void **state)
{
	/* Room comes after 200 ms, past the program's 80. */
	static const struct fk_step steps[] = {
		SENT_PART(10), SEND_FULL, FK_POLL_READY(-1, 200, FD, POLLOUT),
		SENT, PEEK(R200), READ(R200), FK_STOP,
	};
	char buf[128] = { 0 };
	size_t n;

	(void)state;
	fk_script(steps);
	fk_sock(FD)->sndtimeo.tv_usec = 80 * 1000;
	struct rs_fd *e = fk_connected(FD, fk_policy(HPOLICY("3", "off",
	    "inject", "5s")), false);

	assert_int_equal(rs_hio_write(e, FD, GET, strlen(GET)),
	    (ssize_t)strlen(GET));
	assert_int_equal(fk_now(), 200);

	assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf) - 1),
	    sizeof(R200) - 1);
	assert_string_equal(buf, R200);
	fk_sent(&n);
	assert_int_equal(n, strlen(GET));
	fk_done();
}

/*
 * A GET's head, all of the call's bytes, whose flush a signal interrupts
 * (no SA_RESTART): the bytes are taken (held), so the call says they
 * went (an EINTR would have the program send them again, into the held
 * request), and the rest goes in the read that awaits the response; a
 * second signal there ends that read with EINTR, the next goes on.
 */
static void test_signal_in_whole_head(void **state)
{
	static const struct fk_step steps[] = {
		SENT_PART(10), SEND_FULL, FK_POLL_EINTR(0), SEND_FULL,
		FK_POLL_EINTR(0), SENT,
		{ .fn = FK_RECV, .fd = FD, .data = R200, .ret = -1,
		  .flags = MSG_PEEK | MSG_DONTWAIT },
		READ(R200), FK_STOP,
	};
	char buf[128] = { 0 };
	size_t n;

	(void)state;
	fk_script(steps);
	fk_handler(FK_PLAIN_HANDLER);
	struct rs_fd *e = fk_connected(FD, fk_policy(HPOLICY("3", "off",
	    "inject", "5s")), false);

	assert_int_equal(rs_hio_write(e, FD, GET, strlen(GET)),
	    (ssize_t)strlen(GET));
	assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf) - 1), -EINTR);
	assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf) - 1),
	    sizeof(R200) - 1);
	const char *sent = fk_sent(&n);

	assert_int_equal(n, strlen(GET));
	assert_memory_equal(sent, GET, n);
	fk_handler(FK_NO_HANDLER);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_own_sndtimeo_ends_flush),
		cmocka_unit_test(test_own_sndtimeo_get_goes_whole),
		cmocka_unit_test(test_signal_in_whole_head),
	};

	return FK_RUN("http engine, blocking", tables, more);
}
