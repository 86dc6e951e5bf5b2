/* SPDX-License-Identifier: MIT */
/*
 * test_budget.c - the retry budget: the allowance formula, the sliding
 * window (with an injected clock), concurrent takers, and the shared
 * segment: creation, the owner/mode/header checks, slots, and survival of
 * processes killed with SIGKILL in the middle of updates.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "budget.h"
#include "shm.h"

static struct rs_retry_budget mk(double ratio, uint32_t min, uint32_t win)
{
	struct rs_retry_budget b = { ratio, min, win, RS_SCOPE_PROCESS };

	return b;
}

static void test_allowed_table(void **state)
{
	static const struct {
		double ratio;
		uint32_t min, window_ms;
		uint64_t connects, want;
	} t[] = {
		{ 0.2, 10, 10000, 0, 100 },	/* the floor alone */
		{ 0.2, 10, 10000, 500, 100 },	/* ratio = floor */
		{ 0.2, 10, 10000, 1000, 200 },	/* ratio above the floor */
		{ 0.2, 0, 10000, 50, 10 },
		{ 0.2, 0, 10000, 4, 0 },	/* 0.8 rounds down */
		{ 0.29, 0, 1000, 100, 29 },	/* not 28: decimal ratio */
		{ 0.1, 0, 1000, 30, 3 },
		{ 0.0, 0, 3600000, 1000000, 0 },	/* no retries at all */
		{ 0.5, 3, 1500, 2, 4 },		/* 3/s over 1.5 s */
		{ 1000.0, 0, 1000, 3, 3000 },	/* the "no budget" ratio */
		{ 1.0, 1000000, 3600000, 0, 3600000000ull },	/* no overflow */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct rs_retry_budget b = mk(t[i].ratio, t[i].min,
		    t[i].window_ms);

		assert_int_equal(rs_budget_allowed(&b, t[i].connects),
		    t[i].want);
	}
}

/* Takes until denied (at most `max` tries); returns the number granted. */
static unsigned drain(struct rs_budget_acct *a, const struct rs_retry_budget *b,
    int64_t now, unsigned max)
{
	unsigned n = 0;

	while (n < max && rs_budget_acct_take(a, b, now))
		n++;
	return n;
}

static void test_floor(void **state)
{
	struct rs_budget_acct a = { 0 };
	struct rs_retry_budget b = mk(0.2, 2, 10000);

	(void)state;
	assert_int_equal(drain(&a, &b, 5000, 1000), 20);
	assert_false(rs_budget_acct_take(&a, &b, 5000));
	assert_int_equal(a.total_retries, 20);
	assert_int_equal(a.total_denials, 2);
}

static void test_ratio(void **state)
{
	struct rs_budget_acct a = { 0 };
	struct rs_retry_budget b = mk(0.2, 0, 10000);
	struct rs_budget_usage u;

	(void)state;
	assert_false(rs_budget_acct_take(&a, &b, 100));	/* 0 connects */
	for (int i = 0; i < 50; i++)
		rs_budget_acct_note(&a, &b, 100 + i * 10);
	assert_int_equal(drain(&a, &b, 700, 1000), 10);
	rs_budget_acct_usage(&a, &b, 700, &u);
	assert_int_equal(u.connects, 50);
	assert_int_equal(u.retries, 10);
	assert_int_equal(u.allowed, 10);
	/* Five more connects earn exactly one more retry. */
	for (int i = 0; i < 5; i++)
		rs_budget_acct_note(&a, &b, 800);
	assert_int_equal(drain(&a, &b, 800, 1000), 1);
	assert_int_equal(a.total_connects, 55);
}

/*
 * Window 10 s, buckets of 1 s: what is counted in bucket 0 ([0, 1000) ms)
 * is in the window up to 9999 ms and gone at 10000 ms.
 */
static void test_window_slides(void **state)
{
	struct rs_budget_acct a = { 0 };
	struct rs_retry_budget b = mk(0.0, 1, 10000);
	struct rs_budget_usage u;

	(void)state;
	assert_int_equal(drain(&a, &b, 999, 100), 10);
	assert_false(rs_budget_acct_take(&a, &b, 5000));
	assert_false(rs_budget_acct_take(&a, &b, 9999));
	rs_budget_acct_usage(&a, &b, 9999, &u);
	assert_int_equal(u.retries, 10);
	rs_budget_acct_usage(&a, &b, 10000, &u);
	assert_int_equal(u.retries, 0);
	assert_int_equal(drain(&a, &b, 10000, 100), 10);
	/* Spread over buckets, the oldest leaves first. */
	memset(&a, 0, sizeof(a));
	for (int i = 0; i < 10; i++)
		assert_true(rs_budget_acct_take(&a, &b, i * 1000));
	assert_false(rs_budget_acct_take(&a, &b, 9500));
	assert_int_equal(drain(&a, &b, 10000, 100), 1);
	assert_int_equal(drain(&a, &b, 12000, 100), 2);
}

static void test_connects_slide(void **state)
{
	struct rs_budget_acct a = { 0 };
	struct rs_retry_budget b = mk(0.5, 0, 2000);	/* buckets of 200 ms */

	(void)state;
	for (int i = 0; i < 10; i++)
		rs_budget_acct_note(&a, &b, 0);
	assert_int_equal(drain(&a, &b, 100, 100), 5);
	assert_false(rs_budget_acct_take(&a, &b, 1999));
	/* At 2000 ms both the connects and the retries have left. */
	assert_false(rs_budget_acct_take(&a, &b, 2000));
	rs_budget_acct_note(&a, &b, 2000);
	rs_budget_acct_note(&a, &b, 2000);
	assert_int_equal(drain(&a, &b, 2100, 100), 1);
}

/* A bucket word reused after a long pause must restart, not accumulate. */
static void test_bucket_reuse(void **state)
{
	struct rs_budget_acct a = { 0 };
	struct rs_retry_budget b = mk(1.0, 0, 1000);
	struct rs_budget_usage u;

	(void)state;
	for (int i = 0; i < 7; i++)
		rs_budget_acct_note(&a, &b, 50);
	rs_budget_acct_note(&a, &b, 50 + 100000);	/* same bucket index */
	rs_budget_acct_usage(&a, &b, 50 + 100000, &u);
	assert_int_equal(u.connects, 1);
	assert_int_equal(a.total_connects, 8);
	/* A caller whose clock reading is a window stale does not erase. */
	rs_budget_acct_note(&a, &b, 50 + 99000);
	rs_budget_acct_usage(&a, &b, 50 + 100000, &u);
	assert_int_equal(u.connects, 2);
}

struct hammer {
	struct rs_budget_acct *a;
	struct rs_retry_budget b;
	unsigned granted;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;

	for (int i = 0; i < 20000; i++)
		h->granted += rs_budget_acct_take(h->a, &h->b, 3000);
	return NULL;
}

/* Eight threads racing never get more than `allowed` together. */
static void test_concurrent_takers(void **state)
{
	struct rs_budget_acct a = { 0 };
	struct hammer h[8];
	pthread_t th[8];
	unsigned total = 0;

	(void)state;
	for (int i = 0; i < 8; i++) {
		h[i] = (struct hammer){ &a, mk(0.0, 100, 10000), 0 };
		assert_int_equal(pthread_create(&th[i], NULL, hammer_run,
		    &h[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		total += h[i].granted;
	}
	assert_true(total <= 1000);
	assert_int_equal(total + drain(&a, &h[0].b, 3000, 2000), 1000);
	assert_int_equal(a.total_retries, 1000);
}

/* The segment tests use their own file under /dev/shm. */
#include "unit/segment_fixture.h"

static void test_shm_create_and_share(void **state)
{
	struct rs_shm_table *t1, *t2;
	struct rs_retry_budget b = mk(0.2, 1, 10000);
	struct rs_rule r = mkrule("db.internal:5432", 7);
	struct stat st;

	(void)state;
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t1), 0);
	assert_int_equal(stat(seg, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_size, sizeof(struct rs_shm_table));
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t2), 0);
	assert_ptr_not_equal(t1, t2);
	struct rs_shm_slot *s1 = rs_shm_slot(t1, &r, &b);
	struct rs_shm_slot *s2 = rs_shm_slot(t2, &r, &b);

	assert_non_null(s1);
	assert_int_equal(s1 - t1->slots, s2 - t2->slots);
	assert_string_equal(s2->rule, "db.internal:5432");
	assert_int_equal(s2->line, 7);
	assert_int_equal(drain(&s1->acct, &b, 1000, 100), 10);
	assert_false(rs_budget_acct_take(&s2->acct, &b, 1000));
	/* The defaults, another rule and other parameters: other slots. */
	struct rs_retry_budget b2 = mk(0.3, 1, 10000);
	struct rs_rule r2 = mkrule("*.example.com", 9);

	assert_ptr_not_equal(rs_shm_slot(t1, NULL, &b), s1);
	assert_ptr_not_equal(rs_shm_slot(t1, &r2, &b), s1);
	assert_ptr_not_equal(rs_shm_slot(t1, &r, &b2), s1);
	assert_string_equal(rs_shm_slot(t2, NULL, &b)->rule, "defaults");
	/* Another policy's name on this file is refused. */
	struct rs_shm_table *t3;

	assert_int_equal(rs_shm_attach(seg, "/other.yaml", true, &t3),
	    -EPROTO);
	rs_shm_detach(t1);
	rs_shm_detach(t2);
}

static void test_shm_refuses(void **state)
{
	struct rs_shm_table *t;

	(void)state;
	errno = EDOM;
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", false, &t), -ENOENT);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	rs_shm_detach(t);
	assert_int_equal(errno, EDOM);
	assert_int_equal(chmod(seg, 0644), 0);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), -EACCES);
	assert_int_equal(errno, EDOM);
	assert_int_equal(chmod(seg, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(seg, 65534, 65534), 0);
		assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t),
		    -EPERM);
	}
	unlink(seg);
	/* A symbolic link planted under the name is not followed. */
	assert_int_equal(symlink("/etc/passwd", seg), 0);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), -ELOOP);
	unlink(seg);
	/* A file of the wrong size or with foreign content is no segment. */
	FILE *f = fopen(seg, "w");

	assert_non_null(f);
	fputs("not a segment", f);
	fclose(f);
	chmod(seg, 0600);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), -EPROTO);
	assert_int_equal(truncate(seg, sizeof(struct rs_shm_table)), 0);
	f = fopen(seg, "r+");
	fputs("garbage!", f);
	fclose(f);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), -EPROTO);
}

/* A creator that died before sizing the file leaves it usable. */
static void test_shm_empty_file(void **state)
{
	struct rs_shm_table *t;

	(void)state;
	FILE *f = fopen(seg, "w");

	assert_non_null(f);
	fclose(f);
	chmod(seg, 0600);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", false, &t), -EPROTO);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	assert_string_equal(t->policy, "/p.yaml");
	rs_shm_detach(t);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", false, &t), 0);
	rs_shm_detach(t);
}

static void test_shm_full(void **state)
{
	struct rs_shm_table *t;
	struct rs_retry_budget b = mk(0.2, 1, 10000);
	char names[RS_SHM_SLOTS + 1][16];

	(void)state;
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	for (int i = 0; i <= RS_SHM_SLOTS; i++) {
		snprintf(names[i], sizeof(names[i]), "h%d", i);
		struct rs_rule r = mkrule(names[i], (unsigned)i + 1);
		struct rs_shm_slot *s = rs_shm_slot(t, &r, &b);

		if (i < RS_SHM_SLOTS)
			assert_non_null(s);
		else
			assert_null(s);
	}
	rs_shm_detach(t);
}

/* A child that updates one slot as fast as it can until killed. */
/* Updates the slot for ever; says so on `ready` after the first round. */
static void hammer_child(const struct rs_retry_budget *b, int ready)
{
	struct rs_shm_table *t;
	struct rs_rule r = mkrule("victim", 1);

	if (rs_shm_attach(seg, "/p.yaml", true, &t) < 0)
		_exit(1);
	struct rs_shm_slot *s = rs_shm_slot(t, &r, b);

	rs_budget_acct_note(&s->acct, b, 5000);
	rs_budget_acct_take(&s->acct, b, 5000);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	for (;;) {
		rs_budget_acct_note(&s->acct, b, 5000);
		rs_budget_acct_take(&s->acct, b, 5000);
	}
}

/*
 * Waits (at most 10 s) for a child's word that it is inside its loop, so
 * that the kill lands there even when a busy machine is slow to run it.
 */
static void await_ready(int ready)
{
	struct pollfd p = { .fd = ready, .events = POLLIN };
	char c;

	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(ready, &c, 1), 1);
}

/*
 * Lock-free counters leave nothing held when a process dies: 40 children
 * are killed with SIGKILL at random moments inside their update loops
 * (each has made one round before the random wait starts);
 * the segment must then still attach, its counts stay within `allowed`
 * plus one phantom retry per kill, and a later window grants exactly
 * what the formula says.
 */
static void test_shm_sigkill(void **state)
{
	struct rs_retry_budget b = mk(0.1, 0, 10000);
	struct rs_rule r = mkrule("victim", 1);
	struct rs_shm_table *t;
	struct rs_budget_usage u;
	int kills = 40;

	(void)state;
	int ready[2];

	assert_int_equal(pipe(ready), 0);
	srand((unsigned)getpid());
	for (int i = 0; i < kills; i++) {
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			hammer_child(&b, ready[1]);
		await_ready(ready[0]);
		struct timespec ts = { 0, (rand() % 5000 + 500) * 1000L };

		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st;

		waitpid(pid, &st, 0);
		assert_true(WIFSIGNALED(st));
	}
	close(ready[0]);
	close(ready[1]);
	assert_int_equal(rs_shm_attach(seg, "/p.yaml", true, &t), 0);
	struct rs_shm_slot *s = rs_shm_slot(t, &r, &b);

	rs_budget_acct_usage(&s->acct, &b, 5000, &u);
	print_message("after %d kills: %llu connects, %llu retries, "
	    "allowed %llu\n", kills, (unsigned long long)u.connects,
	    (unsigned long long)u.retries, (unsigned long long)u.allowed);
	assert_true(u.connects > 0);
	assert_true(u.retries <= u.allowed + (uint64_t)kills);
	for (int i = 0; i < 100; i++)
		rs_budget_acct_note(&s->acct, &b, 30000);
	assert_int_equal(drain(&s->acct, &b, 30000, 100), 10);
	rs_shm_detach(t);
}

static void test_shm_path(void **state)
{
	char path[128], real[512], path2[128];

	(void)state;
	assert_int_equal(rs_shm_path("<built-in>", 1000, path, sizeof(path),
	    real, sizeof(real)), 0);
	assert_string_equal(real, "<built-in>");
	assert_int_equal(strncmp(path, "/dev/shm/resolute-1000-", 23), 0);
	assert_int_equal(strlen(path), 23 + 16 + 3);
	assert_string_equal(path + 23 + 16, "-v4");
	/* One file under two spellings is one budget. */
	assert_int_equal(rs_shm_path("/etc/../etc/passwd", 0, path,
	    sizeof(path), real, sizeof(real)), 0);
	assert_string_equal(real, "/etc/passwd");
	assert_int_equal(rs_shm_path("/etc/passwd", 0, path2, sizeof(path2),
	    real, sizeof(real)), 0);
	assert_string_equal(path, path2);
	assert_int_equal(rs_shm_path("/etc/passwd", 65534, path2,
	    sizeof(path2), real, sizeof(real)), 0);
	assert_string_not_equal(path, path2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed_table),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_window_slides),
		cmocka_unit_test(test_connects_slide),
		cmocka_unit_test(test_bucket_reuse),
		cmocka_unit_test(test_concurrent_takers),
		cmocka_unit_test(test_shm_path),
		cmocka_unit_test_setup_teardown(test_shm_create_and_share,
		    seg_setup, seg_teardown),
		cmocka_unit_test_setup_teardown(test_shm_refuses, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_shm_empty_file, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_shm_full, seg_setup,
		    seg_teardown),
		cmocka_unit_test_setup_teardown(test_shm_sigkill, seg_setup,
		    seg_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
