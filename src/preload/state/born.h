/* SPDX-License-Identifier: MIT */
/*
 * born.h - sockets this process made with socket() that are still as
 * socket() made them: a blocking stream socket (AF_INET, AF_INET6) whose
 * SO_SNDTIMEO the program never set.  A connect on one needs no question
 * to the kernel (F_GETFL, SO_TYPE, SO_SNDTIMEO) before its attempt.
 *
 * A hint, kept by the interposed calls: close, dup, fcntl(F_SETFL),
 * ioctl(FIONBIO), setsockopt(SO_SNDTIMEO) and every new descriptor clear
 * it.  What they cannot see (a copy of the socket in a fork child or in
 * another process changing its flags) is caught by the connect itself: a
 * socket found non-blocking after all is handled as one (connect.c).
 * Thread-safe, lock-free.
 */
#ifndef RS_BORN_H
#define RS_BORN_H

#include <stdbool.h>
#include <stdint.h>

#include "fdtable.h"

/*
 * The bitmaps (born.c), one bit per descriptor number: plain, and the
 * program set SO_RCVTIMEO on it.  Their tests are inline, as every
 * socket, connect and close asks them.
 */
extern uint64_t rs_born_bits[RS_FD_MAX / 64]
    __attribute__((visibility("hidden")));
extern uint64_t rs_born_rcv_bits[RS_FD_MAX / 64]
    __attribute__((visibility("hidden")));

/* Bit fd of map (fd in range). */
static inline bool rs_born_test(const uint64_t *map, int fd)
{
	return (__atomic_load_n(&map[(unsigned)fd / 64], __ATOMIC_RELAXED) >>
	    ((unsigned)fd % 64)) & 1;
}

/* After socket(domain, type, ...) returned fd. */
void rs_born_note(int fd, int domain, int type);

/* rs_born_forget() of a number whose bit is set. */
void rs_born_clear(int fd);

/*
 * fd is no longer as socket() made it (or is another descriptor now).  A
 * load first: most descriptors never had the bit.
 */
static inline void rs_born_forget(int fd)
{
	if ((unsigned)fd < RS_FD_MAX && rs_born_test(rs_born_bits, fd))
		rs_born_clear(fd);
}

/* The same for first..last (close_range). */
void rs_born_forget_range(unsigned first, unsigned last);

/* Whether fd is still the plain blocking stream socket socket() made. */
static inline bool rs_born_plain(int fd)
{
	return (unsigned)fd < RS_FD_MAX && rs_born_test(rs_born_bits, fd);
}

/*
 * The program set SO_RCVTIMEO on fd (interposed setsockopt).  Unlike
 * SO_SNDTIMEO, this leaves the socket plain: a connect does not ask it.
 */
void rs_born_rcvtimeo_set(int fd);

/* Whether fd is plain and its SO_RCVTIMEO still the 0 socket() gave it. */
static inline bool rs_born_rcvtimeo_unset(int fd)
{
	return rs_born_plain(fd) && !rs_born_test(rs_born_rcv_bits, fd);
}

/* At a fork, in parent and child: the copies share the sockets, so
   neither side may trust the other's changes to be seen. */
void rs_born_forget_all(void);

#endif /* RS_BORN_H */
