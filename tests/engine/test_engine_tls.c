/* SPDX-License-Identifier: MIT */
/*
 * test_engine_tls.c - the HTTP retry engine fed through the TLS
 * transport (src/preload/tls/tlstx.c) by a scripted TLS library: the
 * plaintext of each response comes in pieces of 1 to 40 bytes drawn at
 * random (record boundaries anywhere: in the status line, in a header, in
 * the body), and every write, the program's and the engine's resends
 * alike, is taken only in part.  The server's script answers each whole
 * request with its next response: 503 with Retry-After: 0 twice, then
 * 200.  Hundreds of seeds; each must end with the program reading the 200
 * whole, the request sent three times byte for byte, no system call made
 * (the script is empty: no poll, no sleep).  Then the same through the
 * non-blocking engine, stepped by an event loop's waits and reads (see
 * stepped()).  Last, a library that cannot make its sessions anew, the
 * server resetting the connection after a kept-alive 503: the 503 handed
 * over whole, both ways (see reset()).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "fake.h"
#include "fdtable.h"
#include "httpconn.h"
#include "httphook.h"
#include "httpwait.h"
#include "sslreal.h"
#include "tdeadline.h"
#include "tlsio.h"
#include "tlsmap.h"
#include "tlstx.h"

#define FD 104
#define POLICY "version: 1\n" \
	"defaults:\n" \
	FK_GENEROUS_RETRIES \
	"  http:\n" \
	"    retry_on_status: [503]\n"
#define GET "GET /x HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"
#define R503 "HTTP/1.1 503 Busy\r\nRetry-After: 0\r\n" \
	"Content-Length: 9\r\n\r\ntry later"
#define R503C "HTTP/1.1 503 Busy\r\nRetry-After: 0\r\n" \
	"Transfer-Encoding: chunked\r\n\r\n3\r\ntry\r\n6\r\n later\r\n0\r\n\r\n"
#define R200 "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello, world"

/* The scripted session: what the server has sent that was not read. */
static struct {
	unsigned seed;
	const char *replies[3];
	int next;			/* the reply the next request gets */
	char in[4096];			/* plaintext readable now */
	size_t in_len, in_off;
	char sent[4096];		/* everything written, in order */
	size_t sent_len, sent_at;	/* sent_at: the current request's start */
	size_t req_len;			/* a whole request's length */
} s;

static size_t draw(size_t most)
{
	size_t k = (size_t)rand_r(&s.seed) % 40 + 1;

	return k < most ? k : most;
}

static ssize_t fake_read(struct rs_tls *t, void *buf, size_t n)
{
	size_t k = draw(s.in_len - s.in_off < n ? s.in_len - s.in_off : n);

	(void)t;
	if (k == 0) {
		errno = EAGAIN;
		return -1;
	}
	memcpy(buf, s.in + s.in_off, k);
	s.in_off += k;
	return (ssize_t)k;
}

/* A whole request came: the server queues its next reply. */
static void answer(void)
{
	const char *r = s.replies[s.next < 3 ? s.next : 2];

	s.next++;
	memmove(s.in, s.in + s.in_off, s.in_len - s.in_off);
	s.in_len -= s.in_off;
	s.in_off = 0;
	memcpy(s.in + s.in_len, r, strlen(r));
	s.in_len += strlen(r);
}

static ssize_t fake_write(struct rs_tls *t, const void *buf, size_t n)
{
	size_t k = draw(n);

	(void)t;
	memcpy(s.sent + s.sent_len, buf, k);
	s.sent_len += k;
	if (s.sent_len - s.sent_at >= s.req_len) {
		s.sent_at += s.req_len;
		answer();
	}
	return (ssize_t)k;
}

static bool fake_held(const struct rs_tls *t)
{
	(void)t;
	return s.in_off < s.in_len;
}

static const struct rs_tls_ops fake_ops = {
	.read = fake_read,
	.write = fake_write,
	.held = fake_held,
};

/* One run: the program writes GET whole (in parts) and reads the 200. */
static void one(unsigned seed, const char *first)
{
	static int session;	/* the SSL object: only its address counts */
	char buf[256];
	size_t got = 0, put = 0;
	int r, rounds = 0;

	memset(&s, 0, sizeof(s));
	s.seed = seed;
	s.replies[0] = first;
	s.replies[1] = R503;
	s.replies[2] = R200;
	s.req_len = strlen(GET);
	fk_script((const struct fk_step[]){ FK_STOP });
	fk_connected(FD, fk_policy(POLICY), false);
	assert_non_null(rs_tls_bind(&session, FD, &fake_ops));
	while (put < strlen(GET) && rounds++ < 1000) {
		r = rs_tls_write(&session, &GET[put], (int)(strlen(GET) - put));
		assert_true(r > 0);
		put += (size_t)r;
	}
	while (got < strlen(R200) && rounds++ < 2000) {
		r = rs_tls_read(&session, buf + got, (int)(sizeof(buf) - 1 - got),
		    false);
		assert_true(r > 0);
		got += (size_t)r;
	}
	buf[got] = '\0';
	assert_string_equal(buf, R200);
	assert_int_equal(s.sent_len, 3 * strlen(GET));
	for (int i = 0; i < 3; i++)
		assert_memory_equal(s.sent + i * strlen(GET), GET, strlen(GET));
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), 2);
	rs_tls_unbind(&session);
	fk_done();
}

static void test_split_records(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 300; seed++) {
		one(seed, R503);
		fk_env_forget();
	}
}

static void test_split_records_chunked(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 300; seed++) {
		one(seed, R503C);
		fk_env_forget();
	}
}

/*
 * A rule with deadline_header as well: the program's head, written to
 * the session in parts (rs_tls_send, GnuTLS's and OpenSSL's writes
 * alike), gets the header on its way in, and every try carries it, the
 * session's own writes taken in parts too.  While the session is bound,
 * the socket's bytes (its records) are not the deadline tracker's; once
 * it is gone, they are again.
 */
static void test_deadline_header_through_session(void **state)
{
	static int session;
	const char *want = "GET /x HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n"
	    "X-Request-Deadline: 1900000000000\r\n\r\n";
	char buf[256];
	size_t got = 0, put = 0;
	ssize_t r;
	int rounds = 0;
	struct rs_tls *t;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.seed = 7;
	s.replies[0] = R503;
	s.replies[1] = R503;
	s.replies[2] = R200;
	s.req_len = strlen(want);
	fk_script((const struct fk_step[]){ FK_STOP });
	struct rs_fd *e = fk_connected(FD, fk_policy(POLICY
	    "  deadline_header: X-Request-Deadline\n"), false);

	rs_httpconn_connecting(FD, e);
	rs_tdeadline_take(FD + 1, rs_clock_now_ms() + 5000,
	    INT64_C(1900000000000));
	assert_non_null(t = rs_tls_bind(&session, FD, &fake_ops));
	assert_null(rs_hook_http(FD));
	while (put < strlen(GET) && rounds++ < 1000) {
		r = rs_tls_send(t, &GET[put], strlen(GET) - put);
		assert_true(r > 0);
		put += (size_t)r;
	}
	while (got < strlen(R200) && rounds++ < 2000) {
		int k = rs_tls_read(&session, buf + got,
		    (int)(sizeof(buf) - 1 - got), false);

		assert_true(k > 0);
		got += (size_t)k;
	}
	buf[got] = '\0';
	assert_string_equal(buf, R200);
	assert_int_equal(s.sent_len, 3 * strlen(want));
	for (int i = 0; i < 3; i++)
		assert_memory_equal(s.sent + i * strlen(want), want,
		    strlen(want));
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), 2);
	rs_tls_unbind(&session);
	assert_non_null(rs_hook_http(FD));
	rs_tdeadline_drop(FD + 1);
	rs_httpconn_forget(FD);
	fk_done();
}

/*
 * The stepped engine (httpwait.h) on a non-blocking socket: every call of
 * the scripted library may say WANT_READ or WANT_WRITE (EAGAIN, with
 * t->want), the records are 1 to 40 bytes, and the program's loop is an
 * event loop's: its wait (rs_hwait_step, as poll and epoll call it) and
 * its SSL_read, which says SSL_ERROR_WANT_READ until the 200 is there.
 * Retry-After: 1 twice: the wait's timers move the clock.  A close on the
 * first 503 makes a new connection (the connect engine's scripted calls)
 * and a new handshake, stepped too.  Now and then a wait of another
 * thread looks in, and must call nothing of the session's.
 */
#define R503S "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\n" \
	"Content-Length: 9\r\n\r\ntry later"
#define R503SC "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\n" \
	"Connection: close\r\nContent-Length: 9\r\n\r\ntry later"

static struct {
	int handshakes;		/* new handshakes done */
	int calls;		/* calls into the session, any */
} st;

/*
 * One in three calls would block, wanting to read or to write: the
 * library's own failure, noted as ossl.c notes it (SSL_get_error would
 * ask OpenSSL, which the test has not: rs_tls_error() is asked only of
 * the library's answers).
 */
static bool blocks(struct rs_tls *t)
{
	st.calls++;
	t->real_failed = false;
	if (rand_r(&s.seed) % 3 != 0)
		return false;
	t->want = rand_r(&s.seed) % 2 ? POLLIN : POLLOUT;
	t->real_failed = true;
	t->real_ret = -1;
	errno = EAGAIN;
	return true;
}

/* The scripted library's read, its failure noted as a library's own. */
static ssize_t read_noted(struct rs_tls *t, void *buf, size_t n)
{
	ssize_t k = fake_read(t, buf, n);

	if (k < 0) {
		t->want = POLLIN;
		t->real_failed = true;
		t->real_ret = -1;
	}
	return k;
}

static ssize_t step_read(struct rs_tls *t, void *buf, size_t n)
{
	if (blocks(t))
		return -1;
	return read_noted(t, buf, n);
}

static ssize_t step_write(struct rs_tls *t, const void *buf, size_t n)
{
	return blocks(t) ? -1 : fake_write(t, buf, n);
}

static bool step_held(const struct rs_tls *t)
{
	(void)t;
	return false;
}

/* The new handshake: a few steps, each of which may wait. */
static int step_renew(struct rs_tls *t, struct rs_hconn *h, struct rs_fd *e,
    int fd, bool block)
{
	(void)h;
	(void)e;
	(void)fd;
	assert_false(block);
	if (blocks(t))
		return -EAGAIN;
	st.handshakes++;
	t->off = t->len = 0;
	return 0;
}

static const struct rs_tls_ops step_ops = {
	.read = step_read,
	.write = step_write,
	.held = step_held,
	.renew = step_renew,
};

/* The program's write of GET, as an event loop makes it. */
static void step_write_get(void *ssl, unsigned *rounds)
{
	size_t put = 0;
	int r;

	while (put < strlen(GET) && (*rounds)++ < 1000) {
		r = rs_tls_write(ssl, &GET[put], (int)(strlen(GET) - put));
		if (r > 0)
			put += (size_t)r;
		else if (rs_tls_find(ssl)->err >= 0)
			assert_int_equal(rs_tls_error(ssl, r),
			    RS_SSL_ERROR_WANT_WRITE);
		else	/* the library's own would-block, as it gave it */
			assert_true(rs_tls_find(ssl)->real_failed && r == -1);
	}
	assert_int_equal(put, strlen(GET));
}

/* A wait of another thread than the session's driver. */
struct other {
	int64_t now, next;
	enum rs_hw_want w;
};

static void *other_wait(void *arg)
{
	struct other *o = arg;

	o->w = rs_hwait_step(rs_fd_get(FD), FD, 0, o->now, &o->next);
	return NULL;
}

/*
 * Another thread's wait calls nothing of the session's: it keeps the
 * retry's timer, or says the socket is the driver's to read.
 */
static void foreign_wait(void)
{
	struct other o = { rs_clock_now_ms(), RS_NEVER, RS_HW_NONE };
	int calls = st.calls;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, other_wait, &o), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(st.calls, calls);
	assert_true(o.w != RS_HW_SHOW);
	if (o.w == RS_HW_TIMER)
		assert_true(o.next > o.now);
}

static void stepped(unsigned seed, const char *first, bool reconnects)
{
	static int session;
	char buf[256];
	size_t got = 0;
	unsigned rounds = 0;
	int ready = 0, r, shown = 0;
	int64_t start;

	memset(&s, 0, sizeof(s));
	memset(&st, 0, sizeof(st));
	s.seed = seed;
	s.replies[0] = first;
	s.replies[1] = R503S;
	s.replies[2] = R200;
	s.req_len = strlen(GET);
	static const struct fk_step none[] = { FK_STOP }, reconnect[] = {
		FK_DISSOLVE(FD), FK_CONNECT_START(FD), FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD), FK_STOP };

	fk_script(reconnects ? reconnect : none);
	fk_connected(FD, fk_policy(POLICY), true);
	assert_non_null(rs_tls_bind(&session, FD, &step_ops));
	start = fk_now();
	step_write_get(&session, &rounds);
	while (got < strlen(R200) && rounds++ < 5000) {
		struct rs_fd *e = rs_fd_get(FD);
		int64_t now = rs_clock_now_ms(), next = RS_NEVER;
		enum rs_hw_want w = RS_HW_NONE;

		assert_non_null(e);
		/* The wait, while it hides the socket; it reports it once
		   the 200 is the program's, never a 503. */
		if (rs_hwait_wanted(e) && rand_r(&s.seed) % 8 == 0)
			foreign_wait();
		if (rs_hwait_wanted(e))
			w = rs_hwait_step(e, FD, ready, now, &next);
		/* Readable only with the 200's beginning in hand. */
		if (w == RS_HW_NOW)
			assert_memory_equal(rs_tls_find(&session)->stash +
			    rs_tls_find(&session)->off, &R200[got],
			    rs_tls_stashed(rs_tls_find(&session)) > 0 ? 1 : 0);
		if (w == RS_HW_NOW && got == 0)
			assert_true(rs_tls_stashed(rs_tls_find(&session)) > 0);
		ready = w == RS_HW_IN || w == RS_HW_OUT;
		if (w == RS_HW_TIMER && next > now)
			fk_advance(next - now);
		/* Otherwise the wait is the kernel's, which reports only
		   what the session has not read: the 200 must not be in
		   the library's hands then, or the loop sleeps. */
		if ((w == RS_HW_NONE || w == RS_HW_SHOW) &&
		    s.in_off == s.in_len)
			fail_msg("seed %u: the wait would sleep with %zu "
			    "bytes in hand", seed,
			    rs_tls_stashed(rs_tls_find(&session)));
		if (w != RS_HW_NOW && w != RS_HW_NONE && rand_r(&s.seed) % 4)
			continue;
		/* The program's read: on the wait's word, or now and then
		   before it (a read steps the retry too). */
		r = rs_tls_read(&session, buf + got,
		    (int)(sizeof(buf) - 1 - got), false);
		if (r > 0) {
			assert_memory_equal(buf + got, &R200[got],
			    (size_t)r);
			got += (size_t)r;
			shown++;
			continue;
		}
		/* Held back: WANT_READ; else the library's own (for the
		   rest of the 200 too, read from the session itself). */
		assert_int_equal(r, -1);
		if (rs_tls_find(&session)->err >= 0)
			assert_int_equal(rs_tls_error(&session, r),
			    RS_SSL_ERROR_WANT_READ);
		else
			assert_true(rs_tls_find(&session)->real_failed);
	}
	assert_int_equal(got, strlen(R200));
	assert_true(shown > 0);
	/* Two Retry-After: 1, slept out as the wait's timers. */
	if (fk_now() - start < 2000)
		fail_msg("seed %u: the 200 after %lld ms", seed,
		    (long long)(fk_now() - start));
	assert_int_equal(s.sent_len, 3 * strlen(GET));
	for (int i = 0; i < 3; i++)
		assert_memory_equal(s.sent + i * strlen(GET), GET, strlen(GET));
	assert_int_equal(st.handshakes, reconnects ? 1 : 0);
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), 2);
	rs_tls_unbind(&session);
	fk_done();
}

static void test_stepped_keepalive(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 300; seed++) {
		stepped(seed, R503S, false);
		fk_env_forget();
	}
}

static void test_stepped_reconnect(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 300; seed++) {
		stepped(seed, R503SC, true);
		fk_env_forget();
	}
}

/*
 * The program frees its session (SSL_free) while the retry waits out its
 * Retry-After: the connection passes, and its waits touch nothing of the
 * session's any more.
 */
static void test_stepped_session_freed(void **state)
{
	static int session;
	static const struct fk_step none[] = { FK_STOP };
	unsigned rounds = 0;
	int ready = 0;
	enum rs_hw_want w = RS_HW_NONE;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&st, 0, sizeof(st));
	s.seed = 7;
	s.replies[0] = s.replies[1] = R503S;
	s.replies[2] = R200;
	s.req_len = strlen(GET);
	fk_script(none);
	fk_connected(FD, fk_policy(POLICY), true);
	assert_non_null(rs_tls_bind(&session, FD, &step_ops));
	step_write_get(&session, &rounds);
	while (w != RS_HW_TIMER && rounds++ < 1000) {
		int64_t now = rs_clock_now_ms(), next = RS_NEVER;

		w = rs_hwait_step(rs_fd_get(FD), FD, ready, now, &next);
		ready = w == RS_HW_IN || w == RS_HW_OUT;
	}
	assert_int_equal(w, RS_HW_TIMER);
	rs_tls_unbind(&session);
	fk_advance(1000);
	int calls = st.calls;
	int64_t next = RS_NEVER;
	struct rs_fd *e = rs_fd_get(FD);

	assert_false(rs_hwait_wanted(e));
	assert_int_equal(rs_hwait_step(e, FD, 0, rs_clock_now_ms(), &next),
	    RS_HW_NONE);
	assert_int_equal(st.calls, calls);
	fk_done();
}

/*
 * A library whose sessions cannot be made anew (GnuTLS's: no renew): the
 * server answers the first request with a 503 that keeps the connection,
 * then resets it, on the resend (the request is taken, the reads meet the
 * end) or during the wait (the resend's write fails).  No new connection
 * is made (the script is empty: no connect); the program reads the 503
 * whole, byte for byte, then the end as the connection now is, through
 * the blocking read and through the stepped waits, which report the
 * socket readable while any of it is in hand.
 */
static struct {
	bool in_wait;		/* the reset comes before the resend */
	bool gone;		/* the connection was reset */
	bool stepped;		/* calls may block (blocks()) */
} rst;

static ssize_t rst_read(struct rs_tls *t, void *buf, size_t n)
{
	if (rst.stepped && blocks(t))
		return -1;
	t->real_failed = false;
	if (rst.gone && s.in_off == s.in_len)
		return 0;	/* the end: the session's read after a reset */
	return read_noted(t, buf, n);
}

static ssize_t rst_write(struct rs_tls *t, const void *buf, size_t n)
{
	if (rst.stepped && blocks(t))
		return -1;
	t->real_failed = false;
	/* During the wait: once the 503 is all read, the peer is gone. */
	if (rst.in_wait && s.next > 0 && s.in_off == s.in_len)
		rst.gone = true;
	if (rst.gone) {
		t->real_failed = true;
		t->real_ret = -1;
		errno = ECONNRESET;
		return -1;
	}
	ssize_t k = fake_write(t, buf, n);

	/* On the resend: the server reads it and resets. */
	if (s.next > 1)
		rst.gone = true;
	return k;
}

/* Bytes, or the reset, to read now (the scripted kernel has no poll). */
static bool rst_held(const struct rs_tls *t)
{
	(void)t;
	return s.in_off < s.in_len || rst.gone;
}

static const struct rs_tls_ops rst_ops = {
	.read = rst_read,
	.write = rst_write,
	.held = rst_held,
};

/* OpenSSL's case where the new session is refused (a handshake failing,
   another certificate): the response handed over, the stream ended. */
static int refuse_renew(struct rs_tls *t, struct rs_hconn *h,
    struct rs_fd *e, int fd, bool block)
{
	(void)h;
	(void)e;
	(void)fd;
	(void)block;
	st.handshakes++;
	return rs_tls_hand_over(t, "refused by the test");
}

static const struct rs_tls_ops refuse_ops = {
	.read = rst_read,
	.write = rst_write,
	.held = rst_held,
	.renew = refuse_renew,
};

/* The program's loop: waits (stepped only) and reads, up to the end. */
static size_t rst_program(void *ssl, char *buf, size_t cap, bool stepped)
{
	struct rs_tls *t = rs_tls_find(ssl);
	size_t got = 0;
	unsigned rounds = 0;
	int ready = 0, r = -1;

	while (r != 0 && rounds++ < 5000) {
		struct rs_fd *e = rs_fd_get(FD);
		int64_t now = rs_clock_now_ms(), next = RS_NEVER;
		enum rs_hw_want w = RS_HW_NONE;

		assert_non_null(e);
		if (stepped && rs_hwait_wanted(e))
			w = rs_hwait_step(e, FD, ready, now, &next);
		/* A wait left to the kernel with bytes in hand would sleep:
		   the reset was reported once, and read. */
		if (stepped && (w == RS_HW_NONE || w == RS_HW_SHOW) &&
		    rs_tls_stashed(t) > 0)
			fail_msg("seed %u: the wait hides %zu bytes", s.seed,
			    rs_tls_stashed(t));
		ready = w == RS_HW_IN || w == RS_HW_OUT;
		if (w == RS_HW_TIMER && next > now)
			fk_advance(next - now);
		if (w != RS_HW_NOW && w != RS_HW_NONE)
			continue;
		r = rs_tls_read(ssl, buf + got, (int)(cap - got), false);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r < 0 && t->err >= 0)
			assert_int_equal(rs_tls_error(ssl, r),
			    RS_SSL_ERROR_WANT_READ);
		else if (r < 0)
			assert_true(t->real_failed);
	}
	if (r != 0)
		fail_msg("seed %u: %d after %zu bytes, %u rounds", s.seed, r,
		    got, rounds);
	return got;
}

static void reset(unsigned seed, bool in_wait, bool stepped, bool refuse)
{
	static int session;
	static const struct fk_step none[] = { FK_STOP }, reconnect[] = {
		FK_DISSOLVE(FD), FK_CONNECT_START(FD), FK_SO_ERROR_IS(FD, 0),
		FK_PEER(FD), FK_STOP };
	const char *r503 = stepped ? R503S : R503;
	char buf[256];
	unsigned rounds = 0;

	memset(&s, 0, sizeof(s));
	memset(&st, 0, sizeof(st));
	memset(&rst, 0, sizeof(rst));
	rst.in_wait = in_wait;
	rst.stepped = stepped;
	s.seed = seed;
	s.replies[0] = r503;
	s.replies[1] = s.replies[2] = "";	/* no answer: the reset */
	s.req_len = strlen(GET);
	fk_script(refuse ? reconnect : none);
	fk_connected(FD, fk_policy(POLICY), stepped);
	assert_non_null(rs_tls_bind(&session, FD, refuse ? &refuse_ops :
	    &rst_ops));
	if (stepped) {
		step_write_get(&session, &rounds);
	} else {
		for (size_t put = 0; put < strlen(GET) && rounds++ < 1000;) {
			int k = rs_tls_write(&session, &GET[put],
			    (int)(strlen(GET) - put));

			assert_true(k > 0);
			put += (size_t)k;
		}
	}
	size_t got = rst_program(&session, buf, sizeof(buf) - 1, stepped);

	buf[got] = '\0';
	assert_string_equal(buf, r503);
	if (refuse) {
		int64_t next = RS_NEVER;

		/* The end of the stream is the program's to read, however
		   often: its wait reports it, SSL_get_error says so. */
		assert_int_equal(st.handshakes, 1);
		assert_int_equal(rs_hwait_step(rs_fd_get(FD), FD, 0,
		    rs_clock_now_ms(), &next), RS_HW_NOW);
		assert_int_equal(rs_tls_read(&session, buf, 8, false), 0);
		assert_int_equal(rs_tls_error(&session, 0),
		    RS_SSL_ERROR_ZERO_RETURN);
	}
	/* The resend went whole when the server took it, else not. */
	if (!in_wait)
		assert_int_equal(s.sent_len, 2 * strlen(GET));
	assert_memory_equal(s.sent, GET, strlen(GET));
	assert_int_equal(fk_stat(RS_STAT_HTTP_RETRIES), 1);
	rs_tls_unbind(&session);
	fk_done();
}

/* Both resets (on the resend, during the wait), 200 seeds each. */
static void resets(bool stepped, bool refuse)
{
	for (unsigned seed = 1; seed <= 200; seed++) {
		reset(seed, false, stepped, refuse);
		fk_env_forget();
		reset(seed, true, stepped, refuse);
		fk_env_forget();
	}
}

static void test_reset_handed_over(void **state)
{
	(void)state;
	resets(false, false);
}

static void test_stepped_reset_handed_over(void **state)
{
	(void)state;
	resets(true, false);
}

/*
 * The same with a library that makes its sessions anew, where the new
 * one is refused (OpenSSL's failing or other-certificate handshake): a
 * new connection, then the 503 held handed over whole, and the end after
 * it, which the wait reports readable (it was left to the kernel's wait
 * on a new, silent connection).
 */
static void test_stepped_reset_refused(void **state)
{
	(void)state;
	resets(true, true);
}

int main(void)
{
	const struct fk_table tables[] = { { NULL, 0, 0, NULL } };
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_split_records),
		cmocka_unit_test(test_split_records_chunked),
		cmocka_unit_test(test_deadline_header_through_session),
		cmocka_unit_test(test_stepped_keepalive),
		cmocka_unit_test(test_stepped_reconnect),
		cmocka_unit_test(test_stepped_session_freed),
		cmocka_unit_test(test_reset_handed_over),
		cmocka_unit_test(test_stepped_reset_handed_over),
		cmocka_unit_test(test_stepped_reset_refused),
	};

	return fk_run_group("tls transport, split records and partial writes",
	    tables, 0, more, sizeof(more) / sizeof(more[0]));
}
