/* SPDX-License-Identifier: MIT */
/*
 * host_llhttp.c - a program with its own llhttp (linked in, exported with
 * -rdynamic), as a host of the library: it GETs argv[2] from 127.0.0.1
 * port argv[1] over one connection and parses the response with its
 * llhttp.  Prints "status N body B" and exits 0 on a 200.  Under the
 * library with an `http:` rule, both parsers run in one process: neither
 * may see the other's symbols.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "llhttp.h"

static int done;
static size_t body;

static int on_body(llhttp_t *p, const char *at, size_t n)
{
	(void)p;
	(void)at;
	body += n;
	return 0;
}

static int on_complete(llhttp_t *p)
{
	(void)p;
	done = 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	llhttp_settings_t st;
	llhttp_t parser;
	char req[512], buf[4096];
	int fd;

	if (argc != 3)
		return 2;
	in.sin_port = htons((unsigned short)atoi(argv[1]));
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&in, sizeof(in)) != 0)
		return 3;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: h\r\n\r\n", argv[2]);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return 3;
	llhttp_settings_init(&st);
	st.on_body = on_body;
	st.on_message_complete = on_complete;
	llhttp_init(&parser, HTTP_RESPONSE, &st);
	while (!done) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0 || llhttp_execute(&parser, buf, (size_t)n) != HPE_OK)
			return 4;
	}
	printf("status %d body %zu\n", parser.status_code, body);
	return parser.status_code == 200 ? 0 : 1;
}
