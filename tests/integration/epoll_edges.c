/* SPDX-License-Identifier: MIT */
/*
 * epoll_edges.c - the edges a non-blocking connect's socket reports to
 * epoll, wait after wait, printed so that test_epoll can compare a run
 * under the library with a bare one.
 *
 *   epoll_edges et|lt|oneshot|etin
 *
 * CPython's test_epoll.test_control_and_wait, then more: a non-blocking
 * connect to a listener of this process (EINPROGRESS), which accepts it;
 * the accepted peer and then the client are registered in one epoll set
 * with EPOLLIN|EPOLLOUT and EPOLLET, nothing, or EPOLLONESHOT (etin: the
 * client with EPOLLIN|EPOLLRDHUP|EPOLLET only, and the peer writes a byte
 * before the first wait).  Each wait prints one line, "wN n=K client=EV
 * peer=EV":
 *   w1 (2 s) and w2 (100 ms): an edge is reported once (ET, one-shot), a
 *   level every time (LT);
 *   w3: the peer writes a byte, the client is readable;
 *   w4: the client read the byte and re-armed with EPOLL_CTL_MOD;
 *   w5 (100 ms); w6: after EPOLL_CTL_DEL and ADD; w7 (100 ms).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define CLIENT_DATA 0xc11e47ULL
#define PEER_DATA 0x9ee7ULL

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void ctl(int ep, int op, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	if (epoll_ctl(ep, op, fd, &ev) < 0)
		die("epoll_ctl");
}

/* Writes the names of the events in ev to buf. */
static const char *names(char *buf, size_t size, uint32_t ev)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} all[] = {
		{ EPOLLIN, "IN" }, { EPOLLOUT, "OUT" }, { EPOLLRDHUP, "RDHUP" },
		{ EPOLLPRI, "PRI" }, { EPOLLERR, "ERR" }, { EPOLLHUP, "HUP" },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (ev & all[i].bit)
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
			    n ? "|" : "", all[i].name);
	if (!n)
		snprintf(buf, size, "-");
	return buf;
}

/* One wait of timeout_ms, printed as "wN n=K client=EV peer=EV". */
static void wait_print(int ep, int nth, int timeout_ms)
{
	struct epoll_event out[8];
	uint32_t ce = 0, pe = 0;
	int n = epoll_wait(ep, out, 8, timeout_ms);
	char a[64], b[64];

	for (int i = 0; i < n; i++) {
		if (out[i].data.u64 == CLIENT_DATA)
			ce |= out[i].events;
		else if (out[i].data.u64 == PEER_DATA)
			pe |= out[i].events;
		else
			printf("stray data %#llx\n",
			    (unsigned long long)out[i].data.u64);
	}
	printf("w%d n=%d client=%s peer=%s\n", nth, n,
	    names(a, sizeof(a), ce), names(b, sizeof(b), pe));
}

/* Waits (up to 2 s) until fd is readable, without touching epoll. */
static void readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 2000) != 1)
		die("poll");
}

static int pair(int *client, int *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, len) < 0 ||
	    listen(l, 8) < 0 || getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	*client = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (connect(*client, (struct sockaddr *)&a, len) == 0 ||
	    errno != EINPROGRESS)
		die("connect did not say EINPROGRESS");
	if ((*peer = accept(l, NULL, NULL)) < 0)
		die("accept");
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	int c, p;
	char x;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 2)
		die("usage: epoll_edges et|lt|oneshot|etin");
	const char *mode = argv[1];
	uint32_t pev = EPOLLIN | EPOLLOUT, cev;

	if (!strcmp(mode, "et") || !strcmp(mode, "etin"))
		pev |= EPOLLET;
	else if (!strcmp(mode, "oneshot"))
		pev |= EPOLLONESHOT;
	cev = strcmp(mode, "etin") ? pev : EPOLLIN | EPOLLRDHUP | EPOLLET;
	pair(&c, &p);
	if (!strcmp(mode, "etin") && write(p, "y", 1) != 1)
		die("write");
	int ep = epoll_create1(0);

	ctl(ep, EPOLL_CTL_ADD, p, pev, PEER_DATA);
	ctl(ep, EPOLL_CTL_ADD, c, cev, CLIENT_DATA);
	wait_print(ep, 1, 2000);
	wait_print(ep, 2, 100);
	if (!strcmp(mode, "etin") && read(c, &x, 1) != 1)
		die("read");
	if (write(p, "x", 1) != 1)
		die("write");
	readable(c);
	wait_print(ep, 3, 100);
	if (read(c, &x, 1) != 1)
		die("read");
	ctl(ep, EPOLL_CTL_MOD, c, cev, CLIENT_DATA);
	wait_print(ep, 4, 100);
	wait_print(ep, 5, 100);
	ctl(ep, EPOLL_CTL_DEL, c, 0, 0);
	ctl(ep, EPOLL_CTL_ADD, c, cev, CLIENT_DATA);
	wait_print(ep, 6, 100);
	wait_print(ep, 7, 100);
	return 0;
}
