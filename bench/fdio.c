/* SPDX-License-Identifier: MIT */
/*
 * fdio.c - reads and writes on descriptors the library does not manage.
 *
 *   fdio pipe|zero|mmsg [COUNT]      (default 1000000)
 *
 * pipe: COUNT 1-byte writes and reads through a pipe.  zero: COUNT 1-byte
 * reads from /dev/zero and writes to /dev/null.  One socket is connected
 * first (when a listener can be made), so that the library's descriptor
 * table is in use as in a real program.  Prints ns per read+write pair.
 * mmsg: COUNT round trips of one byte over that connection, by sendmmsg
 * and recvmmsg at both ends (the connecting end is the library's, the
 * accepted end not): four calls each.
 */
#include <fcntl.h>

#include "bench.h"

/* One message of one byte at b, for sendmmsg or recvmmsg. */
static void one_byte(struct mmsghdr *m, struct iovec *v, char *b)
{
	*v = (struct iovec){ b, 1 };
	memset(m, 0, sizeof(*m));
	m->msg_hdr.msg_iov = v;
	m->msg_hdr.msg_iovlen = 1;
}

/* count round trips c -> s -> c; returns the ns they took. */
static long long mmsg(int c, int s, long count)
{
	struct mmsghdr m;
	struct iovec v;
	char b = 'x';
	long long t0 = b_now_ns();

	one_byte(&m, &v, &b);
	for (long i = 0; i < count; i++)
		if (sendmmsg(c, &m, 1, 0) != 1 ||
		    recvmmsg(s, &m, 1, 0, NULL) != 1 ||
		    sendmmsg(s, &m, 1, 0) != 1 ||
		    recvmmsg(c, &m, 1, 0, NULL) != 1)
			b_die("mmsg");
	return b_now_ns() - t0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "pipe";
	long count = argc > 2 ? atol(argv[2]) : 1000000;
	struct sockaddr_in addr;
	int l = b_listen(&addr), c = b_connect(&addr);
	int in, out, p[2];
	char b = 'x';

	if (!strcmp(what, "mmsg")) {
		int s = accept(l, NULL, NULL);

		if (s < 0)
			b_die("accept");
		printf("fdio-mmsg %.1f ns/round trip\n",
		    (double)mmsg(c, s, count) / count);
		return 0;
	}
	if (!strcmp(what, "zero")) {
		in = open("/dev/zero", O_RDONLY);
		out = open("/dev/null", O_WRONLY);
	} else {
		if (pipe(p) < 0)
			b_die("pipe");
		in = p[0];
		out = p[1];
	}
	if (in < 0 || out < 0)
		b_die("open");
	long long t0 = b_now_ns();

	for (long i = 0; i < count; i++)
		if (write(out, &b, 1) != 1 || read(in, &b, 1) != 1)
			b_die("fdio");
	long long t = b_now_ns() - t0;

	close(c);
	close(l);
	printf("fdio-%s %.1f ns/read+write\n", what, (double)t / count);
	return 0;
}
