/* SPDX-License-Identifier: MIT */
/*
 * connect.h - the connect() wrapper's engine.
 *
 * A program's connect() on a managed socket becomes one logical connect:
 * up to `attempts` kernel connects on the same descriptor (connect_step.h).
 * Blocking sockets run the whole sequence inside connect()
 * (connect_wait.h); non-blocking ones are advanced by the waits (wait.c,
 * epollwait.c).  Thread-safe per descriptor.
 */
#ifndef RS_CONNECT_H
#define RS_CONNECT_H

#include <sys/socket.h>

/*
 * Returns 0 or -errno (-EINPROGRESS for a non-blocking socket whose
 * connect goes on in the background).  Sockets the policy does not manage
 * are passed to the real connect unchanged.
 */
int rs_connect(int fd, const struct sockaddr *sa, socklen_t len);

#endif /* RS_CONNECT_H */
