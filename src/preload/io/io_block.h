/* SPDX-License-Identifier: MIT */
/*
 * io_block.h - the slow path of a blocking read or write with a timeout.
 *
 * io.c makes the first, non-blocking try itself (so that a call that
 * would not block costs no extra system call) and hands over here only
 * when it would block or moved less than asked.  r is that first try's
 * result (a count or -errno); each function returns what the program's
 * call returns, with -errno instead of -1/errno.  Thread-safe.
 */
#ifndef RS_IO_BLOCK_H
#define RS_IO_BLOCK_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "clock.h"
#include "fdtable.h"

/*
 * Continues a read into iov[0..cnt) (msg: the name and control of a
 * recvfrom/recvmsg, or NULL); MSG_WAITALL in flags reads every byte.  r is
 * what the first try returned, gen the entry's generation before it
 * (rs_fd_gen()): when it has moved on after a wait, another thread closed
 * the descriptor meanwhile, and the call fails with EBADF instead of
 * going on with whatever socket has the number now.
 */
ssize_t rs_io_read_rest(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r, uint32_t gen);

/* Continues a write of iov[0..cnt) until every byte is sent (r, gen: as
   for rs_io_read_rest()). */
ssize_t rs_io_write_rest(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt, int flags, struct msghdr *msg, ssize_t r, uint32_t gen);

/*
 * recvmmsg and sendmmsg (out) are datagram calls.  recvmmsg is served by
 * one non-blocking try, a wait whenever it would block, and a retry.  A
 * blocking sendmmsg sends every message, each one whole, as the kernel's
 * does (on a stream socket a message sent in part is finished before the
 * next); on a non-blocking socket the kernel's answer is returned as is.
 */
int rs_io_mmsg_rest(struct rs_fd *e, int fd, bool out, struct mmsghdr *v,
    unsigned n, int flags, int r, uint32_t gen);

/*
 * The program's own SO_RCVTIMEO (out: SO_SNDTIMEO) as the time at which a
 * blocking call that starts at `now` must give up with EAGAIN, as the
 * kernel's would, or RS_NEVER.  Costs a getsockopt the first time only:
 * ask it when a call is about to wait.
 */
int64_t rs_io_own_timeout(struct rs_fd *e, int fd, bool out, int64_t now);

/* Returns the total length of an iovec array. */
size_t rs_io_iov_total(const struct iovec *iov, int cnt);

/* Records progress for the timeouts when r bytes moved; returns r. */
static inline ssize_t rs_io_touched(struct rs_fd *e, ssize_t r)
{
	if (r > 0)
		rs_fd_touch(e, rs_clock_now_ms());
	return r;
}

#endif /* RS_IO_BLOCK_H */
