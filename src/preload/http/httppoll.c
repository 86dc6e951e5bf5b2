/* SPDX-License-Identifier: MIT */
/*
 * httppoll.c - the HTTP engines' looks at one socket (see httppoll.h).
 */
#include "httppoll.h"

#include <errno.h>
#include <poll.h>

#include "clock.h"
#include "real.h"
#include "sigrestart.h"

bool rs_hconn_peer_done(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	return rs_real_poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

int rs_hconn_wait(const struct rs_fd *e, const struct rs_hconn *h, int fd,
    short events, int64_t until, int64_t own)
{
	struct pollfd p = { .fd = fd, .events = events };
	int64_t now, end = rs_clock_min(until, own);
	int r;

	for (;;) {
		if (rs_hconn_closed(e, h))
			return -EBADF;
		now = rs_clock_now_ms();
		if (end != RS_NEVER && now >= end)
			return own <= until ? -EAGAIN : 0;
		r = rs_real_poll(&p, 1, rs_clock_remaining_ms(end, now));
		if (r > 0)
			return rs_hconn_closed(e, h) ? -EBADF : 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r < 0 && (own != RS_NEVER || !rs_signals_restart()))
			return -EINTR;
	}
}
