/* SPDX-License-Identifier: MIT */
/*
 * test_breaker.c - unit tests for breaker.c and breaker_table.c: the
 * state machine over its word (opening, rejects, probe hand-out, doubling
 * up to max_open_for, jitter bounds, a probe whose holder died), the
 * clock's wrap, slot claiming and reuse, and threads hammering one slot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "breaker.h"
#include "breaker_table.h"
#include "breakers.h"

static struct rs_breaker_settings cfg(unsigned failures, uint32_t open_ms,
    uint32_t max_ms, unsigned probes)
{
	struct rs_breaker_settings s;

	rs_breaker_settings_init(&s);
	s.enabled = true;
	s.failures = failures;
	s.open_for_ms = open_ms;
	s.max_open_for_ms = max_ms;
	s.probes = probes;
	return s;
}

/* Applies a failure (or success, err 0) and returns the event. */
static enum rs_breaker_event out(uint64_t *w,
    const struct rs_breaker_settings *s, int err, bool probe, int64_t now)
{
	enum rs_breaker_event ev;

	*w = rs_breaker_outcome(*w, s, err, probe, now, 0.5, &ev);
	return ev;
}

static enum rs_breaker_verdict ask(uint64_t *w,
    const struct rs_breaker_settings *s, int64_t now)
{
	uint64_t next;
	enum rs_breaker_verdict v = rs_breaker_decide(*w, s, now, &next);

	*w = next;
	return v;
}

static void test_pack_roundtrip(void **state)
{
	struct rs_breaker_view v = { RS_BREAKER_HALF_OPEN, 10, ETIMEDOUT, 1000,
		15, (UINT64_C(1) << 36) - 1 }, back;

	(void)state;
	rs_breaker_unpack(rs_breaker_pack(&v), &back);
	/* Field by field: the struct's padding is not part of the view. */
	assert_int_equal(back.state, v.state);
	assert_int_equal(back.probes_out, v.probes_out);
	assert_int_equal(back.err, v.err);
	assert_int_equal(back.failures, v.failures);
	assert_int_equal(back.doublings, v.doublings);
	assert_int_equal(back.until, v.until);
	rs_breaker_unpack(0, &back);
	assert_int_equal(back.state, RS_BREAKER_CLOSED);
	assert_int_equal(back.failures, 0);
}

/* Closed -> open after `failures` in a row; a success resets the count. */
static void test_opens_after_failures(void **state)
{
	struct rs_breaker_settings s = cfg(3, 1000, 8000, 1);
	uint64_t w = 0;
	int64_t t = 5000;

	(void)state;
	assert_int_equal(ask(&w, &s, t), RS_BREAKER_PASS);
	assert_int_equal(out(&w, &s, ECONNREFUSED, false, t), RS_BREAKER_NO_EVENT);
	assert_int_equal(out(&w, &s, ECONNREFUSED, false, t), RS_BREAKER_NO_EVENT);
	assert_int_equal(out(&w, &s, 0, false, t), RS_BREAKER_NO_EVENT);
	assert_int_equal(w, 0);
	assert_int_equal(out(&w, &s, ETIMEDOUT, false, t), RS_BREAKER_NO_EVENT);
	assert_int_equal(out(&w, &s, ETIMEDOUT, false, t), RS_BREAKER_NO_EVENT);
	assert_int_equal(ask(&w, &s, t), RS_BREAKER_PASS);
	assert_int_equal(out(&w, &s, ETIMEDOUT, false, t), RS_BREAKER_OPENED);
	assert_int_equal(rs_breaker_state_at(w, t), RS_BREAKER_OPEN);
	/* Open for 1000 ms (jitter 0.5: none): rejected with its error. */
	assert_int_equal(ask(&w, &s, t + 999), RS_BREAKER_REJECT);
	struct rs_breaker_view v;

	rs_breaker_unpack(w, &v);
	assert_int_equal(v.err, ETIMEDOUT);
	assert_int_equal(v.failures, 3);
	assert_int_equal(rs_breaker_left_ms(w, t + 400), 600);
	/* Failures while open change nothing. */
	uint64_t before = w;

	assert_int_equal(out(&w, &s, ECONNREFUSED, false, t + 10),
	    RS_BREAKER_NO_EVENT);
	assert_int_equal(w, before);
}

/* Half-open hands out exactly `probes`; a probe's success closes it. */
static void test_probes_and_close(void **state)
{
	struct rs_breaker_settings s = cfg(1, 1000, 8000, 2);
	uint64_t w = 0;

	(void)state;
	out(&w, &s, ECONNREFUSED, false, 0);
	assert_int_equal(rs_breaker_state_at(w, 1000), RS_BREAKER_HALF_OPEN);
	assert_int_equal(ask(&w, &s, 1000), RS_BREAKER_PROBE);
	assert_int_equal(ask(&w, &s, 1001), RS_BREAKER_PROBE);
	assert_int_equal(ask(&w, &s, 1002), RS_BREAKER_REJECT);
	assert_int_equal(ask(&w, &s, 1500), RS_BREAKER_REJECT);
	/* A failure of an attempt that was no probe proves nothing. */
	uint64_t before = w;

	assert_int_equal(out(&w, &s, ECONNREFUSED, false, 1500),
	    RS_BREAKER_NO_EVENT);
	assert_int_equal(w, before);
	assert_int_equal(out(&w, &s, 0, true, 1600), RS_BREAKER_CLOSED_EV);
	assert_int_equal(w, 0);
	assert_int_equal(ask(&w, &s, 1601), RS_BREAKER_PASS);
}

/* Each failed probe doubles the period, up to max_open_for. */
static void test_doubling(void **state)
{
	struct rs_breaker_settings s = cfg(1, 1000, 5000, 1);
	uint32_t want[] = { 2000, 4000, 5000, 5000 };
	uint64_t w = 0;
	int64_t t = 0;

	(void)state;
	out(&w, &s, ETIMEDOUT, false, t);
	t += 1000;
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(ask(&w, &s, t), RS_BREAKER_PROBE);
		assert_int_equal(out(&w, &s, ETIMEDOUT, true, t),
		    RS_BREAKER_OPENED);
		assert_int_equal(rs_breaker_left_ms(w, t), want[i]);
		assert_int_equal(ask(&w, &s, t + want[i] - 1),
		    RS_BREAKER_REJECT);
		t += want[i];
	}
	/* A success closes it; the next opening starts from open_for. */
	assert_int_equal(ask(&w, &s, t), RS_BREAKER_PROBE);
	assert_int_equal(out(&w, &s, 0, true, t), RS_BREAKER_CLOSED_EV);
	out(&w, &s, ETIMEDOUT, false, t);
	assert_int_equal(rs_breaker_left_ms(w, t), 1000);
}

/* open_for is jittered within +-10%, and the draws spread over it. */
static void test_jitter_bounds(void **state)
{
	struct rs_breaker_settings s = cfg(1, 10000, 300000, 1);
	uint32_t lo = UINT32_MAX, hi = 0;

	(void)state;
	for (unsigned i = 0; i <= 1000; i++) {
		uint32_t p = rs_breaker_period_ms(&s, 0, i / 1000.0 *
		    0.999999);

		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
	}
	assert_true(lo >= 9000 && lo < 9010);
	assert_true(hi <= 11000 && hi > 10990);
	assert_int_equal(rs_breaker_period_ms(&s, 40, 0.5), 300000);
}

/*
 * A probe whose process died never reports: its place is held for one
 * more period (its lease), then the next connect gets to probe.
 */
static void test_dead_probe(void **state)
{
	struct rs_breaker_settings s = cfg(1, 1000, 8000, 1);
	uint64_t w = 0;

	(void)state;
	out(&w, &s, ECONNREFUSED, false, 0);
	assert_int_equal(ask(&w, &s, 1000), RS_BREAKER_PROBE);
	/* ... its holder is killed here ... */
	assert_int_equal(ask(&w, &s, 1999), RS_BREAKER_REJECT);
	assert_int_equal(ask(&w, &s, 2000), RS_BREAKER_PROBE);
	assert_int_equal(ask(&w, &s, 2001), RS_BREAKER_REJECT);
	assert_int_equal(out(&w, &s, 0, true, 2100), RS_BREAKER_CLOSED_EV);
}

/* The 36-bit clock wraps: comparisons stay right across the wrap. */
static void test_clock_wrap(void **state)
{
	struct rs_breaker_settings s = cfg(1, 1000, 8000, 1);
	int64_t t = (INT64_C(1) << 36) - 300;
	uint64_t w = 0;

	(void)state;
	out(&w, &s, ETIMEDOUT, false, t);
	assert_int_equal(ask(&w, &s, t + 500), RS_BREAKER_REJECT);
	assert_int_equal(rs_breaker_left_ms(w, t + 500), 500);
	assert_int_equal(ask(&w, &s, t + 1000), RS_BREAKER_PROBE);
}

static struct rs_breaker_dest dest(unsigned last, uint16_t port)
{
	struct rs_breaker_dest d = { .rule_key = 42, .family = AF_INET,
		.port = port };

	d.addr[0] = 10;
	d.addr[3] = (uint8_t)last;
	return d;
}

/*
 * Slots: found again by key; a neighbourhood full of open breakers has no
 * room; a closed one (no failures first) is taken over.
 */
static void test_slot_reuse(void **state)
{
	static struct rs_breaker_table t;
	struct rs_breaker_settings s = cfg(1, 1000, 8000, 1);
	struct rs_breaker_dest d[RS_BREAKER_WAYS + 2];
	struct rs_breaker_slot *sl[RS_BREAKER_WAYS + 2];
	uint64_t key[RS_BREAKER_WAYS + 2];
	uint32_t opens;
	unsigned n = 0;

	(void)state;
	memset(&t, 0, sizeof(t));
	/* Addresses whose keys share one neighbourhood start. */
	for (unsigned a = 0; n < RS_BREAKER_WAYS + 2 && a < 2000000; a++) {
		struct rs_breaker_dest x = dest(a & 255, (uint16_t)(a >> 8));

		if (n && rs_breaker_key(&x) % RS_BREAKER_SLOTS !=
		    key[0] % RS_BREAKER_SLOTS)
			continue;
		d[n] = x;
		key[n++] = rs_breaker_key(&x);
	}
	assert_int_equal(n, RS_BREAKER_WAYS + 2);
	for (unsigned i = 0; i < RS_BREAKER_WAYS; i++) {
		sl[i] = rs_breaker_claim(&t, &d[i], key[i]);
		assert_non_null(sl[i]);
		assert_ptr_equal(rs_breaker_find(&t, &d[i], key[i]), sl[i]);
		assert_int_equal(rs_breaker_slot_record(sl[i], &s, ETIMEDOUT,
		    false, 0, 0.5, &opens), RS_BREAKER_OPENED);
	}
	/* All open: no room, and nothing open is lost. */
	assert_null(rs_breaker_claim(&t, &d[RS_BREAKER_WAYS],
	    key[RS_BREAKER_WAYS]));
	/* One closes (its address answered): it is taken over. */
	rs_breaker_slot_record(sl[5], &s, 0, true, 10, 0.5, &opens);
	sl[RS_BREAKER_WAYS] = rs_breaker_claim(&t, &d[RS_BREAKER_WAYS],
	    key[RS_BREAKER_WAYS]);
	assert_ptr_equal(sl[RS_BREAKER_WAYS], sl[5]);
	assert_int_equal(__atomic_load_n(&sl[5]->word, __ATOMIC_RELAXED), 0);
	assert_null(rs_breaker_find(&t, &d[5], key[5]));
	assert_int_equal(sl[5]->addr[3], d[RS_BREAKER_WAYS].addr[3]);
	for (unsigned i = 0; i < RS_BREAKER_WAYS; i++)
		if (i != 5)
			assert_ptr_equal(rs_breaker_find(&t, &d[i], key[i]),
			    sl[i]);
}

/*
 * Threads hammer one slot with probes and outcomes at a shared clock:
 * probes out never exceed `probes` per lease, the counts stay within
 * their fields, and it is never left half-open once the clock runs on.
 */
#define THREADS 8
#define ROUNDS 20000

static struct rs_breaker_table hammer_table;
static int64_t hammer_clock;
static unsigned max_out, now_out;

static void *hammer(void *arg)
{
	struct rs_breaker_settings s = cfg(3, 50, 400, 2);
	struct rs_breaker_dest d = dest(7, 80);
	uint64_t key = rs_breaker_key(&d);
	unsigned seed = (unsigned)(uintptr_t)arg;
	uint32_t opens;
	int err;

	for (unsigned i = 0; i < ROUNDS; i++) {
		int64_t now = __atomic_add_fetch(&hammer_clock, 1,
		    __ATOMIC_RELAXED) / THREADS;
		struct rs_breaker_slot *sl = rs_breaker_claim(&hammer_table,
		    &d, key);
		enum rs_breaker_verdict v;

		assert_non_null(sl);
		v = rs_breaker_slot_admit(sl, &s, now, &err);
		seed = seed * 1103515245u + 12345u;
		if (v == RS_BREAKER_REJECT) {
			assert_true(err == ECONNREFUSED);
			continue;
		}
		if (v == RS_BREAKER_PROBE) {
			unsigned o = __atomic_add_fetch(&now_out, 1,
			    __ATOMIC_ACQ_REL);
			unsigned m = __atomic_load_n(&max_out,
			    __ATOMIC_RELAXED);

			while (o > m && !__atomic_compare_exchange_n(&max_out,
			    &m, o, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
		}
		rs_breaker_slot_record(sl, &s, (seed >> 16) % 4 ?
		    ECONNREFUSED : 0, v == RS_BREAKER_PROBE, now,
		    (seed >> 8) % 1000 / 1000.0, &opens);
		if (v == RS_BREAKER_PROBE)
			__atomic_sub_fetch(&now_out, 1, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

static void test_threads_hammer(void **state)
{
	pthread_t th[THREADS];
	struct rs_breaker_settings s = cfg(3, 50, 400, 2);
	struct rs_breaker_dest d = dest(7, 80);
	struct rs_breaker_slot *sl;
	struct rs_breaker_view v;
	int err;

	(void)state;
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer,
		    (void *)(i + 1)), 0);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* Probes only ever come two at a time at most within one lease;
	   with leases renewed as time runs, a few more may overlap. */
	assert_true(max_out >= 1);
	sl = rs_breaker_find(&hammer_table, &d, rs_breaker_key(&d));
	assert_non_null(sl);
	rs_breaker_unpack(__atomic_load_n(&sl->word, __ATOMIC_RELAXED), &v);
	assert_true(v.probes_out <= 2);
	assert_true(v.doublings <= 15);
	/* Not stuck: one period and one lease later a connect is let by. */
	assert_int_not_equal(rs_breaker_slot_admit(sl, &s,
	    hammer_clock / THREADS + 1000, &err), RS_BREAKER_REJECT);
}

/* Addresses as the labels and log lines show them; v4-mapped as IPv4. */
static void test_addresses(void **state)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6,
		.sin6_port = htons(443) };
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons(5432) };
	struct rs_breaker_dest d, d4;
	char buf[RS_BREAKER_ADDR_MAX];

	(void)state;
	inet_pton(AF_INET6, "fd00::1", &in6.sin6_addr);
	assert_true(rs_breakers_dest(&d, NULL, (struct sockaddr *)&in6,
	    sizeof(in6)));
	assert_string_equal(rs_breakers_addr_text(d.family, d.addr, d.port,
	    buf, sizeof(buf)), "[fd00::1]:443");
	inet_pton(AF_INET6, "::ffff:10.0.0.5", &in6.sin6_addr);
	in6.sin6_port = htons(5432);
	inet_pton(AF_INET, "10.0.0.5", &in.sin_addr);
	assert_true(rs_breakers_dest(&d, NULL, (struct sockaddr *)&in6,
	    sizeof(in6)));
	assert_true(rs_breakers_dest(&d4, NULL, (struct sockaddr *)&in,
	    sizeof(in)));
	assert_int_equal(d.family, AF_INET);
	assert_int_equal(rs_breaker_key(&d), rs_breaker_key(&d4));
	assert_string_equal(rs_breakers_addr_text(d.family, d.addr, d.port,
	    buf, sizeof(buf)), "10.0.0.5:5432");
	/* Another port, another breaker. */
	in.sin_port = htons(5433);
	assert_true(rs_breakers_dest(&d4, NULL, (struct sockaddr *)&in,
	    sizeof(in)));
	assert_int_not_equal(rs_breaker_key(&d), rs_breaker_key(&d4));
	in.sin_family = AF_UNIX;
	assert_false(rs_breakers_dest(&d4, NULL, (struct sockaddr *)&in,
	    sizeof(in)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack_roundtrip),
		cmocka_unit_test(test_opens_after_failures),
		cmocka_unit_test(test_probes_and_close),
		cmocka_unit_test(test_doubling),
		cmocka_unit_test(test_jitter_bounds),
		cmocka_unit_test(test_dead_probe),
		cmocka_unit_test(test_clock_wrap),
		cmocka_unit_test(test_slot_reuse),
		cmocka_unit_test(test_threads_hammer),
		cmocka_unit_test(test_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
