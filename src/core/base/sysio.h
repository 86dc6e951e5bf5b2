/* SPDX-License-Identifier: MIT */
/*
 * sysio.h - small file helpers built on raw system calls.
 *
 * The library lives inside programs whose read() and open() it may wrap;
 * these helpers reach the kernel directly so that loading a policy or
 * writing a log line can never re-enter a wrapper.  Thread-safe.
 */
#ifndef RS_SYSIO_H
#define RS_SYSIO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Reads the whole regular file at path into a new NUL-terminated malloc'd
 * buffer (*buf, length *len).  Returns 0, or -errno: -EISDIR for a directory,
 * -EINVAL for anything else that is not a regular file (a FIFO is never
 * opened for reading, so it cannot block), -EFBIG when larger than max.
 */
int rs_sys_read_file(const char *path, size_t max, char **buf, size_t *len);

/* Writes all of buf to fd, retrying on EINTR and short writes.
   Returns 0 or -errno.  Leaves errno unchanged. */
int rs_sys_write_all(int fd, const void *buf, size_t len);

/* open(2) with O_CLOEXEC added; returns the descriptor or -errno. */
int rs_sys_open(const char *path, int flags, mode_t mode);

/* close(2), preserving errno. */
void rs_sys_close(int fd);

#endif /* RS_SYSIO_H */
