/* SPDX-License-Identifier: MIT */
/*
 * connect_events.c - the events a wait reports when a managed connect has
 * just ended, as the kernel would (connect_events.h).
 *
 * Thread-safe: nothing here keeps state.
 */
#include "connect_events.h"

#include <poll.h>

#include "real.h"

/*
 * A TCP connect fails by tcp_done(), which shuts both directions down:
 * tcp_poll() then reports the socket hung up, readable (end of file, with
 * POLLRDHUP) and writable, and in error while the error is pending.  The
 * library's own failure (after its last attempt) is reported the same.
 */
#define FAILED_EVENTS (POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM | \
	POLLRDHUP | POLLERR | POLLHUP)

/* The poll bits of an epoll or poll mask (epoll's flags are above them). */
#define EVENT_BITS 0xffffu

uint32_t rs_connect_failed_events(uint32_t events)
{
	return FAILED_EVENTS & ((events & EVENT_BITS) | POLLERR | POLLHUP);
}

uint32_t rs_connect_kernel_events(int fd, uint32_t events)
{
	struct pollfd p = { .fd = fd, .events = (short)(events & EVENT_BITS) };

	if (rs_real_poll(&p, 1, 0) < 0 || (p.revents & POLLNVAL))
		return events & POLLOUT;
	return (uint16_t)p.revents;
}
