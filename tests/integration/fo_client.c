/* SPDX-License-Identifier: MIT */
/*
 * fo_client.c - a client that resolves a name as legacy programs do, for
 * the failover and DNS-retry tests (SPEC 5c, 5d).
 *
 *   fo_client MODE NAME PORT [-f 4|6|6only] [-a ADDR] [-n COUNT] [-t MS]
 *
 * Modes (how the name is resolved, and which address is used):
 *   gai        getaddrinfo(), the first result only (or -a ADDR, which
 *              must be among the results)
 *   hostent    gethostbyname(), h_addr_list[0] only
 *   hostent2   gethostbyname2(AF_INET), h_addr_list[0] only
 *   hostent_r  gethostbyname_r(), h_addr_list[0] only
 *   hostent2_r gethostbyname2_r(AF_INET), h_addr_list[0] only
 *   loop       getaddrinfo(), then every result in turn until one
 *              connects, each bounded by -t MS (non-blocking connect and
 *              poll), as careful programs do
 * -f: the socket's family: 4 (the default; AF_INET), 6 (AF_INET6, IPv4
 * addresses as v4-mapped) or 6only (AF_INET6 with IPV6_V6ONLY).
 * -n: the connect is done COUNT times, each on a new socket.
 * Prints "order ADDR..." (the resolver's order), then per connect "peer
 * ADDR MS" (getpeername after connecting) and "http ok" once a request was
 * answered with 200.  Exits 0 when every connect and request succeeded, 1
 * when a connect failed, 2 when the lookup failed ("lookup ERROR" printed,
 * with the getaddrinfo or h_errno code name).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *fam = "4", *want_addr;
static int port, count = 1, per_ms = 1000;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Fills ss with (family, addr) on port for the socket family asked for. */
static socklen_t make_sa(int family, const void *addr,
    struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strcmp(fam, "4") == 0) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (family != AF_INET)
			return 0;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		memcpy(&in->sin_addr, addr, 4);
		return sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	if (family == AF_INET) {
		in6->sin6_addr.s6_addr[10] = 0xff;
		in6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&in6->sin6_addr.s6_addr[12], addr, 4);
	} else {
		memcpy(&in6->sin6_addr, addr, 16);
	}
	return sizeof(*in6);
}

static void print_addr(const char *tag, const struct sockaddr *sa)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
		    ip, sizeof(ip));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6,
		    &((const struct sockaddr_in6 *)sa)->sin6_addr, ip,
		    sizeof(ip));
	printf(" %s%s", tag, ip);
}

static int new_socket(void)
{
	int one = 1;
	int s = socket(strcmp(fam, "4") == 0 ? AF_INET : AF_INET6,
	    SOCK_STREAM, 0);

	if (s >= 0 && strcmp(fam, "6only") == 0)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	return s;
}

/* Sends a GET and checks for a 200; then closes s.  Returns 0 or 1. */
static int request(int s)
{
	static const char req[] = "GET / HTTP/1.0\r\n\r\n";
	char buf[512];
	ssize_t n;

	if (write(s, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
		return 1;
	n = read(s, buf, sizeof(buf) - 1);
	close(s);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	if (!strstr(buf, " 200 "))
		return 1;
	printf("http ok\n");
	return 0;
}

/* Reports a connected socket's peer and the time taken, then requests. */
static int connected(int s, long long t0)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (getpeername(s, (struct sockaddr *)&peer, &len) < 0) {
		printf("getpeername %s\n", strerror(errno));
		close(s);
		return 1;
	}
	printf("peer");
	print_addr("", (struct sockaddr *)&peer);
	printf(" %lld\n", now_ms() - t0);
	return request(s);
}

/* One blocking connect to (family, addr); returns 0 or 1. */
static int connect_one(int family, const void *addr)
{
	struct sockaddr_storage ss;
	socklen_t len = make_sa(family, addr, &ss);
	long long t0 = now_ms();
	int s = new_socket();

	if (s < 0 || len == 0 || connect(s, (struct sockaddr *)&ss, len) < 0) {
		printf("connect %s %lld\n", len ? strerror(errno) :
		    "family not usable", now_ms() - t0);
		if (s >= 0)
			close(s);
		return 1;
	}
	return connected(s, t0);
}

/* A non-blocking connect bounded by per_ms; returns 0 or 1. */
static int connect_bounded(const struct sockaddr *sa, socklen_t len,
    long long t0)
{
	int s = new_socket(), err = 0;
	socklen_t elen = sizeof(err);
	struct pollfd p = { .fd = s, .events = POLLOUT };

	if (s < 0)
		return 1;
	fcntl(s, F_SETFL, O_NONBLOCK);
	if (connect(s, sa, len) < 0 && errno != EINPROGRESS) {
		close(s);
		return 1;
	}
	if (poll(&p, 1, per_ms) != 1 ||
	    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err) {
		close(s);
		return 1;
	}
	fcntl(s, F_SETFL, 0);
	return connected(s, t0);
}

static const void *ai_addr_of(const struct addrinfo *ai)
{
	if (ai->ai_family == AF_INET)
		return &((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
	return &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
}

/* Prints the resolver's order; returns the result to use, or NULL. */
static const struct addrinfo *order(const struct addrinfo *res)
{
	const struct addrinfo *pick = NULL;

	printf("order");
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		char ip[INET6_ADDRSTRLEN];

		inet_ntop(ai->ai_family, ai_addr_of(ai), ip, sizeof(ip));
		printf(" %s", ip);
		if (!pick && (!want_addr || strcmp(ip, want_addr) == 0))
			pick = ai;
	}
	printf("\n");
	return pick;
}

static int run_gai(const char *name, int loop)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int r = getaddrinfo(name, NULL, &hints, &res), rc = 0;

	if (r != 0) {
		printf("lookup %s\n", r == EAI_AGAIN ? "EAI_AGAIN" :
		    r == EAI_NONAME ? "EAI_NONAME" : gai_strerror(r));
		return 2;
	}
	const struct addrinfo *pick = order(res);

	for (int i = 0; i < count && rc == 0; i++) {
		if (!loop) {
			rc = pick ? connect_one(pick->ai_family,
			    ai_addr_of(pick)) : 1;
			continue;
		}
		long long t0 = now_ms();

		rc = 1;
		for (const struct addrinfo *ai = res; ai && rc; ai = ai->ai_next) {
			struct sockaddr_storage ss;
			socklen_t len = make_sa(ai->ai_family, ai_addr_of(ai),
			    &ss);

			if (len)
				rc = connect_bounded((struct sockaddr *)&ss,
				    len, t0);
		}
	}
	freeaddrinfo(res);
	return rc;
}

static const char *h_name(int e)
{
	switch (e) {
	case TRY_AGAIN: return "TRY_AGAIN";
	case HOST_NOT_FOUND: return "HOST_NOT_FOUND";
	case NO_DATA: return "NO_DATA";
	default: return "NO_RECOVERY";
	}
}

static int run_hostent(const char *mode, const char *name)
{
	static char buf[8192];
	struct hostent he, *h = NULL;
	int herr = 0;

	if (strcmp(mode, "hostent") == 0)
		h = gethostbyname(name);
	else if (strcmp(mode, "hostent2") == 0)
		h = gethostbyname2(name, AF_INET);
	else if (strcmp(mode, "hostent_r") == 0)
		gethostbyname_r(name, &he, buf, sizeof(buf), &h, &herr);
	else
		gethostbyname2_r(name, AF_INET, &he, buf, sizeof(buf), &h,
		    &herr);
	if (!h) {
		printf("lookup %s\n", h_name(strstr(mode, "_r") ? herr :
		    h_errno));
		return 2;
	}
	printf("order");
	for (char **a = h->h_addr_list; *a; a++) {
		char ip[INET6_ADDRSTRLEN];

		inet_ntop(h->h_addrtype, *a, ip, sizeof(ip));
		printf(" %s", ip);
	}
	printf("\n");
	int rc = 0;

	for (int i = 0; i < count && rc == 0; i++)
		rc = connect_one(h->h_addrtype, h->h_addr_list[0]);
	return rc;
}

int main(int argc, char **argv)
{
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 4)
		return 64;
	const char *mode = argv[1], *name = argv[2];

	port = atoi(argv[3]);
	optind = 4;
	while ((opt = getopt(argc, argv, "f:a:n:t:")) != -1) {
		switch (opt) {
		case 'f': fam = optarg; break;
		case 'a': want_addr = optarg; break;
		case 'n': count = atoi(optarg); break;
		case 't': per_ms = atoi(optarg); break;
		default: return 64;
		}
	}
	if (strcmp(mode, "gai") == 0 || strcmp(mode, "loop") == 0)
		return run_gai(name, strcmp(mode, "loop") == 0);
	if (strncmp(mode, "hostent", 7) == 0)
		return run_hostent(mode, name);
	return 64;
}
