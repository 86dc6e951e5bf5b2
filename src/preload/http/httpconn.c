/* SPDX-License-Identifier: MIT */
/*
 * httpconn.c - the table of tracked HTTP/1.x connections, and the inbound
 * half of SPEC 10: a request read on an accepted connection gives the
 * reading thread its deadline, until the response ends or the next
 * request begins.
 *
 * The table of entry pointers is one anonymous mapping (one pointer per
 * possible descriptor; only the pages touched become memory), made when
 * the first connection is tracked.  Entries are allocated with the guard
 * raised, so an allocator that itself reads or writes goes straight to
 * libc.  Thread-safety: see httpconn.h.
 */
#include "httpconn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "deadline.h"
#include "guard.h"
#include "holdcount.h"
#include "hot.h"
#include "httpio.h"
#include "log.h"
#include "real.h"
#include "runtime.h"
#include "stats.h"
#include "tdeadline.h"
#include "tlsprobe.h"

struct rs_httpconn **rs_httpconn_table;
static int highest_fd = -1;

/* Maps the table on first use; returns it, or NULL when out of memory. */
static struct rs_httpconn **table(void)
{
	struct rs_httpconn **t = __atomic_load_n(&rs_httpconn_table,
	    __ATOMIC_ACQUIRE);
	struct rs_httpconn **none = NULL;

	if (t)
		return t;
	t = mmap(NULL, RS_FD_MAX * sizeof(*t), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&rs_httpconn_table, &none, t, false,
	    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(t, RS_FD_MAX * sizeof(*t));
		return none;
	}
	return t;
}

/* Returns fd's entry, made if needed, not yet in use; NULL on failure. */
static struct rs_httpconn *claim(int fd)
{
	struct rs_httpconn **t = fd >= 0 && fd < RS_FD_MAX ? table() : NULL;
	struct rs_httpconn *c, *none = NULL;

	if (!t)
		return NULL;
	c = __atomic_load_n(&t[fd], __ATOMIC_ACQUIRE);
	if (!c) {
		rs_guard_enter();
		c = calloc(1, sizeof(*c));
		rs_guard_leave();
		if (!c)
			return NULL;
		if (!__atomic_compare_exchange_n(&t[fd], &none, c, false,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			free(c);
			c = none;
		}
	}
	if (!rs_httpconn_try(c))
		return NULL;
	if (fd > __atomic_load_n(&highest_fd, __ATOMIC_RELAXED))
		__atomic_store_n(&highest_fd, fd, __ATOMIC_RELAXED);
	return c;
}

/* Starts tracking fd with entry c (taken by claim) and settings cfg. */
static void start(struct rs_httpconn *c, bool inbound, const char *header,
    const struct rs_rule *rule)
{
	struct rs_http_config cfg = { .keep = !inbound, .max_replay = 0,
		.watch = header };

	rs_guard_enter();
	rs_http_free(&c->h);
	rs_guard_leave();
	rs_http_init(&c->h, &cfg);
	c->inbound = inbound;
	c->lost = c->holding = false;
	__atomic_store_n(&c->records, NULL, __ATOMIC_RELAXED);
	c->held = 0;
	rs_holdcount_note(&c->holder, false, -1);
	c->header = header;
	c->rule = rule;
	__atomic_store_n(&c->used, true, __ATOMIC_RELEASE);
	rs_runtime_rare_set(RS_RARE_HTTPCONN);
	rs_httpconn_put(c);
}

void rs_httpconn_accepted(int fd)
{
	const struct rs_runtime *rt = rs_runtime_get();
	struct rs_httpconn *c;

	if (!rt->active || !rt->policy->inbound_header[0])
		return;
	if ((c = claim(fd)))
		start(c, true, rt->policy->inbound_header, NULL);
}

RS_HOT void rs_httpconn_connecting(int fd, const struct rs_fd *e)
{
	struct rs_httpconn *c;

	if (e && (e->settings->http.enabled || e->settings->deadline_header[0])) {
		/* Its TLS session, if any, may need following (tls/). */
		if (!(rs_runtime_rare_get() & RS_RARE_HTTPRULE))
			rs_runtime_rare_set(RS_RARE_HTTPRULE);
		rs_tls_connect_fd = fd;
	}
	if (!e || !e->settings->deadline_header[0] || rs_httpconn_get(fd))
		return;
	if ((c = claim(fd)))
		start(c, false, e->settings->deadline_header, e->rule);
}

RS_HOT void rs_httpconn_forget(int fd)
{
	struct rs_httpconn *c = rs_httpconn_get(fd);

	if (!c)
		return;
	rs_tdeadline_drop(fd);
	/* What it held was released (httphold.h), or another thread's
	   call on it has it still: that call sends it. */
	rs_holdcount_note(&c->holder, false, fd);
	__atomic_store_n(&c->used, false, __ATOMIC_RELEASE);
}

void rs_httpconn_forget_range(unsigned first, unsigned last)
{
	int top = __atomic_load_n(&highest_fd, __ATOMIC_RELAXED);

	for (unsigned fd = first; fd <= last && (int)fd <= top; fd++)
		rs_httpconn_forget((int)fd);
}

bool rs_httpconn_try(struct rs_httpconn *c)
{
	if (__atomic_exchange_n(&c->busy, 1, __ATOMIC_ACQUIRE) == 0)
		return true;
	__atomic_store_n(&c->lost, true, __ATOMIC_RELAXED);
	return false;
}

void rs_httpconn_put(struct rs_httpconn *c)
{
	__atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
}

/*
 * Logs and counts the deadline a thread took; left_ms is negative for a
 * request that arrived already expired.
 */
static void log_taken(const struct rs_httpconn *c, int fd, int64_t left_ms)
{
	struct rs_log_fields f = { .event = "deadline", .attempt = -1,
		.wait_ms = -1 };

	rs_stats_add(NULL, RS_STAT_INBOUND_DEADLINES);
	if (left_ms > 0)
		rs_log(RS_LOG_INFO, &f, "deadline %lld ms left, from %s on "
		    "fd %d", (long long)left_ms, c->header, fd);
	else
		rs_log(RS_LOG_INFO, &f, "deadline passed %lld ms ago, from %s "
		    "on fd %d: this thread's connects and network waits fail "
		    "at once", (long long)-left_ms, c->header, fd);
}

/*
 * A request head was read on inbound fd: the thread's previous deadline
 * ends, whichever connection it came from (a server that reuses threads
 * across connections must not carry one request's deadline into the
 * next), and this one's (if it carries a valid one) begins, clamped to
 * inbound_deadline_max from now and to the process deadline.
 */
static void inbound_head(struct rs_httpconn *c, int fd)
{
	const struct rs_runtime *rt = rs_runtime_peek();
	int64_t sent, now_e, now_m, mono, epoch;

	rs_tdeadline_clear();
	if (!rt || !c->h.req.has_watch)
		return;
	if (rs_deadline_parse(c->h.req.watch, &sent) < 0) {
		rs_log(RS_LOG_DEBUG, NULL, "%s on fd %d is not epoch "
		    "milliseconds (\"%s\"); ignored", c->header, fd,
		    c->h.req.watch);
		return;
	}
	now_e = rs_clock_epoch_ms();
	now_m = rs_clock_now_ms();
	mono = rs_deadline_clamp(sent, now_e, now_m, rt->policy->inbound_max_ms,
	    rt->deadline_ms);
	epoch = rs_deadline_to_epoch(mono, now_e, now_m);
	/* Passed on as received unless the clamp moved it. */
	if (epoch >= sent)
		epoch = sent;
	rs_tdeadline_take(fd, mono, epoch);
	log_taken(c, fd, mono - now_m);
}

/*
 * Acts on one event of direction dir on fd.  A response without a body
 * (Content-Length: 0, 204, 304, the answer to a HEAD) is complete with
 * its head, and the tracker reports no end after it: its head ends the
 * deadline then.
 */
static void on_event(struct rs_httpconn *c, int fd, enum rs_http_dir dir,
    enum rs_http_event ev)
{
	if (!c->inbound)
		return;
	if (dir == RS_HTTP_REQ && ev == RS_HTTP_EV_HEAD)
		inbound_head(c, fd);
	else if (dir == RS_HTTP_RES && (ev == RS_HTTP_EV_END ||
	    (ev == RS_HTTP_EV_HEAD && c->h.res.done)))
		rs_tdeadline_drop(fd);
}

size_t rs_httpconn_feed(struct rs_httpconn *c, int fd, enum rs_http_dir dir,
    const struct iovec *iov, int cnt, size_t n, bool stop_at_head,
    enum rs_http_event *ev)
{
	size_t done = 0;

	*ev = RS_HTTP_EV_NONE;
	for (int i = 0; i < cnt && done < n && !c->h.pass; i++) {
		const char *p = iov[i].iov_base;
		size_t len = iov[i].iov_len < n - done ? iov[i].iov_len :
		    n - done;

		while (len > 0 && !c->h.pass) {
			size_t k = rs_http_feed(&c->h, dir, p, len, ev);

			p += k;
			len -= k;
			done += k;
			if (stop_at_head && *ev == RS_HTTP_EV_HEAD)
				return done;
			on_event(c, fd, dir, *ev);
		}
	}
	if (c->h.pass) {
		*ev = RS_HTTP_EV_PASS;
		/* The end of the response can no longer be told: the
		   request's deadline ends now rather than linger. */
		if (c->inbound)
			rs_tdeadline_drop(fd);
	}
	return done;
}

bool rs_httpconn_lost(struct rs_httpconn *c)
{
	if (__atomic_load_n(&c->lost, __ATOMIC_RELAXED))
		rs_http_pass(&c->h, RS_HTTP_WHY_MALFORMED);
	return c->h.pass;
}

void rs_httpconn_wrote(struct rs_httpconn *c, int fd, const void *p, size_t n)
{
	struct iovec v = { (void *)p, n };
	enum rs_http_event ev;
	int save = errno;

	if (n == 0 || !rs_httpconn_try(c))
		return;
	if (!rs_httpconn_lost(c))
		rs_httpconn_feed(c, fd, RS_HTTP_RES, &v, 1, n, false, &ev);
	rs_httpconn_put(c);
	errno = save;
}

void rs_httpconn_read(struct rs_httpconn *c, int fd, const struct iovec *iov,
    int cnt, ssize_t r)
{
	enum rs_http_dir dir = c->inbound ? RS_HTTP_REQ : RS_HTTP_RES;
	enum rs_http_event ev;
	int save = errno;

	if (r < 0 || !rs_httpconn_try(c))
		return;
	if (!rs_httpconn_lost(c)) {
		if (r == 0)
			on_event(c, fd, dir, rs_http_eof(&c->h, dir));
		else
			rs_httpconn_feed(c, fd, dir, iov, cnt, (size_t)r, false,
			    &ev);
	}
	rs_httpconn_put(c);
	errno = save;
}

/*
 * A send into the TLS session of the call under way (tlsprobe.h), buffer
 * by buffer, stopping at one that does not go whole.
 */
static ssize_t sink_send(const struct msghdr *msg)
{
	const struct rs_tls_sink *k = rs_tls_sink_now;
	ssize_t total = 0, r;

	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		const struct iovec *v = &msg->msg_iov[i];

		if (v->iov_len == 0)
			continue;
		r = k->send(k->ctx, v->iov_base, v->iov_len);
		if (r < 0)
			return total > 0 ? total : r;
		total += r;
		if ((size_t)r < v->iov_len)
			break;
	}
	return total;
}

ssize_t rs_httpconn_raw_send(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags)
{
	if (__builtin_expect(rs_tls_sink_now != NULL, 0))
		return sink_send(msg);
	if (e)
		return rs_hio_sendmsg(e, fd, msg, flags);
	return RS_NEG_ERRNO(rs_real_sendmsg(fd, msg, flags));
}
