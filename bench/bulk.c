/* SPDX-License-Identifier: MIT */
/*
 * bulk.c - one large transfer over loopback TCP.
 *
 *   bulk [MEGABYTES]      (default 1024)
 *
 * A forked child writes MEGABYTES MiB in 128 KiB writes; the connecting
 * side (managed, with the bench policy's timeouts) reads it all in
 * 128 KiB blocking reads.  Prints the throughput in MB/s.
 */
#include <sys/wait.h>

#include "bench.h"

#define CHUNK (128 * 1024)

int main(int argc, char **argv)
{
	long long total = (argc > 1 ? atoll(argv[1]) : 1024) << 20;
	static char buf[CHUNK];
	struct sockaddr_in addr;
	int l = b_listen(&addr);
	pid_t pid = fork();

	if (pid == 0) {
		int s = accept(l, NULL, NULL);

		memset(buf, 'x', sizeof(buf));
		for (long long left = total; left > 0;) {
			ssize_t w = write(s, buf, left > CHUNK ? CHUNK :
			    (size_t)left);

			if (w <= 0)
				b_die("bulk write");
			left -= w;
		}
		close(s);
		_exit(0);
	}
	close(l);
	int c = b_connect(&addr);
	long long got = 0, t0 = b_now_ns();
	ssize_t r;

	while ((r = read(c, buf, sizeof(buf))) > 0)
		got += r;
	long long t = b_now_ns() - t0;

	waitpid(pid, NULL, 0);
	if (got != total)
		b_die("bulk short");
	printf("bulk %.1f MB/s\n", (double)total / 1e6 / ((double)t / 1e9));
	return 0;
}
