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
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* One request; returns its latency in nanoseconds, or -1. */
static long long one(const struct sockaddr_in *in)
{
	static const char req[] = "GET / HTTP/1.0\r\nHost: bench\r\n\r\n";
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

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: http_rr HOST PORT COUNT\n");
		return 2;
	}
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)atoi(argv[2])) };
	int n = atoi(argv[3]);
	long long *lat = calloc((size_t)n, sizeof(*lat)), sum = 0;

	inet_pton(AF_INET, argv[1], &in.sin_addr);
	for (int i = 0; i < n; i++) {
		lat[i] = one(&in);
		if (lat[i] < 0) {
			fprintf(stderr, "http_rr: request %d failed\n", i);
			return 1;
		}
		sum += lat[i];
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp);
	printf("%.1f %.1f %.1f %.1f\n", lat[n / 2] / 1e3,
	    lat[n * 9 / 10] / 1e3, lat[n * 99 / 100] / 1e3,
	    (double)sum / n / 1e3);
	free(lat);
	return 0;
}
