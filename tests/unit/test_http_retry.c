/* SPDX-License-Identifier: MIT */
/*
 * test_http_retry.c - the retry machine's decisions: what is retried and
 * how long it waits, what is shown, replays of kept and edited requests,
 * attempts, the Retry-After cap, reconnects, and nothing replayed once
 * the program has a byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http_retry.h"

static const int64_t now = 1700000000000;
static const uint8_t rnd[16] = { 0xab };

static const char get[] = "GET /v1/x HTTP/1.1\r\nHost: api\r\n\r\n";
static const char busy[] = "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\n"
	"Content-Length: 4\r\n\r\nbusy";
static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

static struct rs_http_settings settings(void)
{
	struct rs_http_settings s;

	rs_http_settings_init(&s);
	s.enabled = true;
	return s;
}

/* The program writes p whole, held or not, as the engine would. */
static void write_all(struct rs_hr *r, const char *p)
{
	size_t n = strlen(p), k = 0;
	bool flush = false;

	if (rs_hr_holding(r))
		k = rs_hr_hold(r, p, n, rnd, &flush);
	rs_hr_sent(r, p + k, n - k);
}

/* Judges a response that is all in the queue. */
static enum rs_hr_verdict judge(struct rs_hr *r, const char *res)
{
	return rs_hr_judge(r, res, strlen(res), false, false, now);
}

/* Retries: drains res whole and resends; returns the resent bytes. */
static const char *retry(struct rs_hr *r, const char *res, size_t *len)
{
	size_t rest;

	rs_hr_retry(r);
	assert_int_equal(rs_hr_drain(r, res, strlen(res), &rest), RS_HR_DONE);
	assert_int_equal(rest, 0);
	assert_int_equal(r->phase, RS_HR_WAIT);
	return rs_hr_resend(r, len);
}

static void test_get_retried(void **state)
{
	struct rs_http_settings s = settings();
	struct rs_hr r;
	const char *again;
	size_t len;

	(void)state;
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	assert_int_equal(r.phase, RS_HR_AWAIT);
	assert_int_equal(judge(&r, busy), RS_HR_RETRY);
	assert_int_equal(r.wait_ms, 1000);
	assert_false(r.reconnect);
	again = retry(&r, busy, &len);
	assert_non_null(again);
	assert_memory_equal(again, get, strlen(get));
	assert_int_equal(len, strlen(get));
	assert_int_equal(r.attempt, 2);
	assert_int_equal(judge(&r, ok), RS_HR_SHOW);
	assert_false(r.gave_up);
	rs_hr_read(&r, ok, strlen(ok));
	assert_int_equal(r.phase, RS_HR_IDLE);
	/* The next request on the connection starts afresh. */
	write_all(&r, get);
	assert_int_equal(r.attempt, 1);
	rs_hr_free(&r);
}

static void test_not_retried(void **state)
{
	static const char *const shown[] = {
		"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 400 Bad\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n",
	};
	struct rs_http_settings s = settings();
	struct rs_hr r;

	(void)state;
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		rs_hr_init(&r, &s, NULL);
		write_all(&r, get);
		/* Shown as soon as the status line is seen. */
		size_t line = (size_t)(strchr(shown[i], '\n') - shown[i]) + 1;

		assert_int_equal(rs_hr_judge(&r, shown[i], line, false, false,
		    now), RS_HR_SHOW);
		assert_int_equal(r.judged, line);
		assert_false(r.gave_up);
		rs_hr_free(&r);
	}
	/* A POST without a key is never replayed. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, "POST /o HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
	assert_int_equal(judge(&r, busy), RS_HR_SHOW);
	rs_hr_free(&r);
}

static void test_inject(void **state)
{
	struct rs_http_settings s = settings();
	const char post[] = "POST /o HTTP/1.1\r\nContent-Length: 1\r\n\r\nx";
	const char *kept, *again;
	struct rs_hr r;
	size_t len, len2;
	char copy[256];

	(void)state;
	s.idempotency_key = RS_HTTP_KEY_INJECT;
	rs_hr_init(&r, &s, NULL);
	/* The head arrives in two writes; nothing is sent until it is whole. */
	assert_true(rs_hr_holding(&r));
	write_all(&r, "POST /o HTTP/1.1\r\nContent-");
	assert_true(rs_hr_holding(&r));
	write_all(&r, post + 26);
	assert_true(r.inject);
	assert_int_equal(r.phase, RS_HR_AWAIT);
	kept = rs_http_kept(&r.t, &len);
	assert_true(len < sizeof(copy));
	memcpy(copy, kept, len);
	assert_non_null(memmem(copy, len, "\r\nIdempotency-Key: ab", 21));
	assert_int_equal(judge(&r, busy), RS_HR_RETRY);
	again = retry(&r, busy, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(again, copy, len);	/* the same key */
	rs_hr_free(&r);
	/* A key the program sent is kept, not doubled. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, "PATCH /o HTTP/1.1\r\nIdempotency-Key: mine\r\n\r\n");
	assert_false(r.inject);
	assert_int_equal(judge(&r, busy), RS_HR_RETRY);
	rs_hr_free(&r);
}

/* One write's bytes to the holding path; returns whether they must go. */
static bool hold_some(struct rs_hr *r, const char *p)
{
	bool flush = false;

	assert_true(rs_hr_holding(r));
	assert_int_equal(rs_hr_hold(r, p, strlen(p), rnd, &flush), strlen(p));
	return flush;
}

/*
 * inject holds a head only while its method may be POST or PATCH: a
 * GET's first byte goes at once, unedited, and so does the rest of its
 * head; a POST's beginning is held until released (a close, a wait),
 * after which its head is neither held nor edited, and the next request
 * is held again.
 */
static void test_inject_holds_only_what_it_edits(void **state)
{
	struct rs_http_settings s = settings();
	struct rs_hr r;
	size_t len;

	(void)state;
	s.idempotency_key = RS_HTTP_KEY_INJECT;
	rs_hr_init(&r, &s, NULL);
	assert_true(hold_some(&r, "G"));
	assert_int_equal(rs_hr_held(&r), 0);
	assert_false(rs_hr_holding(&r));
	rs_hr_sent(&r, "ET / HTTP/1.1\r\n\r\n", 17);
	assert_int_equal(r.phase, RS_HR_AWAIT);
	rs_hr_free(&r);

	rs_hr_init(&r, &s, NULL);
	assert_false(hold_some(&r, "P"));		/* POST or PATCH */
	assert_false(hold_some(&r, "O"));
	assert_int_equal(rs_hr_held(&r), 2);
	assert_false(hold_some(&r, "ST /o HTTP/1.1\r\n"));
	assert_int_equal(rs_hr_held(&r), 18);
	assert_true(rs_hr_release(&r));
	assert_memory_equal(rs_http_kept(&r.t, &len), "POST /o", 7);
	assert_int_equal(len, 18);
	assert_false(rs_hr_holding(&r));
	assert_false(rs_hr_release(&r));
	rs_hr_sent(&r, "Content-Length: 0\r\n\r\n", 21);
	assert_false(r.inject);			/* not edited */
	assert_int_equal(r.phase, RS_HR_AWAIT);
	rs_hr_free(&r);

	rs_hr_init(&r, &s, NULL);
	assert_true(hold_some(&r, "PU"));		/* PUT: not held */
	rs_hr_free(&r);
}

static void test_attempts_and_cap(void **state)
{
	struct rs_http_settings s = settings();
	struct rs_hr r;
	size_t len;

	(void)state;
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(judge(&r, busy), RS_HR_RETRY);
		assert_non_null(retry(&r, busy, &len));
	}
	/* The third try is the last one: its 503 goes to the program. */
	assert_int_equal(judge(&r, busy), RS_HR_SHOW);
	assert_true(r.gave_up);
	rs_hr_free(&r);
	/* Above the cap: handed over at once. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	assert_int_equal(judge(&r, "HTTP/1.1 429 Slow\r\nRetry-After: 120\r\n"
	    "Content-Length: 0\r\n\r\n"), RS_HR_SHOW);
	assert_true(r.gave_up);
	rs_hr_free(&r);
	/* No Retry-After: the rule's backoff. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	assert_int_equal(judge(&r, "HTTP/1.1 429 Slow\r\n"
	    "Content-Length: 0\r\n\r\n"), RS_HR_RETRY);
	assert_int_equal(r.wait_ms, RS_HR_BACKOFF);
	rs_hr_free(&r);
}

static void test_reconnect(void **state)
{
	const char closing[] = "HTTP/1.0 503 Busy\r\n\r\nuntil the end";
	struct rs_http_settings s = settings();
	struct rs_hr r;
	size_t rest, len;

	(void)state;
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	assert_int_equal(judge(&r, closing), RS_HR_RETRY);
	assert_true(r.reconnect);
	rs_hr_retry(&r);
	assert_int_equal(rs_hr_drain(&r, closing, strlen(closing), &rest),
	    RS_HR_MORE);
	assert_int_equal(rs_hr_drain(&r, NULL, 0, &rest), RS_HR_DONE);
	assert_true(r.reconnect);
	assert_non_null(rs_hr_resend(&r, &len));
	assert_int_equal(judge(&r, ok), RS_HR_SHOW);
	rs_hr_free(&r);
	/* A resent request lost to a closed idle connection goes again. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	assert_false(rs_hr_lost(&r));		/* not resent: the program's */
	assert_int_equal(judge(&r, busy), RS_HR_RETRY);
	assert_non_null(retry(&r, busy, &len));
	assert_true(rs_hr_lost(&r));
	assert_int_equal(r.phase, RS_HR_WAIT);
	assert_true(r.reconnect);
	assert_non_null(rs_hr_resend(&r, &len));
	assert_int_equal(r.attempt, 2);		/* the same attempt */
	rs_hr_free(&r);
	/* A request that said Connection: close is not followed by another. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
	assert_int_equal(judge(&r, busy), RS_HR_RETRY);
	assert_true(r.reconnect);
	rs_hr_free(&r);
}

static void test_partial_and_delivered(void **state)
{
	struct rs_http_settings s = settings();
	struct rs_hr r;

	(void)state;
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	assert_int_equal(rs_hr_judge(&r, busy, 10, false, false, now),
	    RS_HR_MORE);
	assert_int_equal(rs_hr_judge(&r, busy, 20, false, false, now),
	    RS_HR_MORE);
	/* The engine could look no further: the program gets it. */
	assert_int_equal(rs_hr_judge(&r, busy, 20, true, false, now),
	    RS_HR_SHOW);
	assert_true(r.gave_up);
	rs_hr_read(&r, busy, 5);
	assert_true(r.delivered);
	/* Once shown, nothing is retried, whatever follows. */
	rs_hr_retry(&r);
	assert_int_equal(r.phase, RS_HR_DELIVER);
	rs_hr_read(&r, busy + 5, strlen(busy) - 5);
	assert_int_equal(r.phase, RS_HR_IDLE);
	rs_hr_free(&r);
	/* Pipelining passes everything through. */
	rs_hr_init(&r, &s, NULL);
	write_all(&r, get);
	write_all(&r, get);
	assert_int_equal(r.phase, RS_HR_PASS);
	assert_int_equal(judge(&r, busy), RS_HR_SHOW);
	rs_hr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_retried),
		cmocka_unit_test(test_not_retried),
		cmocka_unit_test(test_inject),
		cmocka_unit_test(test_inject_holds_only_what_it_edits),
		cmocka_unit_test(test_attempts_and_cap),
		cmocka_unit_test(test_reconnect),
		cmocka_unit_test(test_partial_and_delivered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
