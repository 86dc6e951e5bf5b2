/* SPDX-License-Identifier: MIT */
/*
 * sockopt_client.c - what a program sees of SO_RCVTIMEO on a managed
 * socket whose reads the kernel times for the library; run by test_ktimeo.
 *
 *   sockopt_client inherit PORT
 *       Connects to 127.0.0.1:PORT (a silent peer), makes one blocking
 *       read (which the library's read_timeout ends), prints
 *       "read ERRNAME ms=ELAPSED own=SEC.USEC", then execs itself as
 *       "show FD" with the socket inherited.  ELAPSED counts, as SPEC §6
 *       does, from the socket's last activity: from just before the
 *       connect (or the byte written, below), not from the read's start,
 *       which a thread's start or a busy machine may put some ms later.
 *   sockopt_client fork PORT
 *       Makes one blocking read (as inherit, printed "armed ERRNAME"), then
 *       a fork() child execs "show FD" with the socket inherited, and once
 *       it has ended the parent writes a byte and reads again, printed
 *       "read ERRNAME ms=ELAPSED own=SEC.USEC".
 *   sockopt_client show FD
 *       Prints "child SO_RCVTIMEO=SEC.USEC" for the inherited socket.
 *   sockopt_client own PORT MS
 *       Sets SO_RCVTIMEO to MS ms, reads, and prints "read ERRNAME
 *       ms=ELAPSED own=SEC.USEC" (the program's own value read back).
 *   sockopt_client system|popen|wordexp PORT
 *       As inherit, but the child "show FD" is started by system(), by
 *       popen() (its output read and printed) or by wordexp()'s command
 *       substitution (the words printed): the C library's own spawns.
 *   sockopt_client vfork|spawn-dup2 PORT
 *       As inherit, but the child is made by vfork() (which dup2's an
 *       unmanaged socket over the managed one's number, then execs "show
 *       FD") or by posix_spawn (with the same dup2 as a file action); then
 *       the parent prints "parent SO_RCVTIMEO=SEC.USEC", its own value.
 *   sockopt_client spawn PORT
 *       As inherit, but instead of exec'ing, another thread spawns
 *       /bin/true (posix_spawn, the socket inherited) 200 ms into the
 *       read, while the kernel times the read for the library.
 *
 * Every mode ends by SIGALRM after 10 s, so that a read the library fails
 * to end fails its test instead of hanging it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* Read just before the socket's last activity (connect, write). */
static long long activity_us;

static struct timeval rcvtimeo(int fd)
{
	struct timeval tv = { -1, -1 };
	socklen_t len = sizeof(tv);

	getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len);
	return tv;
}

static int connected(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	activity_us = now_us();
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		exit(2);
	}
	return s;
}

/*
 * One blocking read of s, printed as "WHAT ERRNAME ms=..." with the whole
 * ms since the last activity (a timeout that is never early: >= its value).
 */
static void timed_read_as(int s, const char *what)
{
	char b;
	ssize_t r = read(s, &b, 1);
	int err = r < 0 ? errno : 0;
	long long us = now_us() - activity_us;
	struct timeval tv = rcvtimeo(s);

	printf("%s %s ms=%lld own=%ld.%06ld\n", what, err ?
	    strerrorname_np(err) : "ok", us / 1000, (long)tv.tv_sec,
	    (long)tv.tv_usec);
}

static void timed_read(int s)
{
	timed_read_as(s, "read");
}

extern char **environ;

/* Spawns /bin/true 200 ms after it starts, and reaps it. */
static void *spawner(void *arg)
{
	char *argv[] = { "true", NULL };
	pid_t pid;

	(void)arg;
	usleep(200 * 1000);
	if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) == 0)
		waitpid(pid, NULL, 0);
	return NULL;
}

/* Starts "ARGV0 show S" the way how names, through the C library. */
static int libc_spawn(const char *how, const char *self, int s)
{
	char cmd[4200], line[256];

	snprintf(cmd, sizeof(cmd), "%s'%s' show %d%s",
	    strcmp(how, "wordexp") ? "" : "$(", self, s,
	    strcmp(how, "wordexp") ? "" : ")");
	if (!strcmp(how, "system"))
		return system(cmd) == 0 ? 0 : 2;
	if (!strcmp(how, "popen")) {
		FILE *f = popen(cmd, "r");

		while (f && fgets(line, sizeof(line), f))
			fputs(line, stdout);
		return f && pclose(f) == 0 ? 0 : 2;
	}
	wordexp_t w;

	if (wordexp(cmd, &w, 0) != 0)
		return 2;
	for (size_t i = 0; i < w.we_wordc; i++)
		printf("%s%s", w.we_wordv[i], i + 1 < w.we_wordc ? " " : "\n");
	wordfree(&w);
	return 0;
}

/*
 * Starts "ARGV0 show S" with an unmanaged socket in place of s, by vfork
 * or by posix_spawn; returns when it has ended.
 */
static void child_over(const char *how, const char *self, int s)
{
	int u[2];
	char fd[16];
	char *argv[] = { (char *)self, "show", fd, NULL };
	pid_t pid = -1;

	snprintf(fd, sizeof(fd), "%d", s);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, u) < 0)
		exit(2);
	if (!strcmp(how, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			dup2(u[0], s);
			execv(self, argv);
			_exit(127);
		}
	} else {
		posix_spawn_file_actions_t fa;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, u[0], s);
		if (posix_spawn(&pid, self, &fa, NULL, argv, environ) != 0)
			pid = -1;
		posix_spawn_file_actions_destroy(&fa);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	struct timeval tv = rcvtimeo(s);

	printf("parent SO_RCVTIMEO=%ld.%06ld\n", (long)tv.tv_sec,
	    (long)tv.tv_usec);
	close(u[0]);
	close(u[1]);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	alarm(10);
	if (argc == 3 && !strcmp(argv[1], "inherit")) {
		int s = connected(atoi(argv[2]));
		char fd[16];

		timed_read(s);
		snprintf(fd, sizeof(fd), "%d", s);
		execl(argv[0], argv[0], "show", fd, (char *)NULL);
		perror("execl");
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "fork")) {
		int s = connected(atoi(argv[2]));
		char fd[16];
		pid_t pid;

		timed_read_as(s, "armed");
		snprintf(fd, sizeof(fd), "%d", s);
		pid = fork();
		if (pid == 0) {
			execl(argv[0], argv[0], "show", fd, (char *)NULL);
			perror("execl");
			_exit(2);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		/* Activity, so that the read waits read_timeout anew. */
		activity_us = now_us();
		if (write(s, "x", 1) != 1)
			perror("write");
		timed_read(s);
		return 0;
	}
	if (argc == 3 && (!strcmp(argv[1], "system") ||
	    !strcmp(argv[1], "popen") || !strcmp(argv[1], "wordexp"))) {
		int s = connected(atoi(argv[2]));

		timed_read(s);
		return libc_spawn(argv[1], argv[0], s);
	}
	if (argc == 3 && (!strcmp(argv[1], "vfork") ||
	    !strcmp(argv[1], "spawn-dup2"))) {
		int s = connected(atoi(argv[2]));

		timed_read(s);
		child_over(argv[1], argv[0], s);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "spawn")) {
		int s = connected(atoi(argv[2]));
		pthread_t t;

		pthread_create(&t, NULL, spawner, NULL);
		timed_read(s);
		pthread_join(t, NULL);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "show")) {
		struct timeval tv = rcvtimeo(atoi(argv[2]));

		printf("child SO_RCVTIMEO=%ld.%06ld\n", (long)tv.tv_sec,
		    (long)tv.tv_usec);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "own")) {
		int s = connected(atoi(argv[2]));
		long long ms = atoll(argv[3]);
		struct timeval tv = { (time_t)(ms / 1000),
			(suseconds_t)(ms % 1000 * 1000) };

		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		timed_read(s);
		return 0;
	}
	fprintf(stderr, "usage: sockopt_client inherit|fork PORT | show FD | "
	    "own PORT MS | spawn PORT | system|popen|wordexp PORT\n");
	return 2;
}
