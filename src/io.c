/*
 * io.c - read and write timeouts.
 *
 * Provisional: calls pass straight to the kernel until the timeout engine
 * lands (see the read/write timeouts issue).  Interface is final.
 */
#include "io.h"

#include <errno.h>
#include <poll.h>

#include "clock.h"
#include "init.h"

#include "real.h"

#define RET(expr) ({ __typeof__(expr) r_ = (expr); r_ < 0 ? -errno : r_; })

ssize_t rs_io_read(struct rs_fd *e, int fd, void *buf, size_t n)
{
	(void)e;
	return RET(rs_real_read(fd, buf, n));
}

ssize_t rs_io_readv(struct rs_fd *e, int fd, const struct iovec *iov, int cnt)
{
	(void)e;
	return RET(rs_real_readv(fd, iov, cnt));
}

ssize_t rs_io_recv(struct rs_fd *e, int fd, void *buf, size_t n, int flags)
{
	(void)e;
	return RET(rs_real_recv(fd, buf, n, flags));
}

ssize_t rs_io_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len)
{
	(void)e;
	return RET(rs_real_recvfrom(fd, buf, n, flags, sa, len));
}

ssize_t rs_io_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg, int flags)
{
	(void)e;
	return RET(rs_real_recvmsg(fd, msg, flags));
}

int rs_io_recvmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags, struct timespec *tmo)
{
	(void)e;
	return RET(rs_real_recvmmsg(fd, v, n, flags, tmo));
}

ssize_t rs_io_write(struct rs_fd *e, int fd, const void *buf, size_t n)
{
	(void)e;
	return RET(rs_real_write(fd, buf, n));
}

ssize_t rs_io_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt)
{
	(void)e;
	return RET(rs_real_writev(fd, iov, cnt));
}

ssize_t rs_io_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags)
{
	(void)e;
	return RET(rs_real_send(fd, buf, n, flags));
}

ssize_t rs_io_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len)
{
	(void)e;
	return RET(rs_real_sendto(fd, buf, n, flags, sa, len));
}

ssize_t rs_io_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags)
{
	(void)e;
	return RET(rs_real_sendmsg(fd, msg, flags));
}

int rs_io_sendmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags)
{
	(void)e;
	return RET(rs_real_sendmmsg(fd, v, n, flags));
}

int64_t rs_io_wait_deadline(const struct rs_fd *e, short events, int64_t now)
{
	const struct rs_settings *s = e->settings;
	const struct rs_runtime *rt = rs_runtime();
	int64_t when = rt ? rt->deadline_ms : RS_NEVER;
	int64_t last = rs_fd_last_activity(e);

	(void)now;
	if (rs_fd_state(e) != RS_FD_CONNECTED)
		return RS_NEVER;
	if ((events & POLLIN) && s->read_timeout_ms != RS_OFF)
		when = rs_clock_min(when, last + s->read_timeout_ms);
	if ((events & POLLOUT) && s->write_timeout_ms != RS_OFF)
		when = rs_clock_min(when, last + s->write_timeout_ms);
	return when;
}

short rs_io_wait_expired(struct rs_fd *e, short events, int64_t now)
{
	(void)now;
	if (events & POLLIN)
		e->read_timed_out = true;
	if (events & POLLOUT)
		e->write_timed_out = true;
	return events & (POLLIN | POLLOUT);
}
