/* SPDX-License-Identifier: MIT */
/*
 * connect_wait.c - a blocking caller drives a pending connect: connect()
 * itself on a blocking socket, and a read or write that the kernel would
 * make wait for the connect under way.
 *
 * The socket is made non-blocking for the duration and the steps are
 * taken between polls; the program's file flags are restored before the
 * call returns.  No lock is held across a poll.
 */
#include "connect_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>

#include "clock.h"
#include "connect_step.h"
#include "hot.h"
#include "real.h"
#include "sigrestart.h"
#include "sotimeo.h"

/*
 * Waits, for a blocking caller, until the pending connect needs a step or
 * until `until` (the program's own timeout).  Returns 1 when the socket was
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
	int64_t ms = rs_sotimeo_ms(fd, true);

	return ms ? rs_clock_after(rs_clock_now_ms(), ms) : RS_NEVER;
}

/*
 * Steps e, waiting in between, on a socket that is non-blocking for now,
 * until its logical connect ends (0), `until` passes (-EINPROGRESS), or a
 * signal interrupts a wait (-EINTR) -- except when there is no `until` and
 * every handler has SA_RESTART, where the kernel would restart the call.
 * -EBADF: another thread closed the descriptor during a wait (the entry's
 * generation moved on, fdtable.h); the number and its entry may be
 * another connection's now, and neither may be touched again.
 */
static int drive(int fd, struct rs_fd *e, int64_t until)
{
	int ready = 0, save = errno;
	uint32_t gen = rs_fd_gen(e);

	for (;;) {
		int64_t now = rs_clock_now_ms();

		if (rs_connect_step(fd, e, ready, now) == RS_WANT_NOTHING)
			return 0;
		if (now >= until)
			return -EINPROGRESS;
		ready = wait_blocking(fd, e, until);
		if (rs_fd_closed_since(e, gen))
			return -EBADF;
		if (ready == -EINTR && until == RS_NEVER &&
		    rs_signals_restart()) {
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

	if (ret != -EBADF)
		rs_real_fcntl(fd, F_SETFL, (uintptr_t)flags);
	return ret;
}

int rs_connect_run_blocking(int fd, struct rs_fd *e, int flags)
{
	rs_real_fcntl(fd, F_SETFL, (uintptr_t)(flags | O_NONBLOCK));
	int ret = drive(fd, e, program_deadline(fd));

	if (ret == -EBADF)
		return ret;
	if (ret == 0)
		ret = rs_fd_state(e) == RS_FD_CONNECTED ? 0 : -e->final_error;
	e->blocking_interrupted = ret == -EINTR || ret == -EINPROGRESS;
	rs_real_fcntl(fd, F_SETFL, (uintptr_t)flags);
	if (ret != 0 && !e->blocking_interrupted)
		rs_fd_forget(fd);
	return ret;
}

RS_HOT int rs_connect_run_kernel(int fd, struct rs_fd *e, int64_t now)
{
	int r = rs_connect_step_kernel(fd, e, now);

	if (r == 0 && rs_fd_state(e) == RS_FD_CONNECTED)
		return 0;
	/* From here on the attempt needs waiting for, or has failed: the
	   slow path's questions cost nothing next to that. */
	int flags = rs_real_fcntl(fd, F_GETFL, 0);

	if (flags < 0) {
		r = -errno;
		rs_fd_forget(fd);
		return r;
	}
	if (r == -EINPROGRESS && (flags & O_NONBLOCK)) {
		/* A copy of the socket made it non-blocking behind our back. */
		e->nonblocking = true;
		return r;
	}
	if (r == -EINTR && !rs_signals_restart()) {
		e->blocking_interrupted = true;
		return r;
	}
	return rs_connect_run_blocking(fd, e, flags);
}

/*
 * A non-blocking read or write takes one step without waiting (the wait
 * that should have driven the connect may be one the library does not
 * see); a blocking one waits for the connect's end.
 */
int rs_connect_settle(int fd, struct rs_fd *e, bool may_block)
{
	/* A failed connect has nothing left to drive: its error goes to
	   the first read or write, as the kernel's does. */
	bool failed = rs_fd_state(e) == RS_FD_FAILED;

	if (!failed && !may_block) {
		rs_connect_step(fd, e, 1, rs_clock_now_ms());
	} else if (!failed) {
		int r = rs_connect_wait(fd, e);

		if (r < 0)
			return r;
	}
	switch (rs_fd_state(e)) {
	case RS_FD_CONNECTED:
		return 0;
	case RS_FD_FAILED: {
		int err = rs_connect_take_error(e);

		return err > 0 ? -err : 1;
	}
	default:
		return -EAGAIN;
	}
}
