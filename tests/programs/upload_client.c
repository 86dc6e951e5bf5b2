/* SPDX-License-Identifier: MIT */
/*
 * upload_client.c - a plain blocking client that uploads FILE to
 * 127.0.0.1:PORT through one of the ways a program writes to a socket,
 * for test_blocking_uploads.sh.
 *
 *     upload_client MODE PORT FILE
 *
 * MODE: write, send, writev, sendmsg, sendmmsg (two messages, each half
 * the file), sendfile, splice, fdopen (fwrite), dprintf, fork (a child
 * writes), exec (cat with the socket as its standard output, fork and
 * execlp), system (cat under system()).
 *
 * The socket is blocking with no timeout of the program's own, so every
 * call must block until the peer reads: one that fails or returns short
 * is an error here (exit 3), as it never is for such a socket without the
 * library.  Exit 0 when every byte went; 2 for a setup failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *path;
static char *buf;
static size_t len;
static int file_fd;

static int die(const char *what, ssize_t got, size_t want)
{
	fprintf(stderr, "upload_client: %s: returned %zd of %zu (%s)\n", what,
	    got, want, got < 0 ? "an error" : "short");
	if (got < 0)
		perror("upload_client");
	return 3;
}

static int dial(const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((unsigned short)atoi(port)),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("upload_client: connect");
		exit(2);
	}
	return fd;
}

/* Two messages of one sendmmsg: the kernel's blocking call sends both. */
static int by_sendmmsg(int fd)
{
	struct iovec v[2] = { { buf, len / 2 }, { buf + len / 2,
		len - len / 2 } };
	struct mmsghdr m[2] = {
		{ .msg_hdr = { .msg_iov = &v[0], .msg_iovlen = 1 } },
		{ .msg_hdr = { .msg_iov = &v[1], .msg_iovlen = 1 } },
	};
	int r = sendmmsg(fd, m, 2, 0);

	if (r != 2 || m[0].msg_len != v[0].iov_len ||
	    m[1].msg_len != v[1].iov_len) {
		fprintf(stderr, "upload_client: sendmmsg: %d messages, "
		    "%u of %zu and %u of %zu bytes\n", r, m[0].msg_len,
		    v[0].iov_len, r == 2 ? m[1].msg_len : 0, v[1].iov_len);
		return 3;
	}
	return 0;
}

/* One blocking call for the whole buffer, as a program that trusts it. */
static int one_call(const char *mode, int fd)
{
	struct iovec v[2] = { { buf, len / 2 }, { buf + len / 2,
		len - len / 2 } };
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };
	ssize_t r;

	if (!strcmp(mode, "write"))
		r = write(fd, buf, len);
	else if (!strcmp(mode, "send"))
		r = send(fd, buf, len, 0);
	else if (!strcmp(mode, "writev"))
		r = writev(fd, v, 2);
	else if (!strcmp(mode, "sendmsg"))
		r = sendmsg(fd, &m, 0);
	else if (!strcmp(mode, "dprintf"))
		r = dprintf(fd, "%.*s", (int)len, buf);
	else
		return -1;
	return r == (ssize_t)len ? 0 : die(mode, r, len);
}

static int by_sendfile(int fd)
{
	off_t off = 0;

	while ((size_t)off < len) {
		ssize_t r = sendfile(fd, file_fd, &off, len - (size_t)off);

		if (r <= 0)
			return die("sendfile", r, len - (size_t)off);
	}
	return 0;
}

static int by_splice(int fd)
{
	int p[2];
	loff_t off = 0;

	if (pipe(p) < 0)
		return 2;
	while ((size_t)off < len) {
		ssize_t in = splice(file_fd, &off, p[1], NULL, 65536, 0);

		if (in <= 0)
			return die("splice in", in, 65536);
		while (in > 0) {
			ssize_t r = splice(p[0], NULL, fd, NULL, (size_t)in, 0);

			if (r <= 0)
				return die("splice out", r, (size_t)in);
			in -= r;
		}
	}
	return 0;
}

static int by_stdio(int fd)
{
	FILE *f = fdopen(fd, "w");
	size_t k = f ? fwrite(buf, 1, len, f) : 0;

	if (k != len || fflush(f) != 0)
		return die("fwrite on fdopen", (ssize_t)k, len);
	return 0;
}

static int wait_child(pid_t pid)
{
	int st = 0;

	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}

/* fork: a child writes it all; exec: cat does; system: cat under sh. */
static int from_child(const char *mode, int fd)
{
	char cmd[4200];

	if (!strcmp(mode, "system")) {
		snprintf(cmd, sizeof(cmd), "exec cat '%s' >&%d", path, fd);
		int st = system(cmd);

		return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : 4;
	}
	pid_t pid = fork();

	if (pid == 0 && !strcmp(mode, "fork")) {
		ssize_t r = write(fd, buf, len);

		_exit(r == (ssize_t)len ? 0 : die("child write", r, len));
	}
	if (pid == 0) {
		dup2(fd, 1);
		execlp("cat", "cat", path, (char *)NULL);
		_exit(127);
	}
	return wait_child(pid);
}

static int run(const char *mode, int fd)
{
	int r = one_call(mode, fd);

	if (r >= 0)
		return r;
	if (!strcmp(mode, "sendmmsg"))
		return by_sendmmsg(fd);
	if (!strcmp(mode, "sendfile"))
		return by_sendfile(fd);
	if (!strcmp(mode, "splice"))
		return by_splice(fd);
	if (!strcmp(mode, "fdopen"))
		return by_stdio(fd);
	if (!strcmp(mode, "fork") || !strcmp(mode, "exec") ||
	    !strcmp(mode, "system"))
		return from_child(mode, fd);
	fprintf(stderr, "upload_client: no mode %s\n", mode);
	return 2;
}

int main(int argc, char **argv)
{
	struct stat st;

	if (argc != 4)
		return 2;
	path = argv[3];
	file_fd = open(path, O_RDONLY);
	if (file_fd < 0 || fstat(file_fd, &st) < 0)
		return 2;
	len = (size_t)st.st_size;
	buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, file_fd, 0);
	if (buf == MAP_FAILED)
		return 2;
	int fd = dial(argv[2]);
	int r = run(argv[1], fd);

	/* fdopen's stream owns the socket; exit flushes and closes it. */
	if (r == 0 && strcmp(argv[1], "fdopen") && close(fd) < 0)
		return 2;
	return r;
}
