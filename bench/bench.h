/* SPDX-License-Identifier: MIT */
/*
 * bench.h - shared helpers for the benchmark programs (header-only).
 *
 * Each benchmark prints one line "NAME VALUE UNIT" on standard output;
 * scripts/bench.sh runs it with and without the library and compares.
 * Nothing here asserts a timing.
 */
#ifndef RS_BENCH_H
#define RS_BENCH_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline long long b_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void b_die(const char *what)
{
	perror(what);
	exit(1);
}

/* A listening TCP socket on 127.0.0.1, any port; *addr gets its address. */
static inline int b_listen(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)addr, len) < 0 ||
	    listen(s, 4096) < 0 ||
	    getsockname(s, (struct sockaddr *)addr, &len) < 0)
		b_die("listen");
	return s;
}

/* A connected client socket (through the library when preloaded). */
static inline int b_connect(const struct sockaddr_in *addr)
{
	int c = socket(AF_INET, SOCK_STREAM, 0);

	if (c < 0 || connect(c, (const struct sockaddr *)addr,
		sizeof(*addr)) < 0)
		b_die("connect");
	return c;
}

static inline void b_nodelay(int s)
{
	int one = 1;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * Forks a peer that accepts one connection on l (with TCP_NODELAY) and
 * runs serve(s, arg) on it; the parent gets a connected client socket
 * (through the library when preloaded) and *pid the peer's.
 */
static inline int b_pair(void (*serve)(int s, long arg), long arg, pid_t *pid)
{
	struct sockaddr_in addr;
	int l = b_listen(&addr);

	*pid = fork();
	if (*pid == 0) {
		int s = accept(l, NULL, NULL);

		b_nodelay(s);
		serve(s, arg);
		_exit(0);
	}
	close(l);
	int c = b_connect(&addr);

	b_nodelay(c);
	return c;
}

/* qsort's comparison of doubles, ascending. */
static inline int b_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts v[0..n) and returns its quantile p (nearest rank). */
static inline double b_quantile(double *v, long n, double p)
{
	qsort(v, (size_t)n, sizeof(v[0]), b_cmp_double);
	return v[(long)(p * (double)(n - 1) + 0.5)];
}

#endif /* RS_BENCH_H */
