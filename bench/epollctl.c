/* SPDX-License-Identifier: MIT */
/*
 * epollctl.c - the epoll_ctl calls of a request on one connected socket,
 * with no wait between them: ADD for reading, MOD for writing, DEL, as an
 * event loop registers and drops interest around a request.
 *
 *   epollctl [ROUNDS]      (default 200000; three calls a round)
 *
 * The socket connects (through the library when preloaded) to a forked
 * peer that reads until the end.  Prints the mean cost of one call in ns.
 */
#include <sys/epoll.h>
#include <sys/wait.h>

#include "bench.h"

static void drain(int s, long unused)
{
	char b[64];

	(void)unused;
	while (read(s, b, sizeof(b)) > 0)
		;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	pid_t pid;
	int c = b_pair(drain, 0, &pid), ep = epoll_create1(0);
	struct epoll_event in = { .events = EPOLLIN, .data.fd = c };
	struct epoll_event out = { .events = EPOLLOUT, .data.fd = c };
	long long t0 = b_now_ns();

	if (ep < 0)
		b_die("epoll_create1");
	for (long i = 0; i < rounds; i++)
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &in) < 0 ||
		    epoll_ctl(ep, EPOLL_CTL_MOD, c, &out) < 0 ||
		    epoll_ctl(ep, EPOLL_CTL_DEL, c, NULL) < 0)
			b_die("epoll_ctl");
	long long t = b_now_ns() - t0;

	close(c);
	waitpid(pid, NULL, 0);
	printf("epollctl %.1f ns/call\n", (double)t / rounds / 3);
	return 0;
}
