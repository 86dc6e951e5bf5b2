/* SPDX-License-Identifier: MIT */
/*
 * connect.c - the connect() wrapper's engine: which connects are managed,
 * the start of a logical connect, and a connect() on a socket that
 * already has one.
 *
 * The attempts themselves are connect_step.c; a blocking caller's waits
 * are connect_wait.c.  A blocking program's own flags are restored before
 * connect() returns.
 */
#include "connect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "born.h"
#include "budget.h"
#include "clock.h"
#include "connect_step.h"
#include "connect_wait.h"
#include "dest.h"
#include "hot.h"
#include "timed.h"
#include "log.h"
#include "names.h"
#include "real.h"
#include "runtime.h"
#include "stats.h"
#include "tdeadline.h"

/* The real connect, with its -1/errno turned into -errno. */
static int real_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	return rs_real_connect(fd, sa, len) == 0 ? 0 : -errno;
}

/* Returns whether fd is a stream socket (the only kind managed). */
static bool is_stream(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return rs_real_getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	    type == SOCK_STREAM;
}

/*
 * A connect() on a descriptor that already has a logical connect: resume
 * an interrupted blocking one, report an unfinished or failed one as the
 * kernel would, or let an established one get EISCONN from the kernel.
 * Returns 1 when the caller should start afresh instead.
 */
static int resume_existing(int fd, struct rs_fd *e, const struct sockaddr *sa,
    socklen_t len, int flags)
{
	switch (rs_fd_state(e)) {
	case RS_FD_CONNECTING:
	case RS_FD_BACKOFF:
		if (!(flags & O_NONBLOCK))
			return rs_connect_run_blocking(fd, e, flags);
		/* A program that polls by calling connect() again drives the
		   connect as a wait would: EALREADY only while it goes on. */
		if (rs_connect_step(fd, e, 1, rs_clock_now_ms()) !=
		    RS_WANT_NOTHING)
			return -EALREADY;
		return resume_existing(fd, e, sa, len, flags);
	case RS_FD_FAILED: {
		int err = rs_connect_take_error(e);
		/* Read before the entry is given up: it is not ours after. */
		bool unix_socket = e->addr.ss_family == AF_UNIX;

		rs_fd_forget(fd);
		/* Once its error was reported, Linux answers a connect() on
		   the failed TCP socket with ECONNABORTED. */
		if (err > 0)
			return -err;
		return unix_socket ? 1 : -ECONNABORTED;
	}
	case RS_FD_CONNECTED:
		return real_connect(fd, sa, len);
	default:
		return 1;
	}
}

/*
 * At debug level, says which rule applies to a destination and why; e is
 * the new entry, or NULL when the connection is passed through.
 */
static void log_decision(const struct rs_policy *p, const struct rs_target *t,
    const struct rs_rule *rule, const struct rs_fd *e)
{
	char ct[16], rt[16];
	struct rs_dest d;

	if (!rs_log_enabled(RS_LOG_DEBUG))
		return;
	if (!e) {
		rs_log(RS_LOG_DEBUG, NULL, "connect %s: %s; passed through",
		    t->host ? t->host : t->path ? t->path : "(by address)",
		    rule ? "passthrough rule" : "no unix: rule matches");
		return;
	}
	rs_dest_format(e, &d);
	rs_log(RS_LOG_DEBUG, NULL, "connect %s: %s%s (%s:%u): "
	    "connect_timeout %s, attempts %u, read_timeout %s%s", d.text,
	    rule ? "rule " : "defaults", rule ? rule->match.text : "",
	    p->path, rule ? rule->line : p->defaults_line,
	    rs_duration_format(e->settings->connect_timeout_ms, ct, sizeof(ct)),
	    e->settings->attempts, rs_duration_format(
		e->settings->read_timeout_ms, rt, sizeof(rt)),
	    e->nonblocking ? ", non-blocking" : "");
}

/* Fills a fresh entry for a new logical connect. */
static void start_logical(const struct rs_runtime *rt, struct rs_fd *e,
    const struct rs_target *t, const struct rs_settings *s,
    const struct rs_rule *rule, const struct sockaddr *sa, socklen_t len,
    int64_t now)
{
	e->settings = s;
	e->rule = rule;
	/* An IPv4 address, the common case, as two moves, not a call. */
	if (len == sizeof(struct sockaddr_in))
		memcpy(&e->addr, sa, sizeof(struct sockaddr_in));
	else
		memcpy(&e->addr, sa, len);
	e->addrlen = len;
	/* A process or request deadline is rare: one load says there is
	   none (runtime.h). */
	e->deadline_ms = rs_runtime_rare_get() & (RS_RARE_DEADLINE |
	    RS_RARE_TDEADLINE) ? rs_tdeadline_get() : RS_NEVER;
	if (s->connect_budget_ms != RS_OFF)
		e->deadline_ms = rs_clock_min(rs_clock_after(now,
		    s->connect_budget_ms), e->deadline_ms);
	e->retry_at_ms = now;
	if (t->host)
		snprintf(e->host, sizeof(e->host), "%s", t->host);
	rs_budget_note_connect(rt->policy, rule, s, now);
	rs_fd_set_state(e, RS_FD_BACKOFF);
}

/*
 * A plain socket's own SO_SNDTIMEO is the 0 socket() gave it (born.h), and
 * so is its SO_RCVTIMEO unless the program set one: the io engine need
 * not ask the kernel for them (ktimeo.h).  The fresh entry already holds
 * 0 for both and the kernel none of ours (rs_fd_claim), so knowing them is
 * one flag each, all that rs_ktimeo_set_by_program(e, out, &zero) would
 * change.
 */
static void own_timeouts_known(int fd, struct rs_fd *e)
{
	e->own_tmo_known[1] = true;
	e->own_tmo_known[0] = rs_born_rcvtimeo_unset(fd);
}

/*
 * Runs a new logical connect as far as connect() itself goes: to its end
 * on a blocking socket; on a non-blocking one, the first attempt's start,
 * reporting EINPROGRESS unless it already ended (then the entry of a
 * failed one is forgotten, as the kernel's answer is final).  The connect
 * is counted here, or with its first attempt by the kernel's path.
 */
static int first_steps(int fd, struct rs_fd *e, int flags, bool plain,
    int64_t now)
{
	if (plain && !(flags & O_NONBLOCK))
		return rs_connect_run_kernel(fd, e, now);
	rs_stats_add(e->rule, RS_STAT_CONNECTS);
	if (!(flags & O_NONBLOCK))
		return rs_connect_run_blocking(fd, e, flags);
	if (rs_connect_step(fd, e, 0, now) != RS_WANT_NOTHING)
		return -EINPROGRESS;
	if (rs_fd_state(e) == RS_FD_CONNECTED)
		return 0;
	int err = e->final_error;

	rs_fd_forget(fd);
	return -err;
}

RS_HOT int rs_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	if (!sa || len < sizeof(sa_family_t) ||
	    len > sizeof(struct sockaddr_storage))
		return real_connect(fd, sa, len);
	int fam = sa->sa_family;

	if (fam != AF_INET && fam != AF_INET6 && fam != AF_UNIX) {
		rs_fd_forget(fd);
		return real_connect(fd, sa, len);
	}
	const struct rs_runtime *rt = rs_runtime_get();
	struct rs_fd *e = rs_fd_get(fd);
	/* A plain socket (born.h) is known blocking and a stream socket. */
	bool plain = !e && fam != AF_UNIX && rs_born_plain(fd);
	int flags = plain ? 0 : rs_real_fcntl(fd, F_GETFL, 0);

	if (e) {
		int r = resume_existing(fd, e, sa, len, flags);

		if (r != 1)
			return r;
	}
	struct rs_target t;
	char host[RS_HOST_MAX];

	if (!rt->active || flags < 0 || (!plain && !is_stream(fd)) ||
	    rs_target_from_sockaddr(&t, sa, len) < 0)
		return real_connect(fd, sa, len);
	if (t.family != AF_UNIX &&
	    rs_names_lookup(t.family, t.addr, host, sizeof(host)))
		t.host = host;
	const struct rs_rule *rule = NULL;
	const struct rs_settings *s = rs_policy_lookup(rt->policy, &t, &rule);

	if (!s || !(e = rs_fd_claim(fd, rs_io_may_time(rt, s)))) {
		log_decision(rt->policy, &t, rule, NULL);
		return real_connect(fd, sa, len);
	}
	int64_t now = rs_clock_now_ms();

	start_logical(rt, e, &t, s, rule, sa, len, now);
	if (plain)
		own_timeouts_known(fd, e);
	e->nonblocking = (flags & O_NONBLOCK) != 0;
	log_decision(rt->policy, &t, rule, e);
	return first_steps(fd, e, flags, plain, now);
}
