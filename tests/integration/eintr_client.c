/* SPDX-License-Identifier: MIT */
/*
 * eintr_client.c - blocking connects interrupted by a signal.
 *
 *   eintr_client ADDR PORT ALARM_MS CONNECTS [restart|sndtimeo:MS]
 *
 * Installs a SIGALRM handler WITHOUT SA_RESTART (with it when "restart" is
 * given, when the kernel would restart connect()); "sndtimeo:MS" sets
 * SO_SNDTIMEO, the program's own connect timeout.  Arms one alarm ALARM_MS
 * after start (none when 0), then calls connect() on one blocking TCP socket
 * up to CONNECTS times, stopping at the first result other than EINTR (with
 * ALARM_MS 0: at the first success).  Prints one line per
 * call, "connectN ok|ERRNO-NAME -1|0 elapsed_ms" (elapsed from the first
 * call), in rsclient's format.  An interrupted call must fail with EINTR; the
 * next call on the same socket resumes the library's logical connect.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 0 }, { 0, 0 } };

	const char *opt = argc == 6 ? argv[5] : "";

	if (argc != 5 && !(argc == 6 && (strcmp(opt, "restart") == 0 ||
	    strncmp(opt, "sndtimeo:", 9) == 0))) {
		fprintf(stderr, "usage: eintr_client ADDR PORT ALARM_MS N "
		    "[restart|sndtimeo:MS]\n");
		return 2;
	}
	int alarm_ms = atoi(argv[3]), connects = atoi(argv[4]);

	in.sin_port = htons((uint16_t)atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &in.sin_addr);
	sigemptyset(&sa.sa_mask);
	/* Without SA_RESTART connect() must see EINTR; with it, not. */
	sa.sa_flags = strcmp(opt, "restart") == 0 ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (strncmp(opt, "sndtimeo:", 9) == 0) {
		int ms = atoi(opt + 9);
		struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	long long start = now_ms();

	it.it_value.tv_sec = alarm_ms / 1000;
	it.it_value.tv_usec = (alarm_ms % 1000) * 1000;
	if (alarm_ms > 0)
		setitimer(ITIMER_REAL, &it, NULL);
	int ok = 0, more = 1;

	for (int i = 1; i <= connects && connects <= 10 && more; i++) {
		errno = 0;
		int r = connect(fd, (struct sockaddr *)&in, sizeof(in));
		const char *name = r == 0 ? "ok" : strerrorname_np(errno);

		printf("connect%d %s %d %lld\n", i, name ? name : "E?", r,
		    now_ms() - start);
		fflush(stdout);
		ok = r == 0;
		more = !ok && (alarm_ms == 0 || errno == EINTR);
	}
	printf("alarms %d\n", (int)alarms);
	close(fd);
	return ok ? 0 : 1;
}
