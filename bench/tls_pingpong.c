/* SPDX-License-Identifier: MIT */
/*
 * tls_pingpong.c - 1-byte round trips over loopback TLS, through
 * OpenSSL's SSL_write and SSL_read: what the library's TLS wrappers cost a
 * program that uses TLS on connections of rules without `http`.
 *
 *   tls_pingpong CERT KEY [ROUNDS]     (default 20000)
 *
 * A forked child accepts and echoes each byte (SSL_read, SSL_write); the
 * parent connects with libc's socket() and connect() (so that the library
 * manages the connection under its policy), makes the handshake without
 * verification (the bench's own certificate), then times ROUNDS round
 * trips.  Prints "tls_pingpong NS", the mean round trip in ns.  Links
 * libssl, as a program would; the library itself never does.
 */
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "tls_pingpong: %s failed\n", what);
	exit(1);
}

static void echo(int lfd, const char *cert, const char *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	int fd = accept(lfd, NULL, NULL);
	char c;

	if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    fd < 0)
		die("server setup");
	SSL *s = SSL_new(ctx);

	SSL_set_fd(s, fd);
	if (SSL_accept(s) != 1)
		die("SSL_accept");
	while (SSL_read(s, &c, 1) == 1 && SSL_write(s, &c, 1) == 1)
		;
	_exit(0);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	long rounds = argc > 3 ? atol(argv[3]) : 20000;
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct timespec t0, t1;
	char c = 'x';
	pid_t pid;

	if (argc < 3)
		die("usage: tls_pingpong CERT KEY [ROUNDS]; the call");
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		die("listen");
	if ((pid = fork()) == 0)
		echo(lfd, argv[1], argv[2]);
	close(lfd);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connect");
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *s = SSL_new(ctx);

	SSL_set_fd(s, fd);
	if (SSL_connect(s) != 1)
		die("SSL_connect");
	for (int i = 0; i < 1000; i++)	/* warm up */
		if (SSL_write(s, &c, 1) != 1 || SSL_read(s, &c, 1) != 1)
			die("round trip");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < rounds; i++)
		if (SSL_write(s, &c, 1) != 1 || SSL_read(s, &c, 1) != 1)
			die("round trip");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("tls_pingpong %.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 +
	    (t1.tv_nsec - t0.tv_nsec)) / rounds);
	SSL_free(s);
	close(fd);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return 0;
}
