/* SPDX-License-Identifier: MIT */
/*
 * fake_wait.c - the scripted waits (poll, ppoll, select, pselect, the
 * epoll waits) and the model of each epoll instance's interest list that
 * epoll_ctl keeps and the epoll waits report from.  See fake.h.
 */
#include "fake_script.h"

#include <errno.h>
#include <string.h>

#include "real.h"

#define MAX_REGS 32

static struct fk_epreg regs[MAX_REGS];
static bool reg_used[MAX_REGS];
static int ctl_count[4];

/* ---- waits ---- */

/* What each wait watched: a copy of its poll array or interest list. */
#define MAX_WAITS 64
#define MAX_WATCH 8

static struct {
	int n;
	struct fk_ready w[MAX_WATCH];
} waits[MAX_WAITS];
static int nwaits;

static void note_watch(int fd, unsigned events)
{
	if (nwaits < MAX_WAITS && waits[nwaits].n < MAX_WATCH)
		waits[nwaits].w[waits[nwaits].n++] =
		    (struct fk_ready){ fd, events };
}

int fk_watched(int i, int fd)
{
	for (int j = 0; i >= 0 && i < nwaits && j < waits[i].n; j++)
		if (waits[i].w[j].fd == fd)
			return (int)waits[i].w[j].events;
	return -1;
}

int fk_waits(void)
{
	return nwaits;
}

/* The kernel's poll over fds, for the step s; returns the ready count. */
static int fake_poll(const struct fk_step *s, struct pollfd *fds, nfds_t n)
{
	int found = 0;

	for (nfds_t i = 0; i < n; i++) {
		fds[i].revents = 0;
		if (fds[i].fd < 0)
			continue;
		note_watch(fds[i].fd, (unsigned short)fds[i].events);
		fds[i].revents = (short)(fk_ready_of(s, fds[i].fd) &
		    (unsigned short)(fds[i].events | POLLERR | POLLHUP |
			POLLNVAL));
		found += fds[i].revents != 0;
	}
	if (nwaits < MAX_WAITS)
		nwaits++;
	return found;
}

static int poll_step(enum fk_fn fn, struct pollfd *fds, nfds_t n, int tmo)
{
	const struct fk_step *s = fk_take(fn, -1);
	int found = s ? fake_poll(s, fds, n) : 0;

	fk_check_tmo(s, tmo);
	fk_pass_time(s, found, tmo);
	return (int)fk_answer(s, found);
}

int rs_real_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return poll_step(FK_POLL, fds, n, timeout_ms);
}

const sigset_t *fk_ppoll_mask;

int rs_real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo,
    const sigset_t *mask)
{
	fk_ppoll_mask = mask;
	return poll_step(FK_PPOLL, fds, n, fk_tmo_of(tmo));
}

/* select through the poll model: each set bit becomes one pollfd. */
static int select_step(enum fk_fn fn, int n, fd_set *r, fd_set *w,
    fd_set *x, int tmo)
{
	const struct fk_step *s = fk_take(fn, -1);
	int found = 0;

	fk_check_tmo(s, tmo);
	for (int fd = 0; s && fd < n && fd < FK_MAX_FD; fd++) {
		unsigned got = fk_ready_of(s, fd);

		if (r && FD_ISSET(fd, r) && !(got & POLLIN))
			FD_CLR(fd, r);
		if (w && FD_ISSET(fd, w) && !(got & POLLOUT))
			FD_CLR(fd, w);
		if (x && FD_ISSET(fd, x) && !(got & POLLPRI))
			FD_CLR(fd, x);
		found += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) +
		    (x && FD_ISSET(fd, x));
	}
	fk_pass_time(s, found, tmo);
	return (int)fk_answer(s, found);
}

int rs_real_select(int n, fd_set *r, fd_set *w, fd_set *e,
    struct timeval *tmo)
{
	return select_step(FK_SELECT, n, r, w, e, tmo ?
	    (int)(tmo->tv_sec * 1000 + tmo->tv_usec / 1000) : -1);
}

int rs_real_pselect(int n, fd_set *r, fd_set *w, fd_set *e,
    const struct timespec *tmo, const sigset_t *mask)
{
	(void)mask;
	return select_step(FK_PSELECT, n, r, w, e, fk_tmo_of(tmo));
}

/* ---- epoll: the kernel's interest lists ---- */

static int reg_find(int epfd, int fd)
{
	for (int i = 0; i < MAX_REGS; i++)
		if (reg_used[i] && regs[i].epfd == epfd && regs[i].fd == fd)
			return i;
	return -1;
}

const struct fk_epreg *fk_epoll_reg(int epfd, int fd)
{
	int i = reg_find(epfd, fd);

	return i < 0 ? NULL : &regs[i];
}

int fk_epoll_ctl_count(int op)
{
	return op >= 1 && op <= 3 ? ctl_count[op] : 0;
}

static int reg_add(int epfd, int fd, const struct epoll_event *ev)
{
	for (int i = 0; i < MAX_REGS; i++) {
		if (reg_used[i])
			continue;
		reg_used[i] = true;
		regs[i] = (struct fk_epreg){ epfd, fd, ev->events,
			ev->data.u64, false };
		return 0;
	}
	fk_wrong("more than %d epoll registrations", MAX_REGS);
	return -ENOMEM;
}

/* epoll_ctl as Linux answers it, on the model. */
static int ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int i = reg_find(epfd, fd);

	if (op < 1 || op > 3)
		return -EINVAL;
	ctl_count[op]++;
	if (op == EPOLL_CTL_ADD)
		return i >= 0 ? -EEXIST : reg_add(epfd, fd, ev);
	if (i < 0)
		return -ENOENT;
	if (op == EPOLL_CTL_DEL) {
		reg_used[i] = false;
		return 0;
	}
	if ((regs[i].events | ev->events) & EPOLLEXCLUSIVE)
		return -EINVAL;
	regs[i].events = ev->events;
	regs[i].data = ev->data.u64;
	regs[i].disarmed = false;
	return 0;
}

int rs_real_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	fk_count_call();
	int r = ctl(epfd, op, fd, ev);

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* The kernel's epoll wait over the model, for the step s. */
static int fake_epoll(const struct fk_step *s, int epfd,
    struct epoll_event *ev, int max)
{
	int n = 0;

	for (int i = 0; i < MAX_REGS; i++) {
		struct fk_epreg *g = &regs[i];

		if (!reg_used[i] || g->epfd != epfd)
			continue;
		note_watch(g->fd, g->disarmed ? 0 : g->events);
		unsigned got = fk_ready_of(s, g->fd) &
		    (g->events | EPOLLERR | EPOLLHUP);

		if (g->disarmed || !got || n >= max)
			continue;
		ev[n].events = got;
		ev[n++].data.u64 = g->data;
		g->disarmed = (g->events & EPOLLONESHOT) != 0;
	}
	if (nwaits < MAX_WAITS)
		nwaits++;
	return n;
}

static int epoll_step(enum fk_fn fn, int epfd, struct epoll_event *ev,
    int max, int tmo)
{
	const struct fk_step *s = fk_take(fn, epfd);
	int found = s ? fake_epoll(s, epfd, ev, max) : 0;

	fk_check_tmo(s, tmo);
	if (s && s->max && s->max != max)
		fk_wrong("%s: maxevents %d, expected %d", fk_fn_names[fn], max,
		    s->max);
	fk_pass_time(s, found, tmo);
	return (int)fk_answer(s, found);
}

int rs_real_epoll_wait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms)
{
	return epoll_step(FK_EPOLL_PWAIT, epfd, ev, max, timeout_ms);
}

int rs_real_epoll_pwait(int epfd, struct epoll_event *ev, int max,
    int timeout_ms, const sigset_t *mask)
{
	(void)mask;
	return epoll_step(FK_EPOLL_PWAIT, epfd, ev, max, timeout_ms);
}

int rs_real_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
    const struct timespec *tmo, const sigset_t *mask)
{
	(void)mask;
	return epoll_step(FK_EPOLL_PWAIT2, epfd, ev, max, fk_tmo_of(tmo));
}

void fk_wait_reset(void)
{
	memset(reg_used, 0, sizeof(reg_used));
	memset(ctl_count, 0, sizeof(ctl_count));
	memset(waits, 0, sizeof(waits));
	nwaits = 0;
}
