/* SPDX-License-Identifier: MIT */
/*
 * breaker_hammer.c - a client for test_breaker_hammer: THREADS threads
 * connect to 127.0.0.1:PORT over and over for MS milliseconds (socket,
 * connect, close), then it prints "connects N ok N failed N".
 *
 *   breaker_hammer PORT MS [THREADS]
 *
 * Run preloaded, many at once, against a listener that comes and goes:
 * every connect asks the shared breaker, many at the same instant.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port;
static long long end_ms;
static long long connects, oks;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void *run(void *arg)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	(void)arg;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* Bounded by time and by count. */
	for (int i = 0; i < 100000 && now_ms() < end_ms; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			break;
		int r = connect(fd, (struct sockaddr *)&a, sizeof(a));

		/* Closed with a reset: no TIME_WAIT, so that thousands of
		   connects never run out of local ports (EADDRNOTAVAIL). */
		struct linger l = { 1, 0 };

		__atomic_add_fetch(&connects, 1, __ATOMIC_RELAXED);
		if (r == 0)
			__atomic_add_fetch(&oks, 1, __ATOMIC_RELAXED);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	int n = argc > 3 ? atoi(argv[3]) : 8;

	if (argc < 3 || n < 1 || n > 64) {
		fprintf(stderr, "usage: breaker_hammer PORT MS [THREADS]\n");
		return 2;
	}
	port = atoi(argv[1]);
	end_ms = now_ms() + atoi(argv[2]);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, run, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("connects %lld ok %lld failed %lld\n", connects, oks,
	    connects - oks);
	return 0;
}
