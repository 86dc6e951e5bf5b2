/* SPDX-License-Identifier: MIT */
/*
 * connects.c - connect and close, many times, to a local listener.
 *
 *   connects [COUNT]          (default 10000)
 *   connects COUNT pairs      (run under the library: see below)
 *   connects COUNT floor      (bare: the kernel's price of the library's
 *                              system calls, see below)
 *   connects COUNT coldpairs  (as pairs, with cold caches: see below)
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
 *
 * "floor" shows what part of that is the kernel's price of the system
 * calls the library adds to a plain blocking connect, whatever user space
 * does around them: the same ABBA pairs, both sides raw, one side adding
 * exactly those calls -- setsockopt(SO_SNDTIMEO, 1 ms) before the connect
 * and setsockopt(SO_SNDTIMEO, 0) after it -- and then the same with an
 * fstat before them (the library's inode question, asked only where a
 * timeout can act on the socket: under a read or write timeout or a
 * deadline, not under the default policy).  The difference between
 * "pairs" and the floor of the calls its policy makes is the library's
 * user-space cost.
 *
 * "coldpairs" is "pairs" for a program that does other work between its
 * connects: before each connect of either kind, a read of every line of
 * a buffer larger than the CPU's own caches (8 MiB) leaves the library's
 * code and data only in the shared cache or memory; only the connects
 * themselves are timed.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "bench.h"

#define BLOCK 100
#define MAX_PAIRS 1000
#define SWEEP_BYTES (8u << 20)

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

/*
 * How a block makes its connects: raw system calls, the same plus the
 * calls the library adds today, or libc's calls (the library's when
 * preloaded).
 */
enum kind { RAW, RAW_SETSOCKOPT, RAW_FSTAT_SETSOCKOPT, LIBC };

static void raw_sndtimeo(long c, long usec)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = usec };

	if (syscall(SYS_setsockopt, c, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) < 0)
		b_die("raw setsockopt");
}

/* One connect + close with raw system calls: invisible to an interposer. */
static void raw_connect_close(const struct sockaddr_in *addr, enum kind k)
{
	long c = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	struct stat st;

	if (c >= 0 && k == RAW_FSTAT_SETSOCKOPT &&
	    syscall(SYS_fstat, c, &st) < 0)
		b_die("raw fstat");
	if (c >= 0 && k != RAW)
		raw_sndtimeo(c, 1000);
	if (c < 0 || syscall(SYS_connect, c, addr, sizeof(*addr)) < 0)
		b_die("raw connect");
	if (k != RAW)
		raw_sndtimeo(c, 0);
	syscall(SYS_close, c);
}

static bool cold;
static volatile unsigned char *sweep_buf;

/* Reads a line of every 64 bytes of a buffer larger than the CPU's own
   caches (L1, L2), so that the next connect finds neither the library's
   code nor its data there, as in a program that does other work between
   its connects. */
static void sweep(void)
{
	unsigned sum = 0;

	for (size_t o = 0; o < SWEEP_BYTES; o += 64)
		sum += sweep_buf[o];
	sweep_buf[0] = (unsigned char)sum;
}

static void one_connect(const struct sockaddr_in *addr, enum kind k)
{
	if (k == LIBC)
		close(b_connect(addr));
	else
		raw_connect_close(addr, k);
}

/*
 * Nanoseconds per connect + close of one block of kind k.  The block's
 * connections wait in the listener's queue and are accepted and closed
 * after it, untimed: no other thread runs while a block is timed.  With
 * cold caches, each connect is timed alone, after its sweep.
 */
static double block_ns(const struct sockaddr_in *addr, enum kind k)
{
	long long t0 = b_now_ns(), spent = 0;

	for (int i = 0; i < BLOCK; i++) {
		if (!cold) {
			one_connect(addr, k);
			continue;
		}
		sweep();
		long long c0 = b_now_ns();

		one_connect(addr, k);
		spent += b_now_ns() - c0;
	}
	double ns = (double)(cold ? spent : b_now_ns() - t0) / BLOCK;

	for (int i = 0; i < BLOCK; i++)
		close(accept(lsock, NULL, NULL));
	return ns;
}

/*
 * n pairs of blocks of kind a and of RAW, in the order ABBA; prints the
 * median difference a - RAW per connect + close and its IQR.
 */
static void pairs_of(const struct sockaddr_in *addr, long n, enum kind a,
    const char *name)
{
	static double d[MAX_PAIRS];

	block_ns(addr, a);	/* warm both paths up */
	block_ns(addr, RAW);
	for (long i = 0; i < n; i++) {
		double x, y;

		if (i % 2) {
			y = block_ns(addr, RAW);
			x = block_ns(addr, a);
		} else {
			x = block_ns(addr, a);
			y = block_ns(addr, RAW);
		}
		d[i] = x - y;
	}
	qsort(d, (size_t)n, sizeof(d[0]), b_cmp_double);
	printf("%s %+.2f us/connect (IQR %+.2f..%+.2f, %ld pairs of %d)\n",
	    name, d[n / 2] / 1000, d[n / 4] / 1000, d[3 * n / 4] / 1000, n,
	    BLOCK);
}

static long n_pairs(long count)
{
	long n = count / (2 * BLOCK);

	return n < 4 ? 4 : n > MAX_PAIRS ? MAX_PAIRS : n;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 10000;
	struct sockaddr_in addr;
	pthread_t th;

	lsock = b_listen(&addr);
	if (argc > 2 && !strcmp(argv[2], "coldpairs")) {
		sweep_buf = calloc(1, SWEEP_BYTES);
		if (!sweep_buf)
			b_die("calloc");
		cold = true;
		pairs_of(&addr, n_pairs(count), LIBC, "connects_added_cold");
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "pairs")) {
		pairs_of(&addr, n_pairs(count), LIBC, "connects_added");
		return 0;
	}
	if (argc > 2 && !strcmp(argv[2], "floor")) {
		pairs_of(&addr, n_pairs(count), RAW_SETSOCKOPT,
		    "connects_floor_setsockopt2");
		pairs_of(&addr, n_pairs(count), RAW_FSTAT_SETSOCKOPT,
		    "connects_floor_fstat_setsockopt2");
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
