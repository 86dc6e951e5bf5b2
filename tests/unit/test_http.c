/* SPDX-License-Identifier: MIT */
/*
 * test_http.c - the HTTP/1.x tracker: events and their byte offsets for
 * exchanges fed whole, byte by byte and split at every point; what it
 * passes through (pipelining, 100-continue, Upgrade, CONNECT, HTTP/2,
 * TLS, oversize, malformed); replayability; head edits; Retry-After;
 * UUIDs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http.h"

struct step {
	enum rs_http_dir dir;
	const char *bytes;	/* NULL: end of file in dir */
};

/*
 * Feeds the steps, each cut into pieces of `chunk` bytes (0: whole), and
 * returns the events as text: S<status> H E P, with the offset of each
 * within its step ("H@37").  The tracker is left for the caller to check.
 */
static const char *run(struct rs_http *h, const struct step *steps,
    size_t chunk, bool offsets)
{
	static char trace[1024];
	size_t t = 0;

	trace[0] = '\0';
	for (; steps->dir != (enum rs_http_dir)-1; steps++) {
		const char *p = steps->bytes;
		size_t len, off = 0;
		enum rs_http_event ev;

		if (p == NULL) {
			ev = rs_http_eof(h, steps->dir);
			if (ev != RS_HTTP_EV_NONE)
				t += (size_t)snprintf(trace + t, sizeof(trace) - t,
				    "%s ", ev == RS_HTTP_EV_END ? "E" : "P");
			continue;
		}
		len = strlen(p);
		while (off < len) {
			size_t piece = chunk == 0 || len - off < chunk ?
			    len - off : chunk;
			size_t end = off + piece;

			while (off < end) {
				size_t n = rs_http_feed(h, steps->dir, p + off,
				    end - off, &ev);
				assert_true(n <= end - off);
				off += n;
				if (ev == RS_HTTP_EV_NONE)
					continue;
				if (ev == RS_HTTP_EV_PASS) {
					if (t == 0 || trace[t - 2] != 'P')
						t += (size_t)snprintf(trace + t,
						    sizeof(trace) - t, "P ");
					continue;
				}
				if (ev == RS_HTTP_EV_STATUS)
					t += (size_t)snprintf(trace + t,
					    sizeof(trace) - t, "S%u",
					    h->res.status);
				else
					t += (size_t)snprintf(trace + t,
					    sizeof(trace) - t, "%s",
					    ev == RS_HTTP_EV_HEAD ? "H" : "E");
				if (offsets)
					t += (size_t)snprintf(trace + t,
					    sizeof(trace) - t, "@%zu", off);
				t += (size_t)snprintf(trace + t,
				    sizeof(trace) - t, " ");
			}
		}
	}
	return trace;
}

#define END { (enum rs_http_dir)-1, NULL }

static const struct rs_http_config replay = { true, 65536, NULL };

static const char get_req[] = "GET /v1/x?a=1 HTTP/1.1\r\nHost: api\r\n\r\n";
static const char ok_res[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
static const char busy_chunked[] =
	"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1 \r\n"
	"Transfer-Encoding: chunked\r\n\r\n4\r\nbusy\r\n0\r\n\r\n";

/* The same trace whatever the pieces the bytes arrive in. */
static void expect_trace(const struct step *steps,
    const struct rs_http_config *cfg, const char *want)
{
	static const size_t chunks[] = { 0, 1, 2, 3, 5, 7, 13, 64 };
	struct rs_http h;

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		rs_http_init(&h, cfg);
		assert_string_equal(run(&h, steps, chunks[i], false), want);
		rs_http_free(&h);
	}
}

static void test_get_ok(void **state)
{
	const struct step steps[] = {
		{ RS_HTTP_REQ, get_req }, { RS_HTTP_RES, ok_res }, END,
	};
	struct rs_http h;
	size_t len;

	(void)state;
	expect_trace(steps, &replay, "H S200 H E ");
	rs_http_init(&h, &replay);
	/* Offsets: the head ends the request; the status line is 17 bytes. */
	assert_string_equal(run(&h, steps, 0, true), "H@37 S200@17 H@38 E@43 ");
	assert_int_equal(h.req.method, HTTP_GET);
	assert_string_equal(h.req.target, "/v1/x?a=1");
	assert_true(h.req.done);
	assert_true(h.res.done);
	assert_true(h.res.keep_alive);
	assert_false(h.res.until_close);
	assert_true(rs_http_replayable(&h));
	assert_non_null(rs_http_kept(&h, &len));
	assert_int_equal(len, strlen(get_req));
	assert_int_equal(h.requests, 1);
	assert_int_equal(h.responses, 1);
	rs_http_free(&h);
}

static void test_retryable_chunked(void **state)
{
	const struct step steps[] = {
		{ RS_HTTP_REQ, get_req }, { RS_HTTP_RES, busy_chunked },
		{ RS_HTTP_REQ, get_req }, { RS_HTTP_RES, ok_res }, END,
	};
	struct rs_http h;

	(void)state;
	expect_trace(steps, &replay, "H S503 H E H S200 H E ");
	rs_http_init(&h, &replay);
	run(&h, steps, 0, false);
	assert_int_equal(h.res.status, 200);
	assert_false(h.res.has_retry_after);
	assert_int_equal(h.requests, 2);
	rs_http_free(&h);

	rs_http_init(&h, &replay);
	run(&h, (const struct step[]){ steps[0], steps[1], END }, 1, false);
	assert_true(h.res.has_retry_after);
	assert_string_equal(h.res.retry_after, "1");
	assert_int_equal(h.res.status, 503);
	rs_http_free(&h);
}

/* Every two-piece split of a request and a response gives the same trace. */
static void test_every_split(void **state)
{
	char res[] = "HTTP/1.1 429 Too Many\r\nRetry-After: 2\r\n"
		"Content-Length: 3\r\n\r\nno!";
	char post[] = "POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody";
	struct rs_http h;

	(void)state;
	for (size_t cut = 0; cut <= strlen(res); cut++) {
		char a[128], b[128];

		snprintf(a, sizeof(a), "%.*s", (int)cut, res);
		snprintf(b, sizeof(b), "%s", res + cut);
		rs_http_init(&h, &replay);
		assert_string_equal(run(&h, (const struct step[]){
			{ RS_HTTP_REQ, post }, { RS_HTTP_RES, a },
			{ RS_HTTP_RES, b }, END }, 0, false), "H E S429 H E ");
		assert_string_equal(h.res.retry_after, "2");
		assert_false(rs_http_replayable(&h));
		rs_http_free(&h);
	}
}

static void expect_pass(const char *req, const char *res, enum rs_http_why why)
{
	const struct step steps[] = {
		{ RS_HTTP_REQ, req }, { RS_HTTP_RES, res ? res : "" }, END,
	};
	struct rs_http h;
	enum rs_http_event ev;

	rs_http_init(&h, &replay);
	run(&h, steps, 0, false);
	assert_true(h.pass);
	assert_int_equal(h.why, why);
	assert_false(rs_http_replayable(&h));
	/* Pass-through consumes everything from then on. */
	assert_int_equal(rs_http_feed(&h, RS_HTTP_RES, "xyz", 3, &ev), 3);
	assert_int_equal(ev, RS_HTTP_EV_PASS);
	rs_http_free(&h);
}

static void test_pass_through(void **state)
{
	char big[70000];

	(void)state;
	expect_pass("GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n", NULL,
	    RS_HTTP_WHY_PIPELINE);
	expect_pass("PUT /x HTTP/1.1\r\nExpect: 100-continue\r\n"
	    "Content-Length: 3\r\n\r\n", NULL, RS_HTTP_WHY_CONTINUE);
	expect_pass("GET /ws HTTP/1.1\r\nConnection: Upgrade\r\n"
	    "Upgrade: websocket\r\n\r\n", NULL, RS_HTTP_WHY_UPGRADE);
	expect_pass("CONNECT api:443 HTTP/1.1\r\nHost: api:443\r\n\r\n", NULL,
	    RS_HTTP_WHY_UPGRADE);
	expect_pass("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", NULL,
	    RS_HTTP_WHY_VERSION);
	expect_pass("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", NULL,
	    RS_HTTP_WHY_MALFORMED);
	expect_pass("GET / HTTP/1.1\r\nHost: a\r\nbad header\r\n\r\n", NULL,
	    RS_HTTP_WHY_MALFORMED);
	expect_pass("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n",
	    "HTTP/1.1 413 Too Large\r\n", RS_HTTP_WHY_EARLY);
	expect_pass(get_req, "HTTP/1.1 100 Continue\r\n\r\n",
	    RS_HTTP_WHY_UPGRADE);
	expect_pass(get_req, "HTTP/3.0 200 OK\r\n\r\n", RS_HTTP_WHY_VERSION);
	memset(big, 'a', sizeof(big));
	memcpy(big, "PUT /x HTTP/1.1\r\nContent-Length: 69960\r\n\r\n", 42);
	big[sizeof(big) - 1] = '\0';
	expect_pass(big, NULL, RS_HTTP_WHY_OVERSIZE);
}

static void test_response_framing(void **state)
{
	const char head_req[] = "HEAD / HTTP/1.1\r\n\r\n";
	struct rs_http h;

	(void)state;
	/* A response to HEAD has no body despite its Content-Length. */
	rs_http_init(&h, &replay);
	assert_string_equal(run(&h, (const struct step[]){
		{ RS_HTTP_REQ, head_req },
		{ RS_HTTP_RES, "HTTP/1.1 503 x\r\nContent-Length: 99\r\n\r\n" },
		{ RS_HTTP_REQ, head_req }, END }, 0, false), "H S503 H H ");
	assert_false(h.pass);
	rs_http_free(&h);
	/* Until close: the end of file ends the body. */
	rs_http_init(&h, &replay);
	assert_string_equal(run(&h, (const struct step[]){
		{ RS_HTTP_REQ, get_req },
		{ RS_HTTP_RES, "HTTP/1.0 503 x\r\n\r\nsome body" },
		{ RS_HTTP_RES, NULL }, END }, 0, false), "H S503 H E ");
	assert_true(h.res.until_close);
	assert_false(h.res.keep_alive);
	rs_http_free(&h);
	/* Cut short: not understood. */
	rs_http_init(&h, &replay);
	assert_string_equal(run(&h, (const struct step[]){
		{ RS_HTTP_REQ, get_req },
		{ RS_HTTP_RES, "HTTP/1.1 200 x\r\nContent-Length: 9\r\n\r\nab" },
		{ RS_HTTP_RES, NULL }, END }, 0, false), "H S200 H P ");
	rs_http_free(&h);
	/* Connection: close on 1.1; 204 has no body. */
	rs_http_init(&h, &replay);
	run(&h, (const struct step[]){ { RS_HTTP_REQ, get_req },
		{ RS_HTTP_RES, "HTTP/1.1 204 x\r\nConnection: close\r\n\r\n" },
		END }, 0, false);
	assert_true(h.res.done);
	assert_false(h.res.keep_alive);
	rs_http_free(&h);
}

static void test_replayable(void **state)
{
	static const struct {
		const char *req;
		bool replayable;
	} rows[] = {
		{ "GET / HTTP/1.1\r\n\r\n", true },
		{ "HEAD / HTTP/1.0\r\n\r\n", true },
		{ "OPTIONS * HTTP/1.1\r\n\r\n", true },
		{ "DELETE /x HTTP/1.1\r\n\r\n", true },
		{ "PUT /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", true },
		{ "POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", false },
		{ "PATCH /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", false },
		{ "POST /x HTTP/1.1\r\nidempotency-KEY: k1\r\n"
		  "Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", true },
		{ "PUT /x HTTP/1.1\r\nContent-Length: 4\r\n\r\nhi", false },
	};
	struct rs_http h;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		rs_http_init(&h, &replay);
		run(&h, (const struct step[]){ { RS_HTTP_REQ, rows[i].req },
			END }, 3, false);
		assert_int_equal(rs_http_replayable(&h), rows[i].replayable);
		rs_http_free(&h);
	}
	/* Without keep, or with the head only, nothing is replayable. */
	rs_http_init(&h, &(struct rs_http_config){ false, 65536, NULL });
	run(&h, (const struct step[]){ { RS_HTTP_REQ, get_req }, END }, 0,
	    false);
	assert_false(rs_http_replayable(&h));
	rs_http_free(&h);
}

static void test_head_edits(void **state)
{
	const struct rs_http_config cfg = { true, 0, "X-Request-Deadline" };
	const char req[] = "POST /o HTTP/1.1\r\nHost: a\r\n"
		"x-request-deadline:  1700000000000 \r\nContent-Length: 3\r\n\r\n";
	struct rs_http h;
	enum rs_http_event ev;
	char buf[64];
	size_t n, len;
	const char *kept;

	(void)state;
	rs_http_init(&h, &cfg);
	assert_int_equal(rs_http_head_put(&h, "A", "b", true), -EAGAIN);
	n = rs_http_feed(&h, RS_HTTP_REQ, req, strlen(req), &ev);
	assert_int_equal(ev, RS_HTTP_EV_HEAD);
	assert_int_equal(n, strlen(req));
	assert_true(h.req.has_watch);
	assert_string_equal(h.req.watch, "1700000000000");
	assert_int_equal(rs_http_head_get(&h, "X-REQUEST-DEADLINE", buf,
	    sizeof(buf)), 13);
	assert_string_equal(buf, "1700000000000");
	assert_int_equal(rs_http_head_get(&h, "Idempotency-Key", buf,
	    sizeof(buf)), -ENOENT);
	assert_int_equal(rs_http_head_put(&h, "Idempotency-Key",
	    "k\r\nX: y", false), -EINVAL);
	assert_int_equal(rs_http_head_put(&h, "Idempotency-Key", "k-1",
	    false), 0);
	assert_int_equal(rs_http_head_put(&h, "X-Request-Deadline", "1",
	    false), 0);
	assert_int_equal(rs_http_head_put(&h, "X-Request-Deadline", "1699",
	    true), 0);
	kept = rs_http_kept(&h, &len);
	assert_int_equal(len, h.req.head_len);
	assert_memory_equal(kept, "POST /o HTTP/1.1\r\nHost: a\r\n"
	    "x-request-deadline:  1699 \r\nContent-Length: 3\r\n"
	    "Idempotency-Key: k-1\r\n\r\n", len);
	/* The body is not kept with max_replay 0, and the request goes on. */
	n = rs_http_feed(&h, RS_HTTP_REQ, "abc", 3, &ev);
	assert_int_equal(ev, RS_HTTP_EV_END);
	rs_http_kept(&h, &len);
	assert_int_equal(len, h.req.head_len);
	assert_false(rs_http_replayable(&h));
	rs_http_free(&h);
}

/* An edited request is still replayable, whole, edits included. */
static void test_edit_then_replay(void **state)
{
	const char req[] = "POST /o HTTP/1.1\r\nContent-Length: 2\r\n\r\n";
	struct rs_http h;
	enum rs_http_event ev;
	const char *kept;
	size_t len;

	(void)state;
	rs_http_init(&h, &replay);
	rs_http_feed(&h, RS_HTTP_REQ, req, strlen(req), &ev);
	assert_int_equal(ev, RS_HTTP_EV_HEAD);
	assert_int_equal(rs_http_head_put(&h, "Idempotency-Key", "u", false),
	    0);
	h.req.idempotency_key = true;
	rs_http_feed(&h, RS_HTTP_REQ, "hi", 2, &ev);
	assert_int_equal(ev, RS_HTTP_EV_END);
	assert_true(rs_http_replayable(&h));
	kept = rs_http_kept(&h, &len);
	assert_int_equal(len, 61);
	assert_memory_equal(kept, "POST /o HTTP/1.1\r\n"
	    "Content-Length: 2\r\nIdempotency-Key: u\r\n\r\nhi", len);
	rs_http_free(&h);
}

/*
 * Body-less messages on a kept-alive connection: each completes with its
 * head, and the next exchange is tracked as the first was (a body-less
 * response used to make the next response pass as early).
 */
static void test_bodyless_exchanges(void **state)
{
	static const char empty_res[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	const struct step steps[] = {
		{ RS_HTTP_REQ, get_req }, { RS_HTTP_RES, empty_res },
		{ RS_HTTP_REQ, get_req }, { RS_HTTP_RES, empty_res },
		{ RS_HTTP_REQ, get_req }, { RS_HTTP_RES, ok_res }, END,
	};
	struct rs_http h;

	(void)state;
	expect_trace(steps, &replay, "H S200 H H S200 H H S200 H E ");
	rs_http_init(&h, &replay);
	run(&h, steps, 0, false);
	assert_false(h.pass);
	assert_int_equal(h.requests, 3);
	assert_int_equal(h.responses, 3);
	rs_http_free(&h);
}

static void test_server_role(void **state)
{
	const struct rs_http_config cfg = { false, 0, "X-Request-Deadline" };
	struct rs_http h;

	(void)state;
	/* A server reads requests and writes responses: the same two parsers. */
	rs_http_init(&h, &cfg);
	assert_string_equal(run(&h, (const struct step[]){
		{ RS_HTTP_REQ, "GET /a HTTP/1.1\r\nX-Request-Deadline: 5\r\n\r\n" },
		{ RS_HTTP_RES, ok_res },
		{ RS_HTTP_REQ, "GET /b HTTP/1.1\r\n\r\n" }, END }, 1, false),
	    "H S200 H E H ");
	assert_false(h.req.has_watch);	/* the second request has none */
	assert_string_equal(h.req.target, "/b");
	rs_http_free(&h);
}

static void test_retry_after(void **state)
{
	static const struct {
		const char *v;
		int rc;
		uint32_t ms;
	} rows[] = {
		{ "1", 0, 1000 }, { "0", 0, 0 }, { "120", 0, 120000 },
		{ "99999999999999", 0, UINT32_MAX - 1 },
		{ "Tue, 14 Nov 2023 22:13:25 GMT", 0, 5000 },
		{ "Tuesday, 14-Nov-23 22:13:25 GMT", 0, 5000 },
		{ "Tue Nov 14 22:13:25 2023", 0, 5000 },
		{ "Tue Nov 14 22:13:10 2023", 0, 0 },
		{ "1.5", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "", -EINVAL, 0 },
		{ "soon", -EINVAL, 0 },
		{ "Tue, 14 Nov 2023 22:13:25 GMT x", -EINVAL, 0 },
		{ "Tue, 14 Foo 2023 22:13:25 GMT", -EINVAL, 0 },
	};
	const int64_t now = 1700000000000;	/* Tue, 14 Nov 2023 22:13:20 */

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t ms = 7;

		assert_int_equal(rs_http_retry_after_ms(rows[i].v, now, &ms),
		    rows[i].rc);
		if (rows[i].rc == 0)
			assert_int_equal(ms, rows[i].ms);
	}
}

static void test_uuid(void **state)
{
	uint8_t r[16];
	char u[37];

	(void)state;
	memset(r, 0xff, sizeof(r));
	rs_http_uuid4(r, u);
	assert_string_equal(u, "ffffffff-ffff-4fff-bfff-ffffffffffff");
	memset(r, 0, sizeof(r));
	rs_http_uuid4(r, u);
	assert_string_equal(u, "00000000-0000-4000-8000-000000000000");
	assert_string_equal(rs_http_method_name(HTTP_PATCH), "PATCH");
	assert_string_equal(rs_http_why_name(RS_HTTP_WHY_PIPELINE),
	    "pipelining");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_ok),
		cmocka_unit_test(test_retryable_chunked),
		cmocka_unit_test(test_every_split),
		cmocka_unit_test(test_pass_through),
		cmocka_unit_test(test_response_framing),
		cmocka_unit_test(test_replayable),
		cmocka_unit_test(test_head_edits),
		cmocka_unit_test(test_edit_then_replay),
		cmocka_unit_test(test_bodyless_exchanges),
		cmocka_unit_test(test_server_role),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_uuid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
