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
 * (the script is empty: no poll, no sleep).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"
#include "clock.h"
#include "fdtable.h"
#include "httpconn.h"
#include "httphook.h"
#include "tdeadline.h"
#include "tlsio.h"
#include "tlsmap.h"

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

int main(void)
{
	const struct fk_table tables[] = { { NULL, 0, 0, NULL } };
	const struct CMUnitTest more[] = {
		cmocka_unit_test(test_split_records),
		cmocka_unit_test(test_split_records_chunked),
		cmocka_unit_test(test_deadline_header_through_session),
	};

	return fk_run_group("tls transport, split records and partial writes",
	    tables, 0, more, sizeof(more) / sizeof(more[0]));
}
