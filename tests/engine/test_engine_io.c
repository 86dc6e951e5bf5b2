/* SPDX-License-Identifier: MIT */
/*
 * test_engine_io.c - the read/write engine (io.c) against the scripted
 * kernel: read and write timeouts with partial transfers, a timeout kept
 * pending after progress, the program's own SO_RCVTIMEO/SO_SNDTIMEO, the
 * process deadline, EINTR with and without SA_RESTART, a reset that
 * arrives after the handshake, MSG_WAITALL and MSG_PEEK, non-blocking
 * sockets, and a descriptor that stopped being a socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "connect.h"
#include "connect_step.h"
#include "fake.h"
#include "fdtable.h"
#include "io.h"
#include "io_timeout.h"

#define FD 101

#define POLICY(rt, wt) FK_POLICY("3", rt, wt)

enum op {
	OP_READ, OP_READV, OP_RECV, OP_RECVFROM, OP_RECVMSG, OP_RECVMMSG,
	OP_WRITE, OP_WRITEV, OP_SEND, OP_SENDTO, OP_SENDMSG, OP_SENDMMSG,
};

/* Reads and writes of FK_* steps, spelled as the kernel answers them. */
#define RECV_(c, d, n) { .fn = (c), .fd = FD, .data = (d), .ret = (n) }
#define AGAIN(c) { .fn = (c), .fd = FD, .err = EAGAIN }
#define TAKES(c, n) { .fn = (c), .fd = FD, .ret = (n) }
#define TAKES_OF(c, n, of) { .fn = (c), .fd = FD, .ret = (n), .len = (of) }
#define FAILS(c, e) { .fn = (c), .fd = FD, .err = (e) }

struct io_case {
	const char *name;
	const char *policy;
	enum op op;
	size_t len;		/* bytes asked for or offered */
	int flags;		/* recv/send flags */
	bool nonblocking;
	int own_tmo_ms;		/* SO_RCVTIMEO or SO_SNDTIMEO */
	int64_t deadline_in_ms;	/* process deadline; 0: none */
	enum fk_handler handler;	/* SIGUSR1's during the call */
	struct fk_step steps[16];
	long want;		/* the call's result */
	int64_t want_ms;	/* the time it took */
	const char *want_data;	/* read: the buffer; write: what was sent */
	bool again;		/* a second call follows, with no step */
	long want_again;	/* its result */
	unsigned read_timeouts, write_timeouts;
	bool forgotten;		/* the entry is gone afterwards */
};

static const struct io_case cases[] = {
	{
		.name = "read: data at once costs one call",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.steps = { RECV_(FK_RECV, "hello", -1) },
		.want = 5, .want_data = "hello",
	},
	{
		.name = "read: waits for data within read_timeout",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.steps = {
			AGAIN(FK_RECV),
			FK_POLL_READY(501, 120, FD, POLLIN),
			RECV_(FK_RECVMSG, "late", -1),
		},
		.want = 4, .want_ms = 120, .want_data = "late",
	},
	{
		.name = "read: read_timeout with nothing read",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.steps = { AGAIN(FK_RECV), FK_POLL_QUIET(501) },
		.want = -ETIMEDOUT, .want_ms = 501, .read_timeouts = 1,
	},
	{
		.name = "read: end of file is never delayed",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.steps = { RECV_(FK_RECV, "", 0) },
		.want = 0,
	},
	{
		.name = "read: a reset after the handshake is the program's, "
			"not retried",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.steps = { FAILS(FK_RECV, ECONNRESET) },
		.want = -ECONNRESET,
	},
	{
		.name = "read without timeouts: the plain call, reset and all",
		.policy = POLICY("off", "off"), .op = OP_READ, .len = 16,
		.steps = { FAILS(FK_READ, ECONNRESET) },
		.want = -ECONNRESET,
	},
	{
		.name = "recv MSG_WAITALL: partial, wait, the rest",
		.policy = POLICY("500ms", "off"), .op = OP_RECV, .len = 8,
		.flags = MSG_WAITALL,
		.steps = {
			{ .fn = FK_RECV, .fd = FD, .data = "abc", .ret = -1,
			  .flags = MSG_WAITALL | MSG_DONTWAIT },
			FK_POLL_READY(501, 200, FD, POLLIN),
			{ .fn = FK_RECVMSG, .fd = FD, .data = "defgh",
			  .ret = -1, .len = 5 },
		},
		.want = 8, .want_ms = 200, .want_data = "abcdefgh",
	},
	{
		.name = "recv MSG_WAITALL: partial, then read_timeout: the "
			"count now, the timeout next",
		.policy = POLICY("500ms", "off"), .op = OP_RECV, .len = 8,
		.flags = MSG_WAITALL,
		.steps = {
			RECV_(FK_RECV, "abc", -1),
			FK_POLL_QUIET(501),
		},
		.want = 3, .want_ms = 501, .want_data = "abc",
		.again = true, .want_again = -ETIMEDOUT, .read_timeouts = 1,
	},
	{
		.name = "recv MSG_PEEK|MSG_WAITALL: peeks again until all is "
			"there",
		.policy = POLICY("500ms", "off"), .op = OP_RECV, .len = 6,
		.flags = MSG_PEEK | MSG_WAITALL,
		.steps = {
			RECV_(FK_RECV, "abc", -1),
			FK_POLL_READY(501, 10, FD, POLLIN),
			FK_POLL_QUIET(5),
			{ .fn = FK_RECVMSG, .fd = FD, .data = "abcdef",
			  .ret = -1, .flags = MSG_PEEK },
		},
		.want = 6, .want_ms = 15, .want_data = "abcdef",
	},
	{
		.name = "readv: partial iovecs are continued",
		.policy = POLICY("500ms", "off"), .op = OP_READV, .len = 8,
		.steps = {
			AGAIN(FK_RECVMSG),
			FK_POLL_READY(501, 1, FD, POLLIN),
			RECV_(FK_RECVMSG, "readv", -1),
		},
		.want = 5, .want_ms = 1, .want_data = "readv",
	},
	{
		.name = "recvfrom: waits, then data",
		.policy = POLICY("500ms", "off"), .op = OP_RECVFROM, .len = 8,
		.steps = {
			AGAIN(FK_RECVFROM),
			FK_POLL_READY(501, 7, FD, POLLIN),
			RECV_(FK_RECVMSG, "from", -1),
		},
		.want = 4, .want_ms = 7, .want_data = "from",
	},
	{
		.name = "recvmsg: read_timeout",
		.policy = POLICY("300ms", "off"), .op = OP_RECVMSG, .len = 8,
		.steps = { AGAIN(FK_RECVMSG), FK_POLL_QUIET(301) },
		.want = -ETIMEDOUT, .want_ms = 301, .read_timeouts = 1,
	},
	{
		.name = "recvmmsg: waits, then the messages",
		.policy = POLICY("500ms", "off"), .op = OP_RECVMMSG, .len = 2,
		.steps = {
			AGAIN(FK_RECVMMSG),
			FK_POLL_READY(501, 3, FD, POLLIN),
			TAKES(FK_RECVMMSG, 2),
		},
		.want = 2, .want_ms = 3,
	},
	{
		.name = "read: the program's shorter SO_RCVTIMEO gives EAGAIN",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.own_tmo_ms = 200,
		/* Shorter than read_timeout's margin: the kernel holds it,
		   and its blocking recv gives up after 200 ms. */
		.steps = { { .fn = FK_RECV, .fd = FD, .err = EAGAIN,
			.advance_ms = 200 } },
		.want = -EAGAIN, .want_ms = 200,
	},
	{
		.name = "read: the process deadline cuts a read without "
			"read_timeout",
		.policy = POLICY("off", "off"), .op = OP_READ, .len = 16,
		.deadline_in_ms = 300,
		.steps = { AGAIN(FK_RECV), FK_POLL_QUIET(300) },
		.want = -ETIMEDOUT, .want_ms = 300, .read_timeouts = 1,
	},
	{
		.name = "read: EINTR under an SA_RESTART handler goes on",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.handler = FK_RESTART_HANDLER,
		.steps = {
			AGAIN(FK_RECV),
			FK_POLL_EINTR(100),
			FK_POLL_READY(401, 50, FD, POLLIN),
			RECV_(FK_RECVMSG, "ok", -1),
		},
		.want = 2, .want_ms = 150, .want_data = "ok",
	},
	{
		.name = "read: EINTR under a handler without SA_RESTART",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.handler = FK_PLAIN_HANDLER,
		.steps = { AGAIN(FK_RECV), FK_POLL_EINTR(100) },
		.want = -EINTR, .want_ms = 100,
	},
	{
		.name = "read: non-blocking socket: EAGAIN at once, no wait",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.nonblocking = true,
		.steps = { AGAIN(FK_READ) },
		.want = -EAGAIN,
	},
	{
		.name = "recv MSG_DONTWAIT: the plain call",
		.policy = POLICY("500ms", "off"), .op = OP_RECV, .len = 16,
		.flags = MSG_DONTWAIT,
		.steps = { AGAIN(FK_RECV) },
		.want = -EAGAIN,
	},
	{
		.name = "read: a number that is no socket any more is forgotten",
		.policy = POLICY("500ms", "off"), .op = OP_READ, .len = 16,
		.steps = {
			FAILS(FK_RECV, ENOTSOCK),
			RECV_(FK_READ, "pipe", -1),
		},
		.want = 4, .want_data = "pipe", .forgotten = true,
	},
	{
		.name = "write: all at once",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.steps = { TAKES(FK_SEND, -1) },
		.want = 8, .want_data = "01234567",
	},
	{
		.name = "write: partial transfers, each wait within "
			"write_timeout",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.steps = {
			TAKES_OF(FK_SEND, 3, 8),
			FK_POLL_READY(301, 250, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, 2, 5),
			FK_POLL_READY(301, 250, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, -1, 3),
		},
		.want = 8, .want_ms = 500, .want_data = "01234567",
	},
	{
		.name = "write: partial, then write_timeout: the count now, "
			"the timeout next",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.steps = {
			TAKES(FK_SEND, 3),
			FK_POLL_QUIET(301),
		},
		.want = 3, .want_ms = 301, .want_data = "012",
		.again = true, .want_again = -ETIMEDOUT, .write_timeouts = 1,
	},
	{
		.name = "write: write_timeout with nothing sent",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.steps = { AGAIN(FK_SEND), FK_POLL_QUIET(301) },
		.want = -ETIMEDOUT, .want_ms = 301, .write_timeouts = 1,
	},
	{
		.name = "write: a reset after the handshake is the program's",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.steps = { FAILS(FK_SEND, EPIPE) },
		.want = -EPIPE,
	},
	{
		.name = "write: a reset after progress returns the count",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.steps = {
			TAKES(FK_SEND, 4),
			FK_POLL_READY(301, 1, FD, POLLOUT),
			FAILS(FK_SENDMSG, ECONNRESET),
		},
		.want = 4, .want_ms = 1, .want_data = "0123",
	},
	{
		.name = "writev: the rest of a partly sent iovec goes alone",
		.policy = POLICY("off", "300ms"), .op = OP_WRITEV, .len = 8,
		.steps = {
			TAKES_OF(FK_SENDMSG, 1, 8),
			FK_POLL_READY(301, 2, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, 2, 2),
			FK_POLL_READY(301, 0, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, -1, 5),
		},
		.want = 8, .want_ms = 2, .want_data = "01234567",
	},
	{
		.name = "send: the program's SO_SNDTIMEO gives EAGAIN",
		.policy = POLICY("off", "300ms"), .op = OP_SEND, .len = 8,
		.own_tmo_ms = 100,
		.steps = { AGAIN(FK_SEND), FK_POLL_QUIET(101) },
		.want = -EAGAIN, .want_ms = 101,
	},
	{
		.name = "sendto: partial, wait, the rest",
		.policy = POLICY("off", "300ms"), .op = OP_SENDTO, .len = 8,
		.steps = {
			TAKES(FK_SENDTO, 6),
			FK_POLL_READY(301, 30, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, -1, 2),
		},
		.want = 8, .want_ms = 30, .want_data = "01234567",
	},
	{
		.name = "sendmsg: waits, then all",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMSG, .len = 8,
		.steps = {
			AGAIN(FK_SENDMSG),
			FK_POLL_READY(301, 9, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, -1, 8),
		},
		.want = 8, .want_ms = 9, .want_data = "01234567",
	},
	{
		.name = "sendmmsg: write_timeout",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMMSG, .len = 2,
		.steps = { AGAIN(FK_SENDMMSG), FK_POLL_QUIET(301) },
		.want = -ETIMEDOUT, .want_ms = 301, .write_timeouts = 1,
	},
	/* sendmmsg's two messages are "0123" (two elements) and "4567". */
	{
		.name = "sendmmsg: both messages at once cost one call",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMMSG, .len = 2,
		.steps = { TAKES(FK_SENDMMSG, 2) },
		.want = 2, .want_data = "01234567",
	},
	{
		.name = "sendmmsg: a message sent in part is finished, then "
			"the next is sent (blocking, as the kernel's)",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMMSG, .len = 2,
		.steps = {
			{ .fn = FK_SENDMMSG, .fd = FD, .ret = 1, .part = 3 },
			FK_POLL_READY(301, 10, FD, POLLOUT),
			TAKES_OF(FK_SENDMSG, -1, 1),
			TAKES_OF(FK_SENDMMSG, 1, 1),
		},
		.want = 2, .want_ms = 10, .want_data = "01234567",
	},
	{
		.name = "sendmmsg: no room after the first message: waits, "
			"then the second",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMMSG, .len = 2,
		.steps = {
			TAKES(FK_SENDMMSG, 1),
			AGAIN(FK_SENDMMSG),
			FK_POLL_READY(301, 7, FD, POLLOUT),
			TAKES_OF(FK_SENDMMSG, 1, 1),
		},
		.want = 2, .want_ms = 7, .want_data = "01234567",
	},
	{
		.name = "sendmmsg: write_timeout within a message: the "
			"messages counted, the last in part",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMMSG, .len = 2,
		.steps = {
			{ .fn = FK_SENDMMSG, .fd = FD, .ret = 1, .part = 3 },
			FK_POLL_QUIET(301),
		},
		.want = 1, .want_ms = 301, .want_data = "012",
		.write_timeouts = 1,
	},
	{
		.name = "sendmmsg: non-blocking socket: a message in part, "
			"as the kernel's",
		.policy = POLICY("off", "300ms"), .op = OP_SENDMMSG, .len = 2,
		.nonblocking = true,
		.steps = { { .fn = FK_SENDMMSG, .fd = FD, .ret = 1, .part = 3 } },
		.want = 1, .want_data = "012",
	},
	{
		.name = "write: non-blocking socket: the plain call",
		.policy = POLICY("off", "300ms"), .op = OP_WRITE, .len = 8,
		.nonblocking = true,
		.steps = { TAKES(FK_WRITE, 2) },
		.want = 2, .want_data = "01",
	},
};

static char out[16] = "0123456789abcdef";
/* sendmmsg's messages, kept for their msg_len. */
static struct mmsghdr sent_mm[2];

/* Runs c's call: reads into buf, writes from out. */
static long call(const struct io_case *c, struct rs_fd *e, char *buf)
{
	struct iovec v[2] = { { buf, 3 }, { buf + 3, c->len - 3 } };
	struct iovec w[2] = { { out, 3 }, { out + 3, c->len - 3 } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };
	struct msghdr mw = { .msg_iov = w, .msg_iovlen = 2 };
	struct mmsghdr mm[2] = { { .msg_hdr = m }, { .msg_hdr = m } };
	struct iovec w0[2] = { { out, 2 }, { out + 2, 2 } };
	struct iovec w1 = { out + 4, 4 };

	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	switch (c->op) {
	case OP_READ: return rs_io_read(e, FD, buf, c->len);
	case OP_READV: return rs_io_readv(e, FD, v, 2);
	case OP_RECV: return rs_io_recv(e, FD, buf, c->len, c->flags);
	case OP_RECVFROM:
		return rs_io_recvfrom(e, FD, buf, c->len, c->flags,
		    (struct sockaddr *)&ss, &sl);
	case OP_RECVMSG: return rs_io_recvmsg(e, FD, &m, c->flags);
	case OP_RECVMMSG:
		return rs_io_recvmmsg(e, FD, mm, (unsigned)c->len, c->flags,
		    NULL);
	case OP_WRITE: return rs_io_write(e, FD, out, c->len);
	case OP_WRITEV: return rs_io_writev(e, FD, w, 2);
	case OP_SEND: return rs_io_send(e, FD, out, c->len, c->flags);
	case OP_SENDTO:
		return rs_io_sendto(e, FD, out, c->len, c->flags, NULL, 0);
	case OP_SENDMSG: return rs_io_sendmsg(e, FD, &mw, c->flags);
	case OP_SENDMMSG:
		sent_mm[0].msg_hdr = (struct msghdr){ .msg_iov = w0,
			.msg_iovlen = 2 };
		sent_mm[1].msg_hdr = (struct msghdr){ .msg_iov = &w1,
			.msg_iovlen = 1 };
		return rs_io_sendmmsg(e, FD, sent_mm, (unsigned)c->len,
		    c->flags);
	}
	return -1;
}

static bool writes(enum op op)
{
	return op >= OP_WRITE;
}

static void run_case(void **state)
{
	const struct io_case *c = *state;
	char buf[32] = { 0 };

	fk_script(c->steps);
	struct rs_fd *e = fk_connected(FD, fk_policy(c->policy), c->nonblocking);

	if (c->deadline_in_ms)
		fk_deadline(c->deadline_in_ms);
	fk_handler(c->handler);
	if (writes(c->op))
		fk_sock(FD)->sndtimeo.tv_usec = c->own_tmo_ms * 1000;
	else
		fk_sock(FD)->rcvtimeo.tv_usec = c->own_tmo_ms * 1000;

	long r = call(c, e, buf);

	assert_int_equal(r, c->want);
	assert_int_equal(fk_now(), c->want_ms);
	if (c->want_data && writes(c->op)) {
		size_t n;
		const char *s = fk_sent(&n);

		assert_int_equal(n, strlen(c->want_data));
		assert_memory_equal(s, c->want_data, n);
		if (c->op == OP_SENDMMSG)
			assert_int_equal(sent_mm[0].msg_len +
			    (c->want > 1 ? sent_mm[1].msg_len : 0), n);
	} else if (c->want_data) {
		assert_string_equal(buf, c->want_data);
	}
	if (c->again) {
		/* A pending timeout fails the next call without a system
		   call (the script has no step for it), once. */
		assert_int_equal(call(c, e, buf), c->want_again);
	}
	assert_int_equal(fk_stat(RS_STAT_READ_TIMEOUTS), c->read_timeouts);
	assert_int_equal(fk_stat(RS_STAT_WRITE_TIMEOUTS), c->write_timeouts);
	assert_int_equal(rs_fd_get(FD) == NULL, c->forgotten);
	fk_done();
}

int main(void)
{
	const struct fk_table tables[] = {
		FK_TABLE(cases, run_case),
	};

	return fk_run_group("read/write engine", tables,
	    sizeof(tables) / sizeof(tables[0]), NULL, 0);
}
