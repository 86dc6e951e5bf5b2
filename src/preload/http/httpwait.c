/* SPDX-License-Identifier: MIT */
/*
 * httpwait.c - the non-blocking HTTP/1.x status retry: the same phases
 * as the blocking engine (httpretry.c), each step a few non-blocking
 * system calls (or calls of the connection's transport, a TLS session),
 * driven by the waits and reads.  See httpwait.h.
 */
#include "httpwait.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "clock.h"
#include "connect_step.h"
#include "io_timeout.h"
#include "real.h"
#include "tlsprobe.h"

/* A phase step that moved on: run the next one. */
#define AGAIN (-1)

/* Phase steps in one go at most; then the wait steps again at once. */
#define ROUNDS 64

/* Until the read deadline: watch for data; past it, nothing is hidden. */
static int want_in(const struct rs_fd *e, int64_t now, int64_t *next)
{
	int64_t dl = rs_io_wait_deadline(e, POLLIN, now);

	if (dl <= now)
		return RS_HW_NONE;
	*next = rs_clock_min(*next, dl);
	return RS_HW_IN;
}

/*
 * A transport's call would block: step again when the socket is ready
 * for what it waits for (a TLS library may read in a write), until the
 * read deadline.
 */
static int want_tx(const struct rs_hconn *h, const struct rs_fd *e,
    int64_t now, int64_t *next)
{
	int w = want_in(e, now, next);

	return w == RS_HW_IN && h->tx->want(h) == POLLOUT ? RS_HW_OUT : w;
}

/*
 * The engine's own non-blocking calls: of the socket, or of h's
 * transport (whose calls do not block on a non-blocking socket), with
 * libc's convention.
 */
static ssize_t nb_send(struct rs_hconn *h, int fd, const char *p, size_t n)
{
	if (h->tx != NULL)
		return h->tx->send(h, fd, p, n);
	return rs_real_send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static ssize_t nb_recv(struct rs_hconn *h, int fd, bool peek)
{
	if (h->tx != NULL)
		return peek ? h->tx->peek(h, fd, h->buf, sizeof(h->buf),
		    false) : h->tx->recv(h, fd, h->buf, sizeof(h->buf));
	return rs_real_recv(fd, h->buf, sizeof(h->buf),
	    (peek ? MSG_PEEK : 0) | MSG_DONTWAIT);
}

/*
 * SO_RCVLOWAT above the `have` bytes of an incomplete head, so that the
 * waits report the socket only when more came (Linux tcp_poll honours
 * it); the program's value goes back once the head is judged.
 */
static void lowat(struct rs_hconn *h, int fd, size_t have)
{
	int want = (int)have + 1;
	socklen_t len = sizeof(h->lowat_old);

	if (!h->lowat_set) {
		h->lowat_old = 1;
		rs_real_getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &h->lowat_old,
		    &len);
	}
	h->lowat_set = true;
	rs_real_setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want));
}

static void lowat_restore(struct rs_hconn *h, int fd)
{
	if (!h->lowat_set)
		return;
	h->lowat_set = false;
	rs_real_setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &h->lowat_old,
	    sizeof(h->lowat_old));
}

/*
 * Sends what is left of a resend.  Returns 0 (sent, or the rest waits for
 * room), AGAIN when a reused connection turned out closed (the request
 * goes again on a new one), or -errno (then the connection passes).
 */
static int push(struct rs_hconn *h, struct rs_fd *e, int fd, int64_t now)
{
	while (h->out_left > 0) {
		ssize_t k = nb_send(h, fd, h->out, h->out_left);

		if (k > 0) {
			h->out += k;
			h->out_left -= (size_t)k;
			rs_fd_touch(e, now);
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		int err = k == 0 ? EPIPE : errno;

		h->out_left = 0;
		if (h->reused && (err == EPIPE || err == ECONNRESET) &&
		    rs_hr_lost(&h->m)) {
			h->reused = false;
			h->retry_at_ms = now;
			return AGAIN;
		}
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return -err;
	}
	return 0;
}

/*
 * The request is not all sent (a resend, or the rest of a held head that
 * the program's SO_SNDTIMEO cut short): watch for room until
 * write_timeout; past it the request is given up, and the socket is the
 * kernel's again (its reads time out as usual).
 */
static int want_out(struct rs_hconn *h, const struct rs_fd *e, int64_t now,
    int64_t *next)
{
	int64_t dl = rs_io_wait_deadline(e, POLLOUT, now);

	if (dl <= now) {
		h->out_left = 0;
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return RS_HW_NONE;
	}
	*next = rs_clock_min(*next, dl);
	return RS_HW_OUT;
}

/* AWAIT: judges the queued response, as httpretry.c's judge(). */
static int await(struct rs_hconn *h, struct rs_fd *e, int fd, int64_t now,
    int64_t *next)
{
	int r = push(h, e, fd, now);

	if (r != 0)
		return r == AGAIN ? AGAIN : RS_HW_NONE;
	if (h->out_left > 0)
		return h->tx != NULL && h->tx->want(h) == POLLIN ?
		    want_in(e, now, next) : want_out(h, e, now, next);
	ssize_t n = nb_recv(h, fd, true);

	if (n < 0 && errno == ECONNRESET && h->reused)
		n = 0;	/* a reset idle connection: as an end of file */
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return h->tx != NULL ? want_tx(h, e, now, next) :
		    want_in(e, now, next);
	if (n < 0) {
		/* The peek took the socket's error from the kernel: the
		   program's next read, write or SO_ERROR gets it
		   (rs_hio_take_error()), as it would have.  A transport's
		   failure is met again by the program's own next read. */
		if (h->tx == NULL)
			__atomic_store_n(&e->http_err, errno,
			    __ATOMIC_RELEASE);
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return RS_HW_NONE;
	}
	if (n == 0 && h->reused && rs_hr_lost(&h->m)) {
		h->reused = false;
		h->retry_at_ms = now;
		return AGAIN;
	}
	/* Bytes the last look had not seen: the socket was active. */
	if ((size_t)n > h->m.judged)
		rs_fd_touch(e, now);
	enum rs_hr_verdict v = rs_hb_judge(e, &h->m, h->buf, (size_t)n,
	    n == sizeof(h->buf), n == 0, rs_clock_epoch_ms());

	/* A transport holds more than it showed: look again now.  (Its
	   peek reads the socket itself, and so meets the peer's end.) */
	if (v == RS_HR_MORE && h->tx != NULL)
		return h->tx->ready(h) ? AGAIN : want_tx(h, e, now, next);
	/* The peer ended inside the head: shown as it came (httpretry.c). */
	if (v == RS_HR_MORE && rs_hconn_peer_done(fd)) {
		lowat_restore(h, fd);
		rs_hr_pass(&h->m, RS_HTTP_WHY_ENDED);
		return RS_HW_NONE;
	}
	if (v == RS_HR_MORE) {
		lowat(h, fd, (size_t)n);
		return want_in(e, now, next);
	}
	lowat_restore(h, fd);
	int64_t wait = v == RS_HR_SHOW ? -1 : rs_hconn_allow(e, h);

	if (v == RS_HR_SHOW)
		rs_hconn_shown(e, h);
	if (wait < 0)
		return RS_HW_SHOW;
	/* From now, read afresh: a poll's `now` is from before its wait. */
	h->retry_at_ms = rs_clock_after(rs_clock_now_ms(), wait);
	return AGAIN;
}

/* DRAIN: consumes what is queued of the retried response. */
static int drain(struct rs_hconn *h, struct rs_fd *e, int fd, int64_t now,
    int64_t *next)
{
	size_t rest;

	while (h->m.phase == RS_HR_DRAIN) {
		ssize_t n = nb_recv(h, fd, false);
		int w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    (w = h->tx != NULL ? want_tx(h, e, now, next) :
		    want_in(e, now, next)) != RS_HW_NONE)
			return w;
		if (n > 0)
			rs_fd_touch(e, now);
		/* An error, or silence past read_timeout: the connection is
		   given up, and the request goes on a new one. */
		rs_hr_drain(&h->m, h->buf, n < 0 ? 0 : (size_t)n, &rest);
	}
	return AGAIN;
}

/* WAIT, reconnecting: the connect engine's steps, hidden from the program. */
static int connecting(struct rs_hconn *h, struct rs_fd *e, int fd, int ready,
    int64_t now, int64_t *next)
{
	enum rs_fd_state st = rs_fd_state(e);

	if (st == RS_FD_CONNECTING || st == RS_FD_BACKOFF) {
		enum rs_connect_want w = rs_connect_step(fd, e, ready, now);

		if (w != RS_WANT_NOTHING) {
			*next = rs_clock_min(*next, rs_connect_next_ms(e));
			return w == RS_WANT_WRITABLE ? RS_HW_OUT : RS_HW_TIMER;
		}
		st = rs_fd_state(e);
	}
	h->connecting = false;
	if (st != RS_FD_CONNECTED) {
		/* The connect failed: the waits report it as they would. */
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return RS_HW_NONE;
	}
	/* A new TCP connection needs the transport's session anew too. */
	h->renewing = h->tx != NULL;
	return AGAIN;
}

/*
 * WAIT, after a reconnect: the session made anew (a TLS handshake), a
 * step at a time.  One that cannot be made hands the response over as
 * it came (the transport's renew()): the program reads it.
 */
static int renewing(struct rs_hconn *h, struct rs_fd *e, int fd,
    int64_t now, int64_t *next)
{
	int r = h->tx->renew(h, e, fd, false), w;

	if (r == -EAGAIN && (w = want_tx(h, e, now, next)) != RS_HW_NONE)
		return w;
	h->renewing = false;
	if (r < 0) {
		/* Its own failure, or silence past read_timeout. */
		rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
		return RS_HW_NONE;
	}
	return AGAIN;
}

/* WAIT: sleeps (a timer of the wait), reconnects if needed, resends. */
static int resend(struct rs_hconn *h, struct rs_fd **ep, int fd, int ready,
    int64_t now, int64_t *next)
{
	if (h->connecting)
		return connecting(h, *ep, fd, ready, now, next);
	if (h->renewing)
		return renewing(h, *ep, fd, now, next);
	/* No new connection where its session cannot be made (no wait for
	   it either): the program reads the response handed over. */
	if (h->m.reconnect && h->tx != NULL && !h->tx->renews(h)) {
		rs_hconn_hand_over(h);
		return RS_HW_NONE;
	}
	if (now < h->retry_at_ms) {
		*next = rs_clock_min(*next, h->retry_at_ms);
		return RS_HW_TIMER;
	}
	/* A connection just made is not reused: a close on it is the
	   server's answer, not an idle connection timed out. */
	h->reused = !h->m.reconnect && !h->fresh;
	h->fresh = false;
	if (h->m.reconnect) {
		int r = rs_hconn_reconnect(*ep, fd, false);

		if ((r < 0 && r != -EINPROGRESS) || !(*ep = rs_fd_get(fd))) {
			rs_hr_pass(&h->m, RS_HTTP_WHY_EARLY);
			return RS_HW_NONE;
		}
		h->m.reconnect = false;
		h->connecting = true;
		h->fresh = true;
		return AGAIN;
	}
	h->out = rs_hr_resend(&h->m, &h->out_left);
	return h->out ? AGAIN : RS_HW_NONE;
}

/* Runs the phases with h entered until one has to wait. */
static enum rs_hw_want run(struct rs_hconn *h, struct rs_fd **ep, int fd,
    int ready, int64_t now, int64_t *next)
{
	int w = AGAIN, rounds = 0;

	/* Each round moves a phase on; a retry takes at most four, and
	   attempts bound the retries; a transport's look at a response
	   that came in many records takes one round for each, and ROUNDS
	   of them hand the rest to the next step, at once. */
	while (w == AGAIN) {
		if (rounds++ == ROUNDS) {
			*next = now;
			w = RS_HW_TIMER;
			break;
		}
		switch (h->m.phase) {
		case RS_HR_AWAIT:
			w = await(h, *ep, fd, now, next);
			break;
		case RS_HR_DRAIN:
			w = drain(h, *ep, fd, now, next);
			break;
		case RS_HR_WAIT:
			w = resend(h, ep, fd, ready, now, next);
			ready = 0;
			break;
		default:
			w = RS_HW_NONE;
		}
	}
	if (w == RS_HW_NONE || w == RS_HW_SHOW)
		lowat_restore(h, fd);
	h->last_want = (uint8_t)w;
	return (enum rs_hw_want)w;
}

/* Whether the waits hide h's socket from the program. */
static bool hidden(const struct rs_hconn *h)
{
	return h->m.phase == RS_HR_AWAIT || h->m.phase == RS_HR_DRAIN ||
	    h->m.phase == RS_HR_WAIT;
}

/*
 * A wait of a thread that is not the driver of h's session: no call into
 * it.  The timer is kept; a step due (the socket is ready as the last
 * step asked, or no wait of it is known) is the driver's next read, so
 * the socket is reported readable.
 */
static enum rs_hw_want foreign(const struct rs_hconn *h, int ready,
    int64_t now, int64_t *next)
{
	if (h->m.phase == RS_HR_WAIT && !h->connecting && !h->renewing &&
	    now < h->retry_at_ms) {
		*next = rs_clock_min(*next, h->retry_at_ms);
		return RS_HW_TIMER;
	}
	if (ready || (h->last_want != RS_HW_IN && h->last_want != RS_HW_OUT))
		return RS_HW_NOW;
	return (enum rs_hw_want)h->last_want;
}

/*
 * Steps a transport's connection in its driver's wait.  Its session's
 * records on fd are no HTTP of the trackers' (tlsprobe.h).  What the
 * program reads next is the transport's (the stash of a TLS session: the
 * response shown, or handed over), not the kernel's: readable now.
 */
static enum rs_hw_want run_tx(struct rs_hconn *h, struct rs_fd **ep, int fd,
    int ready, int64_t now, int64_t *next)
{
	int plain = rs_tls_plain_fd;

	rs_tls_plain_fd = fd;
	enum rs_hw_want w = run(h, ep, fd, ready, now, next);

	rs_tls_plain_fd = plain;
	if (w == RS_HW_SHOW || (w == RS_HW_NONE && !hidden(h)))
		return RS_HW_NOW;
	return w;
}

/*
 * What a wait makes of w for a connection whose transport's records the
 * program moves itself (pumped()): its read of the socket brings them,
 * then calls the session, which steps the engine; so what is readable is
 * neither hidden nor reported without the kernel.  The timer of a wait
 * (Retry-After) and the library's own records waiting for room stay the
 * library's.
 */
static enum rs_hw_want for_pump(const struct rs_hconn *h, enum rs_hw_want w)
{
	if (h->tx == NULL || h->tx->pumped == NULL || !h->tx->pumped(h))
		return w;
	return w == RS_HW_IN || w == RS_HW_NOW || w == RS_HW_SHOW ?
	    RS_HW_NONE : w;
}

enum rs_hw_want rs_hwait_step(struct rs_fd *e, int fd, int ready,
    int64_t now, int64_t *next)
{
	bool busy;
	const struct rs_hconn *held = e->http;

	/* A transport's bytes for the program (the connection may have
	   passed: not entered), no call into its session. */
	if (held != NULL && held->tx != NULL && !hidden(held) &&
	    held->tx->shows(held))
		return for_pump(held, RS_HW_NOW);
	struct rs_hconn *h = rs_hconn_enter_wait(e, &busy);
	int save = errno;

	if (h == NULL) {
		if (!busy)
			return RS_HW_NONE;
		*next = rs_clock_min(*next, now + 1);
		return RS_HW_TIMER;
	}
	enum rs_hw_want w = h->tx == NULL ? run(h, &e, fd, ready, now, next) :
	    h->driver != rs_hconn_me() ? foreign(h, ready, now, next) :
	    run_tx(h, &e, fd, ready, now, next);

	w = for_pump(h, w);
	rs_hconn_leave(e, h);
	errno = save;
	return w;
}

short rs_hwait_poll_events(struct rs_fd *e, int fd, int ready, int64_t now,
    int64_t *next)
{
	switch (rs_hwait_step(e, fd, ready, now, next)) {
	case RS_HW_IN:
		return POLLIN;
	case RS_HW_OUT:
		return POLLOUT;
	case RS_HW_TIMER:
		return 0;
	case RS_HW_NOW:
		return RS_HW_POLL_NOW;
	default:
		return -1;
	}
}

/*
 * The response the program sees is queued: the program's registration
 * goes back to the kernel.  In a wait whose kernel event the library
 * took, the program gets it now, as the kernel's edge will not come
 * again (with what else the event said, ready); a one-shot registration
 * is then spent until EPOLL_CTL_MOD, and an edge-triggered one keeps
 * the library's (rs_epi_relay(): a MOD would report the edge again).
 */
static uint32_t shown(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, bool in_wait, int ready, int64_t now)
{
	uint32_t rev = 0;

	if (in_wait && r->kmode != RS_EPT_PROGRAM)
		rev = (EPOLLIN | (uint32_t)ready) & ((r->events & 0xffffu) |
		    EPOLLERR | EPOLLHUP);
	if (rev && (r->events & EPOLLONESHOT)) {
		r->disarmed = true;
		rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
	} else if (!rev || !rs_epi_relay(r)) {
		rs_epi_set_kernel(i, r, RS_EPT_PROGRAM);
	}
	rs_epi_timer(i, r, r->disarmed ? RS_NEVER : rs_io_wait_deadline(e,
	    (short)(r->events & (EPOLLIN | EPOLLOUT)), now));
	return rev;
}

bool rs_hwait_ept(struct rs_ept_instance *i, struct rs_ept_record *r,
    struct rs_fd *e, int ready, bool in_wait, int64_t now, int64_t *next,
    uint32_t *rev)
{
	static const enum rs_ept_kernel mode[] = {
		[RS_HW_IN] = RS_EPT_TAGGED_IN, [RS_HW_OUT] = RS_EPT_TAGGED,
		[RS_HW_TIMER] = RS_EPT_ABSENT,
	};
	int64_t when = RS_NEVER;

	*rev = 0;
	if (r->disarmed || !(r->events & EPOLLIN))
		return false;
	enum rs_hw_want w = rs_hwait_step(e, r->fd, ready, now, &when);

	rs_epi_unpend(i, r);
	if (w == RS_HW_SHOW || w == RS_HW_NOW) {
		*rev = shown(i, r, e, in_wait, ready, now);
		return true;
	}
	if (w == RS_HW_NONE) {
		/* Nothing hidden any more: the record follows the socket. */
		if (rs_fd_state(e) == RS_FD_CONNECTED)
			rs_epi_set_kernel(i, r, RS_EPT_PROGRAM);
		return false;
	}
	rs_epi_set_kernel(i, r, mode[w]);
	rs_epi_timer(i, r, when);
	*next = rs_clock_min(*next, when);
	/* Judging hides the response, not the room to write: a level-
	   triggered or one-shot program sees that as bare.  (An edge-
	   triggered one's EPOLLOUT edge then is the one the switch to the
	   library's registration made: the request was written whole.) */
	if (w == RS_HW_IN && in_wait && !(r->events & EPOLLET))
		*rev = (uint32_t)ready & r->events & EPOLLOUT;
	/* A one-shot is spent by it: the judging goes on at the program's
	   re-arm or read. */
	if (*rev && (r->events & EPOLLONESHOT)) {
		r->disarmed = true;
		rs_epi_set_kernel(i, r, RS_EPT_ABSENT);
	}
	return true;
}

int rs_hwait_settle(struct rs_hconn *h, struct rs_fd *e, int fd)
{
	int64_t next = RS_NEVER;
	enum rs_hw_want w = run(h, &e, fd, 1, rs_clock_now_ms(), &next);

	if (w == RS_HW_NONE || w == RS_HW_SHOW)
		return 0;
	/*
	 * Nothing yet: a timeout the wait reported goes to the read, which
	 * fails with it; anything else is EAGAIN, as the kernel says of an
	 * empty queue.
	 */
	if (w == RS_HW_IN && h->m.phase == RS_HR_AWAIT &&
	    __atomic_load_n(&e->read_timed_out, __ATOMIC_ACQUIRE))
		return 0;
	return w == RS_HW_IN ? -EAGAIN : RS_HW_RESTEP;
}

int rs_hwait_finish(struct rs_hconn *h, struct rs_fd *e, int fd)
{
	int ready = 0;

	while (h->m.phase == RS_HR_DRAIN || h->m.phase == RS_HR_WAIT ||
	    (h->m.phase == RS_HR_AWAIT && h->out_left > 0)) {
		int64_t now = rs_clock_now_ms(), next = RS_NEVER;
		enum rs_hw_want w = run(h, &e, fd, ready, now, &next);

		if (w == RS_HW_NONE || w == RS_HW_SHOW ||
		    (w == RS_HW_IN && h->m.phase == RS_HR_AWAIT))
			return 0;
		/* As the blocking engine's waits: the program's own
		   SO_RCVTIMEO and its signals end the read, and the next
		   read goes on from here. */
		ready = rs_hconn_wait(e, h, w == RS_HW_TIMER ? -1 : fd,
		    w == RS_HW_OUT ? POLLOUT : POLLIN, next, h->own_until);
		if (ready < 0)
			return ready;
	}
	return 0;
}
