/*
 * io.h - read and write timeouts on connected managed sockets (SPEC §6).
 *
 * Called only for descriptors the fdtable manages; e is their entry.  A
 * call that would not block costs no extra system call; one that would
 * block waits at most until read_timeout (write_timeout) after the last
 * activity, or the process deadline, and then fails with ETIMEDOUT.  Data
 * and end of file are never delayed.  Each returns what the real call
 * returns, with -errno instead of -1/errno.  Thread-safe.
 */
#ifndef RS_IO_H
#define RS_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "fdtable.h"
#include "tdeadline.h"

/*
 * Returns true when every read and write on the managed socket e is the
 * real call and nothing else: connected, no read or write timeout (so no
 * activity to record), no HTTP retries, no timeout pending from a wait,
 * and no deadline that could bind a thread.  A handful of loads, for the
 * exported names to test before anything else; false sends the call down
 * the engines' path, which decides the same thing the long way.
 */
static inline bool rs_io_plain(const struct rs_fd *e)
{
	const struct rs_settings *s = e->settings;

	/* Both timeouts are RS_OFF (all ones) exactly when their AND is;
	   the flags are or'ed, so that the common case is a few branches. */
	return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) ==
	    RS_FD_CONNECTED &&
	    (s->read_timeout_ms & s->write_timeout_ms) == RS_OFF &&
	    !((int)s->http.enabled | (int)(e->http != NULL) |
		(int)__atomic_load_n(&e->read_timed_out, __ATOMIC_RELAXED) |
		(int)__atomic_load_n(&e->write_timed_out, __ATOMIC_RELAXED)) &&
	    rs_tdeadline_none();
}

ssize_t rs_io_read(struct rs_fd *e, int fd, void *buf, size_t n);
ssize_t rs_io_readv(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt);
ssize_t rs_io_recv(struct rs_fd *e, int fd, void *buf, size_t n, int flags);
ssize_t rs_io_recvfrom(struct rs_fd *e, int fd, void *buf, size_t n,
    int flags, struct sockaddr *sa, socklen_t *len);
ssize_t rs_io_recvmsg(struct rs_fd *e, int fd, struct msghdr *msg,
    int flags);
int rs_io_recvmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags, struct timespec *tmo);
ssize_t rs_io_write(struct rs_fd *e, int fd, const void *buf, size_t n);
ssize_t rs_io_writev(struct rs_fd *e, int fd, const struct iovec *iov,
    int cnt);
ssize_t rs_io_send(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags);
ssize_t rs_io_sendto(struct rs_fd *e, int fd, const void *buf, size_t n,
    int flags, const struct sockaddr *sa, socklen_t len);
ssize_t rs_io_sendmsg(struct rs_fd *e, int fd, const struct msghdr *msg,
    int flags);
int rs_io_sendmmsg(struct rs_fd *e, int fd, struct mmsghdr *v, unsigned n,
    int flags);

#endif /* RS_IO_H */
