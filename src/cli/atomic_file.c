/* SPDX-License-Identifier: MIT */
/*
 * atomic_file.c - replacing a file so that a reader sees the old one or
 * the new one, never a part: `resolute stats --output` and
 * `resolute systemd --install` alike.
 *
 * A temporary file beside the target (same file system, so rename(2) is
 * atomic) is written, flushed to the disk, then renamed over the target.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *rs_cli_temp_open(const char *path, mode_t mode, char *tmp, size_t len)
{
	int fd;
	FILE *f;

	if ((size_t)snprintf(tmp, len, "%s.tmp-XXXXXX", path) >= len) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, mode) < 0 || !(f = fdopen(fd, "w"))) {
		int err = errno;

		close(fd);
		unlink(tmp);
		errno = err;
		goto fail;
	}
	return f;
fail:
	fprintf(stderr, "resolute: %s: cannot create a file beside it: %s\n",
	    path, strerror(errno));
	return NULL;
}

/*
 * The data reach the disk before the rename, so that after a crash the
 * file is the old one or the new one, never empty.
 */
int rs_cli_temp_commit(FILE *f, const char *tmp, const char *path)
{
	int err = 0;

	if (fflush(f) != 0 || ferror(f) || fdatasync(fileno(f)) < 0)
		err = errno ? errno : EIO;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err) {
		unlink(tmp);
		fprintf(stderr, "resolute: %s: %s\n", path, strerror(err));
		return -1;
	}
	return 0;
}
