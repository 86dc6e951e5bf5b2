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

/* After socket(domain, type, ...) returned fd. */
void rs_born_note(int fd, int domain, int type);

/* fd is no longer as socket() made it (or is another descriptor now). */
void rs_born_forget(int fd);

/* The same for first..last (close_range). */
void rs_born_forget_range(unsigned first, unsigned last);

/* Whether fd is still the plain blocking stream socket socket() made. */
bool rs_born_plain(int fd);

/*
 * The program set SO_RCVTIMEO on fd (interposed setsockopt).  Unlike
 * SO_SNDTIMEO, this leaves the socket plain: a connect does not ask it.
 */
void rs_born_rcvtimeo_set(int fd);

/* Whether fd is plain and its SO_RCVTIMEO still the 0 socket() gave it. */
bool rs_born_rcvtimeo_unset(int fd);

/* At a fork, in parent and child: the copies share the sockets, so
   neither side may trust the other's changes to be seen. */
void rs_born_forget_all(void);

#endif /* RS_BORN_H */
