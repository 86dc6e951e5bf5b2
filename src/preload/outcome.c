/*
 * outcome.c - what the kernel says about a connect attempt.
 *
 * For TCP the socket's state comes from TCP_INFO, which changes nothing;
 * SO_ERROR, which clears the pending error, is read only while the attempt
 * is still under way or once the state says it failed before any byte
 * arrived, never when it connected.  Unix sockets connect at once or not
 * at all, and are asked SO_ERROR and getpeername as before.
 */
#include "outcome.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

/* The unix-socket (and fallback) reading: SO_ERROR, then getpeername. */
static int by_peer(int fd)
{
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	int err = take_so_error(fd);

	if (err)
		return err;
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
		return 0;
	return errno == ENOTCONN ? 1 : errno;
}

/* Returns whether bytes from the peer wait in fd's receive queue. */
static int peer_data_queued(int fd)
{
	int n = 0;

	return rs_real_ioctl(fd, FIONREAD, (uintptr_t)&n) == 0 && n > 0;
}

/*
 * A closed TCP socket either never connected (refused, unreachable, reset
 * at once by a server that accepted: SO_ERROR says which) or connected and
 * was then reset after the peer sent data, which is still queued: then
 * the connect succeeded and the reset is the program's to read.  A closed
 * socket without an error (someone else read it) failed all the same, as
 * the kernel's own connect() then says.
 */
static int closed(int fd)
{
	if (peer_data_queued(fd))
		return 0;
	int err = take_so_error(fd);

	return err ? err : ECONNABORTED;
}

int rs_outcome_attempt(int fd, int family)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (family == AF_UNIX ||
	    rs_real_getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
	    len < 1)
		return by_peer(fd);
	switch (ti.tcpi_state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECV: {
		/* An ICMP error that arrives while connect() holds the
		   socket is only a soft error (tcp_v4_err): poll reports
		   POLLERR and SO_ERROR returns it, the state stays SYN_SENT
		   until the next retransmission.  A program would give up
		   here; so does the attempt. */
		int err = take_so_error(fd);

		return err ? err : 1;
	}
	case TCP_CLOSE:
		return closed(fd);
	default:
		/* Established, or ended by the peer after that. */
		return 0;
	}
}

void rs_outcome_dissolve(int fd, int family)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };
	int save = errno;

	if (family != AF_UNIX) {
		rs_real_connect(fd, &sa, sizeof(sa));
		take_so_error(fd);
	}
	errno = save;
}
