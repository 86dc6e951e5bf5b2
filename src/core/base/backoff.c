/* SPDX-License-Identifier: MIT */
/*
 * backoff.c - delays between connect attempts.
 *
 * Pure arithmetic in double precision, clamped to cap_ms before any
 * conversion back to integers, so that huge retry indexes or multipliers
 * saturate at the cap instead of overflowing.
 */
#include "backoff.h"



/* v = min(cap, base * multiplier^n), computed without overflow. */
static double ceiling_ms(const struct rs_backoff *b, unsigned n)
{
	double v = b->base_ms;

	for (unsigned i = 0; i < n && v < b->cap_ms; i++)
		v *= b->multiplier;
	return v < b->cap_ms ? v : b->cap_ms;
}

static uint32_t clamp_ms(const struct rs_backoff *b, double v)
{
	if (!(v > 0))
		return 0;
	if (v >= b->cap_ms)
		return b->cap_ms;
	return (uint32_t)v;
}

uint32_t rs_backoff_wait_ms(const struct rs_backoff *b, unsigned n, double u,
    uint32_t prev_ms)
{
	double v = ceiling_ms(b, n);

	if (u < 0)
		u = 0;
	if (u >= 1)
		u = 1.0 - 1e-12;
	switch (b->jitter) {
	case RS_JITTER_EQUAL:
		return clamp_ms(b, v * (0.5 + 0.5 * u));
	case RS_JITTER_FULL:
		return clamp_ms(b, v * u);
	case RS_JITTER_DECORRELATED: {
		double prev = prev_ms ? prev_ms : b->base_ms;
		double hi = 3.0 * prev;

		if (hi < b->base_ms)
			hi = b->base_ms;
		return clamp_ms(b, b->base_ms + (hi - b->base_ms) * u);
	}
	case RS_JITTER_NONE:
	default:
		return clamp_ms(b, v);
	}
}

void rs_backoff_bounds_ms(const struct rs_backoff *b, unsigned n,
    uint32_t *lo_ms, uint32_t *hi_ms)
{
	double v = ceiling_ms(b, n);

	switch (b->jitter) {
	case RS_JITTER_EQUAL:
		*lo_ms = clamp_ms(b, v * 0.5);
		*hi_ms = clamp_ms(b, v);
		break;
	case RS_JITTER_FULL:
		*lo_ms = 0;
		*hi_ms = clamp_ms(b, v);
		break;
	case RS_JITTER_DECORRELATED: {
		/* The widest range: every earlier draw took its maximum. */
		double hi = b->base_ms;

		for (unsigned i = 0; i <= n && hi < b->cap_ms; i++)
			hi *= 3.0;
		*lo_ms = clamp_ms(b, b->base_ms);
		*hi_ms = clamp_ms(b, hi);
		break;
	}
	case RS_JITTER_NONE:
	default:
		*lo_ms = *hi_ms = clamp_ms(b, v);
		break;
	}
}

const char *rs_jitter_name(enum rs_jitter j)
{
	switch (j) {
	case RS_JITTER_EQUAL:
		return "equal";
	case RS_JITTER_FULL:
		return "full";
	case RS_JITTER_DECORRELATED:
		return "decorrelated";
	case RS_JITTER_NONE:
		return "none";
	}
	return "?";
}
