/*
 * epollrec.c - the table of epoll registrations the library looks after,
 * and what the kernel holds for each.
 *
 * Records live in one hash table keyed by (epfd, fd); each epoll instance
 * that holds a record has a small header with the list of its "active"
 * records (a pending connect, an unreported failure, or a read/write
 * deadline), so that a wait walks only those.  g_active counts active
 * records process-wide: while it is zero every wait is a plain system call.
 * The mutex is held for table updates and non-blocking epoll_ctl/connect
 * steps only, never across epoll_wait; this module registers its own fork
 * handlers so that a child never inherits it held.
 */
#include "epollrec.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "clock.h"
#include "connect_step.h"
#include "io_timeout.h"
#include "real.h"

#define NBUCKETS 16384u

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rs_ept_record **g_table;
static struct rs_ept_instance *g_insts;
static unsigned g_nregs, g_active;	/* atomic reads outside the lock */

void rs_eptrec_lock(void)
{
	pthread_mutex_lock(&g_lock);
}

void rs_eptrec_unlock(void)
{
	pthread_mutex_unlock(&g_lock);
}

unsigned rs_eptrec_count(void)
{
	return __atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE);
}

unsigned rs_eptrec_active(void)
{
	return __atomic_load_n(&g_active, __ATOMIC_ACQUIRE);
}

struct rs_ept_instance *rs_eptrec_instances(void)
{
	return g_insts;
}

static unsigned bucket(int epfd, int fd)
{
	return ((unsigned)fd * 2654435761u ^ (unsigned)epfd * 40503u) %
	    NBUCKETS;
}

struct rs_ept_record *rs_eptrec_find(int epfd, int fd)
{
	if (!g_table)
		return NULL;
	for (struct rs_ept_record *r = g_table[bucket(epfd, fd)]; r;
	     r = r->next)
		if (r->epfd == epfd && r->fd == fd)
			return r;
	return NULL;
}

struct rs_ept_instance *rs_eptrec_instance(int epfd)
{
	for (struct rs_ept_instance *i = g_insts; i; i = i->next)
		if (i->epfd == epfd)
			return i;
	return NULL;
}

static struct rs_ept_instance *get_inst(int epfd)
{
	struct rs_ept_instance *i = rs_eptrec_instance(epfd);

	if (!i && (i = calloc(1, sizeof(*i)))) {
		i->epfd = epfd;
		i->next = g_insts;
		g_insts = i;
	}
	return i;
}

static void activate(struct rs_ept_record *r)
{
	struct rs_ept_instance *i;

	if (r->active || !(i = get_inst(r->epfd)))
		return;
	r->anext = i->active;
	if (r->anext)
		r->anext->aprev = &r->anext;
	r->aprev = &i->active;
	i->active = r;
	r->active = true;
	__atomic_add_fetch(&g_active, 1, __ATOMIC_RELEASE);
}

static void deactivate(struct rs_ept_record *r)
{
	if (!r->active)
		return;
	*r->aprev = r->anext;
	if (r->anext)
		r->anext->aprev = r->aprev;
	r->active = false;
	__atomic_sub_fetch(&g_active, 1, __ATOMIC_RELEASE);
}

struct rs_ept_record *rs_eptrec_get(int epfd, int fd)
{
	struct rs_ept_record *r = rs_eptrec_find(epfd, fd);

	if (r)
		return r;
	if (!g_table && !(g_table = calloc(NBUCKETS, sizeof(*g_table))))
		return NULL;
	/* connect() finds the records of a fd through the instances. */
	if (!get_inst(epfd))
		return NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return NULL;
	r->epfd = epfd;
	r->fd = fd;
	r->kmode = RS_EPT_ABSENT;
	r->next = g_table[bucket(epfd, fd)];
	g_table[bucket(epfd, fd)] = r;
	__atomic_add_fetch(&g_nregs, 1, __ATOMIC_RELEASE);
	return r;
}

void rs_eptrec_drop(struct rs_ept_record *r)
{
	struct rs_ept_record **pp = &g_table[bucket(r->epfd, r->fd)];

	deactivate(r);
	while (*pp != r)
		pp = &(*pp)->next;
	*pp = r->next;
	free(r);
	__atomic_sub_fetch(&g_nregs, 1, __ATOMIC_RELEASE);
}

/* ---- the kernel's copy of a registration ---- */

int rs_eptrec_kctl(int epfd, int op, int fd, uint32_t events,
    epoll_data_t d)
{
	struct epoll_event ev = { .events = events, .data = d };
	int save = errno, r = rs_real_epoll_ctl(epfd, op, fd, &ev);

	if (r < 0)
		r = -errno;
	errno = save;
	return r;
}

/*
 * Makes the kernel hold what mode says: the program's registration, a
 * tagged one with events kev, or none.  A failed MOD (the entry vanished,
 * or EPOLLEXCLUSIVE forbids MOD) is retried as DEL and ADD.
 */
static void set_kernel(struct rs_ept_record *r, enum rs_ept_kernel mode,
    uint32_t kev)
{
	uint32_t ev = mode == RS_EPT_PROGRAM ? r->events : kev;
	epoll_data_t d = r->data;

	if (mode == r->kmode && (mode != RS_EPT_TAGGED || kev == r->kevents))
		return;
	if (mode == RS_EPT_ABSENT) {
		rs_eptrec_kctl(r->epfd, EPOLL_CTL_DEL, r->fd, 0, d);
	} else {
		if (mode == RS_EPT_TAGGED)
			d.u64 = RS_EPT_TAG | (uint32_t)r->fd;
		if (r->kmode == RS_EPT_ABSENT ||
		    rs_eptrec_kctl(r->epfd, EPOLL_CTL_MOD, r->fd, ev, d) < 0) {
			rs_eptrec_kctl(r->epfd, EPOLL_CTL_DEL, r->fd, 0, d);
			rs_eptrec_kctl(r->epfd, EPOLL_CTL_ADD, r->fd, ev, d);
		}
	}
	r->kmode = mode;
	r->kevents = kev;
}

/*
 * Returns whether the program's registration must stay out of the kernel:
 * a one-shot that fired, or an edge-triggered one whose failure was
 * reported (its edge has been delivered).
 */
static bool withdrawn(const struct rs_ept_record *r)
{
	return r->disarmed || (r->reported && (r->events & EPOLLET));
}

/*
 * Steps the pending connect of r's socket e and sets the kernel watching
 * for it: EPOLLOUT, tagged, during an attempt; nothing during a backoff.
 * Returns false once the connect has finished.
 */
static bool sync_pending(struct rs_ept_record *r, struct rs_fd *e, int ready,
    int64_t now, int64_t *next)
{
	enum rs_connect_want w = rs_connect_step(r->fd, e, ready, now);

	r->reported = false;
	if (w == RS_WANT_NOTHING)
		return false;
	set_kernel(r, w == RS_WANT_WRITABLE ? RS_EPT_TAGGED : RS_EPT_ABSENT,
	    EPOLLOUT);
	activate(r);
	*next = rs_clock_min(*next, rs_connect_next_ms(e));
	return true;
}

/*
 * Reports the failure of r's connect, once.  The kernel registration
 * stays away until the next wait, so that this one does not report the
 * dead socket twice; then a level-triggered one goes on reporting it from
 * the kernel, as Linux does.  Returns the events for the program.
 */
static uint32_t report_failure(struct rs_ept_record *r)
{
	r->reported = true;
	r->disarmed = r->events & EPOLLONESHOT;
	set_kernel(r, RS_EPT_ABSENT, 0);
	activate(r);
	return (r->events & EPOLLOUT) | EPOLLERR | EPOLLHUP;
}

/*
 * Holds the failure of r's connect for the next wait on its instance: the
 * kernel's registration stays away (a one-shot would fire on the dead
 * socket and be spent, a level-triggered one report it without EPOLLERR)
 * and the record stays active, so that the wait reports it.  For callers
 * that have no wait to report to.
 */
static uint32_t hold_failure(struct rs_ept_record *r)
{
	set_kernel(r, RS_EPT_ABSENT, 0);
	activate(r);
	return 0;
}

/* rs_eptrec_sync(); deliver: a failure is reported now, else held. */
static uint32_t sync_record(struct rs_ept_record *r, int ready, int64_t now,
    int64_t *next, bool deliver)
{
	struct rs_fd *e = rs_fd_get(r->fd);
	enum rs_fd_state st = e ? rs_fd_state(e) : RS_FD_NONE;

	r->expire = r->seen = false;
	if ((st == RS_FD_CONNECTING || st == RS_FD_BACKOFF) &&
	    sync_pending(r, e, ready, now, next))
		return 0;
	st = e ? rs_fd_state(e) : RS_FD_NONE;
	if (st == RS_FD_FAILED && !r->reported && e->final_error)
		return deliver ? report_failure(r) : hold_failure(r);
	short io = rs_eptrec_io_events(r->events);
	int64_t dl = st == RS_FD_CONNECTED && io ?
	    rs_io_wait_deadline(e, io, now) : RS_NEVER;

	if (dl != RS_NEVER) {
		/* Tagged, so that a wait knows which fd an event is for. */
		set_kernel(r, r->disarmed ? RS_EPT_ABSENT : RS_EPT_TAGGED,
		    r->events);
		activate(r);
		r->expire = dl <= now && !r->disarmed;
		if (!r->disarmed)
			*next = rs_clock_min(*next, dl);
		return 0;
	}
	set_kernel(r, withdrawn(r) ? RS_EPT_ABSENT : RS_EPT_PROGRAM, 0);
	deactivate(r);
	return 0;
}

uint32_t rs_eptrec_sync(struct rs_ept_record *r, int ready, int64_t now,
    int64_t *next)
{
	return sync_record(r, ready, now, next, true);
}

void rs_eptrec_refresh(struct rs_ept_record *r, int64_t now)
{
	int64_t next = RS_NEVER;

	sync_record(r, 0, now, &next, false);
}

void rs_eptrec_forget_instance(int epfd)
{
	struct rs_ept_instance **pp = &g_insts;

	for (unsigned b = 0; g_table && b < NBUCKETS; b++)
		for (struct rs_ept_record *r = g_table[b], *n; r; r = n) {
			n = r->next;
			if (r->epfd == epfd)
				rs_eptrec_drop(r);
		}
	while (*pp && (*pp)->epfd != epfd)
		pp = &(*pp)->next;
	if (*pp) {
		struct rs_ept_instance *i = *pp;

		*pp = i->next;
		free(i);
	}
}

/*
 * The program's own registration is put back first, since a dup'd copy
 * may keep the file,
 * and with it the registration, alive -- a tagged one would then leak the
 * library's data to the program.  When false, the number was reused
 * behind our back and the kernel is not touched.
 */
void rs_eptrec_release(struct rs_ept_record *r, bool restore)
{
	if (restore && r->kmode != RS_EPT_PROGRAM)
		set_kernel(r, withdrawn(r) ? RS_EPT_ABSENT : RS_EPT_PROGRAM, 0);
	rs_eptrec_drop(r);
}

void rs_eptrec_drop_range(unsigned first, unsigned last, bool restore)
{
	int save = errno;

	for (struct rs_ept_instance *i = g_insts, *n; i; i = n) {
		n = i->next;
		if ((unsigned)i->epfd >= first && (unsigned)i->epfd <= last)
			rs_eptrec_forget_instance(i->epfd);
	}
	for (unsigned b = 0; g_table && b < NBUCKETS; b++)
		for (struct rs_ept_record *r = g_table[b], *n; r; r = n) {
			n = r->next;
			if ((unsigned)r->fd >= first && (unsigned)r->fd <= last)
				rs_eptrec_release(r, restore);
		}
	errno = save;
}

/* The child of a fork must never inherit the record lock held. */
static void fork_prepare(void)
{
	rs_eptrec_lock();
}

static void fork_release(void)
{
	rs_eptrec_unlock();
}

/* Registered by this module itself: start-up knows nothing of epoll. */
__attribute__((constructor)) static void register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}
