/* SPDX-License-Identifier: MIT */
/*
 * ktimeo.h - the kernel times the blocking reads and writes of managed
 * sockets: no extra system call in the steady state.
 *
 * A blocking read (not MSG_WAITALL) on a connected socket with
 * read_timeout that starts right after the socket's last activity -- the
 * common case: a request is written, its answer read -- is made as the
 * plain blocking system call, with our SO_RCVTIMEO in the kernel, set once
 * per connection.  (Writes keep their non-blocking first try, which
 * completes them when the send buffer has room.)  The kernel's timer is
 * set early by a margin that covers its coarseness (whole ticks, and the
 * timer wheel's up to 1/8 lateness), so it never fires after
 * read_timeout; when it fires, the exact slow path
 * (io_block.h) waits out the rest and fails with ETIMEDOUT.  A call that
 * starts later than that, or whose timeout is short, takes the exact slow
 * path from the start, as before.
 *
 * The program's own SO_RCVTIMEO/SO_SNDTIMEO are merged in (the kernel gets
 * whichever must fire first) and hidden behind the interposed
 * getsockopt/setsockopt; the program's values are put back before a dup
 * (copies share the socket), a disconnect, and an exec or posix_spawn of
 * this process for sockets that are not close-on-exec.  Thread-safe: the
 * entry's fields are written by the thread that owns the call, as io.c's.
 */
#ifndef RS_KTIMEO_H
#define RS_KTIMEO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "clock.h"
#include "fdtable.h"
#include "io_timeout.h"
#include "tdeadline.h"

/* How soon after the last activity a kernel-timed call must start. */
#define RS_KTIMEO_SLACK_MS 5

/* The kernel's value for our timeout t (ktimeo.c says why). */
static inline uint32_t rs_ktimeo_value_ms(uint32_t t)
{
	return t - t / 8 - 20 - rs_clock_coarse_lag_ms();
}

/*
 * Whether the kernel holds a value of ours made from another `auto`
 * read_timeout than the one that stands now (learn.h): the next read must
 * set it anew (or take the exact path), as an `auto` value is taken when
 * each wait begins.  Else a connection made before anything was learned
 * would keep the timer of max, and its EAGAIN would even reach the
 * program once the value fell below what the kernel may time.  One test
 * of a word beside read_timeout_ms for any other rule.
 */
static inline bool rs_ktimeo_stale(const struct rs_fd *e)
{
	const struct rs_settings *s = e->settings;

	if (__builtin_expect(!(s->auto_mask & RS_AUTO_READ), 1))
		return false;
	return e->kt_ms[0] != rs_ktimeo_value_ms(rs_learn_auto_ms(e->rule, s,
	    RS_LEARN_READ, rs_fd_last_activity(e)));
}

/*
 * rs_ktimeo_arm() the long way: decides, reads the program's value, and
 * sets ours in the kernel when needed.
 */
bool rs_ktimeo_arm_full(struct rs_fd *e, int fd, bool out, int flags);

/*
 * For the first try of a blocking call in direction out (a write when
 * true) with these flags: returns true when it may block under the
 * kernel's timer (ours is in the kernel now, set if needed), false when
 * it must not block (MSG_DONTWAIT, then the slow path, as before).
 *
 * The steady state is inline: once ours is in the kernel it stays right
 * until the program sets its own (which clears kt_ours) or the entry is
 * made anew, so all a read asks then is the coarse clock (ktimeo.c).
 */
static inline bool rs_ktimeo_arm(struct rs_fd *e, int fd, bool out,
    int flags)
{
	/* Writes are never kernel-timed (ktimeo.c says why). */
	if (out)
		return false;
	if (e->kt_ours[0] && !e->shared &&
	    !(flags & (MSG_PEEK | MSG_WAITALL)) &&
	    rs_io_process_deadline() == RS_NEVER && !rs_ktimeo_stale(e))
		return rs_clock_coarse_ms() - rs_fd_last_activity(e) <=
		    RS_KTIMEO_SLACK_MS;
	return rs_ktimeo_arm_full(e, fd, out, flags);
}

/*
 * Whether a read with these flags on e is in the steady state, in which
 * all that io.c's path choice and rs_ktimeo_arm() would decide the long
 * way is the blocking system call under our timer: connected, blocking
 * and not shared, no timeout pending from a wait, read_timeout set and
 * ours in the kernel, none of MSG_DONTWAIT, MSG_PEEK, MSG_WAITALL and
 * RS_IO_OUT_OF_STREAM (the
 * entry: rs_ktimeo_steady_entry(), a few loads), no deadline that could
 * bind the thread (rs_tdeadline_none(), or a test that implies it), and
 * the call starting right after the last activity (rs_ktimeo_steady_now(),
 * the coarse clock, as rs_ktimeo_arm() asks it).  False sends the call
 * the long way, which decides it anew.
 */
/*
 * The reads that carry no byte of the stream and never block: of the
 * error queue, and of the urgent byte (EAGAIN at once while the byte its
 * pointer announced has not come).  Never kernel-timed, nor waited for:
 * io.c's choose_path() gives them the real call, and neither HTTP engine
 * sees them (interpose_io.c).
 */
#define RS_IO_OUT_OF_STREAM (MSG_ERRQUEUE | MSG_OOB)

static inline __attribute__((always_inline)) bool rs_ktimeo_steady_entry(
    const struct rs_fd *e, int flags)
{
	/* kt_ours[0] set; read_timed_out, nonblocking and shared clear. */
	const uint64_t mask = RS_FD_FLAG(kt_ours) | RS_FD_FLAG(read_timed_out) |
	    RS_FD_FLAG(nonblocking) | RS_FD_FLAG(shared);

	return (rs_fd_flag_word(e) & mask) == RS_FD_FLAG_TRUE(kt_ours) &&
	    !(flags & (MSG_DONTWAIT | MSG_PEEK | MSG_WAITALL |
		RS_IO_OUT_OF_STREAM)) &&
	    rs_fd_state(e) == RS_FD_CONNECTED &&
	    e->settings->read_timeout_ms != RS_OFF;
}

/* Also whether the kernel's timer is the one an `auto` read_timeout
   stands for now: asked here, in the steady functions, and not in the
   entry's test, which the exported names make for every descriptor. */
static inline __attribute__((always_inline)) bool rs_ktimeo_steady_now(
    const struct rs_fd *e)
{
	return rs_clock_coarse_ms() - rs_fd_last_activity(e) <=
	    RS_KTIMEO_SLACK_MS && !rs_ktimeo_stale(e);
}

static inline __attribute__((always_inline)) bool rs_ktimeo_steady(
    const struct rs_fd *e, int flags)
{
	return rs_ktimeo_steady_entry(e, flags) && rs_tdeadline_none() &&
	    rs_ktimeo_steady_now(e);
}

/*
 * After a kernel-timed first try that failed with r (-EAGAIN or -EINTR):
 * returns r when the program must get it (its own timeout passed, a
 * signal it does not restart after), or 0 when the slow path is to go on
 * waiting (our timer fired early, or a restartable signal).
 */
int rs_ktimeo_after(struct rs_fd *e, bool out, int r);

/*
 * The program's own SO_SNDTIMEO (out true) or SO_RCVTIMEO on fd in whole
 * ms, rounded up, 0 for none: the one reading of it that every engine
 * asks, kept in the entry with the value as set, which is what goes back
 * into the kernel.  Read from the kernel once (each time on a dup'd
 * socket), so only when a call is about to wait.
 */
uint32_t rs_ktimeo_own_ms(struct rs_fd *e, int fd, bool out);

/*
 * getsockopt(SO_RCVTIMEO/SO_SNDTIMEO) of a managed socket: when the kernel
 * holds ours, *tv gets the program's value and true is returned; false:
 * the real getsockopt answers.
 */
bool rs_ktimeo_own(const struct rs_fd *e, bool out, struct timeval *tv);

/*
 * The program set SO_RCVTIMEO (out false) or SO_SNDTIMEO to *tv (NULL: to
 * a value in another format, read back from the kernel when needed).
 */
void rs_ktimeo_set_by_program(struct rs_fd *e, bool out,
    const struct timeval *tv);

/* Puts the program's own values back into the kernel for fd (dup,
   disconnect). */
void rs_ktimeo_release(struct rs_fd *e, int fd);

/*
 * Before exec or posix_spawn: puts the program's values back on every
 * socket armed by this process that a child would inherit (not
 * close-on-exec).  Costs one atomic load when none is armed.
 */
void rs_ktimeo_before_exec(void);

/*
 * Records whether the kernel holds the library's SO_RCVTIMEO (out false)
 * or SO_SNDTIMEO (out true) for e (kt_ours), keeping the count
 * rs_ktimeo_armed() returns.  Lock-free: each change of the flag counts
 * once, whichever thread makes it.
 */
void rs_ktimeo_mark(struct rs_fd *e, int out, bool ours);

/*
 * How many entries have kt_ours set: exact, since an entry that ends
 * (the table's release hook) is counted no more.  An exec looks at the
 * table only when this is not 0.
 */
unsigned rs_ktimeo_armed(void);

#endif /* RS_KTIMEO_H */
