/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - lookups, learned from and retried.
 *
 * Every wrapper describes its call as a struct lookup whose once() makes
 * the real call and says whether it succeeded, failed for good or failed
 * transiently; one driver retries the transient failures with dnsretry.c
 * deciding when.  The common case -- an answer at the first try -- costs
 * the learning only: the policy is not even looked at.
 */
#include "resolve.h"

#include <errno.h>
#include <time.h>

#include "clock.h"
#include "dnsretry.h"
#include "guard.h"
#include "timed.h"
#include "names.h"
#include "real.h"
#include "runtime.h"

enum outcome { OK, PERMANENT, TRANSIENT };

struct lookup {
	enum outcome (*once)(struct lookup *l);
	const char *name;
	const char *service;
	int af;
	const struct addrinfo *hints;
	struct addrinfo **res;
	struct hostent *ret, **result, *h;
	char *buf;
	size_t len;
	int *h_errnop;
	int r;			/* the return value of the last call */
};

/* Sleeps ms on the monotonic clock, going on after signals. */
static void sleep_ms(int64_t ms)
{
	struct timespec ts;
	int save = errno;

	rs_clock_later_ts(ms, &ts);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
	errno = save;
}

/*
 * Makes the lookup, then, while it fails transiently and the rule of its
 * name allows, waits and makes it again.  Calls made by the library
 * itself are never retried.  connect_budget counts from the call's
 * start: a first lookup that took the resolver's whole timeout has used
 * that much of it.
 */
static void drive(struct lookup *l)
{
	struct rs_dnsretry d;
	int64_t start = rs_clock_now_ms();

	if (l->once(l) != TRANSIENT || rs_guard_active())
		return;
	const struct rs_runtime *rt = rs_runtime_get();
	int64_t now = rs_clock_now_ms();

	if (!rt->active || !rs_dnsretry_begin(&d, rt->policy, l->name,
		l->service, start, rs_io_process_deadline()))
		return;
	for (;;) {
		int64_t wait = rs_dnsretry_next(&d,
		    "temporary failure in name resolution", now);

		if (wait < 0)
			return;
		sleep_ms(wait);
		enum outcome o = l->once(l);

		rs_dnsretry_lookup_made(&d, o == OK);
		if (o != TRANSIENT)
			return;
		now = rs_clock_now_ms();
	}
}

static enum outcome gai_once(struct lookup *l)
{
	l->r = rs_real_getaddrinfo(l->name, l->service, l->hints, l->res);
	if (l->r == 0) {
		if (l->name && !rs_guard_active() &&
		    !(l->hints && (l->hints->ai_flags & AI_PASSIVE)))
			rs_names_learn_answer(l->name, l->hints ?
			    l->hints->ai_family : AF_UNSPEC, *l->res);
		return OK;
	}
	return rs_dnsretry_gai_transient(l->r) ? TRANSIENT : PERMANENT;
}

int rs_resolve_getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res)
{
	struct lookup l = { .once = gai_once, .name = node,
		.service = service, .hints = hints, .res = res };

	drive(&l);
	return l.r;
}

/* gethostbyname() and gethostbyname2() (af 0 for the former). */
static enum outcome hostent_once(struct lookup *l)
{
	l->h = l->af ? rs_real_gethostbyname2(l->name, l->af) :
	    rs_real_gethostbyname(l->name);
	if (l->h) {
		if (l->name && !rs_guard_active())
			rs_names_learn_hostent(l->name, l->h);
		return OK;
	}
	return rs_dnsretry_h_transient(h_errno) ? TRANSIENT : PERMANENT;
}

struct hostent *rs_resolve_gethostbyname(const char *name)
{
	struct lookup l = { .once = hostent_once, .name = name };

	drive(&l);
	return l.h;
}

struct hostent *rs_resolve_gethostbyname2(const char *name, int af)
{
	struct lookup l = { .once = hostent_once, .name = name, .af = af };

	/* af 0 would mean gethostbyname(); glibc answers it EAFNOSUPPORT. */
	if (af == 0)
		return rs_real_gethostbyname2(name, af);
	drive(&l);
	return l.h;
}

/*
 * The _r forms.  ERANGE (the caller's buffer is too small) comes with
 * TRY_AGAIN too, and is the caller's to handle: it is never retried.
 */
static enum outcome hostent_r_once(struct lookup *l)
{
	l->r = l->af ? rs_real_gethostbyname2_r(l->name, l->af, l->ret,
	    l->buf, l->len, l->result, l->h_errnop) :
	    rs_real_gethostbyname_r(l->name, l->ret, l->buf, l->len,
	    l->result, l->h_errnop);
	if (l->r == 0 && l->result && *l->result) {
		if (l->name && !rs_guard_active())
			rs_names_learn_hostent(l->name, *l->result);
		return OK;
	}
	if (l->r == ERANGE || !l->h_errnop)
		return PERMANENT;
	return rs_dnsretry_h_transient(*l->h_errnop) ? TRANSIENT : PERMANENT;
}

int rs_resolve_gethostbyname_r(const char *name, struct hostent *ret,
    char *buf, size_t len, struct hostent **result, int *h_errnop)
{
	struct lookup l = { .once = hostent_r_once, .name = name, .ret = ret,
		.buf = buf, .len = len, .result = result,
		.h_errnop = h_errnop };

	drive(&l);
	return l.r;
}

int rs_resolve_gethostbyname2_r(const char *name, int af,
    struct hostent *ret, char *buf, size_t len, struct hostent **result,
    int *h_errnop)
{
	struct lookup l = { .once = hostent_r_once, .name = name, .af = af,
		.ret = ret, .buf = buf, .len = len, .result = result,
		.h_errnop = h_errnop };

	if (af == 0)
		return rs_real_gethostbyname2_r(name, af, ret, buf, len,
		    result, h_errnop);
	drive(&l);
	return l.r;
}
