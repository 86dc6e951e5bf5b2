/*
 * epolltrack.c - records the program's epoll registrations of sockets whose
 * connect the library drives, and keeps the records in step with
 * connect() and close().
 *
 * The kernel decides every epoll_ctl first; the record follows.  While
 * the library holds the kernel registration (a pending connect, a
 * read/write deadline), a MOD or DEL changes the record only.  The table
 * itself is epollrec.c; the waits are epollwait.c.
 */
#include "epolltrack.h"

#include <errno.h>
#include <sys/socket.h>

#include "clock.h"
#include "epollrec.h"
#include "fdtable.h"
#include "runtime.h"

/*
 * Returns whether fd is worth recording: managed already, or a socket
 * that is not connected yet (a later connect() may be managed).  One
 * getpeername per registration; connected and non-socket fds are left out.
 */
static bool worth_recording(int fd)
{
	const struct rs_runtime *rt = rs_runtime_peek();
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int save = errno;
	bool yes;

	if (rt && !rt->active)
		return false;
	if (rs_fd_get(fd))
		return true;
	yes = getpeername(fd, (struct sockaddr *)&ss, &len) < 0 &&
	    errno == ENOTCONN;
	errno = save;
	return yes;
}

/* EPOLL_CTL_ADD: the kernel decides, then the record follows. */
static int ctl_add(int epfd, int fd, struct epoll_event *ev)
{
	struct rs_ept_record *g;

	if (!worth_recording(fd))
		return rs_eptrec_kctl(epfd, EPOLL_CTL_ADD, fd, ev->events,
		    ev->data);
	rs_eptrec_lock();
	int r = rs_eptrec_kctl(epfd, EPOLL_CTL_ADD, fd, ev->events, ev->data);

	if (r == 0 && (g = rs_eptrec_get(epfd, fd))) {
		g->events = ev->events;
		g->data = ev->data;
		g->kmode = RS_EPT_PROGRAM;
		g->disarmed = false;
		rs_eptrec_refresh(g, rs_clock_now_ms());
	}
	rs_eptrec_unlock();
	return r;
}

/*
 * EPOLL_CTL_MOD and DEL of a recorded fd: while the library holds the
 * kernel registration, only the record changes.
 */
static int ctl_recorded(struct rs_ept_record *g, int op, struct epoll_event *ev)
{
	int r = 0;

	if (op == EPOLL_CTL_DEL) {
		if (g->kmode != RS_EPT_ABSENT)
			r = rs_eptrec_kctl(g->epfd, op, g->fd, 0, g->data);
		rs_eptrec_drop(g);
		return r == -ENOENT ? 0 : r;
	}
	if (g->kmode == RS_EPT_PROGRAM &&
	    (r = rs_eptrec_kctl(g->epfd, op, g->fd, ev->events, ev->data)) < 0)
		return r;
	g->events = ev->events;
	g->data = ev->data;
	g->disarmed = g->reported = false;
	if (g->kmode == RS_EPT_TAGGED)
		g->kevents = 0;	/* re-arm a tagged one-shot registration */
	/* A one-shot or failed registration the library had withdrawn. */
	if (!g->active && g->kmode == RS_EPT_ABSENT) {
		g->kmode = RS_EPT_PROGRAM;
		r = rs_eptrec_kctl(g->epfd, EPOLL_CTL_ADD, g->fd, ev->events,
		    ev->data);
	}
	rs_eptrec_refresh(g, rs_clock_now_ms());
	return r;
}

int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (!ev && op != EPOLL_CTL_DEL)
		return -EFAULT;
	if (op == EPOLL_CTL_ADD)
		return ctl_add(epfd, fd, ev);
	if (rs_eptrec_count() == 0)
		return rs_eptrec_kctl(epfd, op, fd, ev ? ev->events : 0,
		    ev ? ev->data : (epoll_data_t){ 0 });
	rs_eptrec_lock();
	struct rs_ept_record *g = rs_eptrec_find(epfd, fd);
	int r = g ? ctl_recorded(g, op, ev) : rs_eptrec_kctl(epfd, op, fd,
	    ev ? ev->events : 0, ev ? ev->data : (epoll_data_t){ 0 });

	rs_eptrec_unlock();
	return r;
}

void rs_ept_fd_changed(int fd)
{
	int save = errno;

	if (!rs_eptrec_count())
		return;
	rs_eptrec_lock();
	for (struct rs_ept_instance *i = rs_eptrec_instances(); i;
	     i = i->next) {
		struct rs_ept_record *r = rs_eptrec_find(i->epfd, fd);

		if (r)
			rs_eptrec_refresh(r, rs_clock_now_ms());
	}
	rs_eptrec_unlock();
	errno = save;
}

void rs_ept_fd_closed(int fd)
{
	if (!rs_eptrec_count() && !rs_eptrec_instances())
		return;
	rs_eptrec_lock();
	if (rs_eptrec_instance(fd))
		rs_eptrec_forget_instance(fd);
	for (struct rs_ept_instance *i = rs_eptrec_instances(); i;
	     i = i->next) {
		struct rs_ept_record *r = rs_eptrec_find(i->epfd, fd);

		if (r)
			rs_eptrec_release(r, true);
	}
	rs_eptrec_unlock();
}

void rs_ept_fd_range_closed(unsigned first, unsigned last)
{
	if (!rs_eptrec_count() && !rs_eptrec_instances())
		return;
	rs_eptrec_lock();
	rs_eptrec_drop_range(first, last, true);
	rs_eptrec_unlock();
}

void rs_ept_fd_reused(int fd)
{
	if (!rs_eptrec_count() && !rs_eptrec_instances())
		return;
	rs_eptrec_lock();
	rs_eptrec_drop_range((unsigned)fd, (unsigned)fd, false);
	rs_eptrec_unlock();
}
