/* SPDX-License-Identifier: MIT */
/*
 * epoll_idle.c - an event loop with many idle connections and one busy one.
 *
 *   epoll_idle [ROUNDS] [IDLE]      (default 30000, 10000)
 *
 * The connecting side opens IDLE + 1 connections to a forked child (each
 * managed under the library, with the bench policy's read timeout), makes
 * them non-blocking and registers all of them in one epoll set with
 * EPOLLIN; then ROUNDS times it writes one byte on the busy connection,
 * waits in epoll_wait and reads the echo.  The idle ones never see a byte,
 * so a wait that looks at every registered socket shows here.  Prints the
 * mean round trip in ns.  Raises RLIMIT_NOFILE as far as it may.
 */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bench.h"

static void raise_nofile(long need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		b_die("getrlimit");
	if (rl.rlim_cur >= (rlim_t)need)
		return;
	rl.rlim_cur = (rlim_t)need;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		b_die("setrlimit (RLIMIT_NOFILE)");
}

/* The child: accepts every connection, echoes on the first one. */
static void serve(int l, long idle)
{
	int busy = accept(l, NULL, NULL);
	char b;

	for (long i = 0; i < idle; i++)
		if (accept(l, NULL, NULL) < 0)
			b_die("accept");
	b_nodelay(busy);
	while (read(busy, &b, 1) == 1)
		if (write(busy, &b, 1) != 1)
			break;
	_exit(0);
}

static void add(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		b_die("epoll_ctl");
}

static void round_trip(int ep, int c)
{
	struct epoll_event ev[64];
	char b = 'x';

	if (write(c, &b, 1) != 1)
		b_die("write");
	for (;;) {
		int n = epoll_wait(ep, ev, 64, 5000);

		if (n <= 0)
			b_die("epoll_wait");
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == c && read(c, &b, 1) == 1)
				return;
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 30000;
	long idle = argc > 2 ? atol(argv[2]) : 10000;
	struct sockaddr_in addr;

	raise_nofile(idle + 64);
	int l = b_listen(&addr);
	pid_t pid = fork();

	if (pid == 0)
		serve(l, idle);
	close(l);
	int ep = epoll_create1(0), c = b_connect(&addr);

	b_nodelay(c);
	add(ep, c);
	for (long i = 0; i < idle; i++)
		add(ep, b_connect(&addr));
	round_trip(ep, c);
	long long t0 = b_now_ns();

	for (long i = 0; i < rounds; i++)
		round_trip(ep, c);
	long long t = b_now_ns() - t0;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("epoll_idle %.1f ns/round-trip\n", (double)t / rounds);
	return 0;
}
