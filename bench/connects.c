/*
 * connects.c - connect and close, many times, to a local listener.
 *
 *   connects [COUNT]          (default 10000)
 *   connects COUNT pairs      (run under the library: see below)
 *
 * A thread accepts and closes; the main thread opens a socket, connects
 * (through the library's connect engine when preloaded) and closes it.
 * Prints µs per connect+close.
 *
 * "pairs" measures what the library adds inside one process: blocks of
 * connects through libc's socket/connect/close (the library's, when
 * preloaded) alternate with blocks of the same made with raw system calls,
 * which no interposer sees, in the order ABBA.  Both sides share the
 * process, the listener, the kernel's state and the machine's load of the
 * moment, so the difference of each pair is the library's cost with most
 * of the noise that separate runs carry cancelled.  Prints the median
 * difference per connect+close and its interquartile range; bare, it
 * shows the method's own error (about 0).
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "bench.h"

#define BLOCK 100
#define MAX_PAIRS 1000

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

/* One connect + close with raw system calls: invisible to an interposer. */
static void raw_connect_close(const struct sockaddr_in *addr)
{
	long c = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);

	if (c < 0 || syscall(SYS_connect, c, addr, sizeof(*addr)) < 0)
		b_die("raw connect");
	syscall(SYS_close, c);
}

/*
 * Nanoseconds per connect + close of one block, raw or through libc.  The
 * block's connections wait in the listener's queue and are accepted and
 * closed after it, untimed: no other thread runs while a block is timed.
 */
static double block_ns(const struct sockaddr_in *addr, int raw)
{
	long long t0 = b_now_ns();

	for (int i = 0; i < BLOCK; i++) {
		if (raw)
			raw_connect_close(addr);
		else
			close(b_connect(addr));
	}
	double ns = (double)(b_now_ns() - t0) / BLOCK;

	for (int i = 0; i < BLOCK; i++)
		close(accept(lsock, NULL, NULL));
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pairs(const struct sockaddr_in *addr, long count)
{
	static double d[MAX_PAIRS];
	long n = count / (2 * BLOCK);

	if (n < 4)
		n = 4;
	if (n > MAX_PAIRS)
		n = MAX_PAIRS;
	block_ns(addr, 0);	/* warm both paths up */
	block_ns(addr, 1);
	for (long i = 0; i < n; i++) {
		double a, b;

		if (i % 2) {
			b = block_ns(addr, 1);
			a = block_ns(addr, 0);
		} else {
			a = block_ns(addr, 0);
			b = block_ns(addr, 1);
		}
		d[i] = a - b;
	}
	qsort(d, (size_t)n, sizeof(d[0]), cmp_double);
	printf("connects_added %.2f us/connect (IQR %.2f..%.2f, %ld pairs "
	    "of %d)\n", d[n / 2] / 1000, d[n / 4] / 1000, d[3 * n / 4] / 1000,
	    n, BLOCK);
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 10000;
	struct sockaddr_in addr;
	pthread_t th;

	lsock = b_listen(&addr);
	if (argc > 2 && !strcmp(argv[2], "pairs")) {
		pairs(&addr, count);
		return 0;
	}
	pthread_create(&th, NULL, acceptor, NULL);
	long long t0 = b_now_ns();

	for (long i = 0; i < count; i++)
		close(b_connect(&addr));
	long long t = b_now_ns() - t0;

	printf("connects %.2f us/connect\n", (double)t / count / 1000);
	return 0;
}
