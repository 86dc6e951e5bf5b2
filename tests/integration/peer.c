/* SPDX-License-Identifier: MIT */
/*
 * peer.c - a misbehaving server for the integration tests.
 *
 *   peer MODE [-h HOST] [-p PORT] [-u UNIXPATH] [-d DELAY_MS] [-n COUNT]
 *        [-l LIFETIME_MS] [-b BYTES] [-q LISTEN_BACKLOG]
 *
 * Prints the bound port (or 0 for unix) on stdout once ready, then serves
 * until killed or until LIFETIME_MS (default 60 s) passes, so that a test
 * that forgets it cannot leave it running.  Modes:
 *   echo      echoes every byte back
 *   http      answers each request with "200 OK" and a body of BYTES bytes
 *   silent    accepts and never answers
 *   stall     answers the first request with half a response, then stalls
 *   sink      accepts and never reads (small receive buffer)
 *   late      refuses for DELAY_MS (bound, not listening), then serves http
 *   reset     resets the first COUNT connections at once, then serves http
 *   slow      answers http after DELAY_MS
 *   backlog   listens with a full accept queue and never accepts
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static int delay_ms, count, bytes = 5;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Reads one HTTP request head (up to the blank line); 0 at EOF. */
static int read_request(int c)
{
	char buf[8192];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			return 0;
		n += (size_t)r;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return 1;
	}
	return 1;
}

static void write_all(int c, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(c, p, n);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void http_answer(int c, int half)
{
	char head[256], chunk[65536];
	int hl = snprintf(head, sizeof(head),
	    "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n"
	    "Content-Type: text/plain\r\n\r\n", bytes);

	write_all(c, head, (size_t)hl);
	memset(chunk, 'x', sizeof(chunk));
	long left = half ? bytes / 2 : bytes;

	while (left > 0) {
		size_t n = left > (long)sizeof(chunk) ? sizeof(chunk) :
		    (size_t)left;

		write_all(c, chunk, n);
		left -= (long)n;
	}
}

static void *serve(void *arg)
{
	int c = (int)(intptr_t)arg;
	char buf[65536];

	if (strcmp(mode, "echo") == 0) {
		ssize_t r;

		while ((r = read(c, buf, sizeof(buf))) > 0)
			write_all(c, buf, (size_t)r);
	} else if (strcmp(mode, "silent") == 0 || strcmp(mode, "sink") == 0) {
		pause();
	} else if (strcmp(mode, "stall") == 0) {
		if (read_request(c))
			http_answer(c, 1);
		pause();
	} else {
		if (strcmp(mode, "slow") == 0)
			sleep_ms(delay_ms);
		if (read_request(c))
			http_answer(c, 0);
		shutdown(c, SHUT_WR);
		while (read(c, buf, sizeof(buf)) > 0)
			;
	}
	close(c);
	return NULL;
}

static void reset(int c)
{
	struct linger l = { 1, 0 };

	setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(c);
}

static int make_listener(const char *host, int port, const char *upath,
    int *bound_port)
{
	int s;

	if (upath) {
		struct sockaddr_un un = { .sun_family = AF_UNIX };

		snprintf(un.sun_path, sizeof(un.sun_path), "%s", upath);
		unlink(upath);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		if (s < 0 || bind(s, (void *)&un, sizeof(un)) < 0)
			die("bind unix");
		*bound_port = 0;
		return s;
	}
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int one = 1;
	socklen_t len = sizeof(in);

	inet_pton(AF_INET, host, &in.sin_addr);
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (strcmp(mode, "sink") == 0) {
		int small = 4096;

		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	if (bind(s, (void *)&in, sizeof(in)) < 0)
		die("bind");
	getsockname(s, (void *)&in, &len);
	*bound_port = ntohs(in.sin_port);
	return s;
}

/* Fills the accept queue of a backlog-0 listener with our own clients. */
static void fill_backlog(const char *host, int port)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, host, &in.sin_addr);
	for (int i = 0; i < 4; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		connect(c, (void *)&in, sizeof(in));
		sleep_ms(50);
	}
}

static void *lifetime(void *arg)
{
	sleep_ms((int)(intptr_t)arg);
	_exit(0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *upath = NULL;
	int port = 0, life = 60000, opt, bound, queue = 128;
	pthread_t t;

	signal(SIGPIPE, SIG_IGN);
	while ((opt = getopt(argc, argv, "h:p:u:d:n:l:b:q:")) != -1) {
		switch (opt) {
		case 'h': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'u': upath = optarg; break;
		case 'd': delay_ms = atoi(optarg); break;
		case 'n': count = atoi(optarg); break;
		case 'l': life = atoi(optarg); break;
		case 'b': bytes = atoi(optarg); break;
		case 'q': queue = atoi(optarg); break;
		default: return 2;
		}
	}
	if (optind >= argc)
		return 2;
	mode = argv[optind];
	pthread_create(&t, NULL, lifetime, (void *)(intptr_t)life);
	int s = make_listener(host, port, upath, &bound);
	bool late = strcmp(mode, "late") == 0;

	/*
	 * Ready means listening, except for "late", which must be bound
	 * (refusing) when it says so; otherwise a client started at once
	 * may be refused.
	 */
	if (!late && listen(s, strcmp(mode, "backlog") == 0 ? 0 : queue) < 0)
		die("listen");
	printf("%d\n", bound);
	fflush(stdout);
	if (late) {
		sleep_ms(delay_ms);
		if (listen(s, queue) < 0)
			die("listen");
	}
	if (strcmp(mode, "backlog") == 0) {
		fill_backlog(host, bound);
		pause();
	}
	for (int n = 0;; n++) {
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		if (strcmp(mode, "reset") == 0 && n < count) {
			reset(c);
			continue;
		}
		pthread_create(&t, NULL, serve, (void *)(intptr_t)c);
		pthread_detach(t);
	}
}
