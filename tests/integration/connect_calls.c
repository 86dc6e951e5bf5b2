/* SPDX-License-Identifier: MIT */
/*
 * connect_calls.c - one blocking connect and close to a local listener,
 * between two getppid() system calls that mark it for strace, after a
 * first one that starts the library (its policy, its counters); run bare
 * and under the library by tests/programs/test_connect_calls.sh.
 *
 *   connect_calls [request|dup]
 *
 * With "request", the connection also carries one exchange before its
 * close: the listener's side (accepted in this thread) sends a byte, the
 * client sends one and reads the answer, which is there already.  With
 * "dup", the connected socket is copied by dup() before it is closed, and
 * the copy closed after it.
 * Prints "connected" or the connect's error; exit 0 when connected.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A first connect, unmarked. */
static int connect_once(const struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int r = connect(s, (const struct sockaddr *)a, sizeof(*a));

	close(s);
	return r;
}

/* One byte each way; the listener's side answers first. */
static int exchange(int l, int s)
{
	char b = 'x';
	int a = accept(l, NULL, NULL);
	int ok = a >= 0 && write(a, &b, 1) == 1 && write(s, &b, 1) == 1 &&
	    read(s, &b, 1) == 1;

	if (a >= 0)
		close(a);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, 8) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0) {
		perror("listener");
		return 2;
	}
	bool request = argc > 1 && !strcmp(argv[1], "request");
	bool copy = argc > 1 && !strcmp(argv[1], "dup");
	int d = -1;

	connect_once(&a);
	if (request)
		close(accept(l, NULL, NULL));	/* connect_once's */
	syscall(SYS_getppid);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int r = connect(s, (struct sockaddr *)&a, sizeof(a));
	int err = r < 0 ? errno : 0;

	if (r == 0 && request && exchange(l, s) < 0) {
		r = -1;
		err = errno;
	}
	if (r == 0 && copy && (d = dup(s)) < 0) {
		r = -1;
		err = errno;
	}
	close(s);
	if (d >= 0)
		close(d);
	syscall(SYS_getppid);
	printf("%s\n", r == 0 ? "connected" : strerror(err));
	return r != 0;
}
