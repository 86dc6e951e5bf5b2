/* SPDX-License-Identifier: MIT */
/*
 * test_deadline.c - deadlines across hops (SPEC 10), the pure parts: the
 * header value parser, the clamp, which value an outbound request keeps,
 * header names, the policy keys and their defaults, and, over the HTTP
 * tracker, that the deadline header is put in a request head once, stays
 * once when the request is replayed, and is never put into bytes that
 * are not HTTP.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "deadline.h"
#include "diag.h"
#include "http.h"
#include "policy.h"
#include "policy_yaml.h"

#define HDR "X-Request-Deadline"

static void test_parse(void **state)
{
	static const struct {
		const char *text;
		int ret;
		int64_t ms;
	} rows[] = {
		{ "1796119182530", 0, 1796119182530 },
		{ "  1796119182530\t", 0, 1796119182530 },
		{ "1", 0, 1 },
		{ "999999999999999", 0, 999999999999999 },
		{ "1000000000000000", -EINVAL, 0 },	/* 16 digits */
		{ "0", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "   ", -EINVAL, 0 },
		{ "-5", -EINVAL, 0 },
		{ "+5", -EINVAL, 0 },
		{ "17961191825.30", -EINVAL, 0 },
		{ "500ms", -EINVAL, 0 },
		{ "1796119182530, 1796119182531", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		{ "Tue, 01 Dec 2026 10:00:00 GMT", -EINVAL, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int64_t ms = -1;
		int ret = rs_deadline_parse(rows[i].text, &ms);

		if (ret != rows[i].ret)
			fail_msg("'%s': %d, want %d", rows[i].text, ret,
			    rows[i].ret);
		if (ret == 0)
			assert_int_equal(ms, rows[i].ms);
	}
	assert_int_equal(rs_deadline_parse(NULL, NULL), -EINVAL);
}

static void test_format(void **state)
{
	char buf[RS_DEADLINE_TEXT_MAX];

	(void)state;
	assert_string_equal(rs_deadline_format(1796119182530, buf),
	    "1796119182530");
	assert_string_equal(rs_deadline_format(7, buf), "7");
	assert_string_equal(rs_deadline_format(INT64_MAX, buf),
	    "9223372036854775807");
}

/* now: epoch 1,000,000 ms is monotonic 5,000 ms. */
static void test_clamp(void **state)
{
	const int64_t e = 1000000, m = 5000;

	(void)state;
	/* 300 ms ahead stays 300 ms ahead, plus the millisecond the two
	   readings may have cut (never early: a CI run once gave up 1 ms
	   before a deadline a header set). */
	assert_int_equal(rs_deadline_clamp(e + 300, e, m, 300000, INT64_MAX),
	    m + 300 + RS_CLOCK_PAIR_MS);
	/* Far ahead (a skewed or hostile sender): at most max from now. */
	assert_int_equal(rs_deadline_clamp(e + 3600000, e, m, 300000,
	    INT64_MAX), m + 300000 + RS_CLOCK_PAIR_MS);
	assert_int_equal(rs_deadline_clamp(999999999999999, e, m, 300000,
	    INT64_MAX), m + 300000 + RS_CLOCK_PAIR_MS);
	/* Never later than the process deadline. */
	assert_int_equal(rs_deadline_clamp(e + 300, e, m, 300000, m + 100),
	    m + 100);
	/* Already past: stays past. */
	assert_int_equal(rs_deadline_clamp(e - 40, e, m, 300000, INT64_MAX),
	    m - 40 + RS_CLOCK_PAIR_MS);
	assert_int_equal(rs_deadline_to_epoch(m + 250, e, m), e + 250);
	assert_int_equal(rs_deadline_to_epoch(m - 3, e, m), e - 3);
}

static void test_replaces(void **state)
{
	(void)state;
	assert_false(rs_deadline_replaces("1000", 2000));	/* earlier */
	assert_false(rs_deadline_replaces("2000", 2000));
	assert_true(rs_deadline_replaces("3000", 2000));	/* later */
	assert_true(rs_deadline_replaces("soon", 2000));	/* invalid */
	assert_true(rs_deadline_replaces("", 2000));
}

static void test_header_names(void **state)
{
	char long_name[80];

	(void)state;
	assert_true(rs_deadline_header_name_ok(HDR));
	assert_true(rs_deadline_header_name_ok("grpc-timeout"));
	assert_true(rs_deadline_header_name_ok("X_Deadline.v2"));
	assert_false(rs_deadline_header_name_ok(""));
	assert_false(rs_deadline_header_name_ok("X Deadline"));
	assert_false(rs_deadline_header_name_ok("X-Deadline:"));
	assert_false(rs_deadline_header_name_ok("X\r\nY"));
	memset(long_name, 'a', sizeof(long_name));
	long_name[RS_HEADER_NAME_MAX] = '\0';
	assert_true(rs_deadline_header_name_ok(long_name + 1));
	assert_false(rs_deadline_header_name_ok(long_name));
}

static struct rs_policy *load(const char *text)
{
	struct rs_diags d = { 0 };
	struct rs_policy *p = NULL;

	assert_int_equal(rs_policy_load_buffer("t.yaml", text, strlen(text),
	    &p, &d), 0);
	rs_diags_free(&d);
	return p;
}

static void test_policy_keys(void **state)
{
	struct rs_policy *p;

	(void)state;
	p = load("version: 1\n");
	assert_string_equal(p->inbound_header, "");		/* off */
	assert_int_equal(p->inbound_max_ms, 300000);		/* 5m */
	assert_string_equal(p->defaults.deadline_header, "");	/* off */
	rs_policy_free(p);
	p = load("version: 1\ninbound_deadline: " HDR "\n"
	    "inbound_deadline_max: 90s\ndefaults:\n  deadline_header: " HDR
	    "\nhosts:\n  - match: a.internal\n    deadline_header: off\n"
	    "  - match: b.internal\n");
	assert_string_equal(p->inbound_header, HDR);
	assert_int_equal(p->inbound_max_ms, 90000);
	assert_string_equal(p->defaults.deadline_header, HDR);
	assert_string_equal(p->rules[0].settings.deadline_header, "");
	assert_string_equal(p->rules[1].settings.deadline_header, HDR);
	rs_policy_free(p);
	p = load("version: 1\ninbound_deadline: off\n");
	assert_string_equal(p->inbound_header, "");
	rs_policy_free(p);
}

static const struct rs_http_config keep_head = { true, 0, HDR };
static const struct rs_http_config keep_all = { true, 65536, HDR };

/* Counts the lines of the kept head that start with the deadline header. */
static int count_header(const struct rs_http *h)
{
	size_t len;
	const char *p = rs_http_kept(h, &len), *end = p + len;
	int n = 0;

	for (; p && p < end; p++)
		if ((p == rs_http_kept(h, &len) || p[-1] == '\n') &&
		    (size_t)(end - p) > strlen(HDR) &&
		    !strncasecmp(p, HDR ":", strlen(HDR) + 1))
			n++;
	return n;
}

/* The edit outbound requests get (httpout.c does this on each head). */
static void put_deadline(struct rs_http *h, int64_t ours)
{
	char text[RS_DEADLINE_TEXT_MAX];

	if (h->req.has_watch && !rs_deadline_replaces(h->req.watch, ours))
		return;
	assert_int_equal(rs_http_head_put(h, HDR, rs_deadline_format(ours,
	    text), true), 0);
}

static void test_outbound_once_and_replays(void **state)
{
	const char req[] = "GET /a HTTP/1.1\r\nHost: b\r\n\r\n";
	const char res503[] = "HTTP/1.1 503 No\r\nContent-Length: 0\r\n\r\n";
	struct rs_http h;
	enum rs_http_event ev;
	char buf[32];

	(void)state;
	rs_http_init(&h, &keep_all);
	rs_http_feed(&h, RS_HTTP_REQ, req, strlen(req), &ev);
	assert_int_equal(ev, RS_HTTP_EV_HEAD);
	put_deadline(&h, 1796119182530);
	put_deadline(&h, 1796119182530);	/* again: still once */
	assert_int_equal(count_header(&h), 1);
	/* The response is retried: the replay is the kept, edited request. */
	rs_http_feed(&h, RS_HTTP_RES, res503, strlen(res503), &ev);
	assert_int_equal(rs_http_rewind(&h), 0);
	assert_int_equal(count_header(&h), 1);
	assert_int_equal(rs_http_head_get(&h, HDR, buf, sizeof(buf)), 13);
	assert_string_equal(buf, "1796119182530");
	rs_http_free(&h);
}

static void test_outbound_keeps_earlier(void **state)
{
	const char early[] = "GET / HTTP/1.1\r\n" HDR ": 1000\r\n\r\n";
	const char late[] = "GET / HTTP/1.1\r\n" HDR ": 9000\r\n\r\n";
	struct rs_http h;
	enum rs_http_event ev;
	char buf[32];

	(void)state;
	rs_http_init(&h, &keep_head);
	rs_http_feed(&h, RS_HTTP_REQ, early, strlen(early), &ev);
	put_deadline(&h, 5000);
	rs_http_head_get(&h, HDR, buf, sizeof(buf));
	assert_string_equal(buf, "1000");
	assert_int_equal(count_header(&h), 1);
	rs_http_free(&h);
	rs_http_init(&h, &keep_head);
	rs_http_feed(&h, RS_HTTP_REQ, late, strlen(late), &ev);
	put_deadline(&h, 5000);
	rs_http_head_get(&h, HDR, buf, sizeof(buf));
	assert_string_equal(buf, "5000");
	assert_int_equal(count_header(&h), 1);
	rs_http_free(&h);
}

/* Redis, TLS, HTTP/2: pass-through at once, no head, nothing to edit. */
static void test_outbound_never_non_http(void **state)
{
	static const char *const streams[] = {
		"*1\r\n$4\r\nPING\r\n",
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"SSH-2.0-OpenSSH_9.2\r\n",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		struct rs_http h;
		enum rs_http_event ev = RS_HTTP_EV_NONE;
		const char *p = streams[i];
		size_t len = strlen(p) ? strlen(p) : 11, off = 0;

		rs_http_init(&h, &keep_head);
		while (off < len && ev != RS_HTTP_EV_PASS) {
			off += rs_http_feed(&h, RS_HTTP_REQ, p + off, len - off,
			    &ev);
			assert_int_not_equal(ev, RS_HTTP_EV_HEAD);
		}
		assert_int_equal(ev, RS_HTTP_EV_PASS);
		assert_int_equal(rs_http_head_put(&h, HDR, "1", true), -EAGAIN);
		rs_http_free(&h);
	}
}

/* Feeds all of text in direction dir; returns the last event. */
static enum rs_http_event feed_all(struct rs_http *h, enum rs_http_dir dir,
    const char *text)
{
	enum rs_http_event ev, last = RS_HTTP_EV_NONE;
	size_t off = 0, len = strlen(text);

	while (off < len) {
		off += rs_http_feed(h, dir, text + off, len - off, &ev);
		if (ev != RS_HTTP_EV_NONE)
			last = ev;
	}
	return last;
}

/* Inbound: the header is read from the request heads a server reads. */
static void test_inbound_heads(void **state)
{
	const struct rs_http_config cfg = { false, 0, HDR };
	const char r1[] = "GET /x HTTP/1.1\r\nx-request-deadline: 1796119182530"
		"\r\n\r\n";
	const char res[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
	const char r2[] = "GET /y HTTP/1.1\r\n\r\n";
	struct rs_http h;
	enum rs_http_event ev;
	int64_t ms;

	(void)state;
	rs_http_init(&h, &cfg);
	rs_http_feed(&h, RS_HTTP_REQ, r1, strlen(r1), &ev);
	assert_int_equal(ev, RS_HTTP_EV_HEAD);
	assert_true(h.req.has_watch);
	assert_int_equal(rs_deadline_parse(h.req.watch, &ms), 0);
	assert_int_equal(ms, 1796119182530);
	assert_int_equal(feed_all(&h, RS_HTTP_RES, res), RS_HTTP_EV_END);
	rs_http_feed(&h, RS_HTTP_REQ, r2, strlen(r2), &ev);
	assert_int_equal(ev, RS_HTTP_EV_HEAD);
	assert_false(h.req.has_watch);		/* the next request: none */
	rs_http_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_replaces),
		cmocka_unit_test(test_header_names),
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_outbound_once_and_replays),
		cmocka_unit_test(test_outbound_keeps_earlier),
		cmocka_unit_test(test_outbound_never_non_http),
		cmocka_unit_test(test_inbound_heads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
