/* SPDX-License-Identifier: MIT */
/*
 * rawpoll_client.c - waits for a non-blocking connect with a raw ppoll
 * system call, which no preloaded library can see (as io_uring would).
 *
 *   rawpoll_client ADDR PORT WAIT_MS
 *
 * Prints "revents=0xN soerror=NAME elapsed_ms" and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct timespec t0, t1, tmo;

	if (argc != 4)
		return 2;
	in.sin_port = htons((uint16_t)atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &in.sin_addr);
	int ms = atoi(argv[3]);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (connect(fd, (void *)&in, sizeof(in)) < 0 && errno != EINPROGRESS) {
		printf("connect %s\n", strerrorname_np(errno));
		return 1;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	tmo.tv_sec = ms / 1000;
	tmo.tv_nsec = (ms % 1000) * 1000000L;
	syscall(SYS_ppoll, &p, 1, &tmo, NULL, 8);
	int err = 0;
	socklen_t len = sizeof(err);

	syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_ERROR, &err, &len);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("revents=0x%x soerror=%s %ld\n", p.revents,
	    err ? strerrorname_np(err) : "0",
	    (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	return 0;
}
