/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http.c - libFuzzer target for the HTTP/1.x tracker and the retry
 * machine (http.h, http_retry.h).
 *
 * The input is a script for a simulated client connection: its first byte
 * picks the settings (attempts, max_replay, idempotency_key), then each
 * step is an operation byte, a length byte and that many bytes: the
 * program writes them, the server's bytes arrive (split wherever the
 * script says), the program reads some, the server closes, or a canned
 * request or response is used instead of raw bytes.  The simulation does
 * what the preload engine does with the machine's verdicts.  Checked: no
 * crash or out-of-bounds access, the kept request never outgrows its
 * limit, and nothing is ever replayed (or judged retryable) once a byte of
 * the response reached the program.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_retry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define QCAP 4096

static const char *const canned[] = {
	"GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
	"PUT /q HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
	"HTTP/1.1 503 Busy\r\nRetry-After: 1\r\nContent-Length: 4\r\n\r\nbusy",
	"HTTP/1.1 429 Slow\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n",
	"HTTP/1.0 503 Busy\r\n\r\nuntil close",
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 503 Busy\r\nRetry-After: 120\r\nConnection: close\r\n\r\n",
};

struct sim {
	struct rs_hr r;
	char q[QCAP];		/* the receive queue */
	size_t qlen;
	bool eof;
	bool delivered;		/* the program got bytes of this exchange */
	uint32_t max_replay;
};

static void check_kept(const struct sim *s)
{
	size_t len;

	rs_http_kept(&s->r.t, &len);
	if (len > (s->max_replay ? s->max_replay : RS_HTTP_HEAD_MAX) + 512)
		abort();
}

static void consume(struct sim *s, size_t n)
{
	memmove(s->q, s->q + n, s->qlen - n);
	s->qlen -= n;
}

static void write_bytes(struct sim *s, const char *p, size_t n)
{
	static const uint8_t rnd[16] = { 1, 2, 3 };
	bool flush;
	size_t k = 0;
	enum rs_hr_phase before = s->r.phase;

	if (rs_hr_holding(&s->r))
		k = rs_hr_hold(&s->r, p, n, rnd, &flush);
	rs_hr_sent(&s->r, p + k, n - k);
	if (before != RS_HR_AWAIT && s->r.phase == RS_HR_AWAIT)
		s->delivered = false;	/* a new exchange */
	check_kept(s);
}

/* Drains, waits and resends as the engine does, after a RETRY verdict. */
static void retry(struct sim *s)
{
	size_t rest, len;
	const char *again;

	if (s->delivered)
		abort();
	rs_hr_retry(&s->r);
	while (s->r.phase == RS_HR_DRAIN) {
		size_t n = s->qlen;

		if (n == 0 && !s->eof)
			return;	/* the engine would wait for more */
		rs_hr_drain(&s->r, s->q, n, &rest);
		consume(s, n);
	}
	if (s->delivered)
		abort();
	again = rs_hr_resend(&s->r, &len);
	if (again != NULL && s->r.reconnect) {
		s->qlen = 0;
		s->eof = false;
	}
}

/* The program reads up to n bytes: the engine judges first. */
static void read_bytes(struct sim *s, size_t n, bool allow)
{
	enum rs_hr_verdict v;

	if (s->r.phase == RS_HR_WAIT)
		retry(s);
	if (s->r.phase == RS_HR_DRAIN)
		retry(s);
	if (s->r.phase == RS_HR_AWAIT) {
		v = rs_hr_judge(&s->r, s->q, s->qlen, s->qlen == QCAP, s->eof,
		    1700000000000);
		if (v == RS_HR_MORE)
			return;
		if (v == RS_HR_RETRY) {
			if (s->delivered)
				abort();
			if (!allow) {
				rs_hr_give_up(&s->r);
			} else {
				retry(s);
				return;
			}
		}
	}
	if (n > s->qlen)
		n = s->qlen;
	if (n == 0 && !s->eof)
		return;
	rs_hr_read(&s->r, s->q, n);
	if (n > 0)
		s->delivered = true;
	consume(s, n);
}

static void arrive(struct sim *s, const char *p, size_t n)
{
	if (s->eof)
		return;
	if (n > QCAP - s->qlen)
		n = QCAP - s->qlen;
	memcpy(s->q + s->qlen, p, n);
	s->qlen += n;
}

static void step(struct sim *s, uint8_t op, const char *p, size_t n)
{
	const char *c = canned[(op >> 3) % (sizeof(canned) / sizeof(*canned))];

	switch (op & 7) {
	case 0: write_bytes(s, p, n); break;
	case 1: arrive(s, p, n); break;
	case 2: read_bytes(s, n ? n : 1, op & 0x80); break;
	case 3: s->eof = true; break;
	case 4: write_bytes(s, c, strlen(c)); break;
	case 5: arrive(s, c, strlen(c)); break;
	case 6: read_bytes(s, QCAP, true); break;
	default: rs_hr_read(&s->r, NULL, 0); break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t replay[] = { 0, 16, 100, 65536 };
	struct rs_http_settings hs;
	struct sim *s;
	size_t i = 1;

	if (size < 1)
		return 0;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return 0;
	rs_http_settings_init(&hs);
	hs.enabled = true;
	hs.attempts = 1 + data[0] % 4;
	hs.max_replay = replay[(data[0] >> 2) % 4];
	hs.idempotency_key = (data[0] & 0x10) ? RS_HTTP_KEY_INJECT :
	    RS_HTTP_KEY_OFF;
	s->max_replay = hs.max_replay;
	rs_hr_init(&s->r, &hs, (data[0] & 0x20) ? "X-Request-Deadline" : NULL);
	while (i + 1 < size) {
		uint8_t op = data[i], len = data[i + 1];
		size_t n = len < size - i - 2 ? len : size - i - 2;

		step(s, op, (const char *)data + i + 2, n);
		i += 2 + n;
	}
	rs_hr_free(&s->r);
	free(s);
	return 0;
}
