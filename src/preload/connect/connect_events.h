/* SPDX-License-Identifier: MIT */
/*
 * connect_events.h - the events a wait reports when a managed connect has
 * just ended, the same as the kernel reports them to a program without
 * the library (poll, select and epoll alike).
 *
 * Thread-safe: nothing here keeps state.
 */
#ifndef RS_CONNECT_EVENTS_H
#define RS_CONNECT_EVENTS_H

#include <stdint.h>

/*
 * The events a failed connect reports to a wait for events (poll or epoll
 * bits; flags such as EPOLLET are ignored): what Linux reports for a TCP
 * socket whose connect failed, readable (at end of file), writable, in
 * error and hung up, limited to what was asked for plus POLLERR|POLLHUP.
 */
uint32_t rs_connect_failed_events(uint32_t events);

/*
 * The events a connected socket fd reports now to a wait for events (as
 * above): the kernel's own answer, asked with a poll that does not wait,
 * so that data, or data and a reset, that arrived with the connection
 * show as they would without the library.  POLLOUT (when asked) if the
 * kernel cannot be asked.
 */
uint32_t rs_connect_kernel_events(int fd, uint32_t events);

#endif /* RS_CONNECT_EVENTS_H */
