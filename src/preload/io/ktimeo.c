/* SPDX-License-Identifier: MIT */
/*
 * ktimeo.c - kernel-timed blocking reads and writes on managed sockets.
 *
 * Reads only, and not MSG_WAITALL: a read returns as soon as any byte
 * arrives, so what it returns says when the last activity was; a write or
 * a WAITALL read that the kernel's timer ends after partial progress
 * would not say when the progress stopped, and SPEC §6 counts from there.
 * Writes need no timer in the steady state anyway: with room in the send
 * buffer, the first non-blocking try completes them.
 *
 * The margins: Linux keeps SO_RCVTIMEO in whole ticks, rounded up (4 ms
 * at HZ=250, 10 ms at HZ=100), and the timer wheel fires a timeout up to
 * 1/8 of its length late.  With our value set to t - t/8 - 20 ms - lag,
 * the kernel gives up at most t - 12 ms - lag after the call started.
 * Whether the call starts within RS_KTIMEO_SLACK_MS of the last activity
 * is asked of the coarse clock (a fifth of the fine one's cost, on every
 * read): it trails the true time by less than lag
 * (rs_clock_coarse_lag_ms), so the call really started within SLACK +
 * lag of it, and the kernel wakes it at least 7 ms before read_timeout
 * is due; the slow path's poll then makes the timeout exact.  The last
 * activity itself is always stamped with the fine clock (io_block.h), so
 * that no timeout can be early.
 */
#include "ktimeo.h"

#include <errno.h>
#include <fcntl.h>

#include "clock.h"
#include "io_timeout.h"
#include "real.h"
#include "sigrestart.h"

/* Below this, the margins would leave the kernel little to time. */
#define MIN_TIMEOUT_MS 200
/* A coarse clock that trails by more than this is not used. */
#define MAX_LAG_MS 50

/*
 * The program's value in whole ms, rounded up as clock.h rounds; a value
 * past 32 bits of ms (about 49.7 days) saturates, so that it stays longer
 * than any timeout of ours instead of wrapping to a short one.
 */
static uint32_t ms_of(const struct timeval *tv)
{
	int64_t ms = rs_clock_timeval_ms(tv);

	return ms > (int64_t)UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)ms;
}

static int opt(bool out)
{
	return out ? SO_SNDTIMEO : SO_RCVTIMEO;
}

/*
 * The program's own value, read once from the kernel and then kept, as it
 * was set (own_tv: what goes back) and in ms.  A dup'd socket's is read
 * each time: a copy may have set it, and the kernel holds it (ours is
 * never armed there).
 */
static bool own_value(struct rs_fd *e, int fd, bool out)
{
	socklen_t len = sizeof(e->own_tv[out]);

	if (e->own_tmo_known[out] && !e->shared)
		return true;
	if (rs_real_getsockopt(fd, SOL_SOCKET, opt(out), &e->own_tv[out],
		&len) < 0)
		return false;
	e->own_tmo_ms[out] = ms_of(&e->own_tv[out]);
	e->own_tmo_known[out] = true;
	return true;
}

uint32_t rs_ktimeo_own_ms(struct rs_fd *e, int fd, bool out)
{
	return own_value(e, fd, out) ? e->own_tmo_ms[out] : 0;
}

static void set_ours(struct rs_fd *e, bool out, bool ours)
{
	if (e->kt_ours[out] == ours)
		return;
	rs_ktimeo_mark(e, out, ours);
	if (ours)
		e->kt_pid = rs_fd_owner();
}

/* Makes the kernel hold ms (ours) or the program's own value. */
static bool put(struct rs_fd *e, int fd, bool out, bool ours, uint32_t ms)
{
	if (ours == e->kt_ours[out] && (!ours || ms == e->kt_ms[out]))
		return true;
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) *
		1000 };
	int save = errno;

	if (rs_real_setsockopt(fd, SOL_SOCKET, opt(out), ours ? &tv :
		&e->own_tv[out], sizeof(tv)) < 0) {
		errno = save;
		return false;
	}
	e->kt_ms[out] = ms;
	set_ours(e, out, ours);
	return true;
}

/*
 * Which value the kernel must hold for a call whose own timeout is own_ms
 * under our timeout t: the program's when it must fire first (*ours
 * false), ours otherwise.  False when neither can stand for the other (the
 * program's falls within our margin), so the exact path must run.
 */
static bool choose(uint32_t t, uint32_t own_ms, uint32_t *ms, bool *ours)
{
	uint32_t k = rs_ktimeo_value_ms(t);

	if (own_ms && own_ms < k) {
		*ours = false;
		*ms = own_ms;
		return true;
	}
	if (own_ms && own_ms < t)
		return false;
	*ours = true;
	*ms = k;
	return true;
}

bool rs_ktimeo_arm_full(struct rs_fd *e, int fd, bool out, int flags)
{
	const struct rs_settings *s = e->settings;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms, ms;
	bool ours;

	t = rs_learn_timeout_ms(e->rule, s, out ? RS_LEARN_WRITE :
	    RS_LEARN_READ, t, rs_fd_last_activity(e));

	if (out || e->shared || (flags & (MSG_PEEK | MSG_WAITALL)) ||
	    t == RS_OFF || t < MIN_TIMEOUT_MS ||
	    rs_io_process_deadline() != RS_NEVER ||
	    rs_clock_coarse_lag_ms() > MAX_LAG_MS)
		return false;
	if (rs_clock_coarse_ms() - rs_fd_last_activity(e) >
	    RS_KTIMEO_SLACK_MS)
		return false;
	if (!own_value(e, fd, out) ||
	    !choose(t, e->own_tmo_ms[out], &ms, &ours))
		return false;
	return put(e, fd, out, ours, ms);
}

/*
 * Whether the kernel-timed call that just ended started with our value in
 * the kernel.  choose() decides that from the settings and the program's
 * value alone, so the answer holds even when another thread has put the
 * program's value back since (an exec or posix_spawn: kt_ours is false
 * then, yet the call sleeping in the kernel had read ours).  An `auto`
 * timeout may have changed while the call slept (learn.h): with no value
 * of the program's own, whatever the kernel held was ours.
 */
static bool armed_ours(const struct rs_fd *e, bool out)
{
	const struct rs_settings *s = e->settings;
	uint32_t t = out ? s->write_timeout_ms : s->read_timeout_ms, ms;
	bool ours = false;	/* set by choose(); gcc -O1 cannot see it */

	if ((s->auto_mask & (out ? RS_AUTO_WRITE : RS_AUTO_READ)) &&
	    e->own_tmo_ms[out] == 0)
		return t != RS_OFF;
	return t != RS_OFF && t >= MIN_TIMEOUT_MS &&
	    choose(t, e->own_tmo_ms[out], &ms, &ours) && ours;
}

int rs_ktimeo_after(struct rs_fd *e, bool out, int r)
{
	if (r == -EAGAIN)
		return armed_ours(e, out) ? 0 : r;
	/* With a timeout set, Linux never restarts the call after a
	   handler; without the program's own, it would have. */
	if (r == -EINTR && e->own_tmo_ms[out] == 0 &&
	    rs_signals_restart())
		return 0;
	return r;
}

bool rs_ktimeo_own(const struct rs_fd *e, bool out, struct timeval *tv)
{
	if (!e->kt_ours[out])
		return false;
	*tv = e->own_tv[out];
	return true;
}

void rs_ktimeo_set_by_program(struct rs_fd *e, bool out,
    const struct timeval *tv)
{
	if (tv) {
		e->own_tv[out] = *tv;
		e->own_tmo_ms[out] = ms_of(tv);
	}
	e->own_tmo_known[out] = tv != NULL;
	/* The kernel holds the program's value now. */
	set_ours(e, out, false);
}

void rs_ktimeo_release(struct rs_fd *e, int fd)
{
	for (int out = 0; out < 2; out++)
		if (e->kt_ours[out])
			put(e, fd, out, false, 0);
}

/*
 * An exec would pass fd on: its kernel value goes back to the program's.
 *
 * A vfork child runs this on its parent's memory, with a descriptor table
 * of its own that its dup2() and close() may have changed (the library
 * does not follow them there: fdtable.c).  So the entry's socket must
 * still be what fd names: then the socket is the parent's own (the child
 * shares it), and what is written here -- the program's value in the
 * kernel, and the entry marked so -- is what the parent would have
 * written itself before an exec.  Otherwise (another socket dup2'd over
 * the number) the entry is left alone: the child's socket is not the
 * library's, and the parent's still holds our value.  An fstat per armed
 * socket, at an exec only.
 */
static void release_inherited(int fd, struct rs_fd *e)
{
	int save = errno;

	/* A fork child's entries were armed by the parent, which still
	   relies on them: the socket is shared, so they are left alone. */
	if ((e->kt_ours[0] || e->kt_ours[1]) && e->kt_pid == rs_fd_owner() &&
	    !(rs_real_fcntl(fd, F_GETFD, 0) & FD_CLOEXEC) &&
	    rs_fd_same_socket(e, fd))
		rs_ktimeo_release(e, fd);
	errno = save;
}

void rs_ktimeo_before_exec(void)
{
	if (rs_ktimeo_armed())
		rs_fd_each(release_inherited);
}

static unsigned kt_armed;
/* This layer's bit in the entries (fdtable.h: rs_fd_hold). */
static unsigned kt_bit;

void rs_ktimeo_mark(struct rs_fd *e, int out, bool ours)
{
	if (__atomic_exchange_n(&e->kt_ours[out], ours, __ATOMIC_RELAXED) ==
	    ours)
		return;
	__atomic_add_fetch(&kt_armed, ours ? 1u : -1u, __ATOMIC_RELAXED);
	if (ours)
		rs_fd_hold(e, kt_bit);
}

unsigned rs_ktimeo_armed(void)
{
	return __atomic_load_n(&kt_armed, __ATOMIC_RELAXED);
}

/* The table's release hook: an entry that ends is counted no more. */
static void kt_drop(struct rs_fd *e)
{
	rs_ktimeo_mark(e, 0, false);
	rs_ktimeo_mark(e, 1, false);
}

/* The table's copy hook: a flag the copy brought is the copy's, and
   counted so. */
static void kt_copy(struct rs_fd *from, struct rs_fd *to)
{
	(void)from;
	for (int out = 0; out < 2; out++)
		if (to->kt_ours[out]) {
			to->kt_ours[out] = false;
			rs_ktimeo_mark(to, out, true);
		}
}

static const struct rs_fd_hooks kt_hooks = { kt_drop, kt_copy };

/* Registered at load, before any entry can hold a flag. */
__attribute__((constructor)) static void kt_register(void)
{
	kt_bit = rs_fd_hooks_add(&kt_hooks);
}
