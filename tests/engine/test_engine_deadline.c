/* SPDX-License-Identifier: MIT */
/*
 * test_engine_deadline.c - deadlines across hops (SPEC 10) against the
 * scripted kernel: the outbound header edit (httpout.c), the inbound
 * deadline a thread takes from a request it reads (httpconn.c), and the
 * per-thread deadline (tdeadline.c) capping the thread's waits.  What
 * reached the wire is checked byte for byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "fake.h"
#include "fdtable.h"
#include "httpconn.h"
#include "httphold.h"
#include "httpout.h"
#include "httpio.h"
#include "io.h"
#include "tdeadline.h"

#define FD 105
#define IN_FD 106
#define HDR "X-Request-Deadline"

/* A client rule with the header (and, when `http`, status retries). */
#define OUT_POLICY(http)                                                \
	"version: 1\n"                                                  \
	"defaults:\n"                                                   \
	"  connect_timeout: 1s\n"                                       \
	FK_GENEROUS_RETRIES                                             \
	"  deadline_header: " HDR "\n"                                  \
	http

#define WITH_HTTP "  http:\n    retry_on_status: [503]\n"

#define IN_POLICY(max)                                                  \
	"version: 1\n"                                                  \
	"inbound_deadline: " HDR "\n"                                   \
	"inbound_deadline_max: " max "\n"                               \
	"defaults:\n"                                                   \
	"  retry_budget:\n"                                             \
	"    scope: process\n"

#define GET_HEAD "GET /x HTTP/1.1\r\nHost: a\r\n"
#define GET GET_HEAD "\r\n"
#define EPOCH "1900000000000"
#define EPOCH_LATER "1900000005000"
#define EPOCH_EARLIER "1800000000000"
#define WITH_OURS GET_HEAD HDR ": " EPOCH "\r\n\r\n"
#define R503 "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
#define R200 "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

#define SENT { .fn = FK_SEND, .fd = FD, .ret = -1 }
#define SENT_MSG { .fn = FK_SENDMSG, .fd = FD, .ret = -1 }
#define FULL_MSG { .fn = FK_SENDMSG, .fd = FD, .err = EAGAIN }
#define WRITABLE { .fn = FK_POLL, .fd = -1, .advance_ms = 5, \
	.ready = { { FD, POLLOUT } } }

struct out_case {
	const char *name;
	const char *policy;
	bool thread_deadline;	/* the thread has EPOCH's deadline */
	bool nonblocking;
	const char *writes[4];	/* the program's sends, in order */
	struct fk_step steps[16];
	const char *want_sent;
	unsigned headers;	/* deadline_headers counted */
};

static const struct out_case out_cases[] = {
	{
		.name = "a head in one write leaves with the thread's deadline",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.writes = { GET }, .steps = { SENT_MSG },
		.want_sent = WITH_OURS, .headers = 1,
	},
	{
		.name = "no deadline: the head goes as the program wrote it",
		.policy = OUT_POLICY(""), .writes = { GET },
		.steps = { SENT_MSG }, .want_sent = GET,
	},
	{
		.name = "a head in pieces is held, then sent whole and edited",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.writes = { "GET /x HT", "TP/1.1\r\nHost: a\r\n", "\r\n" },
		.steps = { SENT_MSG }, .want_sent = WITH_OURS, .headers = 1,
	},
	{
		.name = "the program's earlier deadline is kept",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.writes = { GET_HEAD HDR ": " EPOCH_EARLIER "\r\n\r\n" },
		.steps = { SENT_MSG },
		.want_sent = GET_HEAD HDR ": " EPOCH_EARLIER "\r\n\r\n",
	},
	{
		.name = "the program's later deadline is replaced by ours",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.writes = { GET_HEAD HDR ": " EPOCH_LATER "\r\n\r\n" },
		.steps = { SENT_MSG }, .want_sent = WITH_OURS, .headers = 1,
	},
	{
		.name = "the body after the head goes as written",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.writes = { "PUT /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi" },
		.steps = { SENT_MSG, SENT_MSG },
		.want_sent = "PUT /x HTTP/1.1\r\nContent-Length: 2\r\n" HDR
		    ": " EPOCH "\r\n\r\nhi", .headers = 1,
	},
	{
		.name = "not HTTP: what was held goes out as it was, then passes",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.writes = { "GET /x", " \x01\x02 junk\r\n\r\n", "more" },
		.steps = { SENT_MSG, SENT_MSG, SENT_MSG },
		.want_sent = "GET /x \x01\x02 junk\r\n\r\nmore",
	},
	{
		.name = "a full non-blocking socket: the held head waits for room",
		.policy = OUT_POLICY(""), .thread_deadline = true,
		.nonblocking = true, .writes = { GET },
		.steps = { FULL_MSG, WRITABLE, SENT_MSG },
		.want_sent = WITH_OURS, .headers = 1,
	},
	{
		.name = "a retried request is replayed with the header once",
		.policy = OUT_POLICY(WITH_HTTP), .thread_deadline = true,
		.writes = { GET },
		.steps = { SENT_MSG, { .fn = FK_RECV, .fd = FD, .data = R503,
			.ret = -1, .flags = MSG_PEEK }, { .fn = FK_RECV,
			.fd = FD, .data = R503, .ret = -1 },
			FK_POLL_QUIET(101), SENT, { .fn = FK_RECV, .fd = FD,
			.data = R200, .ret = -1, .flags = MSG_PEEK },
			{ .fn = FK_RECV, .fd = FD, .data = R200, .ret = -1 } },
		.want_sent = WITH_OURS WITH_OURS, .headers = 1,
	},
};

/* The program's send(): what interpose.c does for a tracked fd. */
static ssize_t program_send(struct rs_fd *e, const char *p)
{
	struct rs_httpconn *c = rs_httpconn_get(FD);
	struct iovec v = { (void *)p, strlen(p) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

	assert_non_null(c);
	return rs_httpconn_send(c, e, FD, &m, 0);
}

static void run_out(void **state)
{
	const struct out_case *c = *state;
	char buf[256] = { 0 };
	size_t n;

	fk_script(c->steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(c->policy),
	    c->nonblocking);

	rs_httpconn_connecting(FD, e);
	if (c->thread_deadline)
		rs_tdeadline_take(IN_FD, rs_clock_now_ms() + 5000,
		    INT64_C(1900000000000));
	for (int i = 0; i < 4 && c->writes[i]; i++)
		assert_int_equal(program_send(rs_fd_get(FD), c->writes[i]),
		    strlen(c->writes[i]));
	if (e->settings->http.enabled)
		assert_int_equal(rs_hio_read(rs_fd_get(FD), FD, buf,
		    sizeof(buf) - 1), sizeof(R200) - 1);
	const char *s = fk_sent(&n);

	assert_int_equal(n, strlen(c->want_sent));
	assert_memory_equal(s, c->want_sent, n);
	assert_int_equal(fk_stat(RS_STAT_DEADLINE_HEADERS), c->headers);
	fk_done();
}

/*
 * The program's own SO_SNDTIMEO (80 ms) ends the flush of the edited head
 * after `cut` of its bytes went (the io engine's blocking send waits for
 * room until then, and the try after it finds none): the send returns how many of the
 * program's bytes are out, as the kernel's would, and the program's next
 * send of the rest passes through.  Cut inside the header the library put
 * in, the header is finished first; cut before it, it never goes.
 */
struct cut_case {
	const char *name;
	long cut;		/* bytes of the edited head that went */
	bool finish;		/* the rest of the edit is sent first */
	long want;		/* the program's send returns this */
	const char *want_sent;
};

#define EDIT_AT ((long)sizeof(GET_HEAD) - 1)
#define OURS_LEN ((long)sizeof(WITH_OURS) - 1)

static const struct cut_case cut_cases[] = {
	{ .name = "own SO_SNDTIMEO cuts the head before the header",
	  .cut = 10, .want = 10, .want_sent = GET },
	{ .name = "own SO_SNDTIMEO cuts the head inside the header",
	  .cut = EDIT_AT + 5, .finish = true, .want = EDIT_AT,
	  .want_sent = WITH_OURS },
	{ .name = "own SO_SNDTIMEO cuts the head after the header",
	  .cut = OURS_LEN - 1, .want = (long)sizeof(GET) - 2,
	  .want_sent = WITH_OURS },
};

/*
 * Runs steps for a blocking socket of the header rule whose program set
 * SO_SNDTIMEO 80 ms, in a thread with EPOCH's deadline; returns its entry.
 */
static struct rs_fd *sndtimeo_80(const struct fk_step *steps)
{
	fk_script(steps);
	fk_sock(FD)->sndtimeo.tv_usec = 80 * 1000;
	struct rs_fd *e = fk_connected(FD, fk_policy(OUT_POLICY("")), false);

	rs_httpconn_connecting(FD, e);
	rs_tdeadline_take(IN_FD, rs_clock_now_ms() + 5000,
	    INT64_C(1900000000000));
	return e;
}

static void run_cut(void **state)
{
	const struct cut_case *c = *state;
	struct fk_step steps[] = {
		{ .fn = FK_SENDMSG, .fd = FD, .ret = c->cut },
		FK_POLL_QUIET(81), FULL_MSG, SENT_MSG, SENT_MSG, FK_STOP,
	};
	size_t n;

	if (!c->finish)
		steps[4] = (struct fk_step)FK_STOP;
	struct rs_fd *e = sndtimeo_80(steps);

	assert_int_equal(program_send(e, GET), c->want);
	assert_int_equal(program_send(e, &GET[c->want]),
	    strlen(GET) - (size_t)c->want);
	const char *s = fk_sent(&n);

	assert_int_equal(n, strlen(c->want_sent));
	assert_memory_equal(s, c->want_sent, n);
	fk_done();
}

/*
 * The head comes in two sends, the first held and reported sent; the
 * program's own SO_SNDTIMEO (80 ms) passes before any of the edited head
 * can go (the socket is full).  The bytes of the first send, which the
 * program was told went, cannot be given back: the head goes whole, as
 * after a cut inside the edit, and the second send is done too.  (The
 * failed flush used to return EAGAIN and drop the held head: the wire
 * lost the program's first bytes.)
 */
static void test_cut_before_anything_went(void **state)
{
	struct fk_step steps[] = {
		FULL_MSG, FK_POLL_QUIET(81), SENT_MSG, FK_STOP,
	};
	const char *part2 = &GET[9];
	size_t n;

	(void)state;
	struct rs_fd *e = sndtimeo_80(steps);

	assert_int_equal(program_send(e, "GET /x HT"), 9);
	assert_int_equal(program_send(e, part2), strlen(part2));
	const char *s = fk_sent(&n);

	assert_int_equal(n, strlen(WITH_OURS));
	assert_memory_equal(s, WITH_OURS, n);
	fk_done();
}

/* ---- inbound: the reading thread takes the request's deadline ---- */

struct in_case {
	const char *name;
	const char *max;	/* inbound_deadline_max */
	int64_t in_ms;		/* the header: now + this (0: none) */
	const char *value;	/* or this text */
	int64_t process_in_ms;	/* the process deadline (0: none) */
	int64_t want_lo, want_hi;	/* the thread's deadline from now;
					   want_hi 0: none */
	const char *log;
};

static const struct in_case in_cases[] = {
	{ .name = "a request's deadline binds the reading thread",
	  .max = "5m", .in_ms = 3000, .want_lo = 2900,
	  .want_hi = 3000 + RS_CLOCK_PAIR_MS, .log = "ms left, from " HDR },
	{ .name = "inbound_deadline_max caps a distant deadline",
	  .max = "1s", .in_ms = 60000, .want_lo = 1000 + RS_CLOCK_PAIR_MS,
	  .want_hi = 1000 + RS_CLOCK_PAIR_MS },
	{ .name = "the process deadline caps it too",
	  .max = "5m", .in_ms = 60000, .process_in_ms = 2000,
	  .want_lo = 2000, .want_hi = 2000 },
	{ .name = "an expired deadline binds at once",
	  .max = "5m", .in_ms = -5000, .want_lo = -5100, .want_hi = -4900,
	  .log = "deadline passed" },
	{ .name = "a value that is not epoch milliseconds is ignored",
	  .max = "5m", .value = "soon", .log = "is not epoch milliseconds" },
	{ .name = "a request without the header: no deadline",
	  .max = "5m" },
};

/* Feeds a request with the case's header to the tracker of IN_FD. */
static void read_request(const struct in_case *c, const char *extra)
{
	char req[256], value[32];
	struct rs_httpconn *h = rs_httpconn_get(IN_FD);

	assert_non_null(h);
	if (c->value)
		snprintf(value, sizeof(value), "%s", c->value);
	else
		snprintf(value, sizeof(value), "%" PRId64,
		    rs_clock_epoch_ms() + c->in_ms);
	snprintf(req, sizeof(req), "GET /in HTTP/1.1\r\nHost: s\r\n%s%s%s%s"
	    "\r\n", c->in_ms || c->value ? HDR ": " : "",
	    c->in_ms || c->value ? value : "",
	    c->in_ms || c->value ? "\r\n" : "", extra);
	struct iovec v = { req, strlen(req) };

	rs_httpconn_read(h, IN_FD, &v, 1, (ssize_t)strlen(req));
}

static void run_in(void **state)
{
	const struct in_case *c = *state;
	char policy[512];
	static const struct fk_step none[] = { FK_STOP };

	snprintf(policy, sizeof(policy), IN_POLICY("%s"), c->max);
	fk_script(none);
	fk_policy(policy);
	if (c->process_in_ms)
		fk_deadline(c->process_in_ms);
	rs_httpconn_accepted(IN_FD);
	read_request(c, "");
	int64_t left = rs_tdeadline_get() - rs_clock_now_ms();

	if (c->want_hi == 0) {
		assert_true(rs_tdeadline_get() == RS_NEVER);
		assert_int_equal(rs_tdeadline_fd(), -1);
	} else {
		assert_in_range(left, c->want_lo, c->want_hi);
		assert_int_equal(rs_tdeadline_fd(), IN_FD);
		assert_int_equal(fk_stat(RS_STAT_INBOUND_DEADLINES), 1);
	}
	if (c->log)
		assert_true(fk_log_has(c->log));
	fk_done();
}

static const struct in_case three_s = { .max = "5m", .in_ms = 3000 };

/* The response's end ends the deadline; the next request's head too. */
/*
 * A head's beginning, held for the deadline header, is never lost or kept
 * waiting: each way the program can end the connection or wait for the
 * answer (a close, an exit or exec, a poll or select for its input, an
 * epoll wait) sends it as it was, and the rest of the head follows as
 * written, unedited.
 */
enum release_way { BY_CLOSE, BY_ALL, BY_POLL, BY_SELECT, BY_MINE };

static void release_held(enum release_way way)
{
	struct fk_step steps[] = { SENT_MSG, SENT_MSG, FK_STOP };
	struct pollfd pfd = { .fd = FD, .events = POLLIN };
	fd_set r;
	size_t n;

	fk_script(steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(OUT_POLICY("")), false);

	rs_httpconn_connecting(FD, e);
	rs_tdeadline_take(IN_FD, rs_clock_now_ms() + 5000,
	    INT64_C(1900000000000));
	assert_int_equal(program_send(e, "GET /x HT"), 9);
	fk_sent(&n);
	assert_int_equal(n, 0);		/* held, to be edited */
	switch (way) {
	case BY_CLOSE:
		rs_hold_fd(FD);
		break;
	case BY_ALL:
		rs_hold_all();
		break;
	case BY_POLL:
		rs_hold_polled(&pfd, 1);
		break;
	case BY_SELECT:
		FD_ZERO(&r);
		FD_SET(FD, &r);
		rs_hold_selected(FD + 1, &r);
		break;
	case BY_MINE:
		rs_hold_mine();
		break;
	}
	const char *s = fk_sent(&n);

	assert_int_equal(n, 9);
	assert_memory_equal(s, "GET /x HT", 9);
	assert_int_equal(program_send(e, &GET[9]), strlen(GET) - 9);
	s = fk_sent(&n);
	assert_int_equal(n, strlen(GET));
	assert_memory_equal(s, GET, n);
	assert_int_equal(fk_stat(RS_STAT_DEADLINE_HEADERS), 0);
	fk_done();
}

static void test_held_released_by_close(void **state)
{
	(void)state;
	release_held(BY_CLOSE);
}

static void test_held_released_by_exit(void **state)
{
	(void)state;
	release_held(BY_ALL);
}

static void test_held_released_by_poll(void **state)
{
	(void)state;
	release_held(BY_POLL);
}

static void test_held_released_by_select(void **state)
{
	(void)state;
	release_held(BY_SELECT);
}

static void test_held_released_by_epoll_wait(void **state)
{
	(void)state;
	release_held(BY_MINE);
}

static void test_response_end_drops(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_SENDMSG, .fd = IN_FD, .ret = -1 },
		{ .fn = FK_SENDMSG, .fd = IN_FD, .ret = -1 }, FK_STOP,
	};
	const char *res = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	struct iovec v = { (void *)res, strlen(res) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

	(void)state;
	fk_script(steps);
	fk_policy(IN_POLICY("5m"));
	rs_httpconn_accepted(IN_FD);
	read_request(&three_s, "");
	assert_true(rs_tdeadline_get() != RS_NEVER);
	assert_int_equal(rs_httpconn_send(rs_httpconn_get(IN_FD), NULL, IN_FD,
	    &m, 0), (ssize_t)strlen(res));
	assert_true(rs_tdeadline_get() == RS_NEVER);
	read_request(&three_s, "");
	assert_int_equal(rs_httpconn_send(rs_httpconn_get(IN_FD), NULL, IN_FD,
	    &m, 0), (ssize_t)strlen(res));
	read_request(&three_s, "");
	assert_true(rs_tdeadline_get() != RS_NEVER);
	read_request(&(struct in_case){ .max = "5m" }, "");
	assert_true(rs_tdeadline_get() == RS_NEVER);
	fk_done();
}

/* A pipelined request makes the connection pass: its deadline ends. */
static void test_pipelined_drops(void **state)
{
	static const struct fk_step none[] = { FK_STOP };

	(void)state;
	fk_script(none);
	fk_policy(IN_POLICY("5m"));
	rs_httpconn_accepted(IN_FD);
	read_request(&three_s, "");
	assert_true(rs_tdeadline_get() != RS_NEVER);
	read_request(&three_s, "");
	assert_true(rs_tdeadline_get() == RS_NEVER);
	fk_done();
}

static void *other_thread(void *arg)
{
	*(int64_t *)arg = rs_tdeadline_get();
	return NULL;
}

/* Only the reading thread is bound; closing the connection frees it. */
static void test_thread_local(void **state)
{
	static const struct fk_step none[] = { FK_STOP };
	pthread_t t;
	int64_t theirs = 0;

	(void)state;
	fk_script(none);
	fk_policy(IN_POLICY("5m"));
	rs_httpconn_accepted(IN_FD);
	read_request(&three_s, "");
	assert_int_equal(pthread_create(&t, NULL, other_thread, &theirs), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(theirs == RS_NEVER);
	assert_true(rs_tdeadline_get() != RS_NEVER);
	rs_httpconn_forget(IN_FD);
	assert_true(rs_tdeadline_get() == RS_NEVER);
	fk_done();
}

/* A thread's deadline caps its reads on other sockets as the process
   deadline would, and its connects. */
static void test_caps_reads(void **state)
{
	static const struct fk_step steps[] = {
		{ .fn = FK_RECV, .fd = FD, .err = EAGAIN },
		FK_POLL_QUIET(3000), FK_STOP,
	};
	char buf[16];

	(void)state;
	fk_script(steps);
	const struct rs_policy *p = fk_policy(IN_POLICY("5m"));

	rs_tdeadline_take(IN_FD, rs_clock_now_ms() + 3000,
	    rs_clock_epoch_ms() + 3000);
	struct rs_fd *e = fk_connected(FD, p, false);

	assert_int_equal(rs_io_read(e, FD, buf, sizeof(buf)), -ETIMEDOUT);
	assert_int_equal(fk_now(), 3000);
	assert_true(fk_log_has("the deadline of the request read on fd 106"));
	fk_done();
}

/* The epoch a header carries: the thread's, unless the process's is
   earlier. */
static void test_epoch_choice(void **state)
{
	static const struct fk_step none[] = { FK_STOP };

	(void)state;
	fk_script(none);
	fk_policy(IN_POLICY("5m"));
	assert_true(rs_tdeadline_epoch() == RS_NEVER);
	fk_deadline(10000);
	int64_t proc = rs_tdeadline_epoch();

	assert_true(proc != RS_NEVER && proc > 0);
	rs_tdeadline_take(IN_FD, rs_clock_now_ms() + 3000, 42);
	assert_int_equal(rs_tdeadline_epoch(), 42);
	rs_tdeadline_take(IN_FD, rs_clock_now_ms() + 30000, 43);
	assert_int_equal(rs_tdeadline_epoch(), proc);
	rs_tdeadline_drop(IN_FD + 1);
	assert_int_equal(rs_tdeadline_fd(), IN_FD);
	rs_tdeadline_drop(IN_FD);
	assert_int_equal(rs_tdeadline_fd(), -1);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(out_cases, run_out),
		FK_TABLE(cut_cases, run_cut),
		FK_TABLE(in_cases, run_in),
	};
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_cut_before_anything_went),
		cmocka_unit_test(test_held_released_by_close),
		cmocka_unit_test(test_held_released_by_exit),
		cmocka_unit_test(test_held_released_by_poll),
		cmocka_unit_test(test_held_released_by_select),
		cmocka_unit_test(test_held_released_by_epoll_wait),
		cmocka_unit_test(test_response_end_drops),
		cmocka_unit_test(test_pipelined_drops),
		cmocka_unit_test(test_thread_local),
		cmocka_unit_test(test_caps_reads),
		cmocka_unit_test(test_epoch_choice),
	};

	return FK_RUN("deadlines across hops", tables, more);
}
