/*
 * connect.c - one logical connect: attempts, timeouts, backoff waits.
 *
 * Each attempt is a non-blocking kernel connect, so that its timeout is
 * ours to keep precisely; a blocking program's own flags are restored
 * before connect() returns.  A failed attempt is dissolved with
 * connect(AF_UNSPEC), after which Linux accepts a new connect on the same
 * socket (after a refusal, an unreachable error and an aborted SYN_SENT
 * alike), so the program's descriptor, options, bindings and epoll
 * registrations all survive the retries.
 */
#include "connect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/un.h>

#include "budget.h"
#include "clock.h"
#include "runtime.h"
#include "log.h"
#include "names.h"
#include "real.h"
#include "rng.h"
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

/* Formats the destination as "1.2.3.4:80", "[::1]:80" or "unix:/path". */
static void format_addr(const struct rs_fd *e, char *buf, size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)&e->addr;
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_un *un = (const void *)sa;
		size_t n = e->addrlen > offsetof(struct sockaddr_un, sun_path) ?
		    e->addrlen - offsetof(struct sockaddr_un, sun_path) : 0;

		if (n > 0 && un->sun_path[0] == '\0')
			snprintf(buf, len, "unix:@%.*s", (int)(n - 1),
			    un->sun_path + 1);
		else
			snprintf(buf, len, "unix:%.*s", (int)n, un->sun_path);
	}
}

/* Formats "host:port (addr)" or just "addr" for a log message. */
static void format_dest(const struct rs_fd *e, char *addr, size_t alen,
    char *dest, size_t dlen)
{
	format_addr(e, addr, alen);
	if (e->host[0]) {
		const char *port = strrchr(addr, ':');

		snprintf(dest, dlen, "%s%s (%.*s)", e->host, port ? port : "",
		    port ? (int)(port - addr) : (int)strlen(addr), addr);
	} else {
		snprintf(dest, dlen, "%s", addr);
	}
}

void rs_connect_format_dest(const struct rs_fd *e, char *addr, size_t alen,
    char *dest, size_t dlen)
{
	format_dest(e, addr, alen, dest, dlen);
}

/* Logs the outcome of attempt e->attempt; wait_ms < 0: no retry follows. */
static void log_attempt(enum rs_log_level lv, const struct rs_fd *e, int err,
    int64_t wait_ms, const char *event, const char *tail)
{
	char addr[128], dest[RS_HOST_MAX + 160];

	if (!rs_log_enabled(lv))
		return;
	format_dest(e, addr, sizeof(addr), dest, sizeof(dest));
	struct rs_log_fields f = {
		.event = event, .host = e->host[0] ? e->host : NULL,
		.addr = addr, .attempt = (int)e->attempt,
		.attempts = (int)e->settings->attempts,
		.error = err ? describe(err) : NULL, .wait_ms = wait_ms,
	};
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
 * Undoes a failed attempt so that the socket can connect again.  For TCP an
 * attempt still in SYN_SENT must be aborted; after a refusal the socket is
 * already closed and AF_UNSPEC is harmless.  Unix sockets never stay half
 * connected.
 */
static void dissolve(int fd, const struct rs_fd *e)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };
	int save = errno;

	if (e->addr.ss_family != AF_UNIX)
		rs_real_connect(fd, &sa, sizeof(sa));
	errno = save;
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
	uint32_t ct = e->settings->connect_timeout_ms;
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

/* Ends the logical connect with err (0: connected). */
static void finish(int fd, struct rs_fd *e, int err, int64_t now)
{
	int save = errno;

	safety_net(fd, e, false);
	errno = save;
	if (err == 0) {
		rs_fd_touch(e, now);
		rs_fd_set_state(e, RS_FD_CONNECTED);
		if (e->attempt > 1)
			log_attempt(RS_LOG_INFO, e, 0, -1, "connected", "");
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

	e->last_error = err;
	if (cls == RS_CLASS_TIMEOUT)
		rs_stats_add(e->rule, RS_STAT_TIMEOUTS);
	dissolve(fd, e);
	if (!(cls & s->retry_on) || e->attempt >= s->attempts) {
		bool retried = e->attempt > 1;

		log_attempt(retried || cls == RS_CLASS_TIMEOUT ? RS_LOG_WARN :
			RS_LOG_INFO, e, err, -1, "give_up",
		    retried ? "; giving up" : "");
		finish(fd, e, err, now);
		return;
	}
	uint32_t wait = rs_backoff_wait_ms(&s->backoff, e->attempt - 1,
	    rs_rng_uniform(), e->prev_wait_ms);

	if (now + wait >= e->deadline_ms) {
		log_attempt(RS_LOG_WARN, e, err, -1, "deadline",
		    "; no time left for another attempt");
		finish(fd, e, ETIMEDOUT, now);
		return;
	}
	if (!rs_budget_take_retry(rt->policy, e->rule, s, now)) {
		rs_stats_add(e->rule, RS_STAT_BUDGET_DENIALS);
		log_attempt(RS_LOG_WARN, e, err, -1, "budget_exhausted",
		    "; retry budget exhausted");
		finish(fd, e, err, now);
		return;
	}
	rs_stats_add(e->rule, RS_STAT_RETRIES);
	log_attempt(RS_LOG_WARN, e, err, wait, "retry", "");
	e->prev_wait_ms = wait;
	e->retry_at_ms = now + wait;
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
	char addr[128], dest[RS_HOST_MAX + 160];

	if (rs_log_enabled(RS_LOG_WARN)) {
		format_dest(e, addr, sizeof(addr), dest, sizeof(dest));
		struct rs_log_fields f = {
			.event = "deadline", .host = e->host[0] ? e->host : NULL,
			.addr = addr, .attempt = (int)e->attempt + 1,
			.attempts = (int)e->settings->attempts,
			.error = describe(ETIMEDOUT), .wait_ms = -1,
		};
		rs_log(RS_LOG_WARN, &f, "connect %s: no time left for "
		    "attempt %u/%u", dest, e->attempt + 1,
		    e->settings->attempts);
	}
	finish(fd, e, ETIMEDOUT, now);
}

/* Starts attempt e->attempt + 1 on a socket that is non-blocking now. */
static void start_attempt(int fd, struct rs_fd *e, int64_t now)
{
	uint32_t ct = e->settings->connect_timeout_ms;

	e->attempt++;
	rs_stats_add(e->rule, RS_STAT_ATTEMPTS);
	e->attempt_deadline_ms = ct == RS_OFF ? e->deadline_ms :
	    rs_clock_min(now + ct, e->deadline_ms);
	rs_fd_set_state(e, RS_FD_CONNECTING);
	safety_net(fd, e, true);
	if (rs_real_connect(fd, (struct sockaddr *)&e->addr, e->addrlen) == 0)
		finish(fd, e, 0, now);
	else if (errno != EINPROGRESS)
		after_failure(fd, e, errno, now);
}

/* Returns 0 when connected, 1 while in progress, or an errno value. */
static int attempt_result(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);

	if (rs_real_getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	if (err)
		return err;
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
		return 0;
	return errno == ENOTCONN ? 1 : errno;
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
		if (st == RS_FD_CONNECTING && ready) {
			int r = attempt_result(fd);

			ready = 0;
			if (r == 0)
				finish(fd, e, 0, now);
			else if (r != 1)
				after_failure(fd, e, r, now);
			continue;
		}
		if (st == RS_FD_CONNECTING && now >= e->attempt_deadline_ms) {
			after_failure(fd, e, ETIMEDOUT, now);
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

short rs_connect_revents(const struct rs_fd *e)
{
	if (rs_fd_state(e) == RS_FD_FAILED)
		return POLLOUT | POLLERR | POLLHUP;
	return POLLOUT;
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

/*
 * Waits, for a blocking connect, until the pending connect needs a step or
 * until (the program's own timeout).  Returns 1 when the socket was
 * reported, 0 on time, -EINTR on a signal.
 */
static int wait_blocking(int fd, struct rs_fd *e, int64_t until)
{
	int64_t now = rs_clock_now_ms();
	int tmo = rs_clock_remaining_ms(rs_clock_min(rs_connect_next_ms(e),
	    until), now);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int n;

	if (rs_fd_state(e) == RS_FD_BACKOFF)
		n = rs_real_poll(NULL, 0, tmo);
	else
		n = rs_real_poll(&p, 1, tmo);
	if (n < 0)
		return -errno;
	return n > 0;
}

/*
 * Returns when the program's own connect timeout ends: SO_SNDTIMEO, after
 * which the kernel's blocking connect fails with EINPROGRESS and goes on in
 * the background; RS_NEVER when none is set.
 */
static int64_t program_deadline(int fd)
{
	struct timeval tv = { 0, 0 };
	socklen_t len = sizeof(tv);

	if (rs_real_getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) < 0 ||
	    (tv.tv_sec == 0 && tv.tv_usec == 0))
		return RS_NEVER;
	return rs_clock_now_ms() + (int64_t)tv.tv_sec * 1000 +
	    (tv.tv_usec + 999) / 1000;
}

/*
 * Returns whether every installed signal handler has SA_RESTART.  Linux
 * restarts an interrupted blocking connect() when the handler has
 * SA_RESTART and the socket has no SO_SNDTIMEO (signal(7)), and programs
 * relying on that never expect EINTR.  Which signal interrupted our poll
 * is unknown (only a handler can: default actions either kill or let the
 * poll restart), hence all of them.  64 sigaction queries, on EINTR only.
 */
static bool synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	    sig == SIGILL || sig == SIGTRAP || sig == SIGSYS;
}

bool rs_connect_signals_restart(void)
{
	struct sigaction sa;

	for (int sig = 1; sig < NSIG; sig++) {
		/* Fault signals are raised by the faulting thread itself and
		   never interrupt a wait; sanitizers and crash handlers
		   install them without SA_RESTART. */
		if (synchronous(sig) || sigaction(sig, NULL, &sa) < 0 ||
		    sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		if (!(sa.sa_flags & SA_RESTART))
			return false;
	}
	return true;
}

/*
 * Steps e, waiting in between, on a socket that is non-blocking for now,
 * until its logical connect ends (0), `until` passes (-EINPROGRESS), or a
 * signal interrupts a wait (-EINTR) -- except when there is no `until` and
 * every handler has SA_RESTART, where the kernel would restart the call.
 */
static int drive(int fd, struct rs_fd *e, int64_t until)
{
	int ready = 0, save = errno;

	for (;;) {
		int64_t now = rs_clock_now_ms();

		if (rs_connect_step(fd, e, ready, now) == RS_WANT_NOTHING)
			return 0;
		if (now >= until)
			return -EINPROGRESS;
		ready = wait_blocking(fd, e, until);
		if (ready == -EINTR && until == RS_NEVER &&
		    rs_connect_signals_restart()) {
			errno = save;	/* the kernel would restart: go on */
			ready = 0;
		} else if (ready < 0) {
			return ready;
		}
	}
}

int rs_connect_wait(int fd, struct rs_fd *e)
{
	int flags = rs_real_fcntl(fd, F_GETFL, 0);

	if (flags < 0)
		return -errno;
	rs_real_fcntl(fd, F_SETFL, (uintptr_t)(flags | O_NONBLOCK));
	int ret = drive(fd, e, RS_NEVER);

	rs_real_fcntl(fd, F_SETFL, (uintptr_t)flags);
	return ret;
}

/*
 * Runs a blocking logical connect on a socket made non-blocking for the
 * duration, to its end or, as the kernel's connect, until a signal whose
 * handler lacks SA_RESTART (EINTR) or the program's SO_SNDTIMEO
 * (EINPROGRESS).  Then the state is kept: a later connect() resumes the
 * same logical connect, or the program's waits drive it.
 */
static int run_blocking(int fd, struct rs_fd *e, int flags)
{
	rs_real_fcntl(fd, F_SETFL, (uintptr_t)(flags | O_NONBLOCK));
	int ret = drive(fd, e, program_deadline(fd));

	if (ret == 0)
		ret = rs_fd_state(e) == RS_FD_CONNECTED ? 0 : -e->final_error;
	e->blocking_interrupted = ret == -EINTR || ret == -EINPROGRESS;
	rs_real_fcntl(fd, F_SETFL, (uintptr_t)flags);
	if (ret != 0 && !e->blocking_interrupted)
		rs_fd_forget(fd);
	return ret;
}

/* The real connect, with its -1/errno turned into -errno. */
static int pass(int fd, const struct sockaddr *sa, socklen_t len)
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
static int again(int fd, struct rs_fd *e, const struct sockaddr *sa,
    socklen_t len, int flags)
{
	switch (rs_fd_state(e)) {
	case RS_FD_CONNECTING:
	case RS_FD_BACKOFF:
		if (!(flags & O_NONBLOCK))
			return run_blocking(fd, e, flags);
		/* A program that polls by calling connect() again drives the
		   connect as a wait would: EALREADY only while it goes on. */
		if (rs_connect_step(fd, e, 1, rs_clock_now_ms()) !=
		    RS_WANT_NOTHING)
			return -EALREADY;
		return again(fd, e, sa, len, flags);
	case RS_FD_FAILED: {
		int err = rs_connect_take_error(e);

		rs_fd_forget(fd);
		return err > 0 ? -err : 1;
	}
	case RS_FD_CONNECTED:
		return pass(fd, sa, len);
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
	char ct[16], rt[16], addr[128], dest[RS_HOST_MAX + 160];

	if (!rs_log_enabled(RS_LOG_DEBUG))
		return;
	if (!e) {
		rs_log(RS_LOG_DEBUG, NULL, "connect %s: %s; passed through",
		    t->host ? t->host : t->path ? t->path : "(by address)",
		    rule ? "passthrough rule" : "no unix: rule matches");
		return;
	}
	format_dest(e, addr, sizeof(addr), dest, sizeof(dest));
	rs_log(RS_LOG_DEBUG, NULL, "connect %s: %s%s (%s:%u): "
	    "connect_timeout %s, attempts %u, read_timeout %s%s", dest,
	    rule ? "rule " : "defaults", rule ? rule->match.text : "",
	    p->path, rule ? rule->line : p->defaults_line,
	    rs_duration_format(e->settings->connect_timeout_ms, ct, sizeof(ct)),
	    e->settings->attempts, rs_duration_format(
		e->settings->read_timeout_ms, rt, sizeof(rt)),
	    e->nonblocking ? ", non-blocking" : "");
}

/* Fills a fresh entry for a new logical connect. */
static void begin(struct rs_fd *e, const struct rs_target *t,
    const struct rs_settings *s, const struct rs_rule *rule,
    const struct sockaddr *sa, socklen_t len, int64_t now)
{
	const struct rs_runtime *rt = rs_runtime_peek();

	e->settings = s;
	e->rule = rule;
	memcpy(&e->addr, sa, len);
	e->addrlen = len;
	e->deadline_ms = rt->deadline_ms;
	if (s->connect_budget_ms != RS_OFF)
		e->deadline_ms = rs_clock_min(now + s->connect_budget_ms,
		    e->deadline_ms);
	e->retry_at_ms = now;
	if (t->host)
		snprintf(e->host, sizeof(e->host), "%s", t->host);
	rs_budget_note_connect(rt->policy, rule, s, now);
	rs_stats_add(rule, RS_STAT_CONNECTS);
	rs_fd_set_state(e, RS_FD_BACKOFF);
}

int rs_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	if (!sa || len < sizeof(sa_family_t) ||
	    len > sizeof(struct sockaddr_storage))
		return pass(fd, sa, len);
	int fam = sa->sa_family;

	if (fam != AF_INET && fam != AF_INET6 && fam != AF_UNIX) {
		rs_fd_forget(fd);
		return pass(fd, sa, len);
	}
	const struct rs_runtime *rt = rs_runtime_get();
	int flags = rs_real_fcntl(fd, F_GETFL, 0);
	struct rs_fd *e = rs_fd_get(fd);

	if (e) {
		int r = again(fd, e, sa, len, flags);

		if (r != 1)
			return r;
	}
	struct rs_target t;
	char host[RS_HOST_MAX];

	if (!rt->active || flags < 0 || !is_stream(fd) ||
	    rs_target_from_sockaddr(&t, sa, len) < 0)
		return pass(fd, sa, len);
	if (t.family != AF_UNIX &&
	    rs_names_lookup(t.family, t.addr, host, sizeof(host)))
		t.host = host;
	const struct rs_rule *rule = NULL;
	const struct rs_settings *s = rs_policy_lookup(rt->policy, &t, &rule);

	if (!s || !(e = rs_fd_claim(fd))) {
		log_decision(rt->policy, &t, rule, NULL);
		return pass(fd, sa, len);
	}
	int64_t now = rs_clock_now_ms();

	begin(e, &t, s, rule, sa, len, now);
	e->nonblocking = (flags & O_NONBLOCK) != 0;
	log_decision(rt->policy, &t, rule, e);
	if (!(flags & O_NONBLOCK))
		return run_blocking(fd, e, flags);
	if (rs_connect_step(fd, e, 0, now) != RS_WANT_NOTHING)
		return -EINPROGRESS;
	if (rs_fd_state(e) == RS_FD_CONNECTED)
		return 0;
	int err = e->final_error;

	rs_fd_forget(fd);
	return -err;
}
