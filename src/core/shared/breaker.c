/* SPDX-License-Identifier: MIT */
/*
 * breaker.c - the breaker's state machine over its one word (breaker.h).
 *
 * Layout of the word, low bits first: state 2, probes_out 4, err 8,
 * failures 10, doublings 4, until 36.  Pure and thread-safe.
 */
#include "breaker.h"

#define TIME_BITS 36
#define TIME_MASK ((UINT64_C(1) << TIME_BITS) - 1)
#define FAILURES_CAP 1023u
#define DOUBLINGS_CAP 15u

void rs_breaker_unpack(uint64_t w, struct rs_breaker_view *v)
{
	v->state = (unsigned)(w & 3);
	v->probes_out = (unsigned)(w >> 2 & 15);
	v->err = (int)(w >> 6 & 255);
	v->failures = (unsigned)(w >> 14 & 1023);
	v->doublings = (unsigned)(w >> 24 & 15);
	v->until = w >> 28;
}

uint64_t rs_breaker_pack(const struct rs_breaker_view *v)
{
	return (uint64_t)(v->state & 3) | (uint64_t)(v->probes_out & 15) << 2 |
	    (uint64_t)(v->err & 255) << 6 | (uint64_t)(v->failures & 1023) << 14 |
	    (uint64_t)(v->doublings & 15) << 24 | (v->until & TIME_MASK) << 28;
}

static uint64_t stamp(int64_t ms)
{
	return (uint64_t)ms & TIME_MASK;
}

bool rs_breaker_before(int64_t now_ms, uint64_t until)
{
	/* The difference modulo 2^36, read as a signed 36-bit number. */
	uint64_t d = (stamp(now_ms) - until) & TIME_MASK;

	return (int64_t)(d << (64 - TIME_BITS)) < 0;
}

uint32_t rs_breaker_period_ms(const struct rs_breaker_settings *s,
    unsigned doublings, double u)
{
	uint64_t p = s->open_for_ms;

	for (unsigned i = 0; i < doublings && p < s->max_open_for_ms; i++)
		p *= 2;
	if (p > s->max_open_for_ms)
		p = s->max_open_for_ms;
	if (p < 1)
		p = 1;
	return (uint32_t)((double)p * (0.9 + 0.2 * u));
}

/* A probe's lease: the unjittered period it would reopen for. */
static uint64_t lease_until(const struct rs_breaker_settings *s,
    unsigned doublings, int64_t now_ms)
{
	return stamp(now_ms + (int64_t)rs_breaker_period_ms(s, doublings,
	    0.5));
}

enum rs_breaker_verdict rs_breaker_decide(uint64_t w,
    const struct rs_breaker_settings *s, int64_t now_ms, uint64_t *next)
{
	struct rs_breaker_view v;

	*next = w;
	rs_breaker_unpack(w, &v);
	if (v.state == RS_BREAKER_CLOSED)
		return RS_BREAKER_PASS;
	if (v.state == RS_BREAKER_OPEN && rs_breaker_before(now_ms, v.until))
		return RS_BREAKER_REJECT;
	if (v.state == RS_BREAKER_OPEN) {
		v.probes_out = 0;
		v.until = lease_until(s, v.doublings, now_ms);
	} else if (v.probes_out >= s->probes) {
		/* Every probe is out: only a lease that ran out (its holder
		   died, or hangs) frees a place. */
		if (rs_breaker_before(now_ms, v.until))
			return RS_BREAKER_REJECT;
		v.probes_out = 0;
		v.until = lease_until(s, v.doublings, now_ms);
	}
	v.state = RS_BREAKER_HALF_OPEN;
	v.probes_out++;
	*next = rs_breaker_pack(&v);
	return RS_BREAKER_PROBE;
}

/* A failure: counts while closed, reopens after a failed probe. */
static uint64_t failed(uint64_t w, const struct rs_breaker_settings *s,
    int err, bool probe, int64_t now_ms, double u, enum rs_breaker_event *ev)
{
	struct rs_breaker_view v;

	rs_breaker_unpack(w, &v);
	if (v.state == RS_BREAKER_CLOSED) {
		if (v.failures < FAILURES_CAP)
			v.failures++;
		if (v.failures < s->failures)
			return rs_breaker_pack(&v);
		v.doublings = 0;
	} else if (v.state == RS_BREAKER_HALF_OPEN && probe) {
		if (v.doublings < DOUBLINGS_CAP)
			v.doublings++;
	} else {
		/* Open, or an attempt older than the probes: already known. */
		return w;
	}
	v.state = RS_BREAKER_OPEN;
	v.probes_out = 0;
	v.err = err > 0 && err < 256 ? err : 110;	/* ETIMEDOUT */
	v.until = stamp(now_ms + (int64_t)rs_breaker_period_ms(s, v.doublings,
	    u));
	*ev = RS_BREAKER_OPENED;
	return rs_breaker_pack(&v);
}

uint64_t rs_breaker_outcome(uint64_t w, const struct rs_breaker_settings *s,
    int err, bool probe, int64_t now_ms, double u,
    enum rs_breaker_event *ev)
{
	*ev = RS_BREAKER_NO_EVENT;
	if (err)
		return failed(w, s, err, probe, now_ms, u, ev);
	if ((w & 3) != RS_BREAKER_CLOSED)
		*ev = RS_BREAKER_CLOSED_EV;
	return 0;
}

uint32_t rs_breaker_left_ms(uint64_t w, int64_t now_ms)
{
	uint64_t until = w >> 28;

	if (!rs_breaker_before(now_ms, until))
		return 0;
	return (uint32_t)((until - stamp(now_ms)) & TIME_MASK);
}

enum rs_breaker_state rs_breaker_state_at(uint64_t w, int64_t now_ms)
{
	struct rs_breaker_view v;

	rs_breaker_unpack(w, &v);
	if (v.state == RS_BREAKER_OPEN && !rs_breaker_before(now_ms, v.until))
		return RS_BREAKER_HALF_OPEN;
	return (enum rs_breaker_state)v.state;
}

const char *rs_breaker_state_name(enum rs_breaker_state st)
{
	switch (st) {
	case RS_BREAKER_OPEN:
		return "open";
	case RS_BREAKER_HALF_OPEN:
		return "half-open";
	default:
		return "closed";
	}
}
