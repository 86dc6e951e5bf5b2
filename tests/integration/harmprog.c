/* SPDX-License-Identifier: MIT */
/*
 * harmprog.c - "do no harm" scenarios, run under the library by the
 * test_harm_* orchestrators.
 *
 *   harmprog SCENARIO ADDR PORT [ARG...]
 *
 * Each scenario prints lines "NAME RESULT VALUE MS" (RESULT "ok" or an
 * errno name, MS since the scenario started) and exits 0, or exits 2 when
 * it could not be set up.  A read that the library does not end is ended by
 * a 3 s alarm (EINTR), so that nothing here blocks forever, with or without
 * read timeouts in the library.  The scenarios are listed in main().
 * Built with _FORTIFY_SOURCE=2 like every integration program.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *addr;
static int port;
/*
 * Where reported times count from; per thread, since the threads scenario
 * connects in many threads at once and each would overwrite the others'.
 */
static _Thread_local long long t0;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void report(const char *name, long r, int err)
{
	printf("%s %s %ld %lld\n", name,
	    r < 0 ? (strerrorname_np(err) ? strerrorname_np(err) : "E?") : "ok",
	    r, now_ms() - t0);
	fflush(stdout);
}

static void die(const char *what)
{
	printf("setup %s %s 0 0\n", what, strerrorname_np(errno));
	exit(2);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* SIGALRM interrupts blocking calls (no SA_RESTART). */
static void arm_alarm(unsigned secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	sigaction(SIGALRM, &sa, NULL);
	alarm(secs);
}

/* A blocking TCP connect to ADDR:PORT through the library; dies on error. */
static int tcp_connect(int p)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)p) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &in.sin_addr);
	/* Read timeouts count from the connection, which the library stamps
	   inside connect(): the clock is read before it, so that no time of
	   theirs falls before t0. */
	t0 = now_ms();
	if (s < 0 || connect(s, (void *)&in, sizeof(in)) < 0)
		die("connect");
	return s;
}

/* One read on fd under the 3 s alarm, reported as NAME (MS since t0). */
static void timed_read(const char *name, int fd)
{
	char buf[256];

	arm_alarm(3);
	errno = 0;
	ssize_t r = read(fd, buf, sizeof(buf));
	int err = errno;

	alarm(0);
	report(name, (long)r, err);
}

/* A child that writes 5 bytes to fd after ms milliseconds, then exits. */
static void write_later(int fd, int ms)
{
	if (fork() == 0) {
		usleep((useconds_t)ms * 1000);
		if (write(fd, "hello", 5) != 5)
			_exit(1);
		_exit(0);
	}
}

/* Makes `want` a descriptor number of a new unix socket pair, bypassing
 * every wrapper (as glibc's internal calls do); returns the other end. */
static int raw_socketpair_at(int want)
{
	int sv[2];

	if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		die("socketpair");
	if (sv[0] != want) {
		printf("reuse no %d 0\n", sv[0]);
		exit(2);
	}
	return sv[1];
}

/* ---- descriptors ---- */

/* The copy of a connected managed socket made by `how`. */
static int copy_fd(int s, const char *how)
{
	if (!strcmp(how, "dup"))
		return dup(s);
	if (!strcmp(how, "dup2"))
		return dup2(s, 40);
	if (!strcmp(how, "dup3"))
		return dup3(s, 41, O_CLOEXEC);
	if (!strcmp(how, "dupfd"))
		return fcntl(s, F_DUPFD, 50);
	if (!strcmp(how, "dupfd_cloexec"))
		return fcntl(s, F_DUPFD_CLOEXEC, 60);
	if (!strcmp(how, "fcntl64"))
		return fcntl64(s, F_DUPFD, 70);
	return s;
}

/* copyread HOW: a copy keeps the read timeout after the original closes. */
static void sc_copyread(const char *how)
{
	int s = tcp_connect(port);
	int d = copy_fd(s, how);

	if (d < 0)
		die(how);
	if (d != s)
		close(s);
	timed_read("read", d);
}

/* Sets (on != 0) or clears O_NONBLOCK on fd the way `how` says. */
static int set_nonblock(int fd, const char *how, int on)
{
	int fl = fcntl(fd, F_GETFL);

	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	if (!strcmp(how, "fionbio"))
		return ioctl(fd, FIONBIO, &on);
	if (!strcmp(how, "fcntl64"))
		return fcntl64(fd, F_SETFL, fl);
	return fcntl(fd, F_SETFL, fl);
}

/*
 * sharedflag HOW ON: O_NONBLOCK belongs to the open file description that
 * a dup shares; changed through the copy, it applies to the original too.
 */
static void sc_sharedflag(const char *how, int on)
{
	int s = tcp_connect(port);

	if (!on && set_nonblock(s, "fsetfl", 1) < 0)
		die("fsetfl");
	int d = dup(s);

	if (d < 0 || set_nonblock(d, how, on) < 0)
		die(how);
	timed_read("read", s);
}

/* dup2over: a socket pair end dup2'd over a managed socket is unmanaged. */
static void sc_dup2over(void)
{
	int s = tcp_connect(port), sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || dup2(sv[0], s) < 0)
		die("dup2");
	write_later(sv[1], 1200);
	timed_read("read", s);
}

/*
 * reuse HOW: the managed socket goes away by `how` (close, close_range,
 * fclose of an fdopen'd stream, raw close) and a socket pair made behind
 * the library's back takes its number: the pair is not managed.
 */
static void sc_reuse(const char *how)
{
	int s = tcp_connect(port);

	if (!strcmp(how, "close"))
		close(s);
	else if (!strcmp(how, "close_range"))
		close_range((unsigned)s, (unsigned)s, 0);
	else if (!strcmp(how, "fclose"))
		fclose(fdopen(s, "r+"));
	else
		syscall(SYS_close, s);
	write_later(raw_socketpair_at(s), 1200);
	timed_read("read", s);
}

/*
 * unixreuse HOW: a managed unix socket, connected to a listener of this
 * process that never accepts (the connect is queued, a read blocks).  HOW
 * "keep" reads it; "raw" closes it behind the library's back first and a
 * socket pair made behind it takes the number: the pair is not managed
 * (told by its inode, as every managed socket is).
 */
static void sc_unixreuse(const char *how)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(un.sun_path, sizeof(un.sun_path), "/tmp/rs-harm-%d.sock",
	    (int)getpid());
	unlink(un.sun_path);
	if (l < 0 || s < 0 || bind(l, (void *)&un, sizeof(un)) < 0 ||
	    listen(l, 4) < 0 || connect(s, (void *)&un, sizeof(un)) < 0)
		die("unix");
	unlink(un.sun_path);
	t0 = now_ms();
	if (!strcmp(how, "raw")) {
		syscall(SYS_close, s);
		write_later(raw_socketpair_at(s), 1200);
	}
	/* Late after the connect: the read takes the library's exact path,
	   whose timeout asks which socket this is (a read right after the
	   connect would be the kernel's, timed on the socket now gone). */
	usleep(20 * 1000);
	timed_read("read", s);
}

/* cloexec: close_range(CLOSE_RANGE_CLOEXEC) leaves the socket managed. */
static void sc_cloexec(void)
{
	int s = tcp_connect(port);

	if (close_range((unsigned)s, (unsigned)s, CLOSE_RANGE_CLOEXEC) < 0)
		die("close_range");
	timed_read("read", s);
}

/* rawfile: a regular file reusing a raw-closed socket's number reads as one. */
static void sc_rawfile(void)
{
	char path[] = "/tmp/rs-harm-XXXXXX";
	int s = tcp_connect(port);

	syscall(SYS_close, s);
	int f = mkstemp(path);

	if (f != s || write(f, "hello", 5) != 5 || lseek(f, 0, SEEK_SET) != 0)
		die("file");
	unlink(path);
	timed_read("read", f);
}

/*
 * accepted: an inbound connection is never managed, even on the number
 * of a managed socket closed behind the library's back.
 */
static void sc_accepted(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &in.sin_addr);
	if (bind(l, (void *)&in, len) < 0 || listen(l, 4) < 0 ||
	    getsockname(l, (void *)&in, &len) < 0)
		die("listen");
	int s = tcp_connect(port);
	int c = tcp_connect(ntohs(in.sin_port));

	syscall(SYS_close, s);
	int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);

	if (a != s)
		die("accept-reuse");
	write_later(c, 1200);
	timed_read("read", a);
}

/*
 * nbconnect HOW: a connect on a socket made non-blocking by HOW never
 * blocks; HOW "block" is the control, a blocking socket.
 */
static void sc_nbconnect(const char *how)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM |
	    (!strcmp(how, "sock_nonblock") ? SOCK_NONBLOCK : 0), 0);

	inet_pton(AF_INET, addr, &in.sin_addr);
	if (strcmp(how, "sock_nonblock") && strcmp(how, "block") &&
	    set_nonblock(s, how, 1) < 0)
		die(how);
	t0 = now_ms();
	int r = connect(s, (void *)&in, sizeof(in));

	report("connect", r, errno);
}

/* pairnb: a non-blocking socket pair on a reused number never waits. */
static void sc_pairnb(void)
{
	int s = tcp_connect(port), sv[2];

	syscall(SYS_close, s);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0 ||
	    sv[0] != s)
		die("socketpair");
	timed_read("read", s);
}

/* ---- processes, threads, signals ---- */

/* A connect to ADDR:p through the library; returns 0 or -errno. */
static int try_connect(int p)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)p) };
	int s = socket(AF_INET, SOCK_STREAM, 0), r;

	inet_pton(AF_INET, addr, &in.sin_addr);
	r = connect(s, (void *)&in, sizeof(in)) < 0 ? -errno : 0;
	close(s);
	return r;
}

/*
 * forkjitter: the parent draws from its jitter generator first (a retried
 * connect), then two forked children retry against the same refused port.
 */
static void sc_forkjitter(void)
{
	pid_t kids[2];

	report("parent", try_connect(port), ECONNREFUSED);
	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(try_connect(port) == -ECONNREFUSED ? 0 : 1);
	}
	for (int i = 0; i < 2; i++) {
		int st;

		waitpid(kids[i], &st, 0);
		printf("child%d ok %ld %d\n", i, (long)kids[i],
		    WIFEXITED(st) ? WEXITSTATUS(st) : 128);
	}
}

/*
 * vforkclose: a vfork child shares the parent's memory; its close of a
 * managed socket (before exec) must not make the parent forget it.
 */
static void sc_vforkclose(void)
{
	int s = tcp_connect(port), st;
	pid_t pid = vfork();

	if (pid == 0) {
		close(s);
		dup2(2, s);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	timed_read("read", s);
}

/* spawnclose: posix_spawn file actions close a managed socket in the child. */
static void sc_spawnclose(void)
{
	int s = tcp_connect(port), st;
	posix_spawn_file_actions_t fa;
	char *argv[] = { "true", NULL };
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, s);
	posix_spawn_file_actions_adddup2(&fa, 2, s);
	if (posix_spawn(&pid, "/bin/true", &fa, NULL, argv, environ) != 0)
		die("posix_spawn");
	posix_spawn_file_actions_destroy(&fa);
	waitpid(pid, &st, 0);
	timed_read("read", s);
}

/* child HOW PROG ARG...: runs PROG in a child made by HOW; its status. */
static void sc_child(const char *how, char **argv)
{
	pid_t pid = 0;
	int st = 0;

	if (!strcmp(how, "spawn")) {
		if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ))
			die("posix_spawnp");
	} else {
		pid = !strcmp(how, "vfork") ? vfork() : fork();
		if (pid == 0) {
			execvp(argv[0], argv);
			_exit(127);
		}
	}
	waitpid(pid, &st, 0);
	report("child", WIFEXITED(st) ? WEXITSTATUS(st) : 128, 0);
}

static int ports[3], rounds = 3, do_read;
static int tally[4];	/* refused, late ok, silent timed out, wrong */

/* One thread: connects (and reads) against one kind of faulty server. */
static void *worker(void *arg)
{
	int kind = (int)(long)arg % 3;

	for (int i = 0; i < rounds; i++) {
		int r = try_connect(ports[kind]), slot = 3;

		if (kind == 0 && r == -ECONNREFUSED)
			slot = 0;
		if (kind == 1 && r == 0)
			slot = 1;
		if (kind == 2) {
			int s = tcp_connect(ports[2]), d = dup(s);
			char c;

			close(s);
			slot = !do_read || (read(d, &c, 1) < 0 &&
			    errno == ETIMEDOUT) ? 2 : 3;
			close(d);
		}
		__atomic_add_fetch(&tally[slot], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* threads N REFUSED LATE SILENT: N threads, each a kind of server. */
static void sc_threads(int n, char **argv)
{
	pthread_t th[256];

	for (int i = 0; i < 3; i++)
		ports[i] = atoi(argv[i]);
	do_read = getenv("HARM_READ") != NULL;
	alarm(60);	/* a deadlock fails instead of hanging */
	t0 = now_ms();
	for (long i = 0; i < n && i < 256; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			die("pthread_create");
	for (int i = 0; i < n && i < 256; i++)
		pthread_join(th[i], NULL);
	report("refused", tally[0], 0);
	report("late", tally[1], 0);
	report("silent", tally[2], 0);
	report("wrong", tally[3], 0);
}

static int resumable = -1;

/*
 * A connect that a signal interrupted is resumed by calling connect()
 * again on the same socket, as a program looping on EINTR does.
 */
static int try_connect_resumable(int p)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)p) };
	int r;

	inet_pton(AF_INET, addr, &in.sin_addr);
	if (resumable < 0)
		resumable = socket(AF_INET, SOCK_STREAM, 0);
	r = connect(resumable, (void *)&in, sizeof(in)) < 0 ? -errno : 0;
	if (r != -EINTR) {
		close(resumable);
		resumable = -1;
	}
	return r;
}

static int sigpipe_fd[2];
static volatile sig_atomic_t handled, handler_bad;

/* Writes and reads back one byte on an unmanaged pipe, as handlers may. */
static void on_tick(int sig)
{
	int save = errno;
	char c = 'x';

	(void)sig;
	errno = 4242;
	if (write(sigpipe_fd[1], &c, 1) != 1 || read(sigpipe_fd[0], &c, 1) != 1 ||
	    c != 'x' || errno != 4242)
		handler_bad = handler_bad + 1;
	handled = handled + 1;
	errno = save;
}

/*
 * signals: a 5 ms interval timer whose handler does pipe I/O while the
 * main thread is inside the library retrying a refused connect.
 */
static void sc_signals(void)
{
	struct sigaction sa = { .sa_handler = on_tick };
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	int eintr = 0, r;

	if (pipe(sigpipe_fd) < 0)
		die("pipe");
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = now_ms();
	while ((r = try_connect_resumable(port)) == -EINTR && eintr < 100000)
		eintr++;
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	report("connect", r, -r);
	report("eintr", eintr, 0);
	report("handled", handled, 0);
	report("handler_bad", handler_bad, 0);
}

/* ---- _FORTIFY_SOURCE entry points ---- */

/*
 * Lengths the compiler cannot see, so that _FORTIFY_SOURCE=2 routes the
 * calls to __read_chk, __recv_chk, __recvfrom_chk, __poll_chk and
 * __ppoll_chk (a constant length that fits makes it call the plain name).
 */
static volatile size_t var_len = 64;
static volatile nfds_t var_nfds = 1;

/* fortify: each fortified call on a socket to the echo peer. */
static void sc_fortify(void)
{
	int s = tcp_connect(port);
	char buf[64];
	struct pollfd p = { .fd = s, .events = POLLIN };
	struct timespec ts = { 2, 0 };

	t0 = now_ms();
	report("send", send(s, "hello", 5, 0), errno);
	report("poll", poll(&p, var_nfds, 2000), errno);
	report("ppoll", ppoll(&p, var_nfds, &ts, NULL), errno);
	report("recv_peek", recv(s, buf, var_len, MSG_PEEK), errno);
	report("recvfrom", recvfrom(s, buf, var_len < 2 ? var_len : 2, 0,
	    NULL, NULL), errno);
	report("read", read(s, buf, var_len), errno);
	close(s);
}

/* silentread: one fortified read (__read_chk) on a silent peer. */
static void sc_silentread(void)
{
	int s = tcp_connect(port);
	char buf[64];

	arm_alarm(3);
	ssize_t r = read(s, buf, var_len);

	report("read", (long)r, errno);
	alarm(0);
}

/*
 * nbpoll: a non-blocking connect waited for with a fortified poll
 * (__poll_chk), then SO_ERROR: with the wait engine, the retries happen
 * inside that poll.
 */
static void sc_nbpoll(void)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), err = 0;
	socklen_t len = sizeof(err);
	struct pollfd p = { .fd = s, .events = POLLOUT };

	inet_pton(AF_INET, addr, &in.sin_addr);
	t0 = now_ms();
	report("connect", connect(s, (void *)&in, sizeof(in)), errno);
	report("poll", poll(&p, var_nfds, 3000), errno);
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
	report("soerror", err ? -1 : 0, err);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: harmprog SCENARIO ADDR PORT [ARG...]\n");
		return 2;
	}
	const char *sc = argv[1], *a = argc > 4 ? argv[4] : "";

	addr = argv[2];
	port = atoi(argv[3]);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(sc, "copyread"))
		sc_copyread(a);
	else if (!strcmp(sc, "sharedflag"))
		sc_sharedflag(a, argc > 5 ? atoi(argv[5]) : 1);
	else if (!strcmp(sc, "dup2over"))
		sc_dup2over();
	else if (!strcmp(sc, "reuse"))
		sc_reuse(a);
	else if (!strcmp(sc, "unixreuse"))
		sc_unixreuse(a);
	else if (!strcmp(sc, "cloexec"))
		sc_cloexec();
	else if (!strcmp(sc, "rawfile"))
		sc_rawfile();
	else if (!strcmp(sc, "accepted"))
		sc_accepted();
	else if (!strcmp(sc, "nbconnect"))
		sc_nbconnect(a);
	else if (!strcmp(sc, "pairnb"))
		sc_pairnb();
	else if (!strcmp(sc, "forkjitter"))
		sc_forkjitter();
	else if (!strcmp(sc, "vforkclose"))
		sc_vforkclose();
	else if (!strcmp(sc, "spawnclose"))
		sc_spawnclose();
	else if (!strcmp(sc, "child") && argc > 5)
		sc_child(a, argv + 5);
	else if (!strcmp(sc, "threads") && argc > 7)
		sc_threads(atoi(a), argv + 5);
	else if (!strcmp(sc, "signals"))
		sc_signals();
	else if (!strcmp(sc, "fortify"))
		sc_fortify();
	else if (!strcmp(sc, "nbpoll"))
		sc_nbpoll();
	else if (!strcmp(sc, "silentread"))
		sc_silentread();
	else
		return fprintf(stderr, "harmprog: unknown %s\n", sc), 2;
	return 0;
}
