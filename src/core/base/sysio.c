/* SPDX-License-Identifier: MIT */
/*
 * sysio.c - small file helpers built on raw system calls.
 *
 * Every call goes through syscall(2) so that nothing here can reach an
 * interposed libc name (in a ThreadSanitizer build, close goes through
 * its own entry point: rs_sys_close()), and errno is saved and restored
 * around each helper.
 */
#include "sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int rs_sys_open(const char *path, int flags, mode_t mode)
{
	int save = errno;
	long fd = syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
	int ret = fd < 0 ? -errno : (int)fd;

	errno = save;
	return ret;
}

#ifdef __SANITIZE_THREAD__
/*
 * ThreadSanitizer follows each descriptor from its calls and forgets it
 * at its close().  A raw close would hide this one from it, and a later
 * descriptor of the same number, made by another thread, would then look
 * like a race with the calls made on this one (an fstat, say).  Its own
 * entry point is not an interposed name, so nothing re-enters the
 * library; in other builds it is absent.
 */
extern int __interceptor_close(int fd) __attribute__((weak));
#endif

void rs_sys_close(int fd)
{
	int save = errno;

#ifdef __SANITIZE_THREAD__
	if (__interceptor_close) {
		__interceptor_close(fd);
		errno = save;
		return;
	}
#endif
	syscall(SYS_close, fd);
	errno = save;
}

int rs_sys_write_all(int fd, const void *buf, size_t len)
{
	int save = errno;
	const char *p = buf;
	int ret = 0;

	while (len > 0) {
		long n = syscall(SYS_write, fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	errno = save;
	return ret;
}

/* Reads up to max+1 bytes so that a file that grew past max is noticed. */
static int slurp(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *p = malloc(cap + 1);

	if (!p)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			char *q = cap > max ? NULL : realloc(p, cap * 2 + 1);

			if (!q) {
				free(p);
				return cap > max ? -EFBIG : -ENOMEM;
			}
			p = q;
			cap *= 2;
		}
		long r = syscall(SYS_read, fd, p + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(p);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(p);
		return -EFBIG;
	}
	p[n] = '\0';
	*buf = p;
	*len = n;
	return 0;
}

int rs_sys_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	int save = errno;
	struct stat st;
	int ret;

	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) < 0) {
		ret = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out;
	}
	if ((size_t)st.st_size > max) {
		ret = -EFBIG;
		goto out;
	}
	int fd = rs_sys_open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);

	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = slurp(fd, max, buf, len);
	rs_sys_close(fd);
out:
	errno = save;
	return ret;
}
