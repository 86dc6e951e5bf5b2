/* SPDX-License-Identifier: MIT */
/*
 * http_reconnect_client.c - HTTP retries that reconnect, for
 * test_http_reconnect.sh (http_reconnect_server.py is the other side).
 *
 *   http_reconnect_client again PORT
 *       Three GETs over one connection; the 2nd is retried by the library
 *       on a new connection, the 3rd gets no answer.  Prints, per request,
 *       "N RESULT MS SO_RCVTIMEO_US": the 3rd must time out (ETIMEDOUT at
 *       read_timeout), and the program's SO_RCVTIMEO read back is 0
 *       throughout (the library's own value left nothing behind).
 *   http_reconnect_client stuck PORT1 PORT2
 *       Thread A's GET to PORT1 gets a 503 to retry on a new connection
 *       whose connect waits; thread B closes A's descriptor meanwhile,
 *       connects to PORT2 (getting the same number) and sends its own
 *       GET, which PORT2 answers 503 then 200.  Prints "a RESULT" and
 *       "b RESULT": A fails with EBADF, B gets its 200 (its own retries
 *       still work: A's state did not end up on B's connection).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char req[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
static int a_fd, port2;

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int connect_to(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		exit(2);
	}
	return s;
}

/* One GET and its answer's status line (or the error) into out. */
static void get(int fd, char *out, size_t cap)
{
	char b[256];
	ssize_t r;

	if (write(fd, req, sizeof(req) - 1) < 0)
		perror("write");
	r = read(fd, b, sizeof(b) - 1);
	if (r <= 0) {
		snprintf(out, cap, "%s", r == 0 ? "EOF" : strerror(errno));
		return;
	}
	b[r] = '\0';
	b[strcspn(b, "\r")] = '\0';
	snprintf(out, cap, "%s", b);
}

static int again(int port)
{
	int fd = connect_to(port);

	for (int i = 1; i <= 3; i++) {
		struct timeval tv;
		socklen_t l = sizeof(tv);
		char res[128];
		long t0 = now_ms();

		get(fd, res, sizeof(res));
		getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &l);
		printf("%d %s|%ld|%ld\n", i, res, now_ms() - t0,
		    (long)tv.tv_sec * 1000000 + tv.tv_usec);
	}
	return 0;
}

static void *closer(void *arg)
{
	char res[128];

	(void)arg;
	usleep(400000);
	close(a_fd);
	int b = connect_to(port2);

	printf("reused %s\n", b == a_fd ? "yes" : "no");
	usleep(2500000);
	get(b, res, sizeof(res));
	printf("b %s\n", res);
	return NULL;
}

static int stuck(int port1)
{
	pthread_t t;
	char res[128];

	a_fd = connect_to(port1);
	pthread_create(&t, NULL, closer, NULL);
	get(a_fd, res, sizeof(res));
	printf("a %s\n", res);
	fflush(stdout);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "again"))
		return again(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "stuck")) {
		port2 = atoi(argv[3]);
		return stuck(atoi(argv[2]));
	}
	fprintf(stderr, "usage: http_reconnect_client again PORT | "
	    "stuck PORT1 PORT2\n");
	return 2;
}
