/* SPDX-License-Identifier: MIT */
/*
 * test_engine_httpwait.c - the non-blocking HTTP/1.x status retry
 * (httpwait.c) against the scripted kernel: each case is what the program
 * does -- write a request, let its waits step the engine, let time pass,
 * read -- and the script is every system call the library makes for it.
 * A wait must hide a retried response, sleep out the backoff as a timer,
 * resend, and report the socket only when the response the program sees
 * is queued.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include <cmocka.h>

#include "clock.h"
#include "fake.h"
#include "fdtable.h"
#include "httpio.h"
#include "httpretry.h"
#include "httpwait.h"
#include "ktimeo.h"
#include "wait.h"

#define EP 112
#define DATA 0xbeefULL

#define FD 104

#define HPOLICY(rt)                                                     \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: 1s\n"                                       \
	"  read_timeout: " rt "\n"                                      \
	"  attempts: 3\n"                                               \
	FK_GENEROUS_RETRIES                                             \
	"  http:\n"                                                     \
	"    retry_on_status: [503]\n"                                  \
	"    attempts: 3\n"

#define GET "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
#define R503 "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
#define R503_CLOSE \
	"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
#define R200 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

#define SENT { .fn = FK_SEND, .fd = FD, .ret = -1 }
#define SENT_PART(n) { .fn = FK_SEND, .fd = FD, .ret = (n) }
#define SEND_FULL { .fn = FK_SEND, .fd = FD, .err = EAGAIN }
#define PEEK(d) { .fn = FK_RECV, .fd = FD, .data = (d), .ret = -1, \
	.flags = MSG_PEEK | MSG_DONTWAIT }
#define PEEK_NONE { .fn = FK_RECV, .fd = FD, .err = EAGAIN, \
	.flags = MSG_PEEK | MSG_DONTWAIT }
#define CONSUME(d) { .fn = FK_RECV, .fd = FD, .data = (d), .ret = -1, \
	.flags = MSG_DONTWAIT }
#define READ(d) { .fn = FK_READ, .fd = FD, .data = (d), .ret = -1 }

/* What the program does, in order. */
enum op_kind {
	OP_END,
	OP_WRITE,	/* writes the request; want: its result */
	OP_STEP,	/* a wait steps the engine: arg ready; want: the
			   rs_hw_want; next_in: when it wants a step again,
			   relative to the test's start (-1: never) */
	OP_POLL,	/* as OP_STEP through rs_hwait_poll_events(): want
			   the events to watch (-1: as usual) */
	OP_ADVANCE,	/* arg ms pass */
	OP_READ,	/* reads; want: the result */
	OP_BLOCKING,	/* the program clears O_NONBLOCK */
	OP_SO_ERROR,	/* asks SO_ERROR; want: what the engine holds */
	OP_RCVTIMEO,	/* the program sets SO_RCVTIMEO to arg ms */
};

struct op {
	enum op_kind kind;
	long arg;
	long want;
	int64_t next_in;
};

#define WRITE { OP_WRITE, 0, sizeof(GET) - 1, 0 }
#define STEP(ready, w, nx) { OP_STEP, (ready), (w), (nx) }
#define POLLEV(ready, w) { OP_POLL, (ready), (w), 0 }
#define ADVANCE(ms) { OP_ADVANCE, (ms), 0, 0 }
#define READS(w) { OP_READ, 0, (w), 0 }
#define BLOCKING { OP_BLOCKING, 0, 0, 0 }
#define WRITES(w) { OP_WRITE, 0, (w), 0 }
#define SO_ERROR_HELD(w) { OP_SO_ERROR, 0, (w), 0 }
#define RCVTIMEO(ms) { OP_RCVTIMEO, (ms), 0, 0 }

struct hw_case {
	const char *name;
	const char *policy;
	struct fk_step steps[24];
	struct op ops[16];
	const char *want_sent;
	const char *want_data;	/* what the last read returned */
	unsigned retries;
	int lowat_peak;		/* the largest SO_RCVLOWAT set (0: never) */
};

#define PEEK_FAILS(e) { .fn = FK_RECV, .fd = FD, .err = (e), \
	.flags = MSG_PEEK | MSG_DONTWAIT }
#define READ_FAILS(e) { .fn = FK_READ, .fd = FD, .err = (e) }
#define RECONNECTED FK_DISSOLVE(FD), FK_CONNECT_START(FD), \
	FK_SO_ERROR_IS(FD, 0), FK_PEER(FD)

static const struct hw_case cases[] = {
	{
		.name = "a new connection that closes at once: EOF, no loop",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503_CLOSE), CONSUME(R503_CLOSE),
			RECONNECTED, SENT, PEEK(""), READ("") },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), ADVANCE(101),
			STEP(0, RS_HW_OUT, 1102), STEP(1, RS_HW_SHOW, -1),
			READS(0) },
		.want_sent = GET GET, .want_data = "", .retries = 1,
	},
	{
		.name = "a reused connection reset before the response: anew",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), SENT,
			PEEK_FAILS(ECONNRESET), RECONNECTED, SENT, PEEK(R200),
			READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), ADVANCE(101),
			STEP(0, RS_HW_OUT, 1102), STEP(1, RS_HW_SHOW, -1),
			READS(sizeof(R200) - 1) },
		.want_sent = GET GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "a reused connection that refuses the resend: anew",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503),
			{ .fn = FK_SEND, .fd = FD, .err = EPIPE }, RECONNECTED,
			SENT, PEEK(R200), READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), ADVANCE(101),
			STEP(0, RS_HW_OUT, 1102), STEP(1, RS_HW_SHOW, -1),
			READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		/* The kernel gives a socket's error once (the peek takes
		   it): the engine keeps it for the program's read. */
		.name = "an error in the peek: nothing hidden, the read says it",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK_FAILS(ECONNRESET) },
		.ops = { WRITE, STEP(1, RS_HW_NONE, -1), READS(-ECONNRESET) },
		.want_sent = GET,
	},
	{
		/* Linux reports it to whichever comes first: a write. */
		.name = "an error in the peek goes to the next write, once",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK_FAILS(ECONNRESET), READ("") },
		.ops = { WRITE, STEP(1, RS_HW_NONE, -1), WRITES(-ECONNRESET),
			READS(0) },
		.want_sent = GET, .want_data = "",
	},
	{
		/* ... or getsockopt(SO_ERROR), which takes it as well. */
		.name = "an error in the peek goes to SO_ERROR, once",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK_FAILS(ECONNRESET), READ("") },
		.ops = { WRITE, STEP(1, RS_HW_NONE, -1),
			SO_ERROR_HELD(-ECONNRESET), SO_ERROR_HELD(0),
			READS(0) },
		.want_sent = GET, .want_data = "",
	},
	{
		/* A blocking read that finishes a resend in parts: the
		   peek after it takes the error, which this read gets. */
		.name = "an error in the finish's peek: the same read says it",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), FK_POLL_QUIET(101),
			SENT_PART(5), SEND_FULL, FK_POLL_READY(-1, 0, FD,
			POLLOUT), SENT, PEEK_FAILS(ETIMEDOUT) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), BLOCKING,
			READS(-ETIMEDOUT) },
		.want_sent = GET GET, .retries = 1,
	},
	{
		.name = "poll: the resend in parts watches POLLOUT",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), SENT_PART(5),
			SEND_FULL, SENT, PEEK(R200), READ(R200) },
		.ops = { WRITE, POLLEV(1, 0), ADVANCE(101), POLLEV(0, POLLOUT),
			POLLEV(1, -1), READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "a wait hides the 503, sleeps out the backoff, resends",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), SENT, PEEK_NONE,
			PEEK(R200), READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), ADVANCE(101),
			STEP(0, RS_HW_IN, -1), STEP(1, RS_HW_SHOW, -1),
			READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "a read during the backoff fails with EAGAIN",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), SENT, PEEK(R200),
			READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), READS(-EAGAIN),
			ADVANCE(101), READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "poll watches nothing during the backoff, then POLLIN",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), SENT, PEEK_NONE,
			PEEK(R200), READ(R200) },
		.ops = { WRITE, POLLEV(1, 0), ADVANCE(101), POLLEV(0, POLLIN),
			POLLEV(1, -1), READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "a resend the socket takes in parts waits for room",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), SENT_PART(5),
			SEND_FULL, SENT, PEEK(R200), READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), ADVANCE(101),
			STEP(0, RS_HW_OUT, -1), STEP(1, RS_HW_SHOW, -1),
			READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "a partial head raises SO_RCVLOWAT, then puts it back",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK("HTTP/1.1 2"), FK_POLL_QUIET(0), PEEK(R200),
			READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_IN, -1), STEP(1, RS_HW_SHOW, -1),
			READS(sizeof(R200) - 1) },
		.want_sent = GET, .want_data = R200, .lowat_peak = 11,
	},
	{
		.name = "read_timeout: the wait is hidden until it falls due",
		.policy = HPOLICY("500ms"),
		.steps = { SENT, PEEK_NONE, PEEK_NONE },
		.ops = { WRITE, STEP(1, RS_HW_IN, 501), ADVANCE(501),
			STEP(0, RS_HW_NONE, -1) },
		.want_sent = GET,
	},
	{
		/* Found by the soak: "HTTP/" and then the peer's end were
		   hidden until the program's own timeout. */
		.name = "a head the peer ends: nothing hidden, shown as it came",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK("HTTP/"),
			FK_POLL_READY(0, 0, FD, POLLIN | POLLRDHUP), READ("HTTP/") },
		.ops = { WRITE, STEP(1, RS_HW_NONE, -1), READS(5) },
		.want_sent = GET, .want_data = "HTTP/",
	},
	{
		.name = "not HTTP: nothing hidden, the socket is the kernel's",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK("SSH-2.0-x\r\n"), READ("SSH-2.0-x\r\n") },
		.ops = { WRITE, STEP(1, RS_HW_SHOW, -1), STEP(1, RS_HW_NONE, -1),
			READS(11) },
		.want_sent = GET, .want_data = "SSH-2.0-x\r\n",
	},
	{
		.name = "O_NONBLOCK cleared mid-retry: the read finishes it",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), FK_POLL_QUIET(101),
			SENT, { .fn = FK_RECV, .fd = FD, .data = R200,
			.ret = -1, .flags = MSG_PEEK }, READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), BLOCKING,
			READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		/* The program's own 80 ms ends its blocking read within the
		   backoff, with EAGAIN as the kernel's read would; the next
		   read sleeps out the rest and gets the retried answer. */
		.name = "O_NONBLOCK cleared mid-retry: own SO_RCVTIMEO ends it",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503), CONSUME(R503), FK_POLL_QUIET(81),
			FK_POLL_QUIET(20), SENT, { .fn = FK_RECV, .fd = FD,
			.data = R200, .ret = -1, .flags = MSG_PEEK },
			READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), BLOCKING,
			RCVTIMEO(80), READS(-EAGAIN), READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
	{
		.name = "Connection: close: a reconnect the waits step",
		.policy = HPOLICY("off"),
		.steps = { SENT, PEEK(R503_CLOSE), CONSUME(R503_CLOSE),
			FK_DISSOLVE(FD), FK_CONNECT_START(FD),
			FK_SO_ERROR_IS(FD, 0), FK_PEER(FD), SENT, PEEK(R200),
			READ(R200) },
		.ops = { WRITE, STEP(1, RS_HW_TIMER, 101), ADVANCE(101),
			STEP(0, RS_HW_OUT, 1102), STEP(1, RS_HW_SHOW, -1),
			READS(sizeof(R200) - 1) },
		.want_sent = GET GET, .want_data = R200, .retries = 1,
	},
};

static void run_op(const struct hw_case *c, const struct op *o, char *buf,
    size_t cap)
{
	struct rs_fd *e = rs_fd_get(FD);
	int64_t now = rs_clock_now_ms(), next = RS_NEVER, start = now - fk_now();

	assert_non_null(e);
	switch (o->kind) {
	case OP_WRITE:
		assert_int_equal(rs_hio_write(e, FD, GET, strlen(GET)),
		    o->want);
		break;
	case OP_STEP:
		assert_int_equal(rs_hwait_step(e, FD, (int)o->arg, now, &next),
		    o->want);
		assert_int_equal(next == RS_NEVER ? -1 : next - start,
		    o->next_in);
		break;
	case OP_POLL:
		assert_int_equal(rs_hwait_poll_events(e, FD, (int)o->arg, now,
		    &next), o->want);
		break;
	case OP_ADVANCE:
		fk_advance(o->arg);
		break;
	case OP_READ:
		memset(buf, 0, cap);
		assert_int_equal(rs_hio_read(e, FD, buf, cap - 1), o->want);
		if (o->want > 0 && c->want_data)
			assert_string_equal(buf, c->want_data);
		break;
	case OP_BLOCKING:
		fk_sock(FD)->flags &= ~O_NONBLOCK;
		e->nonblocking = false;
		break;
	case OP_SO_ERROR:
		assert_int_equal(rs_hio_take_error(e), o->want);
		break;
	case OP_RCVTIMEO:
		fk_sock(FD)->rcvtimeo.tv_usec = o->arg * 1000;
		rs_ktimeo_set_by_program(e, false, &fk_sock(FD)->rcvtimeo);
		break;
	case OP_END:
		break;
	}
}

static void run_case(void **state)
{
	const struct hw_case *c = *state;
	static char buf[RS_HCONN_PEEK];
	size_t n;

	fk_script(c->steps);
	fk_connected(FD, fk_policy(c->policy), true);
	for (size_t i = 0; i < 16 && c->ops[i].kind != OP_END; i++)
		run_op(c, &c->ops[i], buf, sizeof(buf));
	const char *s = fk_sent(&n);

	assert_int_equal(n, strlen(c->want_sent));
	assert_memory_equal(s, c->want_sent, n);
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), c->retries);
	assert_int_equal(fk_sock(FD)->rcvlowat_peak, c->lowat_peak);
	assert_int_equal(fk_sock(FD)->rcvlowat, 1);
	fk_done();
}

/* An epoll wait on EP that finds FD readable after a ms. */
#define EPOLL_READY(a) { .fn = FK_EPOLL_PWAIT, .fd = EP, .advance_ms = (a), \
	.ready = { { FD, EPOLLIN } } }

/*
 * The program registers FD for events with EP, writes the request and
 * waits once: the wait reports FD readable, with the program's data.
 */
static void epoll_round(const struct fk_step *steps, uint32_t events)
{
	struct epoll_event ev[4], reg = { .events = events, .data.u64 = DATA };

	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(HPOLICY("off")), true);

	assert_int_equal(rs_wait_epoll_ctl(EP, EPOLL_CTL_ADD, FD, &reg), 0);
	assert_int_equal(rs_hio_write(e, FD, GET, strlen(GET)), strlen(GET));
	assert_int_equal(rs_wait_epoll_wait(EP, ev, 4, 5000), 1);
	assert_int_equal(ev[0].events, EPOLLIN);
	assert_int_equal(ev[0].data.u64, DATA);
}

/*
 * epoll, level-triggered: the program's one wait sees nothing of the 503
 * (the kernel holds a tagged EPOLLIN, then nothing for the backoff, then
 * the tagged EPOLLIN again), and then the 200 with its own data word.
 */
static void test_epoll_hides_the_retry(void **state)
{
	static const struct fk_step steps[] = {
		SENT, PEEK_NONE, EPOLL_READY(5), PEEK(R503), CONSUME(R503),
		{ .fn = FK_EPOLL_PWAIT, .fd = EP, .check_tmo = true,
		  .tmo_ms = 101 },
		SENT, PEEK_NONE, EPOLL_READY(7), PEEK(R200), READ(R200),
		FK_STOP,
	};
	char buf[128] = { 0 };

	(void)state;
	epoll_round(steps, EPOLLIN);
	assert_int_equal(fk_now(), 113);
	const struct fk_epreg *g = fk_epoll_reg(EP, FD);

	assert_non_null(g);
	assert_int_equal(g->events, EPOLLIN);
	assert_int_equal(g->data, DATA);
	assert_int_equal(rs_hio_read(rs_fd_get(FD), FD, buf, sizeof(buf) - 1),
	    sizeof(R200) - 1);
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), 1);
	fk_done();
}

/* A one-shot registration gets the 200 once, then is spent. */
static void test_epoll_oneshot(void **state)
{
	static const struct fk_step steps[] = {
		SENT, PEEK_NONE, EPOLL_READY(5), PEEK(R200), FK_STOP,
	};

	(void)state;
	epoll_round(steps, EPOLLIN | EPOLLONESHOT);
	assert_null(fk_epoll_reg(EP, FD));
	fk_done();
}

/* A wait that finds another thread inside the engine looks again in a
   millisecond; a second thread in a read or write makes it pass. */
static void test_busy(void **state)
{
	static const struct fk_step steps[] = { SENT, READ(R200), FK_STOP };
	int64_t next = RS_NEVER, now;
	char buf[64];

	(void)state;
	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(HPOLICY("off")), true);

	assert_int_equal(rs_hio_write(e, FD, GET, strlen(GET)), strlen(GET));
	struct rs_hconn *h = rs_hconn_enter(e);

	assert_non_null(h);
	now = rs_clock_now_ms();
	assert_int_equal(rs_hwait_step(e, FD, 1, now, &next), RS_HW_TIMER);
	assert_true(next == now + 1);
	assert_null(rs_hconn_enter(e));
	rs_hconn_leave(e, h);
	assert_int_equal(h->m.phase, RS_HR_PASS);
	next = RS_NEVER;
	assert_int_equal(rs_hwait_step(e, FD, 1, now, &next), RS_HW_NONE);
	assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf)),
	    sizeof(R200) - 1);
	fk_done();
}

/* recvmmsg, or a sendmsg with an address, makes the connection pass. */
static void test_untracked(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_SENDMSG, .fd = FD, .ret = -1 },
		{ .fn = FK_WRITE, .fd = FD, .ret = -1 }, READ(R200),
		FK_STOP,
	};
	struct sockaddr_storage ss;
	socklen_t len;
	char buf[64];

	(void)state;
	fk_script(steps);
	fk_addr(&ss, &len, 5432);
	struct rs_fd *e = fk_connected(FD, fk_policy(HPOLICY("off")), false);
	struct iovec v = { (void *)GET, strlen(GET) };
	struct msghdr m = { .msg_name = &ss, .msg_namelen = len,
		.msg_iov = &v, .msg_iovlen = 1 };

	assert_int_equal(rs_hio_sendmsg(e, FD, &m, 0), strlen(GET));
	assert_int_equal(rs_hio_write(e, FD, GET, strlen(GET)), strlen(GET));
	rs_hio_untracked(e);
	assert_int_equal(rs_hio_read(e, FD, buf, sizeof(buf)),
	    sizeof(R200) - 1);
	assert_false(rs_hwait_wanted(e));
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};

	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_epoll_hides_the_retry),
		cmocka_unit_test(test_epoll_oneshot),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_untracked),
	};

	return FK_RUN("http engine, non-blocking", tables, more);
}
