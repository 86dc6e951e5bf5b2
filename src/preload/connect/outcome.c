/* SPDX-License-Identifier: MIT */
/*
 * outcome.c - what the kernel says about a connect attempt.
 *
 * Peer data queued (FIONREAD, which changes nothing) is asked first: then
 * the connection was established, whatever happened to it since, and its
 * pending error -- a reset after the data -- stays the program's.  Only
 * without data are SO_ERROR (which clears the pending error) and
 * getpeername asked, as for unix sockets, which never carry data before
 * they connect.
 */
#include "outcome.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/ioctl.h>

#include "real.h"

/* Takes the socket's pending error; 0 when there is none. */
static int take_so_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (rs_real_getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

/* Returns whether bytes from the peer wait in fd's receive queue. */
static bool peer_data_queued(int fd)
{
	int n = 0;

	return rs_real_ioctl(fd, FIONREAD, (uintptr_t)&n) == 0 && n > 0;
}

/*
 * SO_ERROR also returns a soft error: an ICMP error that arrives while
 * connect() holds the socket leaves it in SYN_SENT (tcp_v4_err), poll
 * reports POLLERR, and a program would give up here; so does the attempt.
 */
int rs_outcome_attempt(int fd, int family)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);

	if (family != AF_UNIX && peer_data_queued(fd))
		return 0;
	int err = take_so_error(fd);

	if (err)
		return err;
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
		return 0;
	return errno == ENOTCONN ? 1 : errno;
}

/*
 * A refusal or a reset comes with the socket already closed by the
 * kernel; after a timeout (ours) or an ICMP error (soft, see above) the
 * attempt may still be in SYN_SENT, which AF_UNSPEC aborts.
 */
static bool maybe_syn_sent(int err)
{
	return err != ECONNREFUSED && err != ECONNRESET &&
	    err != ECONNABORTED;
}

void rs_outcome_dissolve(int fd, int family, int err)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };
	int save = errno;

	if (family != AF_UNIX) {
		rs_real_connect(fd, &sa, sizeof(sa));
		if (maybe_syn_sent(err))
			take_so_error(fd);
	}
	errno = save;
}
