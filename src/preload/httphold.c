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
#include "httpretry.h"
#include "vfork.h"

/* The deadline layer's head of fd, when it holds one. */
static void release_out(int fd, struct rs_fd *e)
{
	struct rs_httpconn *c = rs_httpconn_get(fd);

	/* Another thread inside a call on it sends or keeps its bytes. */
	if (!c || !c->counted ||
	    __atomic_exchange_n(&c->busy, 1, __ATOMIC_ACQUIRE) != 0)
		return;
	rs_httpout_release(c, e, fd);
	rs_holdcount_note(&c->counted, false, fd);
	rs_httpconn_put(c);
}

/* The retry engine's head of e, or the rest of one it flushed. */
static void release_retry(int fd, struct rs_fd *e)
{
	struct rs_hconn *h;
	bool busy;

	if (!e || !__atomic_load_n(&e->http, __ATOMIC_ACQUIRE) ||
	    !(h = rs_hconn_enter_wait(e, &busy)))
		return;
	if (h->counted) {
		rs_hconn_release(h, e, fd);
		rs_holdcount_note(&h->counted, false, fd);
	}
	rs_hconn_leave(e, h);
}

void rs_hold_release(int fd)
{
	int save = errno;

	/* A vfork child shares the parent's memory: its state is the
	   parent's to send. */
	if (fd < 0 || rs_vfork_child() || rs_guard_active())
		return;
	release_out(fd, rs_fd_get(fd));
	release_retry(fd, rs_fd_get(fd));
	errno = save;
}

void rs_hold_release_range(unsigned first, unsigned last)
{
	int top = __atomic_load_n(&rs_holdcount_top, __ATOMIC_RELAXED);

	for (unsigned fd = first; fd <= last && (int)fd <= top &&
	    rs_holdcount_any(); fd++)
		rs_hold_release((int)fd);
}

void rs_hold_polled(struct pollfd *fds, unsigned long n)
{
	for (unsigned long i = 0; i < n && rs_holdcount_any(); i++)
		if (fds[i].events & (POLLIN | POLLPRI | POLLRDHUP))
			rs_hold_release(fds[i].fd);
}

void rs_hold_selected(int n, const fd_set *r)
{
	int top = __atomic_load_n(&rs_holdcount_top, __ATOMIC_RELAXED);

	for (int fd = 0; r && fd < n && fd < FD_SETSIZE && fd <= top; fd++)
		if (FD_ISSET(fd, r))
			rs_hold_release(fd);
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
