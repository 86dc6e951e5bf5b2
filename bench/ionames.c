/* SPDX-License-Identifier: MIT */
/*
 * ionames.c - 1-byte round trips over loopback TCP through one pair of the
 * names a program reads and writes a socket with.
 *
 *   ionames NAME [poll] [ROUNDS]      (default 200000)
 *
 * NAME: read (write and read), recv (send, recv), recvfrom (sendto and
 * recvfrom with no address), readv (writev, readv of one element), recvmsg
 * (sendmsg, recvmsg with no name and no control data).  The connecting
 * side (managed under the library) sends one byte and reads the echo
 * from a forked child (which echoes through the same names): in a blocking read, or with `poll` non-blocking,
 * after poll() for POLLIN.  Prints the mean round trip in ns; for
 * scripts/bench-ir.sh's callgrind rows, which count instructions.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "bench.h"

/* One byte at b out (out true) or in through the name how. */
static ssize_t move(int c, char how, char *b, int out)
{
	struct iovec v = { b, 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

	switch (how) {
	case 'f':
		return out ? sendto(c, b, 1, 0, NULL, 0) :
		    recvfrom(c, b, 1, 0, NULL, NULL);
	case 'v':
		return out ? writev(c, &v, 1) : readv(c, &v, 1);
	case 'm':
		return out ? sendmsg(c, &m, 0) : recvmsg(c, &m, 0);
	case 'c':
		return out ? send(c, b, 1, 0) : recv(c, b, 1, 0);
	default:
		return out ? write(c, b, 1) : read(c, b, 1);
	}
}

/* The peer echoes each byte back through the same names. */
static void echo(int s, long how)
{
	char b;

	while (move(s, (char)how, &b, 0) == 1)
		if (move(s, (char)how, &b, 1) != 1)
			break;
}

static char name_code(const char *name)
{
	if (!strcmp(name, "recvfrom"))
		return 'f';
	if (!strcmp(name, "readv"))
		return 'v';
	if (!strcmp(name, "recvmsg"))
		return 'm';
	if (!strcmp(name, "recv"))
		return 'c';
	if (!strcmp(name, "read"))
		return 'r';
	b_die(name);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		b_die("usage: ionames NAME [poll] [ROUNDS]");
	char how = name_code(argv[1]);
	int use_poll = argc > 2 && strcmp(argv[2], "poll") == 0;
	long rounds = argc > 2 + use_poll ? atol(argv[2 + use_poll]) : 200000;
	pid_t pid;
	int c = b_pair(echo, how, &pid);
	struct pollfd p = { .fd = c, .events = POLLIN };
	char b = 'x';

	if (use_poll && fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK) < 0)
		b_die("fcntl");
	long long t0 = b_now_ns();

	for (long i = 0; i < rounds; i++)
		if (move(c, how, &b, 1) != 1 ||
		    (use_poll && poll(&p, 1, -1) != 1) ||
		    move(c, how, &b, 0) != 1)
			b_die("ionames");
	long long t = b_now_ns() - t0;

	close(c);
	waitpid(pid, NULL, 0);
	printf("ionames %s%s %.1f ns/round-trip\n", argv[1],
	    use_poll ? " poll" : "", (double)t / rounds);
	return 0;
}
