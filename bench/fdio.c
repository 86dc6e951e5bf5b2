/*
 * fdio.c - reads and writes on descriptors the library does not manage.
 *
 *   fdio pipe|zero [COUNT]      (default 1000000)
 *
 * pipe: COUNT 1-byte writes and reads through a pipe.  zero: COUNT 1-byte
 * reads from /dev/zero and writes to /dev/null.  One socket is connected
 * first (when a listener can be made), so that the library's descriptor
 * table is in use as in a real program.  Prints ns per read+write pair.
 */
#include <fcntl.h>

#include "bench.h"

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "pipe";
	long count = argc > 2 ? atol(argv[2]) : 1000000;
	struct sockaddr_in addr;
	int l = b_listen(&addr), c = b_connect(&addr);
	int in, out, p[2];
	char b = 'x';

	if (!strcmp(what, "zero")) {
		in = open("/dev/zero", O_RDONLY);
		out = open("/dev/null", O_WRONLY);
	} else {
		if (pipe(p) < 0)
			b_die("pipe");
		in = p[0];
		out = p[1];
	}
	if (in < 0 || out < 0)
		b_die("open");
	long long t0 = b_now_ns();

	for (long i = 0; i < count; i++)
		if (write(out, &b, 1) != 1 || read(in, &b, 1) != 1)
			b_die("fdio");
	long long t = b_now_ns() - t0;

	close(c);
	close(l);
	printf("fdio-%s %.1f ns/read+write\n", what, (double)t / count);
	return 0;
}
