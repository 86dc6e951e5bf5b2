/* SPDX-License-Identifier: MIT */
/*
 * epoll_client.c - epoll programs run under the library by test_epoll.
 *
 *   epoll_client both lt|et|oneshot
 *       A non-blocking connect to a listener of this process, which
 *       accepts it; the client socket and the accepted peer are registered
 *       in one epoll set with EPOLLIN|EPOLLOUT (plus EPOLLET or
 *       EPOLLONESHOT); prints what the first epoll_wait reports:
 *       "first n=N client=EVENTS peer=EVENTS".
 *   epoll_client silent N MS
 *       N blocking connects to a silent peer (a forked child that accepts
 *       them all and never answers; no thread per connection), each made
 *       non-blocking and registered with EPOLLIN in one epoll set; waits
 *       until every one has been reported readable (or 60 s more than the
 *       connects took), reads each once and closes it.  Prints
 *       "silent n=N reported=R early=E etimedout=T min_ms=A max_ms=B",
 *       times counted from each connect's call; early ones were
 *       reported less than MS (the read_timeout) after it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_DATA 0xc11e47ULL
#define PEER_DATA 0x9ee7ULL

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void add(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl");
}

static int both(const char *mode)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, len) < 0 ||
	    listen(l, 8) < 0 || getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (connect(c, (struct sockaddr *)&a, len) < 0 && errno != EINPROGRESS)
		die("connect");
	int p = accept(l, NULL, NULL);

	if (p < 0)
		die("accept");
	uint32_t ev = EPOLLIN | EPOLLOUT;

	if (!strcmp(mode, "et"))
		ev |= EPOLLET;
	else if (!strcmp(mode, "oneshot"))
		ev |= EPOLLONESHOT;
	int ep = epoll_create1(0);

	add(ep, c, ev, CLIENT_DATA);
	add(ep, p, ev, PEER_DATA);
	struct epoll_event out[8];
	int n = epoll_wait(ep, out, 8, 2000);
	unsigned ce = 0, pe = 0;

	for (int i = 0; i < n; i++) {
		if (out[i].data.u64 == CLIENT_DATA)
			ce |= out[i].events;
		else if (out[i].data.u64 == PEER_DATA)
			pe |= out[i].events;
		else
			printf("stray data %#llx\n",
			    (unsigned long long)out[i].data.u64);
	}
	printf("first n=%d client=%s%s peer=%s%s\n", n,
	    ce & EPOLLOUT ? "OUT" : "-", ce & EPOLLERR ? "|ERR" : "",
	    pe & EPOLLOUT ? "OUT" : "-", pe & EPOLLERR ? "|ERR" : "");
	return 0;
}

/* Raises the descriptor limit to what n connections need, if it may. */
static void raise_nofile(long n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit");
	if (rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = (rlim_t)n + 64;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct conn {
	int fd;
	long long at;		/* when its connect was called */
};

/* Reads a socket reported readable; returns whether it timed out. */
static int take(struct conn *c)
{
	char b;
	ssize_t r = read(c->fd, &b, 1);
	int timed_out = r < 0 && errno == ETIMEDOUT;

	close(c->fd);
	c->fd = -1;
	return timed_out;
}

/* A listener on 127.0.0.1; *a gets its address. */
static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)a, len) < 0 ||
	    listen(l, 4096) < 0 || getsockname(l, (struct sockaddr *)a, &len))
		die("listen");
	return l;
}

/* Forks the silent peer: it accepts n connections and keeps them. */
static pid_t silent_peer(int l, long n)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	for (long i = 0; i < n; i++)
		if (accept(l, NULL, NULL) < 0)
			_exit(1);
	pause();
	_exit(0);
}

static int silent(long n, long long tmo_ms)
{
	struct sockaddr_in a;
	struct conn *cs = calloc((size_t)n, sizeof(*cs));

	raise_nofile(n);
	int l = listener(&a);
	pid_t peer = silent_peer(l, n);
	int ep = epoll_create1(0);

	close(l);
	for (long i = 0; i < n; i++) {
		/* Taken before the call: the connection is established (its
		   last activity) inside it, and a preemption after it returns
		   must not make a timeout look early. */
		cs[i].at = now_ms();
		cs[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		if (cs[i].fd < 0 || connect(cs[i].fd, (struct sockaddr *)&a,
			sizeof(a)) < 0)
			die("connect");
		fcntl(cs[i].fd, F_SETFL, O_NONBLOCK);
		add(ep, cs[i].fd, EPOLLIN, (uint64_t)i);
	}
	long reported = 0, early = 0, tmo = 0;
	long long lo = -1, hi = -1, end = now_ms() + 60000;
	struct epoll_event out[512];

	while (reported < n && now_ms() < end) {
		int k = epoll_wait(ep, out, 512, 1000);

		for (int j = 0; j < k; j++) {
			struct conn *c = &cs[out[j].data.u64];
			long long d = now_ms() - c->at;

			if (c->fd < 0)
				continue;
			lo = lo < 0 || d < lo ? d : lo;
			hi = d > hi ? d : hi;
			early += d < tmo_ms;
			tmo += take(c);
			reported++;
		}
	}
	printf("silent n=%ld reported=%ld early=%ld etimedout=%ld "
	    "min_ms=%lld max_ms=%lld\n", n, reported, early, tmo, lo, hi);
	kill(peer, SIGKILL);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "both"))
		return both(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "silent"))
		return silent(atol(argv[2]), atoll(argv[3]));
	fprintf(stderr, "usage: epoll_client both lt|et|oneshot | "
	    "silent N MS\n");
	return 2;
}
