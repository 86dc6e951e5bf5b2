/* SPDX-License-Identifier: MIT */
/*
 * outcome_client.c - how a program learns the outcome of its connect, run
 * by test_connect_outcome.c bare and under the library.
 *
 *   outcome_client hole-again|hole-soerror|hole-read|hole-write|hole-block
 *                  HOST PORT
 *       a connect to a blackholed address: the program waits, then learns
 *       the outcome by connect() again, SO_ERROR, a read, a write, or from
 *       a blocking connect; then reads SO_ERROR once more
 *   outcome_client data-reset-read|data-reset-soerror|data-reset-again|
 *                  data-reset-nopoll|data-reset-ev-WAIT
 *       the server accepts, sends "HELLO" and resets before the program
 *       looks at its non-blocking connect; ev-WAIT prints every event the
 *       first wait reports (WAIT: poll, epoll or select, each alone for
 *       writing or, with -both, for reading too)
 *   outcome_client refused-ev-WAIT
 *       the same events for a connect refused (every attempt)
 *   outcome_client reset-nodata
 *       the server resets its first connection at once, then answers
 *   outcome_client late-poll|late-again|late-soerror|late-read|late-write|
 *                  late-epoll|late-select
 *       the program looks at a connect long finished only after
 *       connect_timeout has passed
 *   outcome_client refused-soerror
 *       SO_ERROR asked while the library retries a refused connect
 *
 * Every step prints "NAME=RESULT" (an errno name, a number or the bytes
 * read); the orchestrator compares the lines.  Every wait is bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The step's result as "ok", a number, or an errno name. */
static void say(const char *step, long r)
{
	if (r < 0)
		printf("%s=%s\n", step, strerrorname_np(errno));
	else
		printf("%s=%ld\n", step, r);
	fflush(stdout);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static struct sockaddr_in addr_of(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, host, &a.sin_addr);
	return a;
}

/* A socket bound to a free loopback port, listening when listening. */
static int bound(struct sockaddr_in *a, bool listening)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t len = sizeof(*a);

	*a = addr_of("127.0.0.1", 0);
	if (l < 0 || bind(l, (void *)a, sizeof(*a)) < 0 ||
	    (listening && listen(l, 8) < 0) ||
	    getsockname(l, (void *)a, &len) < 0)
		abort();
	return l;
}

/* A non-blocking socket whose connect to a has begun. */
static int start(const struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(s, (const void *)a, sizeof(*a));

	if (r == 0 || errno != EINPROGRESS)
		say("connect", r);
	return s;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Waits for POLLOUT (bounded); prints whether it came. */
static void wait_out(int s, int tmo_ms)
{
	struct pollfd p = { .fd = s, .events = POLLOUT };
	int n = poll(&p, 1, tmo_ms);

	say("pollout", n < 0 ? -1 : (p.revents & POLLOUT) != 0);
}

static void so_error(const char *step, int s)
{
	int err = -1;
	socklen_t len = sizeof(err);

	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		say(step, -1);
	else if (err == 0)
		say(step, 0);
	else
		printf("%s=%s\n", step, strerrorname_np(err));
	fflush(stdout);
}

/* A non-blocking read; prints the bytes, "EOF", or the errno name. */
static void read_nb(const char *step, int s)
{
	char buf[64];
	ssize_t n = recv(s, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	if (n > 0)
		printf("%s=%.*s\n", step, (int)n, buf);
	else if (n == 0)
		printf("%s=EOF\n", step);
	else
		say(step, -1);
	fflush(stdout);
}

static void again(const char *step, int s, const struct sockaddr_in *a)
{
	say(step, connect(s, (const void *)a, sizeof(*a)));
}

/* ---- a connect that times out ---- */

static int hole(const char *how, const char *host, int port)
{
	struct sockaddr_in a = addr_of(host, port);
	long long t0 = now_ms();
	int s;

	if (strcmp(how, "block") == 0) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		say("connect", connect(s, (void *)&a, sizeof(a)));
	} else {
		s = start(&a);
		wait_out(s, 10000);
		if (strcmp(how, "again") == 0)
			again("again", s, &a);
		else if (strcmp(how, "soerror") == 0)
			so_error("soerror1", s);
		else if (strcmp(how, "read") == 0)
			read_nb("read", s);
		else
			say("write", send(s, "x", 1, MSG_NOSIGNAL));
	}
	so_error("soerror", s);
	printf("elapsed_ms=%lld\n", now_ms() - t0);
	return 0;
}

/* ---- a server that sends, then resets ---- */

/* Closes c with a reset (SO_LINGER zero). */
static void reset_close(int c)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c);
}

/* Prints how many more connections reached the listener. */
static void more_accepts(int l)
{
	int n = 0, c;

	fcntl(l, F_SETFL, O_NONBLOCK);
	while (n < 10 && (c = accept(l, NULL, NULL)) >= 0) {
		close(c);
		n++;
	}
	say("more_accepts", n);
}

/* The poll event names of mask, '|'-separated ("0" when none). */
static void print_events(const char *step, unsigned mask)
{
	static const struct { unsigned bit; const char *name; } n[] = {
		{ POLLIN, "IN" }, { POLLOUT, "OUT" }, { POLLERR, "ERR" },
		{ POLLHUP, "HUP" }, { POLLRDHUP, "RDHUP" }, { POLLPRI, "PRI" },
	};
	bool any = false;

	printf("%s=", step);
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (mask & n[i].bit) {
			printf("%s%s", any ? "|" : "", n[i].name);
			any = true;
		}
	printf("%s\n", any ? "" : "0");
	fflush(stdout);
}

/*
 * The program's first look at a connect whose server sent data and reset,
 * by the means how names, printing every event the wait reported.  The
 * events asked for are POLLOUT alone (a program waiting for its connect)
 * or POLLIN|POLLOUT|POLLRDHUP (an event loop that asks for both).
 */
static void look_events(const char *how, int s)
{
	bool both = strstr(how, "-both") != NULL;
	unsigned want = both ? POLLIN | POLLOUT | POLLRDHUP : POLLOUT;

	if (strncmp(how, "poll", 4) == 0) {
		struct pollfd p = { .fd = s, .events = (short)want };

		say("n", poll(&p, 1, 2000));
		print_events("revents", (unsigned short)p.revents);
	} else if (strncmp(how, "epoll", 5) == 0) {
		int ep = epoll_create1(0);
		struct epoll_event ev = { .events = want }, got = { 0 };

		epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
		say("n", epoll_wait(ep, &got, 1, 2000));
		print_events("events", got.events);
		close(ep);
	} else {
		fd_set r, w, x;
		struct timeval tv = { 2, 0 };

		FD_ZERO(&r);
		FD_ZERO(&w);
		FD_ZERO(&x);
		if (both)
			FD_SET(s, &r);
		FD_SET(s, &w);
		FD_SET(s, &x);
		say("n", select(s + 1, &r, &w, &x, &tv));
		printf("sets=%s%s%s\n", FD_ISSET(s, &r) ? "r" : "-",
		    FD_ISSET(s, &w) ? "w" : "-", FD_ISSET(s, &x) ? "x" : "-");
		fflush(stdout);
	}
}

static int data_reset(const char *how)
{
	struct sockaddr_in a;
	int l = bound(&a, true);
	int s = start(&a);
	int c = accept(l, NULL, NULL);

	if (send(c, "HELLO", 5, 0) != 5)
		abort();
	reset_close(c);
	sleep_ms(100);		/* the data and the reset have arrived */
	if (strncmp(how, "ev-", 3) == 0)
		look_events(how + 3, s);
	else if (strcmp(how, "nopoll") != 0)
		wait_out(s, 2000);
	if (strcmp(how, "soerror") == 0)
		so_error("soerror", s);
	else if (strcmp(how, "again") == 0)
		again("again", s, &a);
	read_nb("read", s);
	read_nb("read2", s);
	more_accepts(l);
	return 0;
}

/* Posted by reset-nodata's server once it has reset the first connection. */
static sem_t reset_sent;

/* The server of reset-nodata: resets its first connection, greets the
   second. */
static void *reset_then_greet(void *arg)
{
	int l = (int)(intptr_t)arg;
	int c = accept(l, NULL, NULL);

	reset_close(c);
	sem_post(&reset_sent);
	c = accept(l, NULL, NULL);
	if (send(c, "HELLO", 5, 0) != 5)
		abort();
	sleep_ms(3000);
	return NULL;
}

static int reset_nodata(void)
{
	struct sockaddr_in a;
	int l = bound(&a, true);
	pthread_t t;

	sem_init(&reset_sent, 0, 0);
	pthread_create(&t, NULL, reset_then_greet, (void *)(intptr_t)l);
	int s = start(&a);
	struct pollfd p = { .fd = s, .events = POLLIN };
	struct timespec until;

	/*
	 * The reset has arrived once the server thread has sent it (loopback
	 * delivers it within the send).  A fixed 100 ms sleep raced a thread
	 * not run by then on a loaded machine: the wait then saw the
	 * connection established and the read got the reset, not HELLO.
	 * Bounded: 5 s.
	 */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	while (sem_timedwait(&reset_sent, &until) < 0 && errno == EINTR)
		;
	wait_out(s, 2000);
	so_error("soerror", s);
	poll(&p, 1, 2000);
	read_nb("read", s);
	return 0;
}

/* ---- a connect looked at late ---- */

static void look_epoll(int s)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLOUT }, got;

	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	int n = epoll_wait(ep, &got, 1, 1000);

	say("epollout", n <= 0 ? n : (got.events & EPOLLOUT) != 0);
	close(ep);
}

static void look_select(int s)
{
	fd_set w;
	struct timeval tv = { 1, 0 };

	FD_ZERO(&w);
	FD_SET(s, &w);
	int n = select(s + 1, NULL, &w, NULL, &tv);

	say("selectout", n <= 0 ? n : FD_ISSET(s, &w) != 0);
}

/* The program's first look at its connect, by the means how names. */
static void look(const char *how, int s, const struct sockaddr_in *a)
{
	if (strcmp(how, "poll") == 0) {
		wait_out(s, 1000);
	} else if (strcmp(how, "again") == 0) {
		again("again", s, a);
	} else if (strcmp(how, "soerror") == 0) {
		so_error("soerror", s);
		wait_out(s, 1000);
	} else if (strcmp(how, "read") == 0) {
		read_nb("read", s);
		wait_out(s, 1000);
	} else if (strcmp(how, "epoll") == 0) {
		look_epoll(s);
	} else if (strcmp(how, "select") == 0) {
		look_select(s);
	}
}

static int late(const char *how)
{
	struct sockaddr_in a;
	int l = bound(&a, true);
	int s = start(&a);
	struct pollfd p = { .fd = -1, .events = POLLIN };

	sleep_ms(500);		/* busy elsewhere, past connect_timeout */
	look(how, s, &a);
	say("write", send(s, "PING", 4, MSG_NOSIGNAL));
	int c = accept(l, NULL, NULL);

	p.fd = c;
	poll(&p, 1, 1000);
	read_nb("server_read", c);
	more_accepts(l);
	return 0;
}

/* ---- the events of a refused connect ---- */

static int refused_events(const char *how)
{
	struct sockaddr_in a;
	int l = bound(&a, false);
	int s = start(&a);

	look_events(how, s);
	so_error("soerror", s);
	close(l);
	return 0;
}

/* ---- SO_ERROR during retries ---- */

static int refused_soerror(void)
{
	struct sockaddr_in a;
	int l = bound(&a, false);
	long long t0 = now_ms();
	int s = start(&a);

	sleep_ms(20);		/* the first refusal has arrived */
	so_error("soerror1", s);
	wait_out(s, 5000);
	so_error("soerror", s);
	so_error("soerror2", s);
	printf("elapsed_ms=%lld\n", now_ms() - t0);
	close(l);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (strncmp(m, "hole-", 5) == 0 && argc > 3)
		return hole(m + 5, argv[2], atoi(argv[3]));
	if (strncmp(m, "data-reset-", 11) == 0)
		return data_reset(m + 11);
	if (strcmp(m, "reset-nodata") == 0)
		return reset_nodata();
	if (strncmp(m, "late-", 5) == 0)
		return late(m + 5);
	if (strncmp(m, "refused-ev-", 11) == 0)
		return refused_events(m + 11);
	if (strcmp(m, "refused-soerror") == 0)
		return refused_soerror();
	fprintf(stderr, "usage: outcome_client MODE [HOST PORT]\n");
	return 2;
}
