/* SPDX-License-Identifier: MIT */
/*
 * wait_mix.c - one wait API, a connecting socket and another descriptor,
 * run under the library by test_wait.
 *
 *   wait_mix API ADDR PORT CASE [ARG]
 *
 * API is poll, ppoll, select, pselect, epoll, epollet, epolloneshot,
 * epollpwait or epollpwait2.  The
 * socket is registered with epoll BEFORE connect() (as libuv and others
 * do), with a data word unlike its fd, so that translation is checked.
 * Cases:
 *   other MS     a pipe becomes readable after MS ms (0: already); one wait
 *                of 5 s for the pipe (readable) and the socket (writable)
 *   connect MS   waits up to MS ms at a time (at most 50 waits) until the
 *                socket is reported, then reads SO_ERROR
 *   bigfd        as connect 5000, with the socket moved to fd 1500
 *   eintr MS     a signal (no SA_RESTART) arrives after MS ms during a 5 s
 *                wait
 * Prints "wait N ERRNAME sock=REVENTS other=REVENTS ms=ELAPSED" per wait
 * and "soerror ERRNAME ms=ELAPSED" for connect and bigfd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SOCK_DATA 0x1234567890ULL
#define OTHER_DATA 0x42ULL

static const char *api;
static int ep = -1;
static long long start;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static const char *ename(int e)
{
	return e ? strerrorname_np(e) : "ok";
}

/* Registers fd with the epoll instance (created on first use). */
static void ep_add(int fd, uint32_t ev, uint64_t data)
{
	struct epoll_event e = { .events = ev, .data.u64 = data };

	if (!strcmp(api, "epollet"))
		e.events |= EPOLLET;
	if (!strcmp(api, "epolloneshot"))
		e.events |= EPOLLONESHOT;
	if (ep < 0)
		ep = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0) {
		perror("epoll_ctl");
		exit(2);
	}
}

static int wait_epoll(short *rs, short *ro, int ms)
{
	struct epoll_event out[4];
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int n = !strcmp(api, "epollpwait") ? epoll_pwait(ep, out, 4, ms, NULL) :
	    !strcmp(api, "epollpwait2") ? epoll_pwait2(ep, out, 4, &ts, NULL) :
	    epoll_wait(ep, out, 4, ms);

	for (int i = 0; i < n; i++) {
		if (out[i].data.u64 == SOCK_DATA)
			*rs |= (short)out[i].events;
		else if (out[i].data.u64 == OTHER_DATA)
			*ro |= (short)out[i].events;
		else
			printf("unknown data %llx\n",
			    (unsigned long long)out[i].data.u64);
	}
	return n;
}

/* select/pselect on sets big enough for any descriptor. */
static int wait_select(int s, int o, short *rs, short *ro, int ms)
{
	int n = (s > o ? s : o) + 1;
	size_t bytes = (size_t)(n + 63) / 64 * 8 + sizeof(fd_set);
	unsigned long *r = calloc(1, bytes), *w = calloc(1, bytes);
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int k;

	w[s / 64] |= 1UL << (s % 64);
	if (o >= 0)
		r[o / 64] |= 1UL << (o % 64);
	if (!strcmp(api, "select"))
		k = select(n, (fd_set *)r, (fd_set *)w, NULL, &tv);
	else
		k = pselect(n, (fd_set *)r, (fd_set *)w, NULL, &ts, NULL);
	/* On failure the sets are left as they were. */
	if (k > 0 && (w[s / 64] & (1UL << (s % 64))))
		*rs = POLLOUT;
	if (k > 0 && o >= 0 && (r[o / 64] & (1UL << (o % 64))))
		*ro = POLLIN;
	free(r);
	free(w);
	return k;
}

/* One wait of the chosen API; prints and returns its result. */
static int wait_once(int s, int o, int ms)
{
	short rs = 0, ro = 0;
	int n, err;

	if (!strncmp(api, "epoll", 5)) {
		n = wait_epoll(&rs, &ro, ms);
	} else if (!strcmp(api, "select") || !strcmp(api, "pselect")) {
		n = wait_select(s, o, &rs, &ro, ms);
	} else {
		struct pollfd p[2] = { { s, POLLOUT, 0 }, { o, POLLIN, 0 } };
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nfds_t np = o >= 0 ? 2 : 1;

		n = !strcmp(api, "ppoll") ? ppoll(p, np, &ts, NULL) :
		    poll(p, np, ms);
		rs = p[0].revents;
		ro = o >= 0 ? p[1].revents : 0;
	}
	err = n < 0 ? errno : 0;
	printf("wait %d %s sock=%#x other=%#x ms=%lld\n", n, ename(err),
	    (unsigned)(unsigned short)rs, (unsigned)(unsigned short)ro,
	    now_ms() - start);
	fflush(stdout);
	return n;
}

static int pipe_w = -1, delay_ms;

static void *writer(void *arg)
{
	(void)arg;
	usleep((useconds_t)delay_ms * 1000);
	if (write(pipe_w, "x", 1) != 1)
		abort();
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Arms a one-shot SIGALRM after ms, without SA_RESTART. */
static void arm_signal(int ms)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void soerror(int s)
{
	int err = 0;
	socklen_t len = sizeof(err);

	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
	printf("soerror %s ms=%lld\n", ename(err), now_ms() - start);
}

static int big_fd(int s)
{
	struct rlimit rl = { 4096, 4096 };

	setrlimit(RLIMIT_NOFILE, &rl);
	if (dup2(s, 1500) < 0) {
		perror("dup2");
		exit(2);
	}
	close(s);
	return 1500;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: wait_mix API ADDR PORT CASE [ARG]\n");
		return 2;
	}
	api = argv[1];
	const char *cs = argv[4];
	int arg = argc > 5 ? atoi(argv[5]) : 0, o = -1, p[2];
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)atoi(argv[3])) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	inet_pton(AF_INET, argv[2], &sin.sin_addr);
	if (!strcmp(cs, "bigfd"))
		s = big_fd(s);
	if (!strcmp(cs, "other")) {
		if (pipe(p) < 0)
			return 2;
		o = p[0];
		pipe_w = p[1];
		delay_ms = arg;
	}
	if (!strncmp(api, "epoll", 5)) {
		ep_add(s, EPOLLOUT, SOCK_DATA);
		if (o >= 0)
			ep_add(o, EPOLLIN, OTHER_DATA);
	}
	start = now_ms();
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
	    errno != EINPROGRESS)
		printf("connect %s\n", ename(errno));
	if (!strcmp(cs, "other")) {
		pthread_t t;

		pthread_create(&t, NULL, writer, NULL);
		wait_once(s, o, 5000);
		pthread_join(t, NULL);
		return 0;
	}
	if (!strcmp(cs, "eintr")) {
		arm_signal(arg);
		wait_once(s, -1, 5000);
		return 0;
	}
	int ms = !strcmp(cs, "bigfd") ? 5000 : arg;

	for (int i = 0; i < 50 && wait_once(s, -1, ms) == 0; i++)
		;
	soerror(s);
	if (!strcmp(api, "epolloneshot")) {
		/* Disarmed until the program re-arms it with MOD. */
		struct epoll_event e = { .events = EPOLLOUT | EPOLLONESHOT,
			.data.u64 = SOCK_DATA };

		wait_once(s, -1, 300);
		epoll_ctl(ep, EPOLL_CTL_MOD, s, &e);
		wait_once(s, -1, 300);
	}
	return 0;
}
