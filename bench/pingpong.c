/*
 * pingpong.c - 1-byte round trips over loopback TCP.
 *
 *   pingpong [ROUNDS]      (default 200000)
 *
 * The connecting side (managed under the library, with the bench policy's
 * read and write timeouts) sends one byte and waits, in a blocking read,
 * for the echo from a forked child.  Prints the mean round trip in ns.
 */
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

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	pid_t pid;
	int c = b_pair(echo, 0, &pid);
	char b = 'x';
	long long t0 = b_now_ns();

	for (long i = 0; i < rounds; i++)
		if (write(c, &b, 1) != 1 || read(c, &b, 1) != 1)
			b_die("pingpong");
	long long t = b_now_ns() - t0;

	close(c);
	waitpid(pid, NULL, 0);
	printf("pingpong %.1f ns/round-trip\n", (double)t / rounds);
	return 0;
}
