/* SPDX-License-Identifier: MIT */
/*
 * connect_step.c - the state machine of one logical connect: attempts,
 * their outcome, the decision to retry, and the log lines about them.
 *
 * Each attempt is a non-blocking kernel connect, so that its timeout is
 * ours to keep precisely, and its outcome is what the kernel says when the
 * library looks (outcome.c), not the clock.  A failed attempt is dissolved
 * with connect(AF_UNSPEC), after which Linux accepts a new connect on the
 * same socket (after a refusal, an unreachable error and an aborted SYN_SENT
 * alike), so the program's descriptor, options, bindings and epoll
 * registrations all survive the retries.  Nothing here waits: a step
 * makes non-blocking system calls only (connect_wait.c and the waits
 * drive the steps).
 */
#include "connect_step.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "budget.h"
#include "clock.h"
#include "connect_breaker.h"
#include "dest.h"
#include "hot.h"
#include "learn.h"
#include "timed.h"
#include "log.h"
#include "outcome.h"
#include "real.h"
#include "realfast.h"
#include "retarget.h"
#include "rng.h"
#include "runtime.h"
#include "stats.h"

unsigned rs_connect_classify(int err, int family)
{
	switch (err) {
	case ECONNREFUSED:
		return RS_CLASS_REFUSED;
	case ENOENT:
	case EAGAIN:
		return family == AF_UNIX ? RS_CLASS_REFUSED : RS_CLASS_NONE;
	case ETIMEDOUT:
		return RS_CLASS_TIMEOUT;
	case ENETUNREACH:
	case EHOSTUNREACH:
	case ENETDOWN:
	case EHOSTDOWN:
		return RS_CLASS_UNREACHABLE;
	case ECONNRESET:
	case ECONNABORTED:
		return RS_CLASS_RESET;
	default:
		return RS_CLASS_NONE;
	}
}

/* Short, lower-case descriptions for the log, as the SPEC's examples. */
static const char *describe(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return "connection refused";
	case ETIMEDOUT:
		return "timed out";
	case ENETUNREACH:
		return "network unreachable";
	case EHOSTUNREACH:
		return "host unreachable";
	case ENETDOWN:
		return "network down";
	case EHOSTDOWN:
		return "host down";
	case ECONNRESET:
		return "connection reset";
	case ECONNABORTED:
		return "connection aborted";
	case ENOENT:
		return "no such socket file";
	case EAGAIN:
		return "listener backlog full";
	default:
		return strerror(err);
	}
}

/* Logs the outcome of attempt e->attempt; wait_ms < 0: no retry follows. */
static void log_attempt(enum rs_log_level lv, const struct rs_fd *e, int err,
    int64_t wait_ms, const char *event, const char *tail)
{
	struct rs_dest d;

	if (!rs_log_enabled(lv))
		return;
	struct rs_log_fields f = rs_dest_log_fields(e, &d, event);
	const char *dest = d.text;

	f.attempt = (int)e->attempt;
	f.attempts = (int)e->settings->attempts;
	f.error = err ? describe(err) : NULL;
	f.wait_ms = wait_ms;
	if (wait_ms >= 0)
		rs_log(lv, &f, "connect %s attempt %u/%u failed: %s; "
		    "retrying in %lld ms", dest, e->attempt,
		    e->settings->attempts, describe(err), (long long)wait_ms);
	else if (err)
		rs_log(lv, &f, "connect %s attempt %u/%u failed: %s%s", dest,
		    e->attempt, e->settings->attempts, describe(err), tail);
	else
		rs_log(lv, &f, "connect %s succeeded on attempt %u/%u", dest,
		    e->attempt, e->settings->attempts);
}

/*
 * The kernel's own safety net: while attempts are under way, TCP gives up a
 * connect by itself shortly after connect_timeout (TCP_USER_TIMEOUT covers
 * SYN retransmissions too), so that a wait the library cannot see -- an
 * io_uring poll, a socket handed to another process -- still ends.  The
 * margin lets our own timer act first.  The program's value is restored
 * once the logical connect ends.
 */
#define SAFETY_MARGIN_MS 250

static void safety_net(int fd, struct rs_fd *e, bool on)
{
	uint32_t ct = rs_learn_timeout_ms(e->rule, e->settings,
	    RS_LEARN_CONNECT, e->settings->connect_timeout_ms,
	    e->attempt_start_ms);
	unsigned int v;
	socklen_t len = sizeof(v);

	if (e->addr.ss_family == AF_UNIX || ct == RS_OFF)
		return;
	if (on && !e->safety_net_set) {
		if (rs_real_getsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v,
			&len) < 0)
			return;
		e->saved_user_timeout = v;
		v = ct + SAFETY_MARGIN_MS;
		if (rs_real_setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v,
			sizeof(v)) == 0)
			e->safety_net_set = true;
	} else if (!on && e->safety_net_set) {
		v = e->saved_user_timeout;
		rs_real_setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &v,
		    sizeof(v));
		e->safety_net_set = false;
	}
}

/*
 * Ends the logical connect as connected, its safety net already off.  now
 * is a reading of the clock taken when the attempt was seen connected
 * (measured: false when the call's start stands for it, connected_at()),
 * and then the attempt's time is a sample of the rule's connects.
 */
static inline void connected(struct rs_fd *e, int64_t now, bool measured)
{
	if (measured)
		rs_learn_record(e->rule, e->settings, RS_LEARN_CONNECT,
		    (now - e->attempt_start_ms) * 1000, now);
	rs_retarget_note(e, 0, now);
	if (rs_breakers_on(e->settings) &&
	    rs_connect_breaker_success_counts(e))
		rs_connect_breaker_note(e, 0, now);
	rs_fd_touch(e, now);
	rs_fd_set_state(e, RS_FD_CONNECTED);
	if (e->attempt > 1)
		log_attempt(RS_LOG_INFO, e, 0, -1, "connected", "");
}

/* Ends the logical connect with err (0: connected). */
static void conclude(int fd, struct rs_fd *e, int err, int64_t now)
{
	/* Most connects never needed the net: one test, no call. */
	if (e->safety_net_set) {
		int save = errno;

		safety_net(fd, e, false);
		errno = save;
	}
	if (err == 0) {
		connected(e, now, true);
		return;
	}
	e->final_error = err;
	rs_stats_add(e->rule, RS_STAT_GIVE_UPS);
	rs_fd_set_state(e, RS_FD_FAILED);
}

/*
 * Decides what follows the failure err of the current attempt: a backoff
 * (state BACKOFF) or the end (state FAILED).
 */
static void after_failure(int fd, struct rs_fd *e, int err, int64_t now)
{
	const struct rs_settings *s = e->settings;
	const struct rs_runtime *rt = rs_runtime_peek();
	unsigned cls = rs_connect_classify(err, e->addr.ss_family);

	if (cls == RS_CLASS_TIMEOUT)
		rs_stats_add(e->rule, RS_STAT_TIMEOUTS);
	if (cls != RS_CLASS_NONE)
		rs_retarget_note(e, err, now);
	/* A retry to an address whose breaker this failure left open would
	   only be rejected, after a useless backoff wait. */
	bool open = (cls & s->retry_on) && rs_breakers_on(s) &&
	    rs_connect_breaker_note(e, err, now) && !rs_retarget_has_next(e);

	rs_outcome_dissolve(fd, e->addr.ss_family, err);
	if (!(cls & s->retry_on) || e->attempt >= s->attempts || open) {
		bool retried = e->attempt > 1;

		log_attempt(retried || cls == RS_CLASS_TIMEOUT ? RS_LOG_WARN :
			RS_LOG_INFO, e, err, -1, "give_up",
		    open ? "; breaker open" : retried ? "; giving up" : "");
		conclude(fd, e, err, now);
		return;
	}
	uint32_t wait = rs_backoff_wait_ms(&s->backoff, e->attempt - 1,
	    rs_rng_uniform(), e->prev_wait_ms);

	if (rs_clock_after(now, wait) >= e->deadline_ms) {
		log_attempt(RS_LOG_WARN, e, err, -1, "deadline",
		    "; no time left for another attempt");
		conclude(fd, e, ETIMEDOUT, now);
		return;
	}
	if (!rs_budget_take_retry(rt->policy, e->rule, s, now)) {
		rs_stats_add(e->rule, RS_STAT_BUDGET_DENIALS);
		log_attempt(RS_LOG_WARN, e, err, -1, "budget_exhausted",
		    "; retry budget exhausted");
		conclude(fd, e, err, now);
		return;
	}
	rs_stats_add(e->rule, RS_STAT_RETRIES);
	log_attempt(RS_LOG_WARN, e, err, wait, "retry", "");
	e->prev_wait_ms = wait;
	e->retry_at_ms = rs_clock_after(now, wait);
	rs_fd_set_state(e, RS_FD_BACKOFF);
}

/*
 * Ends the logical connect with ETIMEDOUT because the budget or the process
 * deadline has passed before the next attempt could start: a SYN sent now
 * could only be abandoned (on loopback it would even complete a handshake
 * the server then sees reset), so none is sent.
 */
static void out_of_time(int fd, struct rs_fd *e, int64_t now)
{
	struct rs_dest d;

	if (rs_log_enabled(RS_LOG_WARN)) {
		struct rs_log_fields f = rs_dest_log_fields(e, &d, "deadline");

		f.attempt = (int)e->attempt + 1;
		f.attempts = (int)e->settings->attempts;
		f.error = describe(ETIMEDOUT);
		rs_log(RS_LOG_WARN, &f, "connect %s: no time left for "
		    "attempt %u/%u", d.text, e->attempt + 1,
		    e->settings->attempts);
	}
	conclude(fd, e, ETIMEDOUT, now);
}

/*
 * Ends the logical connect at once with the error that opened the
 * breaker of every address it may try (SPEC 12): no packet is sent.
 */
static void rejected(int fd, struct rs_fd *e, int err, int64_t now)
{
	struct rs_dest d;

	if (rs_log_enabled(RS_LOG_INFO)) {
		struct rs_log_fields f = rs_dest_log_fields(e, &d,
		    "breaker_reject");

		f.attempt = (int)e->attempt + 1;
		f.attempts = (int)e->settings->attempts;
		f.error = describe(err);
		rs_log(RS_LOG_INFO, &f, "connect %s: breaker open; failing at "
		    "once: %s", d.text, describe(err));
	}
	conclude(fd, e, err, now);
}

/* When an attempt that starts now must end: connect_timeout, capped. */
static int64_t attempt_deadline(const struct rs_fd *e, int64_t now)
{
	uint32_t ct = rs_learn_timeout_ms(e->rule, e->settings,
	    RS_LEARN_CONNECT, e->settings->connect_timeout_ms, now);

	return ct == RS_OFF ? e->deadline_ms :
	    rs_clock_min(rs_clock_after(now, ct), e->deadline_ms);
}

/* Starts attempt e->attempt + 1 on a socket that is non-blocking now. */
static void start_attempt(int fd, struct rs_fd *e, int64_t now)
{
	if (e->attempt > 0)
		rs_retarget_next(fd, e, now);
	if (rs_breakers_on(e->settings)) {
		int err = rs_connect_breaker_gate(fd, e, now);

		if (err) {
			rejected(fd, e, err, now);
			return;
		}
	}
	e->attempt++;
	rs_stats_add(e->rule, RS_STAT_ATTEMPTS);
	e->attempt_start_ms = now;
	e->attempt_deadline_ms = attempt_deadline(e, now);
	rs_fd_set_state(e, RS_FD_CONNECTING);
	if (rs_real_connect(fd, (struct sockaddr *)&e->addr, e->addrlen) == 0)
		conclude(fd, e, 0, now);
	else if (errno != EINPROGRESS)
		after_failure(fd, e, errno, now);
	else if (e->nonblocking || e->blocking_interrupted)
		/*
		 * Only an attempt that has to wait, in a wait the library
		 * may not see, needs the net: a blocking connect waits in
		 * the library itself.  TCP reads the value at each SYN
		 * retransmission, so setting it once the SYN is out counts.
		 */
		safety_net(fd, e, true);
}

/*
 * The first attempt of a blocking connect on a plain socket (born.h), as
 * the kernel's own blocking connect, bounded by a SO_SNDTIMEO of one tick
 * (Linux honours it for connect: EINPROGRESS when it passes, the attempt
 * going on), which the program never set, so it is ours for the call and
 * 0 again after it.  On loopback and on a near network the handshake ends
 * within the call, and then nothing needs asking: connect() said it
 * connected.  Any longer wait is the exact path's, from the first tick:
 * the kernel times nothing that matters, so its timer's coarseness cannot
 * make a timeout late, and an ICMP error that arrives while connect()
 * holds the socket (soft: the socket stays in SYN_SENT, which a blocking
 * connect would sleep through until the SYN's retransmission, outcome.c)
 * costs at most that tick.  No safety net: the kernel's wait is bounded.
 * No lock is held across the call: the state says an attempt is in
 * flight, as for any other.
 */
#define KERNEL_MIN_MS 50

/*
 * The moment a first attempt the kernel ended connected: the clock read
 * again where it is the last activity a read or write timeout counts
 * from (io_timeout.h); elsewhere nothing reads it (a deadline does not
 * count from it, nor a failover record of a success), the call's start
 * stands for it, and a connect under the default policy reads the clock
 * once.
 */
static bool reads_clock_at_end(const struct rs_fd *e)
{
	return rs_io_settings_timed(e->settings) ||
	    (e->settings->auto_mask & RS_AUTO_CONNECT);
}

static int64_t connected_at(const struct rs_fd *e, int64_t now)
{
	return reads_clock_at_end(e) ? rs_clock_now_ms() : now;
}

static int kernel_attempt(int fd, struct rs_fd *e, int64_t now)
{
	int64_t until = attempt_deadline(e, now);
	struct timeval tv = { 0, 1000 };

	if (until - now < KERNEL_MIN_MS || e->attempt || rs_fd_state(e) !=
	    RS_FD_BACKOFF || now < e->retry_at_ms ||
	    (rs_breakers_on(e->settings) && !rs_connect_breaker_lets(e, now)) ||
	    rs_realfast_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		sizeof(tv)) < 0) {
		rs_stats_add(e->rule, RS_STAT_CONNECTS);
		return 1;
	}
	e->attempt = 1;
	rs_stats_add_pair(e->rule, RS_STAT_CONNECTS, RS_STAT_ATTEMPTS);
	e->attempt_start_ms = now;
	e->attempt_deadline_ms = until;
	rs_fd_set_state(e, RS_FD_CONNECTING);
	rs_fd_unlock(e);
	int r = rs_realfast_connect(fd, (struct sockaddr *)&e->addr,
	    e->addrlen) == 0 ? 0 : -errno;
	struct timeval zero = { 0, 0 };

	rs_realfast_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &zero,
	    sizeof(zero));
	rs_fd_lock(e);
	/* Another thread's step may have judged the attempt meanwhile. */
	if (rs_fd_state(e) != RS_FD_CONNECTING || e->attempt != 1)
		return r;
	/* The first attempt, made by the kernel's bounded wait: it never
	   had a safety net to take down. */
	if (r == 0)
		connected(e, connected_at(e, now), reads_clock_at_end(e));
	else if (r != -EINPROGRESS && r != -EINTR && r != -EALREADY)
		after_failure(fd, e, -r, rs_clock_now_ms());
	return r;
}

RS_HOT int rs_connect_step_kernel(int fd, struct rs_fd *e, int64_t now)
{
	int save = errno;

	if (!rs_fd_trylock(e)) {
		rs_stats_add(e->rule, RS_STAT_CONNECTS);
		return 1;
	}
	int r = kernel_attempt(fd, e, now);

	rs_fd_unlock(e);
	errno = save;
	return r;
}

/*
 * Ends the attempt in flight as the kernel says, and by the clock only when
 * the kernel says it is still under way: a socket found established is
 * connected however late the program looks.  Returns whether it ended.
 */
static bool judge_attempt(int fd, struct rs_fd *e, int64_t now)
{
	int r = rs_outcome_attempt(fd, e->addr.ss_family);

	if (r == 0)
		conclude(fd, e, 0, now);
	else if (r != 1)
		after_failure(fd, e, r, now);
	else if (now >= e->attempt_deadline_ms)
		after_failure(fd, e, ETIMEDOUT, now);
	else
		return false;
	return true;
}

/* What the connect wants, read from its state alone. */
static enum rs_connect_want want_of(const struct rs_fd *e)
{
	enum rs_fd_state st = rs_fd_state(e);

	if (st == RS_FD_CONNECTING)
		return RS_WANT_WRITABLE;
	return st == RS_FD_BACKOFF ? RS_WANT_TIMER : RS_WANT_NOTHING;
}

/*
 * A step makes system calls and may write a log line, so another thread
 * already stepping the same socket is not waited for: this one reports
 * the state as it stands, and its wait looks again soon after.
 */
enum rs_connect_want rs_connect_step(int fd, struct rs_fd *e, int ready,
    int64_t now)
{
	int save = errno;

	if (!rs_fd_trylock(e))
		return want_of(e);
	for (;;) {
		enum rs_fd_state st = rs_fd_state(e);

		if (st == RS_FD_BACKOFF && now >= e->retry_at_ms) {
			if (now >= e->deadline_ms)
				out_of_time(fd, e, now);
			else
				start_attempt(fd, e, now);
			ready = 0;
			continue;
		}
		if (st == RS_FD_CONNECTING &&
		    (ready || now >= e->attempt_deadline_ms) &&
		    judge_attempt(fd, e, now)) {
			ready = 0;
			continue;
		}
		break;
	}
	enum rs_connect_want want = want_of(e);

	rs_fd_unlock(e);
	errno = save;
	return want;
}

int64_t rs_connect_next_ms(const struct rs_fd *e)
{
	switch (rs_fd_state(e)) {
	case RS_FD_CONNECTING:
		return e->attempt_deadline_ms;
	case RS_FD_BACKOFF:
		return e->retry_at_ms;
	default:
		return RS_NEVER;
	}
}

int rs_connect_so_error(int fd, struct rs_fd *e)
{
	enum rs_fd_state st = rs_fd_state(e);

	if (st == RS_FD_CONNECTING || st == RS_FD_BACKOFF) {
		rs_connect_step(fd, e, 1, rs_clock_now_ms());
		st = rs_fd_state(e);
		if (st == RS_FD_CONNECTING || st == RS_FD_BACKOFF)
			return 0;
	}
	return rs_connect_take_error(e);
}

int rs_connect_take_error(struct rs_fd *e)
{
	if (rs_fd_state(e) != RS_FD_FAILED)
		return -1;
	rs_fd_lock(e);
	int err = e->final_error;

	e->final_error = 0;
	rs_fd_unlock(e);
	return err;
}
