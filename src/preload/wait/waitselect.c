/* SPDX-License-Identifier: MIT */
/*
 * waitselect.c - select and pselect, translated to poll (wait.h): so that
 * descriptors >= FD_SETSIZE work, and a wait that involves a managed
 * socket is the poll engine's (wait.c, through waitpoll.h).  A wait that
 * involves none is the real select.  Thread-safe: nothing here keeps
 * state.
 */
#include "wait.h"
#include "waitpoll.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fdtable.h"
#include "real.h"

/* Selects of up to this many descriptors need no allocation. */
#define SEL_STACK 64

#define ULBITS (CHAR_BIT * sizeof(unsigned long))

static bool bit(const fd_set *s, int fd)
{
	return s && (((const unsigned long *)(const void *)s)[fd / ULBITS] >>
	    (fd % ULBITS)) & 1;
}

static void set_bit(fd_set *s, int fd)
{
	((unsigned long *)(void *)s)[fd / ULBITS] |= 1UL << (fd % ULBITS);
}

/* The bits of word i of whichever sets are given. */
static unsigned long word(const fd_set *r, const fd_set *w, const fd_set *x,
    int i)
{
	unsigned long v = 0;

	if (r)
		v |= ((const unsigned long *)(const void *)r)[i];
	if (w)
		v |= ((const unsigned long *)(const void *)w)[i];
	if (x)
		v |= ((const unsigned long *)(const void *)x)[i];
	return v;
}

/*
 * Counts the descriptors in the sets (below n) and whether any of them is
 * involved; fills fds when it is not NULL.
 */
static size_t sel_scan(int n, const fd_set *r, const fd_set *w,
    const fd_set *x, struct pollfd *fds, bool *any)
{
	size_t count = 0;

	for (int i = 0; i * (int)ULBITS < n; i++) {
		unsigned long v = word(r, w, x, i);

		for (; v; v &= v - 1) {
			int fd = i * (int)ULBITS + __builtin_ctzl(v);
			short ev = (bit(r, fd) ? POLLIN : 0) |
			    (bit(w, fd) ? POLLOUT : 0) |
			    (bit(x, fd) ? POLLPRI : 0);
			struct rs_fd *e;

			if (fd >= n)
				break;
			if (fds)
				fds[count] = (struct pollfd){ fd, ev, 0 };
			count++;
			if (*any || !(e = rs_fd_get(fd)))
				continue;
			*any = rs_wait_involved(e, ev);
		}
	}
	return count;
}

/* Clears the words of a set that cover n descriptors. */
static void zero_set(fd_set *s, int n)
{
	if (s)
		memset(s, 0, (size_t)(n + ULBITS - 1) / ULBITS *
		    sizeof(unsigned long));
}

/* Writes poll results back into the sets as Linux select does. */
static int sel_results(int n, fd_set *r, fd_set *w, fd_set *x,
    const struct pollfd *fds, size_t count)
{
	int ready = 0;

	for (size_t i = 0; i < count; i++)
		if (fds[i].revents & POLLNVAL)
			return -EBADF;
	zero_set(r, n);
	zero_set(w, n);
	zero_set(x, n);
	for (size_t i = 0; i < count; i++) {
		short ev = fds[i].events, re = fds[i].revents;

		if (fds[i].fd < 0)
			continue;
		if ((ev & POLLIN) && (re & (POLLIN | POLLHUP | POLLERR)))
			set_bit(r, fds[i].fd), ready++;
		if ((ev & POLLOUT) && (re & (POLLOUT | POLLERR)))
			set_bit(w, fds[i].fd), ready++;
		if ((ev & POLLPRI) && (re & POLLPRI))
			set_bit(x, fds[i].fd), ready++;
	}
	return ready;
}

/* The managed select: returns the ready count, or -errno.  as_pselect:
   the real waits are ppoll with mask (rs_wait_poll_common()). */
static int sel_managed(int n, fd_set *r, fd_set *w, fd_set *x,
    int64_t end_ms, bool as_pselect, const sigset_t *mask, size_t count)
{
	struct pollfd stack[SEL_STACK], *fds = stack;
	bool any = false;

	if (count > SEL_STACK && !(fds = malloc(count * sizeof(*fds))))
		return -ENOMEM;
	sel_scan(n, r, w, x, fds, &any);
	int ret;

	/*
	 * poll may report what select does not (POLLHUP on a descriptor only
	 * in exceptfds): such a round reports nothing, and the descriptor is
	 * left out of the rest of the wait so that it cannot spin.
	 */
	for (;;) {
		ret = rs_wait_poll_common(fds, count, end_ms, as_pselect,
		    mask);
		if (ret >= 0)
			ret = sel_results(n, r, w, x, fds, count);
		if (ret != 0 || rs_clock_now_ms() >= end_ms)
			break;
		for (size_t i = 0; i < count; i++)
			if (fds[i].revents)
				fds[i].fd = -1;
	}
	if (fds != stack)
		free(fds);
	return ret;
}

int rs_wait_select(int n, fd_set *r, fd_set *w, fd_set *x,
    struct timeval *tmo)
{
	bool any = false;
	size_t count = n > 0 ? sel_scan(n, r, w, x, NULL, &any) : 0;

	if (!any || (tmo && (tmo->tv_sec < 0 || tmo->tv_usec < 0))) {
		int ret = rs_real_select(n, r, w, x, tmo);

		return ret < 0 ? -errno : ret;
	}
	int64_t now = rs_clock_now_ms(), end = RS_NEVER;

	if (tmo && tmo->tv_sec <= INT32_MAX)
		end = rs_clock_after(now, rs_clock_timeval_ms(tmo));
	int ret = sel_managed(n, r, w, x, end, false, NULL, count);

	/* Linux select leaves the time not slept in *tmo (end is 1 ms past
	   the timeout's own end: rs_clock_after()). */
	if (tmo && end != RS_NEVER) {
		int64_t left = end - 1 - rs_clock_now_ms();

		left = left < 0 ? 0 : left;
		tmo->tv_sec = left / 1000;
		tmo->tv_usec = (left % 1000) * 1000;
	}
	return ret;
}

int rs_wait_pselect(int n, fd_set *r, fd_set *w, fd_set *x,
    const struct timespec *tmo, const sigset_t *mask)
{
	bool any = false;
	size_t count = n > 0 ? sel_scan(n, r, w, x, NULL, &any) : 0;
	int64_t end;

	if (!any || (end = rs_wait_end_ms(tmo, rs_clock_now_ms())) < 0) {
		int ret = rs_real_pselect(n, r, w, x, tmo, mask);

		return ret < 0 ? -errno : ret;
	}
	return sel_managed(n, r, w, x, end, true, mask, count);
}
