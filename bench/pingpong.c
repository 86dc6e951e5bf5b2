/*
 * pingpong.c - 1-byte round trips over loopback TCP.
 *
 *   pingpong [poll] [ROUNDS]      (default 200000)
 *
 * The connecting side (managed under the library, with the bench policy's
 * read and write timeouts) sends one byte and waits, in a blocking read,
 * for the echo from a forked child.  With `poll` the socket is
 * non-blocking and each round waits in poll() for POLLIN before the read,
 * as libpq does.  Prints the mean round trip in ns.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>

#include "bench.h"

static void echo(int s, long unused)
{
	char b;

	(void)unused;
	while (read(s, &b, 1) == 1)
		if (write(s, &b, 1) != 1)
			break;
}

/* One round of the poll mode: send, poll for the echo, read it. */
static int poll_round(int c, char *b)
{
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (write(c, b, 1) != 1 || poll(&p, 1, -1) != 1)
		return -1;
	return read(c, b, 1) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int use_poll = argc > 1 && strcmp(argv[1], "poll") == 0;
	long rounds = argc > 1 + use_poll ? atol(argv[1 + use_poll]) : 200000;
	pid_t pid;
	int c = b_pair(echo, 0, &pid);
	char b = 'x';
	long long t0;

	if (use_poll && fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK) < 0)
		b_die("fcntl");
	t0 = b_now_ns();
	for (long i = 0; i < rounds; i++)
		if (use_poll ? poll_round(c, &b) < 0 :
		    write(c, &b, 1) != 1 || read(c, &b, 1) != 1)
			b_die("pingpong");
	long long t = b_now_ns() - t0;

	close(c);
	waitpid(pid, NULL, 0);
	printf("pingpong%s %.1f ns/round-trip\n", use_poll ? " poll" : "",
	    (double)t / rounds);
	return 0;
}
