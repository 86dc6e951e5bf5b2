/* SPDX-License-Identifier: MIT */
/*
 * httphold.c - the release of held request bytes (httphold.h).
 *
 * A held head is released unedited: the connection ends with it, or the
 * program waits for an answer that cannot come until the peer has it.
 * Both layers may hold for one descriptor: the deadline layer's bytes go
 * first, through the retry engine (which may take them into its own
 * head), and then the retry engine's.
 */
#include "httphold.h"

#include <errno.h>
#include <pthread.h>

#include "fdtable.h"
#include "guard.h"
#include "httpconn.h"
#include "httpout.h"
#include "httpretry.h"
#include "vfork.h"

/*
 * Whether a holder's bytes are to go: any holder's, or with mine only
 * those the calling thread wrote (a wait releases the heads of its own
 * thread: another thread may be between two writes of one).
 */
static bool chosen(uintptr_t holder, bool mine)
{
	return holder != 0 && (!mine || holder == rs_holdcount_self());
}

/* The deadline layer's head of fd, when it holds one. */
static void release_out(int fd, struct rs_fd *e, bool mine)
{
	struct rs_httpconn *c = rs_httpconn_get(fd);

	/* Another thread inside a call on it sends or keeps its bytes. */
	if (!c || !chosen(c->holder, mine) ||
	    __atomic_exchange_n(&c->busy, 1, __ATOMIC_ACQUIRE) != 0)
		return;
	rs_httpout_release(c, e, fd);
	rs_holdcount_note(&c->holder, false, fd);
	rs_httpconn_put(c);
}

/* The retry engine's head of e, or the rest of one it flushed. */
static void release_retry(int fd, struct rs_fd *e, bool mine)
{
	struct rs_hconn *h;
	bool busy;

	if (!e || !__atomic_load_n(&e->http, __ATOMIC_ACQUIRE) ||
	    !(h = rs_hconn_enter_wait(e, &busy)))
		return;
	if (chosen(h->holder, mine)) {
		rs_hconn_release(h, e, fd);
		rs_holdcount_note(&h->holder, false, fd);
	}
	rs_hconn_leave(e, h);
}

static void release_fd(int fd, bool mine)
{
	int save = errno;

	/* A vfork child shares the parent's memory: its state is the
	   parent's to send. */
	if (fd < 0 || rs_vfork_child() || rs_guard_active())
		return;
	release_out(fd, rs_fd_get(fd), mine);
	release_retry(fd, rs_fd_get(fd), mine);
	errno = save;
}

void rs_hold_release(int fd)
{
	release_fd(fd, false);
}

static void release_range(unsigned first, unsigned last, bool mine)
{
	int top = __atomic_load_n(&rs_holdcount_top, __ATOMIC_RELAXED);

	for (unsigned fd = first; fd <= last && (int)fd <= top &&
	    rs_holdcount_any(); fd++)
		release_fd((int)fd, mine);
}

void rs_hold_release_range(unsigned first, unsigned last)
{
	release_range(first, last, false);
}

void rs_hold_release_mine(void)
{
	release_range(0, (unsigned)-1, true);
}

void rs_hold_polled(struct pollfd *fds, unsigned long n)
{
	for (unsigned long i = 0; i < n && rs_holdcount_any(); i++)
		if (fds[i].events & (POLLIN | POLLPRI | POLLRDHUP))
			release_fd(fds[i].fd, true);
}

void rs_hold_selected(int n, const fd_set *r)
{
	int top = __atomic_load_n(&rs_holdcount_top, __ATOMIC_RELAXED);

	for (int fd = 0; r && fd < n && fd < FD_SETSIZE && fd <= top; fd++)
		if (FD_ISSET(fd, r))
			release_fd(fd, true);
}

/* exit (and a return from main): what is held goes before the end. */
__attribute__((destructor)) static void hold_at_exit(void)
{
	rs_hold_all();
}

/*
 * fork: what is held goes before it, so that parent and child never both
 * send it (or the child's exit and the parent's edited head).  holdcount.c
 * registers it when the first connection holds.
 */
static void hold_at_fork(void)
{
	rs_hold_all();
}

__attribute__((constructor)) static void hold_constructor(void)
{
	rs_holdcount_at_fork = hold_at_fork;
}
