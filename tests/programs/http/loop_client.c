/* SPDX-License-Identifier: MIT */
/*
 * loop_client.c - an epoll event loop with two connections, for the HTTP
 * retry tests (test_http_wait.sh): one GET to the HTTP test server on a
 * non-blocking socket, and a ping-pong with an echo child on another that
 * must keep being served while the GET's response is retried.
 *
 *   loop_client PORT PATH lt|et|oneshot
 *
 * Every 20 ms a byte goes to the echo child; each round trip's time is
 * measured.  250 ms after the request, a non-blocking read of the HTTP
 * socket must fail with EAGAIN at once (the response is being retried, or
 * not there yet).  Each wakeup of the HTTP socket is read until EAGAIN
 * (edge-triggered style); a one-shot registration is re-armed with
 * EPOLL_CTL_MOD.  Prints
 *   status S body B pings N max_rtt_ms M max_gap_ms G eagain yes|no
 *   eagain_ms E
 * and exits 0 once a whole response came, 1 on any failure, 2 on misuse.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* A listener on 127.0.0.1 served by a child that echoes every byte. */
static int echo_peer(pid_t *child)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&a, &len) < 0)
		die("echo listener");
	if ((*child = fork()) == 0) {
		char b[64];
		ssize_t n;

		alarm(30);
		if ((c = accept(l, NULL, NULL)) < 0)
			_exit(1);
		while ((n = read(c, b, sizeof(b))) > 0)
			if (write(c, b, (size_t)n) != n)
				_exit(1);
		_exit(0);
	}
	close(l);
	if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("echo connect");
	fcntl(c, F_SETFL, O_NONBLOCK);
	return c;
}

/* A non-blocking connect to the HTTP server, waited for with poll. */
static int http_socket(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((unsigned short)port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0)
		die("socket");
	if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 &&
	    errno != EINPROGRESS)
		die("connect");
	return s;
}

struct loop {
	int ep, http, echo;
	uint32_t flags;		/* EPOLLET, EPOLLONESHOT or 0 */
	char resp[65536];
	size_t have;
	long long ping_at, last_ping, last_pong, max_gap, sent_at, max_rtt;
	long long eagain_ms;
	int pings;
	bool connected, sent, checked, eagain;
};

static void ctl(struct loop *l, int op, uint32_t ev)
{
	struct epoll_event e = { .events = ev | l->flags, .data.fd = l->http };

	if (epoll_ctl(l->ep, op, l->http, &e) < 0)
		die("epoll_ctl");
}

/* Whether the response in l->resp is whole (Content-Length framing). */
static bool whole(const struct loop *l)
{
	const char *end = memmem(l->resp, l->have, "\r\n\r\n", 4);
	const char *cl = memmem(l->resp, l->have, "Content-Length: ", 16);

	if (!end || !cl)
		return false;
	return l->have >= (size_t)(end + 4 - l->resp) + strtoul(cl + 16,
	    NULL, 10);
}

/* The HTTP socket woke: connect done, or data to read until EAGAIN. */
static int on_http(struct loop *l, const char *req)
{
	ssize_t n;

	if (!l->connected) {
		l->connected = true;
		if (send(l->http, req, strlen(req), 0) != (ssize_t)strlen(req))
			die("send");
		l->sent = true;
		l->sent_at = now_ms();
		ctl(l, EPOLL_CTL_MOD, EPOLLIN);
		return 0;
	}
	while ((n = read(l->http, l->resp + l->have,
	    sizeof(l->resp) - 1 - l->have)) > 0)
		l->have += (size_t)n;
	if (n < 0 && errno != EAGAIN)
		die("read");
	l->resp[l->have] = '\0';
	if (whole(l) || n == 0)
		return 1;
	if (l->flags & EPOLLONESHOT)
		ctl(l, EPOLL_CTL_MOD, EPOLLIN);
	return 0;
}

/*
 * The ping-pong: one byte every 20 ms, its round trip timed, and the
 * longest time between two answers (what a stalled loop shows).
 */
static void on_echo(struct loop *l, bool readable)
{
	char b[64];
	long long t = now_ms();

	if (readable && read(l->echo, b, sizeof(b)) > 0 && l->ping_at) {
		if (t - l->ping_at > l->max_rtt)
			l->max_rtt = t - l->ping_at;
		l->ping_at = 0;
		l->pings++;
		if (l->last_pong && t - l->last_pong > l->max_gap)
			l->max_gap = t - l->last_pong;
		l->last_pong = t;
	}
	if (!l->ping_at && t - l->last_ping >= 20 &&
	    write(l->echo, "p", 1) == 1)
		l->ping_at = l->last_ping = t;
}

/* 250 ms after the request: a non-blocking read must not block. */
static void check_eagain(struct loop *l)
{
	char b[16];
	long long t0 = now_ms();
	ssize_t n = read(l->http, b, sizeof(b));

	l->checked = true;
	l->eagain_ms = now_ms() - t0;
	l->eagain = n < 0 && errno == EAGAIN;
	if (n > 0) {
		/* Without the library: the 503 is there; keep it. */
		memcpy(l->resp, b, (size_t)n);
		l->have = (size_t)n;
	} else if (!l->eagain) {
		fprintf(stderr, "read during the wait: %zd (%s)\n", n,
		    n < 0 ? strerror(errno) : "end of file");
	}
}

static int run(struct loop *l, const char *req)
{
	struct epoll_event ev[8], e = { .events = EPOLLIN, .data.fd = l->echo };
	long long end = now_ms() + 15000;

	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->echo, &e) < 0)
		die("epoll_ctl echo");
	ctl(l, EPOLL_CTL_ADD, EPOLLOUT);
	while (now_ms() < end) {
		int n = epoll_wait(l->ep, ev, 8, 20);

		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == l->echo)
				on_echo(l, true);
			else if (on_http(l, req))
				return 0;
		}
		on_echo(l, false);
		if (l->sent && !l->checked && now_ms() - l->sent_at >= 250)
			check_eagain(l);
	}
	fprintf(stderr, "no response within 15 s\n");
	return 1;
}

int main(int argc, char **argv)
{
	static struct loop l;
	char req[512];
	pid_t child;

	if (argc != 4)
		return 2;
	l.flags = !strcmp(argv[3], "et") ? EPOLLET :
	    !strcmp(argv[3], "oneshot") ? EPOLLONESHOT : 0;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n",
	    argv[2]);
	l.echo = echo_peer(&child);
	l.http = http_socket(atoi(argv[1]));
	if ((l.ep = epoll_create1(0)) < 0)
		die("epoll_create1");
	int rc = run(&l, req);
	char status[4] = "?";
	const char *body = strstr(l.resp, "\r\n\r\n");

	if (l.have > 12)
		memcpy(status, l.resp + 9, 3);
	if (l.last_pong && now_ms() - l.last_pong > l.max_gap)
		l.max_gap = now_ms() - l.last_pong;
	printf("status %s body %s pings %d max_rtt_ms %lld max_gap_ms %lld "
	    "eagain %s eagain_ms %lld\n", status, body ? body + 4 : "-",
	    l.pings, l.max_rtt, l.max_gap, l.eagain ? "yes" : "no",
	    l.eagain_ms);
	close(l.echo);
	kill(child, SIGTERM);
	waitpid(child, NULL, 0);
	return rc;
}
