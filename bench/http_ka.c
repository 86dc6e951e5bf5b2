/* SPDX-License-Identifier: MIT */
/*
 * http_ka.c - requests over one keep-alive connection, for `make bench`.
 *
 *   http_ka COUNT
 *
 * A server thread on 127.0.0.1 answers every request with a 200 and a
 * 64-byte body (Content-Length); the client sends COUNT small GETs over
 * one connection, one at a time, reading each response whole.  Prints
 * "http_ka NS_PER_REQUEST" on one line.  Run with and without the library
 * and an `http:` rule to see what tracking and judging cost per request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char req[] = "GET /bench HTTP/1.1\r\nHost: bench\r\n\r\n";
static const char res[] = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n"
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Reads exactly n bytes; returns 0 or -1. */
static int read_full(int fd, char *buf, size_t n)
{
	while (n > 0) {
		ssize_t k = read(fd, buf, n);

		if (k <= 0)
			return -1;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *serve(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL), one = 1;
	char buf[sizeof(req) - 1];

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (read_full(fd, buf, sizeof(buf)) == 0)
		if (write(fd, res, sizeof(res) - 1) != (ssize_t)sizeof(res) - 1)
			break;
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	long count = argc > 1 ? atol(argv[1]) : 50000;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;
	char buf[sizeof(res) - 1];
	pthread_t t;
	long long start;

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&in, sizeof(in)) != 0 ||
	    listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&in, &len) != 0)
		return 1;
	pthread_create(&t, NULL, serve, &lfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&in, sizeof(in)) != 0)
		return 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	start = now_ns();
	for (long i = 0; i < count; i++) {
		if (write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1 ||
		    read_full(fd, buf, sizeof(buf)) != 0)
			return 1;
	}
	printf("http_ka %lld\n", (now_ns() - start) / count);
	close(fd);
	pthread_join(t, NULL);
	return 0;
}
