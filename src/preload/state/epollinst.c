/* SPDX-License-Identifier: MIT */
/*
 * epollinst.c - per-epoll-instance records, timers and the kernel's copy
 * of each registration.
 *
 * Instances are reached through a two-level table indexed by the epoll
 * descriptor, whose chunks and instances are published with an atomic
 * store and never freed, so lookups take no lock.  Records are indexed by
 * fd inside their instance, under its lock.
 */
#include "epollinst.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "real.h"

#define CHUNK RS_EPI_CHUNK
#define MAX_FD RS_EPI_MAX_FD

struct rs_ept_instance **rs_epi_slots[RS_EPI_CHUNK];
static struct rs_ept_instance *g_all;
static pthread_mutex_t g_make_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned rs_epi_g_total;
static unsigned g_tagged;

/* The express path of epoll_ctl reads the four flags as one word. */
_Static_assert(sizeof(((struct rs_ept_record *)0)->unsettled) ==
    4 * sizeof(bool), "rs_ept_record: unsettled covers the four flags");

void rs_epi_lock_wait(struct rs_ept_instance *i)
{
	/* Marked as waited for (2) before sleeping, so that the holder's
	   unlock wakes a sleeper; the exchange takes the lock when it sees
	   it free. */
	while (__atomic_exchange_n(&i->lock, 2, __ATOMIC_ACQUIRE) != 0)
		syscall(SYS_futex, &i->lock, FUTEX_WAIT_PRIVATE, 2, NULL,
		    NULL, 0);
}

void rs_epi_lock_wake(struct rs_ept_instance *i)
{
	syscall(SYS_futex, &i->lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Makes the instance of epfd under the make lock: rare (once per number). */
static struct rs_ept_instance *make(int epfd)
{
	struct rs_ept_instance ***slot = &rs_epi_slots[epfd / CHUNK];
	struct rs_ept_instance *i;

	if (!*slot)
		__atomic_store_n(slot, calloc(CHUNK, sizeof(**slot)),
		    __ATOMIC_RELEASE);
	if (!*slot)
		return NULL;
	i = (*slot)[epfd % CHUNK];
	if (i)
		return i;
	if (!(i = calloc(1, sizeof(*i))))
		return NULL;
	i->epfd = epfd;
	i->next = g_all;
	__atomic_store_n(&g_all, i, __ATOMIC_RELEASE);
	__atomic_store_n(&(*slot)[epfd % CHUNK], i, __ATOMIC_RELEASE);
	return i;
}

struct rs_ept_instance *rs_epi_get(int epfd)
{
	struct rs_ept_instance *i = rs_epi_find(epfd);

	if (i || (unsigned)epfd >= MAX_FD)
		return i;
	pthread_mutex_lock(&g_make_lock);
	i = make(epfd);
	pthread_mutex_unlock(&g_make_lock);
	return i;
}

struct rs_ept_instance *rs_epi_all(void)
{
	return __atomic_load_n(&g_all, __ATOMIC_ACQUIRE);
}

unsigned rs_epi_tagged_total(void)
{
	return __atomic_load_n(&g_tagged, __ATOMIC_ACQUIRE);
}

/* Grows the fd index to hold fd; returns 0 or -ENOMEM. */
static int reserve(struct rs_ept_instance *i, int fd)
{
	unsigned cap = i->cap ? i->cap : 64;

	while (cap <= (unsigned)fd)
		cap *= 2;
	if (cap == i->cap)
		return 0;
	struct rs_ept_record **v = realloc(i->by_fd, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (unsigned k = i->cap; k < cap; k++)
		v[k] = NULL;
	i->by_fd = v;
	i->cap = cap;
	return 0;
}

struct rs_ept_record *rs_epi_add(struct rs_ept_instance *i, int fd)
{
	struct rs_ept_record *r = rs_epi_record(i, fd);

	if (r) {
		rs_epi_idle(i, r);
		r->live = true;
		return r;
	}
	if ((unsigned)fd >= MAX_FD || reserve(i, fd) < 0 ||
	    !(r = calloc(1, sizeof(*r))))
		return NULL;
	r->fd = fd;
	r->kmode = RS_EPT_ABSENT;
	r->live = true;
	i->by_fd[fd] = r;
	__atomic_add_fetch(&i->nrecords, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&rs_epi_g_total, 1, __ATOMIC_RELEASE);
	return r;
}

void rs_epi_unpend(struct rs_ept_instance *i, struct rs_ept_record *r)
{
	struct rs_ept_record **pp = &i->pend;

	if (!r->pending)
		return;
	while (*pp && *pp != r)
		pp = &(*pp)->pnext;
	if (*pp)
		*pp = r->pnext;
	r->pending = false;
	__atomic_sub_fetch(&i->nbusy, 1, __ATOMIC_RELEASE);
}

void rs_epi_pend(struct rs_ept_instance *i, struct rs_ept_record *r)
{
	if (r->pending)
		return;
	r->pnext = i->pend;
	i->pend = r;
	r->pending = true;
	__atomic_add_fetch(&i->nbusy, 1, __ATOMIC_RELEASE);
}

void rs_epi_timer(struct rs_ept_instance *i, struct rs_ept_record *r,
    int64_t when_ms)
{
	bool was = rs_heap_queued(&r->timer);

	r->key_io = 0;
	if (when_ms == RS_NEVER) {
		rs_heap_remove(&i->timers, &r->timer);
	} else if (rs_heap_set(&i->timers, &r->timer, when_ms) < 0) {
		/* No memory for the heap: the timeout cannot be kept. */
		return;
	}
	if (was != rs_heap_queued(&r->timer))
		__atomic_add_fetch(&i->nbusy, was ? -1u : 1u,
		    __ATOMIC_RELEASE);
}

void rs_epi_timer_by(struct rs_ept_instance *i, struct rs_ept_record *r,
    int64_t when_ms)
{
	/* A timer due earlier already is kept: the wait that finds it due
	   looks at the socket again and moves it on, so a registration that
	   comes and goes with every request (ADD, DEL, ADD...) costs no heap
	   operation. */
	if (when_ms != RS_NEVER && rs_heap_queued(&r->timer) &&
	    r->timer.key <= when_ms)
		return;
	rs_epi_timer(i, r, when_ms);
}

static void count_tagged(struct rs_ept_instance *i, int delta)
{
	__atomic_add_fetch(&i->ntagged, (unsigned)delta, __ATOMIC_RELEASE);
	__atomic_add_fetch(&g_tagged, (unsigned)delta, __ATOMIC_RELEASE);
}

void rs_epi_idle(struct rs_ept_instance *i, struct rs_ept_record *r)
{
	/* The timer stays queued (see rs_epi_timer_by()): the wait that
	   finds it due on a record that is not live takes it out. */
	rs_epi_unpend(i, r);
	if (rs_epi_tagged(r->kmode))
		count_tagged(i, -1);
	r->kmode = RS_EPT_ABSENT;
	r->live = r->disarmed = r->reported = r->restore = false;
	r->events = 0;
	r->data.u64 = 0;
}

void rs_epi_drop(struct rs_ept_instance *i, struct rs_ept_record *r)
{
	rs_epi_idle(i, r);
	rs_epi_timer(i, r, RS_NEVER);
	i->by_fd[r->fd] = NULL;
	free(r);
	__atomic_sub_fetch(&i->nrecords, 1, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&rs_epi_g_total, 1, __ATOMIC_RELEASE);
}

void rs_epi_clear(struct rs_ept_instance *i)
{
	for (unsigned fd = 0; fd < i->cap && i->nrecords; fd++)
		if (i->by_fd[fd])
			rs_epi_drop(i, i->by_fd[fd]);
	rs_heap_free(&i->timers);
}

int rs_epi_kctl(int epfd, int op, int fd, uint32_t events, epoll_data_t d)
{
	struct epoll_event ev = { .events = events, .data = d };
	int save = errno, r = rs_real_epoll_ctl(epfd, op, fd, &ev);

	if (r < 0)
		r = -errno;
	errno = save;
	return r;
}

/* Puts a registration into the kernel, replacing what is there. */
static int put(struct rs_ept_instance *i, struct rs_ept_record *r,
    uint32_t events, epoll_data_t d)
{
	int e = -ENOENT;

	/* A failed MOD (the entry vanished, or EPOLLEXCLUSIVE forbids
	   MOD) is retried as DEL and ADD. */
	if (r->kmode != RS_EPT_ABSENT)
		e = rs_epi_kctl(i->epfd, EPOLL_CTL_MOD, r->fd, events, d);
	if (e < 0) {
		if (r->kmode != RS_EPT_ABSENT)
			rs_epi_kctl(i->epfd, EPOLL_CTL_DEL, r->fd, 0, d);
		e = rs_epi_kctl(i->epfd, EPOLL_CTL_ADD, r->fd, events, d);
	}
	return e;
}

/*
 * What a connect's tagged registration asks for: its completion
 * (EPOLLOUT), and the program's own read events, so that the event that
 * reports the completion carries them as the kernel reports them to the
 * program without the library (data, or data and a reset, that came with
 * the connection) and need not be asked again.  A socket in SYN_SENT
 * reports none of them.
 */
static uint32_t connect_events(const struct rs_ept_record *r)
{
	/* An edge-triggered program gets an edge-triggered registration
	   with all its events, which can then stand for the program's own
	   once the completion is shown (rs_epi_relay()). */
	if (r->events & EPOLLET)
		return EPOLLOUT | EPOLLET | (r->events & (EPOLLIN |
		    EPOLLOUT | EPOLLRDHUP | EPOLLPRI));
	return EPOLLOUT | (r->events & (EPOLLIN | EPOLLRDHUP | EPOLLPRI));
}

/*
 * What the tagged registration of a response being judged asks for: its
 * bytes (EPOLLIN), and the program's EPOLLOUT, which the judging hides
 * no more than the kernel would; edge-triggered with all the program's
 * events when the program's is (so it can stand for the program's once
 * the response is shown, as for a connect).
 */
static uint32_t judge_events(const struct rs_ept_record *r)
{
	if (r->events & EPOLLET)
		return EPOLLIN | EPOLLET | (r->events & (EPOLLOUT |
		    EPOLLRDHUP | EPOLLPRI));
	return EPOLLIN | (r->events & EPOLLOUT);
}

bool rs_epi_relay(struct rs_ept_record *r)
{
	if (!rs_epi_tagged(r->kmode) || r->kmode == RS_EPT_RELAY ||
	    !(r->tag_events & EPOLLET))
		return false;
	/* Tagged before and after: the count does not change. */
	r->kmode = RS_EPT_RELAY;
	return true;
}

int rs_epi_set_kernel(struct rs_ept_instance *i, struct rs_ept_record *r,
    enum rs_ept_kernel mode)
{
	epoll_data_t d = { .u64 = RS_EPT_TAG | (uint32_t)r->fd };
	bool was_tagged = rs_epi_tagged(r->kmode);
	uint32_t tag = mode == RS_EPT_TAGGED ? connect_events(r) :
	    judge_events(r);
	int e = 0;

	if (mode == r->kmode && mode != RS_EPT_PROGRAM &&
	    (!rs_epi_tagged(mode) || mode == RS_EPT_RELAY ||
		tag == r->tag_events))
		return 0;
	if (mode == RS_EPT_ABSENT)
		e = rs_epi_kctl(i->epfd, EPOLL_CTL_DEL, r->fd, 0, d);
	else if (rs_epi_tagged(mode))
		e = put(i, r, r->tag_events = tag, d);
	else if (r->kmode != RS_EPT_PROGRAM)
		e = put(i, r, r->events, r->data);
	r->kmode = e < 0 && mode != RS_EPT_ABSENT ? RS_EPT_ABSENT : mode;
	if (was_tagged != rs_epi_tagged(r->kmode))
		count_tagged(i, was_tagged ? -1 : 1);
	return e;
}

/*
 * fork: every instance lock is taken around it, so that the child never
 * inherits one held by a thread that does not exist there.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&g_make_lock);
	for (struct rs_ept_instance *i = rs_epi_all(); i; i = i->next)
		rs_epi_lock(i);
}

static void fork_release(void)
{
	for (struct rs_ept_instance *i = rs_epi_all(); i; i = i->next)
		rs_epi_unlock(i);
	pthread_mutex_unlock(&g_make_lock);
}

__attribute__((constructor)) static void rs_epi_constructor(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}
