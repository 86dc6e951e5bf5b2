/* SPDX-License-Identifier: MIT */
/*
 * http_rr.c - request latency over fresh connections, for `make bench`.
 *
 *   http_rr HOST PORT COUNT
 *
 * COUNT times: connect, send a small HTTP/1.0 request, read the answer to
 * end of file, close.  Prints "p50_us p90_us p99_us mean_us" on one line,
 * to 0.1 us: the library adds a few microseconds, so whole-microsecond
 * rounding would make the ratios jump.
 * Used to compare a direct connection, the same under libresolute.so, and
 * the same through an HAProxy sidecar configured with the same timeouts
 * and retries.
 *
 *   http_rr mixed HOST PORT SIDECAR_HOST SIDECAR_PORT COUNT
 *
 * The three in one process, interleaved request by request (the order
 * rotating each round): direct with raw system calls, which no interposer
 * sees; direct through libc's calls, the library's when preloaded; and
 * through the sidecar with raw system calls (each round in an order drawn
 * at random, the same seed every run).  Prints one line per kind,
 * "direct|library|sidecar p50 p90 p99 mean".  Each kind sees the same
 * process, the same machine load and the same peer state, so the
 * differences of the medians are the library's and the sidecar's costs;
 * run bare, "library" is "direct" again and shows the method's error.
 * Then "paired library|sidecar MEDIAN Q1 Q3": the median (and quartiles)
 * of each round's own difference from that round's direct request, in
 * µs.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static const char req[] = "GET / HTTP/1.0\r\nHost: bench\r\n\r\n";

/* One request; returns its latency in nanoseconds, or -1. */
static long long one(const struct sockaddr_in *in)
{
	char buf[4096];
	long long t0 = now_ns();
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	ssize_t r;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const void *)in, sizeof(*in)) < 0 ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return -1;
	}
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return r < 0 ? -1 : now_ns() - t0;
}

/* The same with raw system calls: no interposer sees them. */
static long long one_raw(const struct sockaddr_in *in)
{
	char buf[4096];
	long long t0 = now_ns();
	long fd = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0), r;
	int one = 1;

	syscall(SYS_setsockopt, fd, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof(one));
	if (syscall(SYS_connect, fd, in, sizeof(*in)) < 0 ||
	    syscall(SYS_write, fd, req, sizeof(req) - 1) !=
	    (long)sizeof(req) - 1) {
		syscall(SYS_close, fd);
		return -1;
	}
	while ((r = syscall(SYS_read, fd, buf, sizeof(buf))) > 0)
		;
	syscall(SYS_close, fd);
	return r < 0 ? -1 : now_ns() - t0;
}

/* "p50 p90 p99 mean" of lat[0..n), in µs; sorts lat. */
static void print_row(const char *name, long long *lat, int n)
{
	long long sum = 0;

	for (int i = 0; i < n; i++)
		sum += lat[i];
	qsort(lat, (size_t)n, sizeof(*lat), cmp);
	printf("%s%s%.1f %.1f %.1f %.1f\n", name, *name ? " " : "",
	    lat[n / 2] / 1e3, lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3,
	    (double)sum / n / 1e3);
}

static int addr_of(struct sockaddr_in *in, const char *host, const char *port)
{
	memset(in, 0, sizeof(*in));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, host, &in->sin_addr) == 1 ? 0 : -1;
}

static int mixed(char **argv)
{
	static const char *const names[3] = { "direct", "library", "sidecar" };
	struct sockaddr_in to[3];
	int n = atoi(argv[6]);
	long long *lat[3];

	if (n < 1 || addr_of(&to[0], argv[2], argv[3]) < 0 ||
	    addr_of(&to[2], argv[4], argv[5]) < 0)
		return 2;
	to[1] = to[0];
	for (int k = 0; k < 3; k++)
		lat[k] = calloc((size_t)n, sizeof(long long));
	for (int i = 0; i < n; i++) {
		/* A new order each round, drawn from all six: whatever one
		   kind leaves behind (the sidecar's own closing work on a
		   shared CPU) falls on the others alike. */
		static const char perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 },
			{ 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
		int p = rand() % 6;

		for (int j = 0; j < 3; j++) {
			int k = perms[p][j];

			lat[k][i] = k == 1 ? one(&to[k]) : one_raw(&to[k]);
			if (lat[k][i] < 0) {
				fprintf(stderr, "http_rr: %s request %d "
				    "failed\n", names[k], i);
				return 1;
			}
		}
	}
	/* Each round's own differences, before print_row() sorts: the
	   median of them is what the kind adds, with each request compared
	   to its neighbour in time rather than to the other distribution. */
	long long *d = calloc((size_t)n, sizeof(long long));

	for (int k = 1; k < 3; k++) {
		for (int i = 0; i < n; i++)
			d[i] = lat[k][i] - lat[0][i];
		qsort(d, (size_t)n, sizeof(*d), cmp);
		printf("paired %s %+.2f %+.2f %+.2f\n", names[k],
		    d[n / 2] / 1e3, d[n / 4] / 1e3, d[3 * n / 4] / 1e3);
	}
	free(d);
	for (int k = 0; k < 3; k++) {
		print_row(names[k], lat[k], n);
		free(lat[k]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "mixed"))
		return mixed(argv);
	if (argc != 4) {
		fprintf(stderr, "usage: http_rr HOST PORT COUNT\n"
		    "       http_rr mixed HOST PORT SIDECAR_HOST SIDECAR_PORT "
		    "COUNT\n");
		return 2;
	}
	struct sockaddr_in in;
	int n = atoi(argv[3]);
	long long *lat = calloc((size_t)n, sizeof(*lat));

	if (n < 1 || addr_of(&in, argv[1], argv[2]) < 0)
		return 2;
	for (int i = 0; i < n; i++) {
		lat[i] = one(&in);
		if (lat[i] < 0) {
			fprintf(stderr, "http_rr: request %d failed\n", i);
			return 1;
		}
	}
	print_row("", lat, n);
	free(lat);
	return 0;
}
