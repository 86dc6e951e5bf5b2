/* SPDX-License-Identifier: MIT */
/*
 * dest.c - a managed socket's destination, formatted for the log.
 *
 * The address comes from the entry (what the program passed to connect),
 * the name from the program's own lookup when there was one.  Thread-safe.
 */
#include "dest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

/* Formats "unix:/path", or "unix:@name" for the abstract namespace. */
static void format_unix(const struct rs_fd *e, char *buf, size_t len)
{
	const struct sockaddr_un *un = (const void *)&e->addr;
	size_t off = offsetof(struct sockaddr_un, sun_path);
	size_t n = e->addrlen > off ? e->addrlen - off : 0;

	if (n > 0 && un->sun_path[0] == '\0')
		snprintf(buf, len, "unix:@%.*s", (int)(n - 1),
		    un->sun_path + 1);
	else
		snprintf(buf, len, "unix:%.*s", (int)n, un->sun_path);
}

/* Formats the address as "1.2.3.4:80", "[::1]:80" or "unix:/path". */
static void format_addr(const struct rs_fd *e, char *buf, size_t len)
{
	const struct sockaddr *sa = (const struct sockaddr *)&e->addr;
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(in6->sin6_port));
	} else {
		format_unix(e, buf, len);
	}
}

void rs_dest_format(const struct rs_fd *e, struct rs_dest *d)
{
	format_addr(e, d->addr, sizeof(d->addr));
	if (e->host[0]) {
		const char *port = strrchr(d->addr, ':');

		snprintf(d->text, sizeof(d->text), "%s%s (%.*s)", e->host,
		    port ? port : "", port ? (int)(port - d->addr) :
		    (int)strlen(d->addr), d->addr);
	} else {
		snprintf(d->text, sizeof(d->text), "%s", d->addr);
	}
}

struct rs_log_fields rs_dest_log_fields(const struct rs_fd *e,
    struct rs_dest *d, const char *event)
{
	rs_dest_format(e, d);
	return (struct rs_log_fields){
		.event = event, .host = e->host[0] ? e->host : NULL,
		.addr = d->addr, .attempt = -1, .attempts = -1,
		.error = NULL, .wait_ms = -1,
	};
}
