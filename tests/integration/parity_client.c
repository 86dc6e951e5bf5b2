/* SPDX-License-Identifier: MIT */
/*
 * parity_client.c - programs that rely on the kernel's own semantics of
 * connect, read, errno, dup2, fork and vfork, and on log lines never
 * hurting them; run preloaded by test_kernel_parity.c and
 * test_log_safety.c.  Each prints a line the orchestrator checks.
 *
 *   parity_client again        a program that polls its non-blocking
 *                               connect by calling connect() again
 *   parity_client vfork        a vfork child's dup2 before any connect
 *   parity_client errno [MS]   errno after a read that had to wait (for
 *                               an answer after MS ms, 200 if not given)
 *   parity_client errno2 MS    likewise for the second read of a
 *                               connection, whose answer comes after MS
 *   parity_client errnow       errno after a blocking write that had to
 *                               wait for the peer to drain its buffer
 *   parity_client restart      a read interrupted by an SA_RESTART handler
 *   parity_client dup2ep PORT  a pending socket in epoll, dup2'd over
 *   parity_client forklock     fork while another thread edits epoll
 *   parity_client logfd FILE   a daemon that closes every descriptor
 *   parity_client refused      one refused connect (retries are logged)
 *   parity_client vforkclose   a vfork child closes a socket the parent
 *                               waits on in epoll, then execs
 *   parity_client firsttwo     two threads make their first refused
 *                               connects at once (the library starts)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in addr(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	return a;
}

/* A listener on a free port; its address in *a. */
static int listener(struct sockaddr_in *a)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t len = sizeof(*a);

	*a = addr(0);
	bind(l, (void *)a, sizeof(*a));
	listen(l, 4);
	getsockname(l, (void *)a, &len);
	return l;
}

/* A child that accepts one connection and writes "hi" after delay_us. */
static void answer_later(int l, useconds_t delay_us)
{
	if (fork() == 0) {
		int c = accept(l, NULL, NULL);

		usleep(delay_us);
		if (write(c, "hi", 2) != 2)
			_exit(1);
		sleep(2);
		_exit(0);
	}
}

static int again(void)
{
	struct sockaddr_in a;
	int l = listener(&a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	for (int i = 0; i < 30; i++) {
		int r = connect(s, (void *)&a, sizeof(a));

		if (r == 0 || (errno != EINPROGRESS && errno != EALREADY)) {
			printf("again: %s after %d calls\n",
			    r == 0 ? "connected" : strerror(errno), i + 1);
			return 0;
		}
		usleep(20000);
	}
	close(l);
	printf("again: still EALREADY after 30 calls\n");
	return 1;
}

static int vfork_dup2(void)
{
	struct sockaddr_in a = addr(1);
	struct timespec t0, t1;
	pid_t p = vfork();

	if (p == 0) {
		dup2(2, 1);
		_exit(0);
	}
	waitpid(p, NULL, 0);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = connect(s, (void *)&a, sizeof(a));

	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("vfork: connect=%d elapsed=%ldms\n", r,
	    (long)((t1.tv_sec - t0.tv_sec) * 1000 +
		(t1.tv_nsec - t0.tv_nsec) / 1000000));
	return 0;
}

/*
 * The parent's epoll wait on a silent connection must still end at
 * read_timeout after a vfork child closed the socket (its own copy) and
 * exec'd.
 */
static int vfork_close(void)
{
	struct sockaddr_in a;
	int l = listener(&a);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, got;
	struct timespec t0, t1;
	char b;

	if (connect(s, (void *)&a, sizeof(a)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t p = vfork();

	if (p == 0) {
		close(s);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(p, NULL, 0);
	int n = epoll_wait(ep, &got, 1, 5000);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	ssize_t r = read(s, &b, 1);

	printf("vforkclose: n=%d read=%s elapsed=%ldms\n", n,
	    r < 0 ? strerrorname_np(errno) : "data",
	    (long)((t1.tv_sec - t0.tv_sec) * 1000 +
		(t1.tv_nsec - t0.tv_nsec) / 1000000));
	close(l);
	return 0;
}

static int errno_kept(long delay_ms)
{
	struct sockaddr_in a;
	int l = listener(&a);
	char b[8];

	answer_later(l, (useconds_t)delay_ms * 1000);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	connect(s, (void *)&a, sizeof(a));
	errno = 0;
	ssize_t r = read(s, b, sizeof(b));

	printf("errno: read=%zd errno=%d\n", r, errno);
	return 0;
}

/*
 * errno after the second read of a connection (the first arms the
 * kernel's timer, the second is the steady state), whose answer comes
 * after delay_ms.
 */
static int errno_second(long delay_ms)
{
	struct sockaddr_in a;
	int l = listener(&a);
	char b[8];

	if (fork() == 0) {
		int c = accept(l, NULL, NULL);

		if (write(c, "a", 1) != 1)
			_exit(1);
		usleep((useconds_t)delay_ms * 1000);
		if (write(c, "hi", 2) != 2)
			_exit(1);
		sleep(2);
		_exit(0);
	}
	int s = socket(AF_INET, SOCK_STREAM, 0);

	connect(s, (void *)&a, sizeof(a));
	ssize_t r = read(s, b, 1);

	errno = 0;
	if (r == 1)
		r = read(s, b, sizeof(b));
	printf("errno2: read=%zd errno=%d\n", r, errno);
	return 0;
}

/*
 * A blocking write when the socket buffers are full, to a peer that
 * starts reading only after 300 ms: the write waits, sends, and
 * succeeds; errno must be what the program had.
 */
static int errno_write(void)
{
	static char big[8 << 20];
	struct sockaddr_in a;
	int l = listener(&a);

	if (fork() == 0) {
		int c = accept(l, NULL, NULL);

		usleep(300000);
		while (read(c, big, sizeof(big)) > 0)
			;
		_exit(0);
	}
	int s = socket(AF_INET, SOCK_STREAM, 0);

	connect(s, (void *)&a, sizeof(a));
	/* The buffers full, the write's first try gets EAGAIN. */
	while (send(s, big, sizeof(big), MSG_DONTWAIT) > 0)
		;
	errno = 0;
	ssize_t w = write(s, big, sizeof(big));

	printf("errnow: write=%zd errno=%d\n", w, errno);
	close(s);
	wait(NULL);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int restart(void)
{
	struct sockaddr_in a;
	struct sigaction sa = { .sa_handler = on_alarm,
		.sa_flags = SA_RESTART };
	int l = listener(&a);
	char b[8];

	answer_later(l, 600000);
	sigaction(SIGALRM, &sa, NULL);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	connect(s, (void *)&a, sizeof(a));
	ualarm(200000, 0);
	ssize_t r = read(s, b, sizeof(b));

	printf("restart: read=%zd %s\n", r, r < 0 ? strerror(errno) : "");
	return 0;
}

static int dup2ep(int port)
{
	struct sockaddr_in a = addr(port);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
		.data.u64 = 42 }, out[4];
	int ep = epoll_create1(0), p[2];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	connect(s, (void *)&a, sizeof(a));
	epoll_wait(ep, out, 4, 20);
	/* The program gives up and reuses the number for a pipe. */
	if (pipe(p) < 0 || dup2(p[0], s) < 0 || write(p[1], "x", 1) != 1)
		return 1;
	close(p[0]);
	int n = epoll_wait(ep, out, 4, 50);
	int stale = 0;

	for (int i = 0; i < n; i++)
		stale += out[i].data.u64 == 42;
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = 7 };
	int r = epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);

	printf("dup2ep: stale=%d add=%s\n", stale, r ? strerror(errno) : "ok");
	return 0;
}

static int ep_fd, ep_sock;

static void *edit_epoll(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };

	(void)arg;
	for (;;) {
		epoll_ctl(ep_fd, EPOLL_CTL_ADD, ep_sock, &ev);
		epoll_ctl(ep_fd, EPOLL_CTL_DEL, ep_sock, NULL);
	}
	return NULL;
}

static int forklock(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t t;

	ep_fd = epoll_create1(0);
	ep_sock = socket(AF_INET, SOCK_STREAM, 0);
	epoll_ctl(ep_fd, EPOLL_CTL_ADD, socket(AF_INET, SOCK_STREAM, 0), &ev);
	pthread_create(&t, NULL, edit_epoll, NULL);
	for (int i = 0; i < 500; i++) {
		pid_t p = fork();

		if (p == 0) {
			close(0);
			_exit(0);
		}
		for (int k = 0;; k++) {
			if (waitpid(p, NULL, WNOHANG) == p)
				break;
			if (k > 2000) {
				printf("forklock: child hung in close()\n");
				kill(p, SIGKILL);
				waitpid(p, NULL, 0);
				return 1;
			}
			usleep(1000);
		}
	}
	printf("forklock: no hang\n");
	return 0;
}

static void refused_connect(void)
{
	struct sockaddr_in a = addr(1);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	connect(s, (void *)&a, sizeof(a));
	close(s);
}

static int logfd(const char *data)
{
	refused_connect();	/* the library starts and opens its log */
	for (int fd = 3; fd < 1024; fd++)
		close(fd);	/* a daemon's clean-up */
	int f = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	refused_connect();
	if (write(f, "PROGRAM DATA\n", 13) != 13)
		return 1;
	close(f);
	printf("logfd: done\n");
	return 0;
}

static void *refuse(void *arg)
{
	(void)arg;
	refused_connect();
	return NULL;
}

/* Ends by SIGALRM when the library's start stalls either thread. */
static int first_two(void)
{
	pthread_t t[2];

	alarm(10);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, refuse, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("firsttwo: done\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(m, "again"))
		return again();
	if (!strcmp(m, "vfork"))
		return vfork_dup2();
	if (!strcmp(m, "errno"))
		return errno_kept(argc > 2 ? atol(argv[2]) : 200);
	if (!strcmp(m, "errno2") && argc > 2)
		return errno_second(atol(argv[2]));
	if (!strcmp(m, "errnow"))
		return errno_write();
	if (!strcmp(m, "restart"))
		return restart();
	if (!strcmp(m, "dup2ep") && argc > 2)
		return dup2ep(atoi(argv[2]));
	if (!strcmp(m, "forklock"))
		return forklock();
	if (!strcmp(m, "logfd") && argc > 2)
		return logfd(argv[2]);
	if (!strcmp(m, "vforkclose"))
		return vfork_close();
	if (!strcmp(m, "firsttwo"))
		return first_two();
	if (!strcmp(m, "refused")) {
		refused_connect();
		return 0;
	}
	fprintf(stderr, "usage: parity_client MODE [ARG]\n");
	return 2;
}
