/* SPDX-License-Identifier: MIT */
/*
 * close_race_client.c - one thread blocked in read() while another closes
 * the socket and opens a new connection, which gets the same descriptor
 * number; for test_close_race.sh.
 *
 *   close_race_client SILENT_PORT HTTP_PORT [late|connect]
 *
 * Thread A connects to SILENT_PORT (a server that never answers), sends a
 * request and reads (with "late", 20 ms after the request: the library
 * times such a read itself, with poll, rather than leave it to the
 * kernel's timer).  Thread B, 300 ms later, closes A's descriptor,
 * connects to HTTP_PORT (the number is reused), sends a request, waits
 * 2 s and reads the answer.  Without the library A's read blocks on the
 * closed connection until the process ends; it must never return the
 * bytes meant for B's connection.  Prints "a N|ERRNO-NAME" and
 * "b N|ERRNO-NAME" and "reused yes|no".
 *
 * With "connect", A is still connecting when B closes its descriptor: to
 * a listener of this process whose accept queue is full, so that its SYN
 * is dropped and the connect waits.  A must not report B's connection as
 * its own ("a connect 0"), nor touch it: B still reads its answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int a_fd, http_port;

static int connect_to(int port)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM, 0);
	const char *req = "GET / HTTP/1.0\r\n\r\n";

	in.sin_port = htons((uint16_t)port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&in, sizeof(in)) < 0) {
		perror("connect");
		exit(2);
	}
	if (write(s, req, strlen(req)) < 0)
		perror("write");
	return s;
}

static void report(const char *who, ssize_t n, int e)
{
	if (n < 0)
		printf("%s %s\n", who, strerror(e));
	else
		printf("%s %zd\n", who, n);
	fflush(stdout);
}

static void *closer(void *arg)
{
	char buf[512];

	(void)arg;
	usleep(300000);
	close(a_fd);
	int b = connect_to(http_port);

	printf("reused %s\n", b == a_fd ? "yes" : "no");
	sleep(2);
	ssize_t n = read(b, buf, sizeof(buf));

	report("b", n, errno);
	close(b);
	return NULL;
}

/* A listener on 127.0.0.1 whose accept queue is full: a connect hangs. */
static int full_listener(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&in, len) < 0 ||
	    listen(l, 0) < 0 || getsockname(l, (struct sockaddr *)&in,
	    &len) < 0) {
		perror("listen");
		exit(2);
	}
	/* One connection fills a queue of backlog 0. */
	connect_to(ntohs(in.sin_port));
	return ntohs(in.sin_port);
}

static int connecting(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	pthread_t t;
	int port = full_listener();

	in.sin_port = htons((uint16_t)port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a_fd = socket(AF_INET, SOCK_STREAM, 0);
	pthread_create(&t, NULL, closer, NULL);
	int r = connect(a_fd, (struct sockaddr *)&in, sizeof(in));

	report("a connect", r, errno);
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char buf[512];

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: close_race_client SILENT HTTP "
		    "[late|connect]\n");
		return 2;
	}
	http_port = atoi(argv[2]);
	if (argc == 4 && !strcmp(argv[3], "connect"))
		return connecting();
	a_fd = connect_to(atoi(argv[1]));
	pthread_create(&t, NULL, closer, NULL);
	if (argc == 4)
		usleep(20000);
	ssize_t n = read(a_fd, buf, sizeof(buf));

	report("a", n, errno);
	pthread_join(t, NULL);
	return 0;
}
