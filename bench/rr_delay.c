/* SPDX-License-Identifier: MIT */
/*
 * rr_delay.c - blocking request/response where the answer is never ready
 * when the read starts.
 *
 *   rr_delay [ROUNDS] [DELAY_US]      (default 500, 2000)
 *
 * The connecting side (managed, with the bench policy's timeouts) sends a
 * 16-byte request with send() and waits in a blocking recv() for the
 * 16-byte answer, which a forked child sends DELAY_US microseconds after
 * the request arrived.  So every recv finds no data and must wait: the
 * case where a library that polls before it reads costs extra system
 * calls.  Prints the mean round trip in ns.
 */
#include <sys/wait.h>

#include "bench.h"

#define MSG 16

static void answer(int s, long delay_us)
{
	char b[MSG];
	struct timespec d = { delay_us / 1000000, delay_us % 1000000 * 1000 };

	while (recv(s, b, MSG, MSG_WAITALL) == MSG) {
		nanosleep(&d, NULL);
		if (send(s, b, MSG, 0) != MSG)
			break;
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 500;
	long delay_us = argc > 2 ? atol(argv[2]) : 2000;
	pid_t pid;
	int c = b_pair(answer, delay_us, &pid);
	char b[MSG] = "request/response";

	long long t0 = b_now_ns();

	for (long i = 0; i < rounds; i++)
		if (send(c, b, MSG, 0) != MSG || recv(c, b, MSG, 0) != MSG)
			b_die("rr_delay");
	long long t = b_now_ns() - t0;

	close(c);
	waitpid(pid, NULL, 0);
	printf("rr_delay %.1f ns/round-trip\n", (double)t / rounds);
	return 0;
}
