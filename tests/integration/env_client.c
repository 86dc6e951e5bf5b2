/* SPDX-License-Identifier: MIT */
/*
 * env_client.c - a program that clears its environment before it
 * connects, as nginx's workers and other daemons do; run by
 * test_start_environment.c under the library.
 *
 *   env_client PORT    clearenv(), then one blocking connect to
 *                      127.0.0.1:PORT; prints "connect=RESULT" and
 *                      "elapsed_ms=N"
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (argc < 2)
		return 2;
	a.sin_port = htons((uint16_t)atoi(argv[1]));
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	clearenv();
	long long t0 = now_ms();
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int r = connect(s, (struct sockaddr *)&a, sizeof(a));

	printf("connect=%s\nelapsed_ms=%lld\n", r == 0 ? "0" :
	    strerrorname_np(errno), now_ms() - t0);
	return 0;
}
