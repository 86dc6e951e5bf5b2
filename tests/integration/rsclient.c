/* SPDX-License-Identifier: MIT */
/*
 * rsclient.c - a scriptable client for the integration tests.
 *
 *   rsclient ADDR PORT STEP...        (ADDR "unix:/path" ignores PORT)
 *
 * Runs the steps in order on one socket and prints one line per step:
 *   STEP ok|ERRNO-NAME VALUE elapsed_ms
 * then exits 0 if every step succeeded, 1 otherwise.  Steps:
 *   connect            blocking connect
 *   nbconnect          non-blocking connect (EINPROGRESS counts as ok)
 *   resolve:NAME       getaddrinfo(NAME) first, connect to its address
 *   poll:MS  ppoll:MS  select:MS  pselect:MS  epoll:MS  epollet:MS
 *   epollpwait:MS      wait for writability (connect) with that timeout;
 *                      VALUE is the ready count (0 = the wait timed out)
 *   pollin:MS  ppollin:MS  selectin:MS  pselectin:MS  epollin:MS
 *                      wait for readability
 *   deny:NAME          from then on the system call NAME (poll, ppoll)
 *                      fails with ENOSYS (a seccomp filter, as a
 *                      hardened program's allowlist would have it)
 *   soerror            getsockopt(SO_ERROR); fails with that error
 *   send:TEXT          write TEXT
 *   http               send a GET request
 *   recv  read         one receive; VALUE is the byte count
 *   readall            read until EOF; VALUE is the byte count
 *   sleep:MS           sleep (no socket call)
 *   rcvtimeo:MS        setsockopt(SO_RCVTIMEO), the program's own timeout
 *   ?STEP              STEP, going on to the next step even if it fails
 *   block  nonblock    clear/set O_NONBLOCK
 *   sendmany:BYTES     blocking writes of 64 KiB until BYTES are written;
 *                      VALUE is the total (a short write ends the step)
 *   recvn:N            recv of N bytes (N <= 65536)
 *   errqueue:N         a read of N bytes from the error queue
 *                      (MSG_ERRQUEUE), through via:NAME's name
 *   txstamp            setsockopt(SO_TIMESTAMPING) for software send
 *                      time stamps: each send queues a message on the
 *                      error queue
 *   waitall:N          recv(MSG_WAITALL) of N bytes (N <= 65536)
 *   peek:N  peekall:N  recv(MSG_PEEK), recv(MSG_PEEK|MSG_WAITALL) of N
 *   rawclose           close the socket with a raw system call, behind
 *                      the library's back
 *   rawreconnect       close the socket and connect a new one on the same
 *                      number, all with raw system calls the library
 *                      does not see
 *   dupnonblock        dup the socket, set O_NONBLOCK through the copy
 *                      (shared by both), close the copy
 *   via:NAME           the steps read, readall, waitall, peek and peekall
 *                      receive with NAME from then on (recv, recvfrom,
 *                      recvfromsa: with an address, readv, recvmsg: with
 *                      a name buffer, recvmsgctl: and room for control
 *                      data, recvmmsg: one message, VALUE its length;
 *                      read and readv take no flags, so recv stands
 *                      in for them then), and send:, sendmany: write with
 *                      it (write, send, sendto, writev, sendmsg).  Every
 *                      call that succeeds must leave errno alone, and
 *                      what it returns beside the count must be as bare
 *                      (no name, no control data, no flags), else EPROTO.
 *                      readv and writev split the buffer in two elements
 *   readvbad  writevbad  readv and writev of -1 elements (EINVAL)
 *   later:MS:TEXT      a child sends TEXT on the socket after MS ms, with
 *                      a raw system call (an echo peer sends it back)
 *   pipe:MS            make a pipe, which must reuse the socket's number;
 *                      a child writes 5 bytes into it after MS ms; then a
 *                      blocking read on that number; VALUE is the count
 * Built with _FORTIFY_SOURCE=2, so reads go through __read_chk and friends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/net_tstamp.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fd = -1;
static struct sockaddr_storage dst;
static socklen_t dstlen;
static int family;

/* The names the reads and writes go through (via:NAME). */
static const char *rvia = "read", *wvia = "write";

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void make_addr(const char *addr, const char *port)
{
	memset(&dst, 0, sizeof(dst));
	if (strncmp(addr, "unix:", 5) == 0) {
		struct sockaddr_un *un = (void *)&dst;

		un->sun_family = AF_UNIX;
		snprintf(un->sun_path, sizeof(un->sun_path), "%s", addr + 5);
		dstlen = sizeof(*un);
	} else if (strchr(addr, ':')) {
		struct sockaddr_in6 *in6 = (void *)&dst;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)atoi(port));
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		dstlen = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (void *)&dst;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)atoi(port));
		inet_pton(AF_INET, addr, &in->sin_addr);
		dstlen = sizeof(*in);
	}
	family = dst.ss_family;
}

static int resolve(const char *name, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
		.ai_socktype = SOCK_STREAM }, *res;
	int r = getaddrinfo(name, port, &hints, &res);

	if (r)
		return -1;
	memcpy(&dst, res->ai_addr, res->ai_addrlen);
	dstlen = res->ai_addrlen;
	family = res->ai_family;
	freeaddrinfo(res);
	return 0;
}

static int wait_for(const char *how, int ms, short ev)
{
	if (!strcmp(how, "poll")) {
		struct pollfd p = { fd, ev, 0 };

		return poll(&p, 1, ms);
	}
	if (!strcmp(how, "ppoll")) {
		struct pollfd p = { fd, ev, 0 };
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		return ppoll(&p, 1, ms < 0 ? NULL : &ts, NULL);
	}
	if (!strcmp(how, "select") || !strcmp(how, "pselect")) {
		fd_set w;
		struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		FD_ZERO(&w);
		FD_SET(fd, &w);
		fd_set *r = ev == POLLIN ? &w : NULL, *wr = ev == POLLIN ? NULL : &w;

		if (!strcmp(how, "select"))
			return select(fd + 1, r, wr, NULL, ms < 0 ? NULL : &tv);
		return pselect(fd + 1, r, wr, NULL, ms < 0 ? NULL : &ts, NULL);
	}
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = { .events = (ev == POLLIN ? EPOLLIN : EPOLLOUT),
		.data.fd = fd }, out;

	if (!strcmp(how, "epollet"))
		e.events |= EPOLLET;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	int n = !strcmp(how, "epollpwait") ?
	    epoll_pwait(ep, &out, 1, ms, NULL) : epoll_wait(ep, &out, 1, ms);
	int save = errno;

	close(ep);
	errno = save;
	return n;
}

/* deny:NAME: a seccomp filter that fails the system call NAME. */
static long deny(const char *name)
{
	long nr = -1;

#ifdef SYS_poll
	if (!strcmp(name, "poll"))
		nr = SYS_poll;
#endif
	if (!strcmp(name, "ppoll"))
		nr = SYS_ppoll;
	if (nr < 0) {
		errno = ENOTSUP;
		return -1;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static long step_more(const char *s, int ms, char *buf);

/*
 * What a call that returned r must have left for via:NAME's promise:
 * errno as it was (EDOM) on success, and bare's answer beside the count
 * (bad: it was not).
 */
static long checked(long r, bool bad)
{
	if (r >= 0 && (bad || errno != EDOM)) {
		errno = EPROTO;
		return -1;
	}
	return r;
}

/* The two elements of a readv/writev of n bytes at b. */
static void split(struct iovec *v, char *b, size_t n)
{
	size_t h = n < 7 ? n : 7;

	v[0] = (struct iovec){ b, h };
	v[1] = (struct iovec){ b + h, n - h };
}

/* One receive of up to n bytes with flags, through rvia. */
static long via_read(char *buf, size_t n, int flags)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char ctl[64];
	struct iovec v[2];
	struct msghdr m = { .msg_name = &sa, .msg_namelen = len,
		.msg_iov = v, .msg_iovlen = 2 };
	long r;

	split(v, buf, n);
	errno = EDOM;
	if (!strcmp(rvia, "read") && !flags)
		return checked(read(fd, buf, n), false);
	if (!strcmp(rvia, "readv") && !flags)
		return checked(readv(fd, v, 2), false);
	if (!strcmp(rvia, "recvfrom"))
		return checked(recvfrom(fd, buf, n, flags, NULL, NULL), false);
	if (!strcmp(rvia, "recvfromsa")) {
		r = recvfrom(fd, buf, n, flags, (void *)&sa, &len);
		return checked(r, len != 0);
	}
	if (!strcmp(rvia, "recvmmsg")) {
		struct mmsghdr mm = { .msg_hdr = { .msg_iov = v,
			.msg_iovlen = 2 } };

		r = recvmmsg(fd, &mm, 1, flags, NULL);
		return checked(r < 0 ? r : (long)mm.msg_len, false);
	}
	if (!strncmp(rvia, "recvmsg", 7)) {
		if (rvia[7]) {
			m.msg_control = ctl;
			m.msg_controllen = sizeof(ctl);
		}
		r = recvmsg(fd, &m, flags);
		return checked(r, m.msg_namelen || m.msg_controllen ||
		    m.msg_flags);
	}
	return checked(recv(fd, buf, n, flags), false);
}

/* One write of n bytes at b, through wvia. */
static long via_write(const char *b, size_t n)
{
	struct iovec v[2];
	struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };

	split(v, (char *)b, n);
	errno = EDOM;
	if (!strcmp(wvia, "send"))
		return checked(send(fd, b, n, 0), false);
	if (!strcmp(wvia, "sendto"))
		return checked(sendto(fd, b, n, 0, NULL, 0), false);
	if (!strcmp(wvia, "writev"))
		return checked(writev(fd, v, 2), false);
	if (!strcmp(wvia, "sendmsg"))
		return checked(sendmsg(fd, &m, 0), false);
	return checked(write(fd, b, n), false);
}

static long step(const char *s)
{
	const char *arg = strchr(s, ':');
	int ms = arg ? atoi(arg + 1) : 0;
	char buf[65536];

	if (!strcmp(s, "connect"))
		return connect(fd, (void *)&dst, dstlen);
	if (!strcmp(s, "nbconnect")) {
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		int r = connect(fd, (void *)&dst, dstlen);

		return r < 0 && errno == EINPROGRESS ? 0 : r;
	}
	if (!strncmp(s, "poll:", 5) || !strncmp(s, "ppoll:", 6) ||
	    !strncmp(s, "select:", 7) || !strncmp(s, "pselect:", 8) ||
	    !strncmp(s, "epoll:", 6) || !strncmp(s, "epollet:", 8) ||
	    !strncmp(s, "epollpwait:", 11)) {
		char how[16];

		snprintf(how, sizeof(how), "%.*s", (int)(arg - s), s);
		return wait_for(how, ms, POLLOUT);
	}
	if (!strncmp(s, "pollin:", 7) || !strncmp(s, "ppollin:", 8) ||
	    !strncmp(s, "selectin:", 9) || !strncmp(s, "pselectin:", 10)) {
		char how[16];

		snprintf(how, sizeof(how), "%.*s", (int)(arg - s) - 2, s);
		return wait_for(how, ms, POLLIN);
	}
	if (!strncmp(s, "deny:", 5))
		return deny(s + 5);
	if (!strncmp(s, "epollin:", 8))
		return wait_for("epoll", ms, POLLIN);
	if (!strcmp(s, "soerror")) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		errno = err;
		return err ? -1 : 0;
	}
	if (!strncmp(s, "send:", 5))
		return via_write(s + 5, strlen(s + 5));
	if (!strcmp(s, "http")) {
		const char *req = "GET / HTTP/1.0\r\nHost: peer\r\n\r\n";

		return send(fd, req, strlen(req), MSG_NOSIGNAL);
	}
	if (!strcmp(s, "recv"))
		return recv(fd, buf, sizeof(buf), 0);
	if (!strcmp(s, "read"))
		return via_read(buf, sizeof(buf), 0);
	if (!strcmp(s, "readall")) {
		long total = 0, r;

		while ((r = via_read(buf, sizeof(buf), 0)) > 0)
			total += r;
		return r < 0 ? -1 : total;
	}
	if (!strncmp(s, "sleep:", 6)) {
		usleep((useconds_t)ms * 1000);
		return 0;
	}
	if (!strcmp(s, "block") || !strcmp(s, "nonblock")) {
		int fl = fcntl(fd, F_GETFL);

		fl = !strcmp(s, "block") ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
		return fcntl(fd, F_SETFL, fl);
	}
	return step_more(s, ms, buf);
}

/* Writes total bytes in 64 KiB blocking writes; returns what was written. */
static long send_many(long total, char *buf)
{
	long done = 0;

	memset(buf, 'y', 65536);
	while (done < total) {
		size_t n = total - done > 65536 ? 65536 : (size_t)(total - done);
		ssize_t w = via_write(buf, n);

		if (w < 0)
			return done ? done : -1;
		done += w;
		if ((size_t)w < n)
			break;
	}
	return done;
}

/* A pipe on the socket's number (closed behind the library's back). */
static long pipe_reuse(int ms, char *buf)
{
	int p[2];

	if (pipe(p) < 0)
		return -1;
	if (p[0] != fd) {
		errno = EBADFD;
		return -1;
	}
	pid_t pid = fork();

	if (pid == 0) {
		usleep((useconds_t)ms * 1000);
		_exit(write(p[1], "hello", 5) == 5 ? 0 : 1);
	}
	close(p[1]);
	ssize_t r = read(fd, buf, 65536);
	int save = errno;

	waitpid(pid, NULL, 0);
	errno = save;
	return r;
}

/* A child that sends text (":TEXT") on the socket after ms. */
static long later(int ms, const char *text)
{
	if (!text)
		return -1;
	pid_t pid = fork();

	if (pid == 0) {
		usleep((useconds_t)ms * 1000);
		_exit(syscall(SYS_sendto, fd, text + 1, strlen(text + 1), 0,
		    NULL, 0) < 0);
	}
	return pid < 0 ? -1 : 0;
}

/* A new socket on the same number, made behind the library's back. */
static long raw_reconnect(void)
{
	syscall(SYS_close, fd);
	long s = syscall(SYS_socket, family, SOCK_STREAM, 0);

	if (s != fd) {
		errno = EBADFD;
		return -1;
	}
	return syscall(SYS_connect, fd, (void *)&dst, dstlen);
}

static long step_more(const char *s, int ms, char *buf)
{
	size_t n = ms > 65536 ? 65536 : (size_t)(ms < 0 ? 0 : ms);

	if (!strncmp(s, "rcvtimeo:", 9)) {
		struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

		return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (!strncmp(s, "sendmany:", 9))
		return send_many(atol(s + 9), buf);
	if (!strncmp(s, "recvn:", 6))
		return recv(fd, buf, n, 0);
	if (!strncmp(s, "errqueue:", 9))
		return via_read(buf, n, MSG_ERRQUEUE);
	if (!strcmp(s, "txstamp")) {
		int v = SOF_TIMESTAMPING_TX_SOFTWARE |
		    SOF_TIMESTAMPING_TX_SCHED | SOF_TIMESTAMPING_SOFTWARE;

		return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &v,
		    sizeof(v));
	}
	if (!strncmp(s, "waitall:", 8))
		return via_read(buf, n, MSG_WAITALL);
	if (!strncmp(s, "peek:", 5))
		return via_read(buf, n, MSG_PEEK);
	if (!strncmp(s, "peekall:", 8))
		return via_read(buf, n, MSG_PEEK | MSG_WAITALL);
	if (!strcmp(s, "readvbad") || !strcmp(s, "writevbad")) {
		struct iovec v = { buf, 1 };
		/* Volatile: the compiler would reject a constant -1. */
		volatile int cnt = -1;

		return s[0] == 'r' ? readv(fd, &v, cnt) : writev(fd, &v, cnt);
	}
	if (!strncmp(s, "later:", 6))
		return later(ms, strchr(s + 6, ':'));
	if (!strncmp(s, "via:", 4)) {
		if (!strncmp(s + 4, "re", 2))
			rvia = s + 4;
		else
			wvia = s + 4;
		return 0;
	}
	if (!strcmp(s, "rawreconnect"))
		return raw_reconnect();
	if (!strcmp(s, "dupnonblock")) {
		int c = dup(fd);

		if (c < 0 || fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK))
			return -1;
		return close(c);
	}
	if (!strcmp(s, "rawclose"))
		return syscall(SYS_close, fd);
	if (!strncmp(s, "pipe:", 5))
		return pipe_reuse(ms, buf);
	fprintf(stderr, "rsclient: unknown step %s\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	int ok = 1, i = 3;

	if (argc < 4) {
		fprintf(stderr, "usage: rsclient ADDR PORT STEP...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	make_addr(argv[1], argv[2]);
	if (!strncmp(argv[3], "resolve:", 8)) {
		if (resolve(argv[3] + 8, argv[2]) < 0) {
			printf("resolve EAI 0 0\n");
			return 1;
		}
		i = 4;
	}
	fd = socket(family, SOCK_STREAM, 0);
	long long start = now_ms();

	for (; i < argc; i++) {
		errno = 0;
		bool may_fail = argv[i][0] == '?';
		long r = step(argv[i] + may_fail);
		long long t = now_ms() - start;

		if (r < 0) {
			printf("%s %s %ld %lld\n", argv[i],
			    strerrorname_np(errno) ? strerrorname_np(errno) : "E?",
			    r, t);
			if (may_fail)
				continue;
			ok = 0;
			break;
		}
		printf("%s ok %ld %lld\n", argv[i], r, t);
	}
	fflush(stdout);
	return ok ? 0 : 1;
}
