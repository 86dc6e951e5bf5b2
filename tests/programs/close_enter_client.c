/* SPDX-License-Identifier: MIT */
/*
 * close_enter_client.c - a read that enters the library's HTTP engine
 * while another thread closes its descriptor, many times; for
 * test_close_race.sh (run under an `http:` rule, and under ASan in
 * `make asan`).
 *
 *   close_enter_client ROUNDS
 *
 * Each round: a connection to a listener of this process carries a GET,
 * so that the engine follows it; a thread reads it without waiting, over
 * and over, while the main thread closes it after 0-50 us.  The engine's
 * state of that connection was freed by the close while the reading
 * thread was about to take it (a heap use after free under ASan).  Prints
 * "done ROUNDS" when every round ended.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile int fd, started;

static void *reader(void *arg)
{
	char b[64];

	(void)arg;
	started = 1;
	/* Until the close is seen: EBADF (or an end of file). */
	for (int i = 0; i < 2000000; i++) {
		ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno == EBADF))
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, len) < 0 ||
	    listen(l, 64) < 0 || getsockname(l, (struct sockaddr *)&sa,
	    &len) < 0) {
		perror("listen");
		return 2;
	}
	srand(1);
	for (int r = 0; r < rounds; r++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		pthread_t t;

		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("connect");
			return 2;
		}
		int s = accept(l, NULL, NULL);

		if (write(c, req, sizeof(req) - 1) < 0)
			perror("write");
		fd = c;
		started = 0;
		pthread_create(&t, NULL, reader, NULL);
		while (!started)
			;
		struct timespec d = { 0, (rand() % 50) * 1000 };

		nanosleep(&d, NULL);
		close(c);
		pthread_join(t, NULL);
		close(s);
	}
	printf("done %d\n", rounds);
	return 0;
}
