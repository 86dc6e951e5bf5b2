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

static void echo(int s)
{
	char b;

	while (read(s, &b, 1) == 1)
		if (write(s, &b, 1) != 1)
			break;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	struct sockaddr_in addr;
	int l = b_listen(&addr);
	pid_t pid = fork();

	if (pid == 0) {
		int s = accept(l, NULL, NULL);

		b_nodelay(s);
		echo(s);
		_exit(0);
	}
	close(l);
	int c = b_connect(&addr);
	char b = 'x';

	b_nodelay(c);
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
