/* SPDX-License-Identifier: MIT */
/*
 * pingpong.c - 1-byte round trips over loopback TCP.
 *
 *   pingpong [poll] [ROUNDS]         (default 200000)
 *   pingpong [poll] pairs [ROUNDS]   (in one process: see below)
 *   pingpong [poll] floor [ROUNDS]   (bare: the kernel's part, see below)
 *   pingpong [poll] vslibc [ROUNDS]  (in one process, against glibc itself)
 *   pingpong epoll vslibc|floor [ROUNDS]  (an event loop's request)
 *
 * The connecting side (managed under the library, with the bench policy's
 * read and write timeouts) sends one byte and waits, in a blocking read,
 * for the echo from a forked child.  With `poll` the socket is
 * non-blocking and each round waits in poll() for POLLIN before the read,
 * as libpq does.  Prints the mean round trip in ns.
 *
 * "pairs" measures what the library adds inside one process, as
 * connects.c does for connect: separate runs of a 17 µs round trip differ
 * by a few per cent on a shared machine, far more than the library's
 * user-space cost.  Two connections go to the same peer: A is made with
 * libc's socket() and connect() and used with libc's write(), read() (and
 * poll()), so that the library manages it when preloaded, with the
 * policy's timeouts; B is made and used with raw system calls, which no
 * interposer sees.  Blocks of BLOCK round trips alternate in the order
 * ABBA, so both sides share the machine's load of the moment; each pair
 * of blocks gives a difference and a ratio A/B.  Printed: the median
 * difference per round trip with its interquartile range, and
 * median(A)/median(B) with the median and IQR of the pair ratios (the
 * difference cancels more of the noise than either median).  Bare (no
 * LD_PRELOAD), both sides make the same system calls, and the same
 * figures are the method's own error.
 *
 * The peer (a forked child, one thread per connection) uses raw system
 * calls only, the same for A and B.  What the pairs include is all that
 * the library costs a round trip, the kernel's part too: under a read
 * timeout A's socket holds the library's SO_RCVTIMEO (ktimeo.c), so each
 * blocking read that sleeps arms and cancels a kernel timer, which B's
 * reads, without SO_RCVTIMEO, do not.  A block is kept short (BLOCK round
 * trips, ~2 ms here) so that A's first read after B's block still starts
 * within the library's steady window of its last activity (5 ms).
 *
 * "floor" is the kernel's part of that: the same pairs, both sides raw,
 * A making the system calls the library makes on a steady round trip
 * today (strace): blocking, a send(MSG_DONTWAIT) and a recv on a socket
 * with SO_RCVTIMEO 4.346 s (the library's for a 5 s read_timeout); with
 * poll, a write, a poll with a 5 s timeout in place of -1, and a read.
 * What "pairs" adds beyond "floor" is the library's user space.
 *
 * "vslibc" is "pairs" with B's calls made through glibc's own read(),
 * write() and poll(), found with dlsym() in libc.so.6 itself, so that no
 * interposer sees them: A and B then differ by the library alone, not
 * also by glibc's wrappers (which "pairs" counts on A's side, and its bare
 * run shows as the method's error), and bare the method's error is ~0.
 * The figure an operator sees: the same program, with and without the
 * library, inside one run.
 *
 * `epoll` (with vslibc or floor) is an event loop's request, as
 * redis-benchmark makes one on each of its connections (the ae library's
 * calls): the socket, non-blocking, goes from waiting for its reply
 * (EPOLLIN) to waiting to write (MOD, DEL, ADD EPOLLOUT), epoll_wait says
 * it may, one byte is written, then back to EPOLLIN (DEL, ADD) and
 * epoll_wait for the echo, which is read: five epoll_ctl, two waits, a
 * write and a read, each side in an epoll instance of its own.  Its floor
 * waits as the library does under rw5s, in epoll_pwait with no signal
 * mask and the read timeout for the program's -1: a timed wait that
 * sleeps arms a kernel timer, an untimed one does not.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "bench.h"

#define BLOCK 100
/* use_poll's value for the epoll mode (1: poll). */
#define EPOLL_MODE 2
#define MAX_PAIRS 5000

static void echo(int s, long unused)
{
	char b;

	(void)unused;
	while (read(s, &b, 1) == 1)
		if (write(s, &b, 1) != 1)
			break;
}

/* One round of the poll mode: send, poll for the echo, read it. */
static int poll_round(int c, char *b)
{
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (write(c, b, 1) != 1 || poll(&p, 1, -1) != 1)
		return -1;
	return read(c, b, 1) == 1 ? 0 : -1;
}

/* Side B's poll: the system call glibc's poll() makes on this machine. */
static long raw_poll(struct pollfd *p)
{
#ifdef SYS_poll
	return syscall(SYS_poll, p, 1, -1);
#else
	return syscall(SYS_ppoll, p, 1, NULL, NULL, 0);
#endif
}

/*
 * How a side makes its round trips: libc's calls (the library's when
 * preloaded), raw system calls, or raw system calls as the library makes
 * them.
 */
enum side { LIBC, RAW, RAW_AS_LIB, GLIBC };

/* glibc's own calls, for side GLIBC (no interposer in between). */
static ssize_t (*g_read)(int, void *, size_t);
static ssize_t (*g_write)(int, const void *, size_t);
static int (*g_poll)(struct pollfd *, nfds_t, int);
static int (*g_epoll_ctl)(int, int, int, struct epoll_event *);
static int (*g_epoll_wait)(int, struct epoll_event *, int, int);

static void glibc_calls(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	if (h == NULL)
		b_die("dlopen libc.so.6");
	*(void **)&g_read = dlsym(h, "read");
	*(void **)&g_write = dlsym(h, "write");
	*(void **)&g_poll = dlsym(h, "poll");
	*(void **)&g_epoll_ctl = dlsym(h, "epoll_ctl");
	*(void **)&g_epoll_wait = dlsym(h, "epoll_wait");
	if (!g_read || !g_write || !g_poll || !g_epoll_ctl || !g_epoll_wait)
		b_die("dlsym");
}

/* One round of side GLIBC: the program's calls, as glibc makes them. */
static int glibc_round(int c, int use_poll, char *b)
{
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (g_write(c, b, 1) != 1 || (use_poll && g_poll(&p, 1, -1) != 1))
		return -1;
	return g_read(c, b, 1) == 1 ? 0 : -1;
}

/* One round trip as the library makes it ("floor"). */
static int as_lib_round(int c, int use_poll, char *b)
{
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (!use_poll)
		return syscall(SYS_sendto, c, b, 1, MSG_DONTWAIT, NULL, 0) == 1 &&
		    syscall(SYS_recvfrom, c, b, 1, 0, NULL, NULL) == 1 ? 0 : -1;
#ifdef SYS_poll
	if (syscall(SYS_write, c, b, 1) != 1 ||
	    syscall(SYS_poll, &p, 1, 5001) != 1)
		return -1;
#else
	struct timespec ts = { .tv_sec = 5, .tv_nsec = 1000000 };

	if (syscall(SYS_write, c, b, 1) != 1 ||
	    syscall(SYS_ppoll, &p, 1, &ts, NULL, 0) != 1)
		return -1;
#endif
	return syscall(SYS_read, c, b, 1) == 1 ? 0 : -1;
}

/* The epoll instance of each side's connection, by its number. */
static int epoll_of[64];

/* epoll_ctl and the wait for one event, as side s makes them. */
static int side_ctl(enum side s, int ep, int op, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	if (s == LIBC)
		return epoll_ctl(ep, op, fd, &ev);
	if (s == GLIBC)
		return g_epoll_ctl(ep, op, fd, &ev);
	return (int)syscall(SYS_epoll_ctl, ep, op, fd, &ev);
}

static int side_wait(enum side s, int ep)
{
	struct epoll_event ev;

	if (s == LIBC)
		return epoll_wait(ep, &ev, 1, -1);
	if (s == GLIBC)
		return g_epoll_wait(ep, &ev, 1, -1);
	if (s == RAW_AS_LIB)
		return (int)syscall(SYS_epoll_pwait, ep, &ev, 1, 5000, NULL, 8);
	return (int)syscall(SYS_epoll_pwait, ep, &ev, 1, -1, NULL, 0);
}

/*
 * One request of the epoll mode on c, registered for EPOLLIN: the calls
 * of redis-benchmark's request (see the top), the write and read as side
 * s makes them.
 */
static int epoll_round(int c, enum side s, char *b)
{
	int ep = epoll_of[c];
	int bad = side_ctl(s, ep, EPOLL_CTL_MOD, c, EPOLLIN) < 0 ||
	    side_ctl(s, ep, EPOLL_CTL_DEL, c, 0) < 0 ||
	    side_ctl(s, ep, EPOLL_CTL_ADD, c, EPOLLOUT) < 0 ||
	    side_wait(s, ep) != 1;
	ssize_t w = s == LIBC ? write(c, b, 1) : s == GLIBC ?
	    g_write(c, b, 1) : syscall(SYS_write, c, b, 1);

	if (bad || w != 1 || side_ctl(s, ep, EPOLL_CTL_DEL, c, 0) < 0 ||
	    side_ctl(s, ep, EPOLL_CTL_ADD, c, EPOLLIN) < 0 ||
	    side_wait(s, ep) != 1)
		return -1;
	ssize_t r = s == LIBC ? read(c, b, 1) : s == GLIBC ? g_read(c, b, 1) :
	    syscall(SYS_read, c, b, 1);

	return r == 1 ? 0 : -1;
}

/* The epoll mode's instance for side s's connection c, with c in it. */
static void epoll_setup(int c, enum side s)
{
	int ep = s == LIBC ? epoll_create1(0) :
	    (int)syscall(SYS_epoll_create1, 0);

	if (ep < 0 || c >= 64 || side_ctl(s, ep, EPOLL_CTL_ADD, c, EPOLLIN) < 0)
		b_die("epoll setup");
	epoll_of[c] = ep;
}

/* One round trip of side s on c. */
static int round_trip(int c, enum side s, int use_poll, char *b)
{
	struct pollfd p = { .fd = c, .events = POLLIN };

	if (use_poll == EPOLL_MODE)
		return epoll_round(c, s, b);
	if (s == LIBC)
		return use_poll ? poll_round(c, b) :
		    write(c, b, 1) == 1 && read(c, b, 1) == 1 ? 0 : -1;
	if (s == RAW_AS_LIB)
		return as_lib_round(c, use_poll, b);
	if (s == GLIBC)
		return glibc_round(c, use_poll, b);
	if (syscall(SYS_write, c, b, 1) != 1 ||
	    (use_poll && raw_poll(&p) != 1))
		return -1;
	return syscall(SYS_read, c, b, 1) == 1 ? 0 : -1;
}

/* The peer's echo of one connection, in raw system calls. */
static void *raw_echo(void *arg)
{
	long s = (long)arg;
	char b;

	while (syscall(SYS_read, s, &b, 1) == 1)
		if (syscall(SYS_write, s, &b, 1) != 1)
			break;
	return NULL;
}

static void raw_nodelay(long s)
{
	int one = 1;

	syscall(SYS_setsockopt, s, IPPROTO_TCP, TCP_NODELAY, &one,
	    sizeof(one));
}

/*
 * A raw listener on 127.0.0.1 and a forked peer that accepts two
 * connections on it and echoes each on a thread of its own; *addr gets
 * the listener's address, *pid the peer's.
 */
static void raw_peer(struct sockaddr_in *addr, pid_t *pid)
{
	socklen_t len = sizeof(*addr);
	long l = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || syscall(SYS_bind, l, addr, len) < 0 ||
	    syscall(SYS_listen, l, 4) < 0 ||
	    syscall(SYS_getsockname, l, addr, &len) < 0)
		b_die("raw listen");
	*pid = fork();
	if (*pid < 0)
		b_die("fork");
	if (*pid == 0) {
		long s1 = syscall(SYS_accept4, l, NULL, NULL, 0);
		long s2 = syscall(SYS_accept4, l, NULL, NULL, 0);
		pthread_t th;

		if (s1 < 0 || s2 < 0)
			_exit(1);
		raw_nodelay(s1);
		raw_nodelay(s2);
		pthread_create(&th, NULL, raw_echo, (void *)s2);
		raw_echo((void *)s1);
		pthread_join(th, NULL);
		_exit(0);
	}
	syscall(SYS_close, l);
}

/* Side B's connection: raw system calls from socket to O_NONBLOCK. */
static int raw_client(const struct sockaddr_in *addr, int use_poll)
{
	long c = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);

	if (c < 0 || syscall(SYS_connect, c, addr, sizeof(*addr)) < 0)
		b_die("raw connect");
	raw_nodelay(c);
	if (use_poll && syscall(SYS_fcntl, c, F_SETFL,
	    syscall(SYS_fcntl, c, F_GETFL) | O_NONBLOCK) < 0)
		b_die("raw fcntl");
	return (int)c;
}

/* Nanoseconds per round trip of one block of side s on c. */
static double block_ns(int c, enum side s, int use_poll)
{
	char b = 'x';
	long long t0 = b_now_ns();

	for (int i = 0; i < BLOCK; i++)
		if (round_trip(c, s, use_poll, &b) < 0)
			b_die("pingpong pairs");
	return (double)(b_now_ns() - t0) / BLOCK;
}

static void print_pairs(double *a, double *b, double *d, double *r, long n,
    const char *name)
{
	double d50 = b_quantile(d, n, 0.5), d25 = b_quantile(d, n, 0.25);
	double d75 = b_quantile(d, n, 0.75);
	double r50 = b_quantile(r, n, 0.5), r25 = b_quantile(r, n, 0.25);
	double r75 = b_quantile(r, n, 0.75);
	double a50 = b_quantile(a, n, 0.5), b50 = b_quantile(b, n, 0.5);

	printf("%s %+.1f ns/round-trip (IQR %+.1f..%+.1f), ratio %.4f "
	    "(pairs' %.4f, IQR %.4f..%.4f), A %.1f B %.1f ns, %ld pairs of "
	    "%d\n", name, d50, d25, d75, a50 / b50, r50, r25, r75, a50, b50,
	    n, BLOCK);
}

/* Side A's connection: the library's (LIBC) or raw. */
static int side_a_client(const struct sockaddr_in *addr, enum side a,
    int use_poll)
{
	struct timeval tv = { .tv_sec = 4, .tv_usec = 346000 };
	int c;

	if (a != LIBC) {
		c = raw_client(addr, use_poll);
		if (!use_poll && syscall(SYS_setsockopt, c, SOL_SOCKET,
		    SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
			b_die("raw setsockopt");
		return c;
	}
	c = b_connect(addr);
	b_nodelay(c);
	if (use_poll && fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK) < 0)
		b_die("fcntl");
	return c;
}

/* "pairs", "floor" and "vslibc": side sa against sb, ABBA blocks. */
static void pairs(long rounds, int use_poll, enum side sa, enum side sb,
    const char *name)
{
	static double a[MAX_PAIRS], b[MAX_PAIRS], d[MAX_PAIRS], r[MAX_PAIRS];
	struct sockaddr_in addr;
	pid_t pid;
	long n = rounds / (2 * BLOCK);

	n = n < 4 ? 4 : n > MAX_PAIRS ? MAX_PAIRS : n;
	raw_peer(&addr, &pid);
	int ca = side_a_client(&addr, sa, use_poll);
	int cb = raw_client(&addr, use_poll);

	if (use_poll == EPOLL_MODE) {
		epoll_setup(ca, sa);
		epoll_setup(cb, sb);
	}

	block_ns(ca, sa, use_poll);	/* warm both paths up */
	block_ns(cb, sb, use_poll);
	for (long i = 0; i < n; i++) {
		if (i % 2) {
			b[i] = block_ns(cb, sb, use_poll);
			a[i] = block_ns(ca, sa, use_poll);
		} else {
			a[i] = block_ns(ca, sa, use_poll);
			b[i] = block_ns(cb, sb, use_poll);
		}
		d[i] = a[i] - b[i];
		r[i] = a[i] / b[i];
	}
	if (sa == LIBC)
		close(ca);
	else
		syscall(SYS_close, ca);
	syscall(SYS_close, cb);
	waitpid(pid, NULL, 0);
	print_pairs(a, b, d, r, n, name);
}

int main(int argc, char **argv)
{
	int k = 1;
	int use_poll = argc > k && strcmp(argv[k], "poll") == 0 ? 1 :
	    argc > k && strcmp(argv[k], "epoll") == 0 ? EPOLL_MODE : 0;
	int use_pairs, use_floor, use_vs;

	k += use_poll != 0;
	use_pairs = argc > k && strcmp(argv[k], "pairs") == 0;
	use_floor = argc > k && strcmp(argv[k], "floor") == 0;
	use_vs = argc > k && strcmp(argv[k], "vslibc") == 0;
	k += use_pairs || use_floor || use_vs;
	long rounds = argc > k ? atol(argv[k]) : 200000;

	static const char *const prefix[] = { "", "poll_", "epoll_" };
	char name[64];

	snprintf(name, sizeof(name), "pingpong_%s%s", prefix[use_poll],
	    use_vs ? "vslibc" : use_pairs ? "pairs" : "floor");
	if (use_vs) {
		glibc_calls();
		pairs(rounds, use_poll, LIBC, GLIBC, name);
		return 0;
	}
	if (use_pairs || use_floor) {
		pairs(rounds, use_poll, use_pairs ? LIBC : RAW_AS_LIB, RAW,
		    name);
		return 0;
	}
	pid_t pid;
	int c = b_pair(echo, 0, &pid);
	char b = 'x';
	long long t0;

	if (use_poll && fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK) < 0)
		b_die("fcntl");
	if (use_poll == EPOLL_MODE)
		epoll_setup(c, LIBC);
	t0 = b_now_ns();
	for (long i = 0; i < rounds; i++)
		if (use_poll ? round_trip(c, LIBC, use_poll, &b) < 0 :
		    write(c, &b, 1) != 1 || read(c, &b, 1) != 1)
			b_die("pingpong");
	long long t = b_now_ns() - t0;

	close(c);
	waitpid(pid, NULL, 0);
	static const char *const mode[] = { "", " poll", " epoll" };

	printf("pingpong%s %.1f ns/round-trip\n", mode[use_poll],
	    (double)t / rounds);
	return 0;
}
