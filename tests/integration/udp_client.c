/* SPDX-License-Identifier: MIT */
/*
 * udp_client.c - a datagram socket's connect, which the library must leave
 * alone.
 *
 *   udp_client PORT
 *
 * Connects a UDP socket to 127.0.0.1:PORT (nothing listens there), sends
 * one datagram and waits up to 1 s for the answer, which is the kernel's
 * ECONNREFUSED from the ICMP port-unreachable.  Prints rsclient-style lines:
 * "connect ok 0 MS", "send ok 1 MS", "recv ECONNREFUSED -1 MS".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long start;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void report(const char *step, long r)
{
	const char *name = r >= 0 ? "ok" : strerrorname_np(errno);

	printf("%s %s %ld %lld\n", step, name ? name : "E?", r,
	    now_ms() - start);
}

int main(int argc, char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	char buf[16];

	if (argc != 2)
		return 2;
	in.sin_port = htons((uint16_t)atoi(argv[1]));
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	start = now_ms();
	report("connect", connect(fd, (struct sockaddr *)&in, sizeof(in)));
	report("send", send(fd, "x", 1, 0));
	struct pollfd p = { .fd = fd, .events = POLLIN };

	report("poll", poll(&p, 1, 1000));
	report("recv", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
	close(fd);
	return 0;
}
