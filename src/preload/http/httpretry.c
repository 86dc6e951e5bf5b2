/* SPDX-License-Identifier: MIT */
/*
 * httpretry.c - the HTTP/1.x status retry engine (SPEC 9): peeks at and
 * judges responses, consumes retried ones, waits Retry-After or the
 * backoff, reconnects on the same descriptor, sends requests again.
 *
 * Everything here runs inside one program call on one connection (see
 * httpretry.h); the decisions are the pure machine's (http_retry.c).
 */
#include "httpretry.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backoff.h"
#include "budget.h"
#include "clock.h"
#include "connect.h"
#include "dest.h"
#include "httplog.h"
#include "io.h"
#include "io_block.h"
#include "io_timeout.h"
#include "ktimeo.h"
#include "log.h"
#include "real.h"
#include "rng.h"
#include "sigrestart.h"
#include "runtime.h"
#include "stats.h"

/*
 * The engine's own sends and reads, each of the socket or of the
 * connection's transport (h->tx), with libc's convention.
 */
static ssize_t raw_send(struct rs_hconn *h, int fd, const char *p, size_t n)
{
	if (h->tx != NULL)
		return h->tx->send(h, fd, p, n);
	return rs_real_send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static ssize_t raw_recv(struct rs_hconn *h, int fd)
{
	if (h->tx != NULL)
		return h->tx->recv(h, fd, h->buf, sizeof(h->buf));
	return rs_real_recv(fd, h->buf, sizeof(h->buf), MSG_DONTWAIT);
}

static ssize_t raw_peek(struct rs_hconn *h, int fd, bool block)
{
	if (h->tx != NULL)
		return h->tx->peek(h, fd, h->buf, sizeof(h->buf), block);
	return rs_real_recv(fd, h->buf, sizeof(h->buf),
	    MSG_PEEK | (block ? 0 : MSG_DONTWAIT));
}

/*
 * When a wait for the response (for room to send) ends: read_timeout
 * (write_timeout) after the socket's last activity, as for any managed
 * read (SPEC 6), or the deadline if sooner.  Each call reads the activity
 * afresh, so bytes that came (went) meanwhile move the time on.
 */
static int64_t read_until(const struct rs_fd *e)
{
	return rs_io_deadline(e, false);
}

static int64_t write_until(const struct rs_fd *e)
{
	return rs_io_deadline(e, true);
}

/*
 * A wait of the engine ran out: counted and logged as any read (write)
 * timeout is, and the program's call fails with ETIMEDOUT.
 */
static int timed_out(const struct rs_fd *e, bool out)
{
	rs_io_log_timeout(e, out, rs_clock_now_ms());
	return -ETIMEDOUT;
}

/*
 * Sends what is left at h->out whole, waiting for room until write_timeout
 * after the last progress, or until own, the program's own SO_SNDTIMEO
 * for its call (RS_NEVER: none), whichever comes first; wait false: never
 * waits.  Returns 0, or -errno: -EAGAIN (own passed, or no room and no
 * wait) and -EINTR keep the rest in h->out for the next call; any other
 * failure drops it.
 */
static int flush_out(struct rs_fd *e, struct rs_hconn *h, int fd,
    int64_t own, bool wait)
{
	ssize_t k;
	int r;

	while (h->out_left > 0) {
		k = raw_send(h, fd, h->out, h->out_left);
		if (k > 0) {
			h->out += k;
			h->out_left -= (size_t)k;
			rs_fd_touch(e, rs_clock_now_ms());
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		r = k == 0 ? -EPIPE : -errno;
		if (r == -EAGAIN || r == -EWOULDBLOCK) {
			r = wait ? rs_hconn_wait(e, h, fd, POLLOUT,
			    write_until(e), own) : -EAGAIN;
			if (r > 0)
				continue;
			if (r == 0)
				r = timed_out(e, true);
		}
		if (r != -EAGAIN && r != -EINTR)
			h->out_left = 0;
		return r;
	}
	return 0;
}

/* Sends p[0..n) whole, waiting for room as needed. */
static int send_all(struct rs_fd *e, struct rs_hconn *h, int fd,
    const char *p, size_t n)
{
	h->out = p;
	h->out_left = n;
	int r = flush_out(e, h, fd, RS_NEVER, true);

	h->out_left = 0;
	return r;
}

/*
 * Waits for more than `have` queued bytes: SO_RCVLOWAT makes poll wait
 * for them (Linux tcp_poll honours it), and the program's value is put
 * back at once.
 */
static int wait_more(const struct rs_fd *e, const struct rs_hconn *h, int fd,
    size_t have, int64_t until, int64_t own)
{
	int old = 1, want = (int)have + 1, r;
	socklen_t len = sizeof(old);

	/* A transport's peek looks further by itself; the kernel's queue
	   then holds records, not the bytes counted in `have`. */
	if (h->tx != NULL)
		return h->tx->ready(h) ? 1 :
		    rs_hconn_wait(e, h, fd, POLLIN, until, own);
	rs_real_getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &old, &len);
	rs_real_setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want));
	r = rs_hconn_wait(e, h, fd, POLLIN, until, own);
	rs_real_setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &old, sizeof(old));
	return r;
}

/* The response is handed over although its status is retried: why. */
static void gave_up(const struct rs_fd *e, struct rs_hconn *h,
    const char *why)
{
	char outcome[160];

	snprintf(outcome, sizeof(outcome), "giving up (%s)", why);
	rs_stats_add(e->rule, RS_STAT_HTTP_GIVE_UPS);
	rs_hconn_log(e, h, RS_LOG_WARN, -1, outcome);
}

static const char *judge_why(const struct rs_hconn *h)
{
	if (h->m.attempt >= h->m.s->attempts)
		return "attempts";
	if (h->m.t.res.has_retry_after)
		return "Retry-After above retry_after_cap";
	return "response head too large";
}

void rs_hconn_shown(const struct rs_fd *e, struct rs_hconn *h)
{
	if (h->m.gave_up)
		gave_up(e, h, judge_why(h));
}

/*
 * A RETRY verdict: the wait comes from Retry-After or the backoff; the
 * deadline and the retry budget may still refuse it.  Returns the wait in
 * ms, or -1 after handing the response to the program.
 */
int64_t rs_hconn_allow(struct rs_fd *e, struct rs_hconn *h)
{
	const struct rs_runtime *rt = rs_runtime_get();
	const struct rs_settings *s = e->settings;
	int64_t now = rs_clock_now_ms(), wait = h->m.wait_ms;
	bool header = h->m.wait_ms != RS_HR_BACKOFF;

	if (!header) {
		wait = rs_backoff_wait_ms(&s->backoff, h->m.attempt - 1,
		    rs_rng_uniform(), h->prev_wait_ms);
		h->prev_wait_ms = (uint32_t)wait;
	}
	/* A response that closes the connection, on a transport that cannot
	   make its session anew: handed over now, not after the wait. */
	if (h->tx != NULL && !h->tx->renews(h) &&
	    (!h->m.t.res.keep_alive || h->m.t.res.until_close)) {
		rs_hr_give_up(&h->m);
		gave_up(e, h, "a new TLS session cannot be made");
		return -1;
	}
	if (rs_clock_after(now, wait) >= rs_io_process_deadline()) {
		rs_hr_give_up(&h->m);
		gave_up(e, h, "deadline");
		return -1;
	}
	if (!rs_budget_take_retry(rt->policy, e->rule, s, now)) {
		rs_stats_add(e->rule, RS_STAT_BUDGET_DENIALS);
		rs_hr_give_up(&h->m);
		gave_up(e, h, "budget_exhausted");
		return -1;
	}
	rs_hr_retry(&h->m);
	rs_stats_add(e->rule, RS_STAT_HTTP_RETRIES);
	char outcome[96];
	snprintf(outcome, sizeof(outcome), "retrying in %lld ms (%s)",
	    (long long)wait, header ? "Retry-After" : "backoff");
	rs_hconn_log(e, h, RS_LOG_WARN, wait, outcome);
	return wait;
}

/*
 * A new connection on the same descriptor for a response that did not
 * allow keep-alive: the old one is dissolved (connect(AF_UNSPEC)) and a
 * logical connect made as the program's own would be, so that connect
 * retries, failover and budgets apply: blocking, or left to the waits.
 */
int rs_hconn_reconnect(struct rs_fd *e, int fd, bool block)
{
	struct sockaddr_storage addr = e->addr;
	socklen_t len = e->addrlen;
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	struct rs_hconn *h = e->http;
	int fl = rs_real_fcntl(fd, F_GETFL, 0), r;

	/* The socket goes back to the program's own timeouts first, as when
	   the program itself disconnects with AF_UNSPEC: the new entry
	   takes what the kernel holds for the program's values. */
	rs_ktimeo_release(e, fd);
	rs_real_connect(fd, &unspec, sizeof(unspec));
	e->http = NULL;
	rs_fd_forget(fd);
	block = block && fl >= 0 && (fl & O_NONBLOCK);
	if (block)
		rs_real_fcntl(fd, F_SETFL, (uintptr_t)(fl & ~O_NONBLOCK));
	r = rs_connect(fd, (struct sockaddr *)&addr, len);
	if (r == -EBADF) {
		/* Another thread closed fd during the connect: the number,
		   its flags and its entry may be another connection's now. */
		h->orphan = true;
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return r;
	}
	if (block)
		rs_real_fcntl(fd, F_SETFL, (uintptr_t)fl);
	e = rs_fd_get(fd);
	if (e == NULL) {
		/* Unmanaged now: rs_hconn_leave() frees the state. */
		h->orphan = true;
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return r < 0 ? r : -ECONNRESET;
	}
	rs_hconn_attach(e, h);
	h->fd_gen = rs_fd_gen(e);	/* the connection this call made */
	e->nonblocking = fl >= 0 && (fl & O_NONBLOCK);
	return r;
}

int rs_hconn_hand_over(struct rs_hconn *h)
{
	rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
	return h->tx->hand_over(h);
}

/* Whether the request's new connection is one h's transport cannot use. */
static bool unrenewable(const struct rs_hconn *h)
{
	return h->m.reconnect && h->tx != NULL && !h->tx->renews(h);
}

/* DRAIN: consumes the retried response, then WAIT. */
static int drain(struct rs_fd *e, struct rs_hconn *h, int fd)
{
	size_t rest;
	ssize_t n;
	int r;

	while (h->m.phase == RS_HR_DRAIN) {
		n = raw_recv(h, fd);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			rs_fd_touch(e, rs_clock_now_ms());
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			r = h->tx != NULL && h->tx->ready(h) ? 1 :
			    rs_hconn_wait(e, h, fd, POLLIN, read_until(e),
			    h->own_until);
			if (r < 0)
				return r;
			if (r > 0)
				continue;
			n = 0;	/* silent: give the connection up */
		}
		rs_hr_drain(&h->m, h->buf, n < 0 ? 0 : (size_t)n, &rest);
	}
	return 0;
}

/* What a resend's failure ends the program's read with: a descriptor
   closed meanwhile says so, and a transport's session that could not be
   made anew (-EPROTO) or that handed the response over (-ECANCELED);
   anything else is a lost connection. */
static int resend_failed(int r)
{
	return r == -EBADF || r == -EPROTO || r == -ECANCELED ? r :
	    -ECONNRESET;
}

/* WAIT: reconnects if needed, sends the request again. */
static int resend(struct rs_fd *e, struct rs_hconn *h, int fd)
{
	const char *p;
	size_t len;
	int r;

	if (unrenewable(h))
		return rs_hconn_hand_over(h);
	h->reused = !h->m.reconnect;
	if (h->m.reconnect) {
		r = rs_hconn_reconnect(e, fd, true);
		if (r < 0) {
			rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
			return r;
		}
		e = rs_fd_get(fd);
		/* A new TCP connection needs the session anew too. */
		if (h->tx != NULL && e != NULL &&
		    (r = h->tx->renew(h, e, fd, true)) < 0) {
			rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
			return r;
		}
	}
	p = rs_hr_resend(&h->m, &len);
	if (p == NULL)
		return -ECONNRESET;
	r = send_all(e, h, fd, p, len);
	/* The server closed the idle connection: once more, on a new one. */
	if (h->reused && (r == -EPIPE || r == -ECONNRESET) &&
	    rs_hr_lost(&h->m)) {
		h->reused = false;
		return resend(e, h, fd);
	}
	if (r < 0)
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
	return r;
}

/*
 * WAIT: sleeps `wait` ms before the resend.  A signal or the program's
 * own timeout ends the sleep and the program's read (-EINTR, -EAGAIN);
 * the phase stays WAIT with its time, and the next read finishes the
 * retry (httpio.c: rs_hwait_finish()).
 */
static int backoff(const struct rs_fd *e, struct rs_hconn *h, int64_t wait)
{
	h->retry_at_ms = rs_clock_after(rs_clock_now_ms(), wait);
	if (wait <= 0)
		return 0;
	int r = rs_hconn_wait(e, h, -1, 0, h->retry_at_ms, h->own_until);

	return r < 0 ? r : 0;
}

/*
 * A response to retry, while the rule allows: consumed, the wait slept
 * out, the request sent again.  Returns 1, or -errno for the program.
 */
static int retry(struct rs_fd *e, struct rs_hconn *h, int fd)
{
	int64_t wait = rs_hconn_allow(e, h);
	int r;

	if (wait < 0)
		return 1;
	r = drain(e, h, fd);
	/* No wait for a new connection that will not be made (resend()). */
	if (r == 0 && !unrenewable(h))
		r = backoff(e, h, wait);
	if (r < 0)
		return r;
	r = resend(e, h, fd);
	return r < 0 ? resend_failed(r) : 1;
}

/* What a wait for the response came to: 0 (look again), or -errno. */
static int waited(const struct rs_fd *e, int r)
{
	return r == 0 ? timed_out(e, false) : r < 0 ? r : 0;
}

/*
 * AWAIT: looks at the queued response.  Returns 1 when it was judged
 * (SHOW or a retry done), 0 when more bytes are needed and were waited
 * for, or -errno.  may_fail: an empty queue may end a non-blocking read
 * with EAGAIN (nothing was consumed behind the program's back yet).
 */
static int judge(struct rs_fd *e, struct rs_hconn *h, int fd, bool may_fail,
    bool dontwait)
{
	int64_t until = read_until(e);
	/* A blocking socket with no time limit blocks in the peek itself. */
	bool block = !dontwait && !e->nonblocking && until == RS_NEVER;
	ssize_t n = raw_peek(h, fd, block);
	enum rs_hr_verdict v;

	if (n < 0 && errno == EINTR)
		return h->own_until == RS_NEVER && rs_signals_restart() ? 0 :
		    -EINTR;
	/* The program's own SO_RCVTIMEO ended the wait: its timeout. */
	if (n < 0 && block && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -EAGAIN;
	/* The peek took the socket's error from the kernel (sock_error()
	   clears it): the program's read returns it, as it would have. */
	int err = n < 0 ? errno : 0;

	if (err == ECONNRESET && h->reused)
		n = 0;	/* a reset idle connection: as an end of file */
	if (n < 0 && err != EAGAIN && err != EWOULDBLOCK) {
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return -err;
	}
	if (n < 0) {
		if (may_fail && (dontwait || e->nonblocking))
			return -EAGAIN;
		return waited(e, rs_hconn_wait(e, h, fd, POLLIN, until,
		    h->own_until));
	}
	/* A resent request on a connection the server closed meanwhile. */
	if (n == 0 && h->reused && rs_hr_lost(&h->m)) {
		h->reused = false;
		int s = resend(e, h, fd);

		return s < 0 ? resend_failed(s) : 1;
	}
	if (err == ECONNRESET) {
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return -err;
	}
	/* Bytes the last look had not seen: the socket was active. */
	if ((size_t)n > h->m.judged)
		rs_fd_touch(e, rs_clock_now_ms());
	v = rs_hb_judge(e, &h->m, h->buf, (size_t)n, n == sizeof(h->buf),
	    n == 0, rs_clock_epoch_ms());
	/* The beginning of a head and then the peer's end: the program
	   reads those bytes and the end (or the reset), as it would have;
	   waiting for more would wait for ever (the peek sees the same
	   bytes however often the end wakes the wait).  A TLS transport's
	   peek reads the socket itself, and so meets the end. */
	if (v == RS_HR_MORE && h->tx == NULL && rs_hconn_peer_done(fd)) {
		rs_hr_pass(&h->m, RS_HTTP_WHY_ENDED);
		return 1;
	}
	if (v == RS_HR_MORE)
		return waited(e, wait_more(e, h, fd, (size_t)n, read_until(e),
		    h->own_until));
	if (v == RS_HR_SHOW) {
		rs_hconn_shown(e, h);
		return 1;
	}
	return retry(e, h, fd);
}

int rs_hconn_settle(struct rs_hconn *h, struct rs_fd *e, int fd,
    bool dontwait)
{
	unsigned first = h->m.attempt;
	int r;

	/*
	 * Each round judges, or retries once: bounded by attempts.  Once a
	 * retry consumed what the program's wait had reported, a read that
	 * would not block still waits for the next response: the program was
	 * told there is something to read, and so there must be.
	 */
	while (h->m.phase == RS_HR_AWAIT) {
		r = judge(e, h, fd, h->m.attempt == first, dontwait);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The program's own SO_SNDTIMEO for its write, as a time from now:
 * RS_NEVER when it has none, or when its call does not block (then the
 * flush of a held head waits as before, up to write_timeout).
 */
static int64_t write_own(struct rs_fd *e, int fd, int flags)
{
	if ((flags & MSG_DONTWAIT) || e->nonblocking)
		return RS_NEVER;
	return rs_io_own_timeout(e, fd, true, rs_clock_now_ms());
}

/*
 * A held head is complete (or given up): it goes out whole before
 * anything else, within own (the program's own SO_SNDTIMEO, or RS_NEVER).
 * When that runs out first, or a signal comes, the rest stays in h->out:
 * the bytes of the call are taken all the same (held), and the rest goes
 * first in the next write, or in the read that awaits the response
 * (httpwait.c's push).  Returns 0, or -errno for the call.
 */
static int flush_head(struct rs_fd *e, struct rs_hconn *h, int fd,
    int64_t own)
{
	size_t len;
	const char *kept = rs_http_kept(&h->m.t, &len);

	if (kept == NULL)
		return 0;
	h->out = kept;
	h->out_left = len;
	/* Passed through, the rest would have no one to send it. */
	if (h->m.phase == RS_HR_PASS)
		return send_all(e, h, fd, kept, len);
	int r = flush_out(e, h, fd, own, true);

	return r == -EAGAIN || r == -EINTR ? 0 : r;
}

int rs_hconn_release(struct rs_hconn *h, struct rs_fd *e, int fd)
{
	if (rs_hr_release(&h->m))
		return flush_head(e, h, fd, RS_NEVER);
	return h->out_left > 0 ? flush_out(e, h, fd, RS_NEVER, true) : 0;
}

ssize_t rs_hconn_write(struct rs_hconn *h, struct rs_fd *e, int fd,
    const char *p, size_t n, int flags)
{
	uint8_t rnd[16] = { 0 };
	size_t held = 0;
	bool flush = false;
	ssize_t k;
	int r;

	/* What an earlier flush left goes first; when it cannot go whole
	   in the program's time, nothing of this call is taken. */
	if (h->out_left > 0 && (r = flush_out(e, h, fd, write_own(e, fd,
	    flags), !(flags & MSG_DONTWAIT) && !e->nonblocking)) < 0)
		return r;
	if (rs_hr_holding(&h->m)) {
		if (h->m.s->idempotency_key == RS_HTTP_KEY_INJECT)
			syscall(SYS_getrandom, rnd, sizeof(rnd), 0);
		held = rs_hr_hold(&h->m, p, n, rnd, &flush);
		/*
		 * A call whose bytes are all in the head is told all of them
		 * went, so they must be on the wire when it returns: the
		 * program may shut its side down or close next (neither
		 * interposed for this), and the rest would be lost.  Its
		 * head goes whole, bounded by write_timeout only, not by the
		 * program's SO_SNDTIMEO (documented); only a signal leaves a
		 * rest then.
		 */
		if (flush && (r = flush_head(e, h, fd, held == n ? RS_NEVER :
		    write_own(e, fd, flags))) < 0)
			return r;
		if (held == n)
			return (ssize_t)n;
		if (h->out_left > 0)
			return held > 0 ? (ssize_t)held : -EAGAIN;
	}
	if (h->tx == NULL)
		k = rs_io_send(e, fd, p + held, n - held, flags);
	else if ((k = h->tx->send(h, fd, p + held, n - held)) < 0)
		k = -errno;
	if (k < 0)
		return held > 0 ? (ssize_t)held : k;
	rs_hr_sent(&h->m, p + held, (size_t)k);
	return (ssize_t)held + k;
}
