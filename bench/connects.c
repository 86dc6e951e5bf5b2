/*
 * connects.c - connect and close, many times, to a local listener.
 *
 *   connects [COUNT]      (default 10000)
 *
 * A thread accepts and closes; the main thread opens a socket, connects
 * (through the library's connect engine when preloaded) and closes it.
 * Prints µs per connect+close.
 */
#include <pthread.h>

#include "bench.h"

static int lsock;

static void *acceptor(void *arg)
{
	(void)arg;
	for (;;) {
		int s = accept(lsock, NULL, NULL);

		if (s < 0)
			return NULL;
		close(s);
	}
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 10000;
	struct sockaddr_in addr;
	pthread_t th;

	lsock = b_listen(&addr);
	pthread_create(&th, NULL, acceptor, NULL);
	long long t0 = b_now_ns();

	for (long i = 0; i < count; i++)
		close(b_connect(&addr));
	long long t = b_now_ns() - t0;

	printf("connects %.2f us/connect\n", (double)t / count / 1000);
	return 0;
}
