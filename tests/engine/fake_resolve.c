/* SPDX-License-Identifier: MIT */
/*
 * fake_resolve.c - the scripted resolver calls (getaddrinfo and the
 * gethostbyname family) and the sleeps between their retries, which move
 * the fake clock instead of the real one.  See fake.h.
 *
 * An answer is always one address, 127.0.0.1, in storage of this file
 * (the engines only read it and hand it on).
 */
#include "fake_script.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include "real.h"

#define MAX_SLEEPS 32

static int64_t sleeps[MAX_SLEEPS];
static int nsleeps;

static struct sockaddr_in answer_sa;
static struct addrinfo answer_ai;
static struct in_addr answer_in;
static char *answer_list[2];
static struct hostent answer_he;

static void make_answers(void)
{
	answer_sa = (struct sockaddr_in){ .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	answer_ai = (struct addrinfo){ .ai_family = AF_INET,
		.ai_socktype = SOCK_STREAM, .ai_addrlen = sizeof(answer_sa),
		.ai_addr = (struct sockaddr *)&answer_sa };
	answer_in.s_addr = htonl(INADDR_LOOPBACK);
	answer_list[0] = (char *)&answer_in;
	answer_list[1] = NULL;
	answer_he = (struct hostent){ .h_name = (char *)"fake",
		.h_addrtype = AF_INET, .h_length = 4,
		.h_addr_list = answer_list };
}

int rs_real_getaddrinfo(const char *n, const char *sv,
    const struct addrinfo *hints, struct addrinfo **res)
{
	const struct fk_step *s = fk_take(FK_GETADDRINFO, -1);

	(void)n;
	(void)sv;
	(void)hints;
	if (!s)
		return EAI_SYSTEM;
	fk_advance(s->advance_ms);
	if (s->ret != 0)
		return (int)s->ret;
	make_answers();
	*res = &answer_ai;
	return 0;
}

/* gethostbyname(2): NULL with h_errno = ret, or the answer. */
static struct hostent *hostent_step(void)
{
	const struct fk_step *s = fk_take(FK_GETHOSTBYNAME, -1);

	if (!s) {
		h_errno = NO_RECOVERY;
		return NULL;
	}
	fk_advance(s->advance_ms);
	if (s->ret != 0) {
		h_errno = (int)s->ret;
		return NULL;
	}
	make_answers();
	return &answer_he;
}

struct hostent *rs_real_gethostbyname(const char *n)
{
	(void)n;
	return hostent_step();
}

struct hostent *rs_real_gethostbyname2(const char *n, int af)
{
	(void)n;
	(void)af;
	return hostent_step();
}

/* The _r forms: err is their result (ERANGE), ret the h_errno. */
static int hostent_r_step(struct hostent *h, struct hostent **r, int *e)
{
	const struct fk_step *s = fk_take(FK_GETHOSTBYNAME, -1);

	*r = NULL;
	if (!s) {
		*e = NO_RECOVERY;
		return EIO;
	}
	fk_advance(s->advance_ms);
	if (s->err != 0 || s->ret != 0) {
		*e = s->ret ? (int)s->ret : NETDB_INTERNAL;
		return s->err ? s->err : ENOENT;
	}
	make_answers();
	*h = answer_he;
	*r = h;
	return 0;
}

int rs_real_gethostbyname_r(const char *n, struct hostent *h, char *b,
    size_t l, struct hostent **r, int *e)
{
	(void)n;
	(void)b;
	(void)l;
	return hostent_r_step(h, r, e);
}

int rs_real_gethostbyname2_r(const char *n, int af, struct hostent *h,
    char *b, size_t l, struct hostent **r, int *e)
{
	(void)n;
	(void)af;
	(void)b;
	(void)l;
	return hostent_r_step(h, r, e);
}

/* ---- sleeps: the fake clock moves by what was asked ---- */

int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *t,
    struct timespec *rem);
void __wrap_rs_clock_later_ts(int64_t ms, struct timespec *ts);

/* The fake monotonic time as a timespec. */
static void fake_ts(struct timespec *ts)
{
	int64_t us = fk_now_us();

	ts->tv_sec = (time_t)(us / 1000000);
	ts->tv_nsec = (long)(us % 1000000) * 1000;
}

/*
 * The engines' absolute times for a sleep count from the fake clock, so
 * that the sleep asked is exact: counted from the real one, the real time
 * between the engine's reading and the sleep's (a ms under valgrind) made
 * a 100 ms sleep 99.
 */
void __wrap_rs_clock_later_ts(int64_t ms, struct timespec *ts)
{
	fake_ts(ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *t,
    struct timespec *rem)
{
	struct timespec now = { 0, 0 };
	int64_t ns;

	(void)id;
	(void)rem;
	fk_count_call();
	if (flags & TIMER_ABSTIME)
		fake_ts(&now);
	ns = (int64_t)(t->tv_sec - now.tv_sec) * 1000000000LL +
	    (t->tv_nsec - now.tv_nsec);
	int64_t ms = ns <= 0 ? 0 : (ns + 999999) / 1000000;

	if (nsleeps < MAX_SLEEPS)
		sleeps[nsleeps++] = ms;
	fk_advance(ms);
	return 0;
}

int fk_sleeps(const int64_t **ms)
{
	*ms = sleeps;
	return nsleeps;
}

void fk_resolve_reset(void)
{
	nsleeps = 0;
}
