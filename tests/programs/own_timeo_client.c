/* SPDX-License-Identifier: MIT */
/*
 * own_timeo_client.c - a blocking HTTP client with timeouts of its own,
 * for test_http_own_timeouts.sh.
 *
 *   own_timeo_client PORT RCVTIMEO_MS ALARM_MS restart|plain|nbpoll PATH
 *                    [again]
 *
 * Connects to 127.0.0.1:PORT, sets SO_RCVTIMEO to RCVTIMEO_MS (none when
 * 0), installs a SIGALRM handler (with SA_RESTART for "restart"), sends
 * "GET PATH HTTP/1.1", arms a timer of ALARM_MS (none when 0) and reads.
 * Prints "read N|ERRNO-NAME MS" per read (MS since the request); with
 * "again", a read that failed with EINTR is made once more, and the
 * status line's code is printed as "status CODE".  "nbpoll" sends the
 * request on a non-blocking socket, polls it for 300 ms as an event loop
 * would, then clears O_NONBLOCK and reads (MS since then); with "again",
 * a read that failed with EAGAIN is made again, up to 6 reads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static const char *errname(int e)
{
	return e == EAGAIN ? "EAGAIN" : e == EINTR ? "EINTR" :
	    e == ETIMEDOUT ? "ETIMEDOUT" : e == ECONNRESET ? "ECONNRESET" :
	    strerror(e);
}

static int connect_to(int port, int rcvtimeo_ms)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	in.sin_port = htons((uint16_t)port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&in, sizeof(in)) < 0) {
		perror("connect");
		exit(2);
	}
	if (rcvtimeo_ms > 0) {
		struct timeval tv = { rcvtimeo_ms / 1000,
			(rcvtimeo_ms % 1000) * 1000 };

		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: own_timeo_client PORT RCVTIMEO_MS "
		    "ALARM_MS restart|plain PATH [again]\n");
		return 2;
	}
	int s = connect_to(atoi(argv[1]), atoi(argv[2]));
	int alarm_ms = atoi(argv[3]);
	int again = argc > 6 && strcmp(argv[6], "again") == 0;
	struct sigaction sa = { .sa_handler = on_alarm };
	char req[512], buf[4096];

	if (strcmp(argv[4], "restart") == 0)
		sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n",
	    argv[5]);
	int nbpoll = strcmp(argv[4], "nbpoll") == 0;

	if (nbpoll)
		fcntl(s, F_SETFL, O_NONBLOCK);
	if (write(s, req, strlen(req)) < 0)
		perror("write");
	if (nbpoll) {
		struct pollfd p = { .fd = s, .events = POLLIN };

		printf("poll %d\n", poll(&p, 1, 300));
		fcntl(s, F_SETFL, 0);
	}
	long long t0 = now_ms();

	if (alarm_ms > 0) {
		struct itimerval it = { { 0, 0 },
			{ alarm_ms / 1000, (alarm_ms % 1000) * 1000 } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (int i = 0; i < (nbpoll ? 6 : 2); i++) {
		ssize_t n = read(s, buf, sizeof(buf) - 1);
		int e = errno;

		if (n < 0)
			printf("read %s %lld\n", errname(e), now_ms() - t0);
		else
			printf("read %zd %lld\n", n, now_ms() - t0);
		if (n > 12 && strncmp(buf, "HTTP/1.", 7) == 0)
			printf("status %.3s\n", buf + 9);
		if (!(n < 0 && (e == EINTR || (nbpoll && e == EAGAIN)) &&
		    again))
			break;
	}
	return 0;
}
