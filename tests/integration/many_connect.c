/* SPDX-License-Identifier: MIT */
/*
 * many_connect.c - many non-blocking connects in one epoll loop, run under
 * the library by test_wait_many.
 *
 *   many_connect PORT N DROPPED [lt|et|poll]
 *
 * Opens N non-blocking sockets: DROPPED of them connect to 127.0.0.2 (SYNs
 * dropped in the test namespace), the rest to 127.0.0.1:PORT.  Every other
 * socket is registered with epoll before connect(), the rest after.  One
 * epoll_wait loop (level-triggered, or edge-triggered with "et") runs
 * until every socket is reported, or 20 s pass, and reads SO_ERROR for
 * each.  With "poll", one poll() over all of them does instead.  Prints:
 *   ok COUNT max_ms=MS
 *   ERRNAME COUNT min_ms=MS max_ms=MS     (one line per error)
 *   waits COUNT                           (epoll_wait calls)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXERR 134

struct tally {
	int count;
	long long min_ms, max_ms;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void add(struct tally *t, long long ms)
{
	if (!t->count || ms < t->min_ms)
		t->min_ms = ms;
	if (!t->count || ms > t->max_ms)
		t->max_ms = ms;
	t->count++;
}

static void reg(int ep, int fd, uint32_t flags)
{
	struct epoll_event e = { .events = EPOLLOUT | flags,
		.data.u64 = 0xabc00000000ULL | (unsigned)fd };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0) {
		perror("epoll_ctl");
		exit(2);
	}
}

/* Opens and connects socket i; returns its fd. */
static int open_one(int ep, int i, int port, int dropped, uint32_t flags)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0) {
		perror("socket");
		exit(2);
	}
	inet_pton(AF_INET, i < dropped ? "127.0.0.2" : "127.0.0.1",
	    &sin.sin_addr);
	if (i % 2)
		reg(ep, fd, flags);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
	    errno != EINPROGRESS)
		fprintf(stderr, "connect %d: %s\n", i, strerror(errno));
	if (!(i % 2))
		reg(ep, fd, flags);
	return fd;
}

/* Reads SO_ERROR of a reported socket into the tallies and closes it. */
static void done(int fd, struct tally *t, long long start)
{
	int err = 0;
	socklen_t len = sizeof(err);

	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	add(&t[err < MAXERR ? err : 0], now_ms() - start);
	close(fd);
}

/* The poll() loop: finished sockets leave the set (fd -1). */
static long long poll_loop(struct pollfd *p, int n, struct tally *t,
    long long start)
{
	long long waits = 0;
	int left = n;

	while (left > 0 && now_ms() - start < 20000) {
		int k = poll(p, (nfds_t)n, 1000);

		waits++;
		for (int j = 0; j < n && k > 0; j++) {
			if (p[j].fd < 0 || !p[j].revents)
				continue;
			done(p[j].fd, t, start);
			p[j].fd = -1;
			left--;
		}
	}
	printf("left %d\n", left);
	return waits;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int port = atoi(argv[1]), n = atoi(argv[2]), dropped = atoi(argv[3]);
	uint32_t flags = argc > 4 && !strcmp(argv[4], "et") ? EPOLLET : 0;
	int use_poll = argc > 4 && !strcmp(argv[4], "poll");
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	struct rlimit rl = { (rlim_t)n + 64, (rlim_t)n + 64 };
	static struct tally t[MAXERR];
	struct epoll_event ev[256];
	long long start, waits = 0;
	int ep = epoll_create1(0), left = n;

	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		perror("setrlimit");
	start = now_ms();
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){ open_one(ep, i, port, dropped, flags),
			POLLOUT, 0 };
	if (use_poll)
		waits = poll_loop(p, n, t, start);
	while (!use_poll && left > 0 && now_ms() - start < 20000) {
		int k = epoll_wait(ep, ev, 256, 1000);

		waits++;
		for (int j = 0; j < k; j++) {
			int fd = (int)(ev[j].data.u64 & 0xffffffff);

			if ((ev[j].data.u64 >> 32) != 0xabc) {
				fprintf(stderr, "bad data %llx\n",
				    (unsigned long long)ev[j].data.u64);
				return 2;
			}
			epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
			done(fd, t, start);
			left--;
		}
	}
	printf("ok %d max_ms=%lld\n", t[0].count, t[0].max_ms);
	for (int e = 1; e < MAXERR; e++)
		if (t[e].count)
			printf("%s %d min_ms=%lld max_ms=%lld\n",
			    strerrorname_np(e), t[e].count, t[e].min_ms,
			    t[e].max_ms);
	if (!use_poll)
		printf("left %d\n", left);
	printf("waits %lld\n", waits);
	return 0;
}
