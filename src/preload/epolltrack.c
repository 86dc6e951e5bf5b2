/*
 * epolltrack.c - epoll registrations of sockets whose connect the library
 * drives.
 *
 * Records live in one hash table keyed by (epfd, fd); each epoll instance
 * that holds a record has a small header with the list of its "active"
 * records (a pending connect, an unreported failure, or a read/write
 * deadline), so that a wait walks only those.  g_active counts active
 * records process-wide: while it is zero every wait is a plain system call.
 * The mutex is held for table updates and non-blocking epoll_ctl/connect
 * steps only, never across epoll_wait.
 */
#include "epolltrack.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "clock.h"
#include "connect.h"
#include "fdtable.h"
#include "runtime.h"
#include "io.h"
#include "real.h"

#define NBUCKETS 16384u

/* data.u64 of a registration the library made: tag in the high half. */
#define TAG 0x52534c5600000000ULL	/* "RSLV" */
#define TAG_MASK 0xffffffff00000000ULL

/* What the kernel holds for a record. */
enum kmode { KM_PROGRAM, KM_TAGGED, KM_ABSENT };

struct reg {
	int epfd, fd;
	uint32_t events;	/* the program's registration */
	epoll_data_t data;
	enum kmode kmode;
	uint32_t kevents;	/* events of the tagged registration */
	bool active;
	bool disarmed;		/* EPOLLONESHOT fired: the program re-arms */
	bool reported;		/* the connect's failure was reported */
	bool expire;		/* read/write deadline reached this round */
	bool seen;		/* the kernel reported it this round */
	struct reg *next;	/* hash chain */
	struct reg *anext;	/* active list of the instance */
	struct reg **aprev;
};

struct inst {
	int epfd;
	struct reg *active;
	struct inst *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reg **g_table;
static struct inst *g_insts;
static unsigned g_nregs, g_active;	/* atomic reads outside the lock */

static unsigned bucket(int epfd, int fd)
{
	return ((unsigned)fd * 2654435761u ^ (unsigned)epfd * 40503u) %
	    NBUCKETS;
}

static struct reg *find(int epfd, int fd)
{
	if (!g_table)
		return NULL;
	for (struct reg *r = g_table[bucket(epfd, fd)]; r; r = r->next)
		if (r->epfd == epfd && r->fd == fd)
			return r;
	return NULL;
}

static struct inst *find_inst(int epfd)
{
	for (struct inst *i = g_insts; i; i = i->next)
		if (i->epfd == epfd)
			return i;
	return NULL;
}

static struct inst *get_inst(int epfd)
{
	struct inst *i = find_inst(epfd);

	if (!i && (i = calloc(1, sizeof(*i)))) {
		i->epfd = epfd;
		i->next = g_insts;
		g_insts = i;
	}
	return i;
}

static void activate(struct reg *r)
{
	struct inst *i;

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

static void deactivate(struct reg *r)
{
	if (!r->active)
		return;
	*r->aprev = r->anext;
	if (r->anext)
		r->anext->aprev = r->aprev;
	r->active = false;
	__atomic_sub_fetch(&g_active, 1, __ATOMIC_RELEASE);
}

/* Returns the record of (epfd, fd), creating it; NULL on no memory. */
static struct reg *get(int epfd, int fd)
{
	struct reg *r = find(epfd, fd);

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
	r->kmode = KM_ABSENT;
	r->next = g_table[bucket(epfd, fd)];
	g_table[bucket(epfd, fd)] = r;
	__atomic_add_fetch(&g_nregs, 1, __ATOMIC_RELEASE);
	return r;
}

static void drop(struct reg *r)
{
	struct reg **pp = &g_table[bucket(r->epfd, r->fd)];

	deactivate(r);
	while (*pp != r)
		pp = &(*pp)->next;
	*pp = r->next;
	free(r);
	__atomic_sub_fetch(&g_nregs, 1, __ATOMIC_RELEASE);
}

/* ---- the kernel's copy of a registration ---- */

/* epoll_ctl through libc, -errno on failure; errno is left alone. */
static int kctl(int epfd, int op, int fd, uint32_t events, epoll_data_t d)
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
static void set_kernel(struct reg *r, enum kmode mode, uint32_t kev)
{
	uint32_t ev = mode == KM_PROGRAM ? r->events : kev;
	epoll_data_t d = r->data;

	if (mode == r->kmode && (mode != KM_TAGGED || kev == r->kevents))
		return;
	if (mode == KM_ABSENT) {
		kctl(r->epfd, EPOLL_CTL_DEL, r->fd, 0, d);
	} else {
		if (mode == KM_TAGGED)
			d.u64 = TAG | (uint32_t)r->fd;
		if (r->kmode == KM_ABSENT ||
		    kctl(r->epfd, EPOLL_CTL_MOD, r->fd, ev, d) < 0) {
			kctl(r->epfd, EPOLL_CTL_DEL, r->fd, 0, d);
			kctl(r->epfd, EPOLL_CTL_ADD, r->fd, ev, d);
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
static bool withdrawn(const struct reg *r)
{
	return r->disarmed || (r->reported && (r->events & EPOLLET));
}

/* The poll events a program's epoll registration waits for. */
static short io_events(uint32_t events)
{
	return (short)(events & (EPOLLIN | EPOLLOUT));
}

/*
 * Steps the pending connect of r's socket e and sets the kernel watching
 * for it: EPOLLOUT, tagged, during an attempt; nothing during a backoff.
 * Returns false once the connect has finished.
 */
static bool sync_pending(struct reg *r, struct rs_fd *e, int ready,
    int64_t now, int64_t *next)
{
	enum rs_connect_want w = rs_connect_step(r->fd, e, ready, now);

	r->reported = false;
	if (w == RS_WANT_NOTHING)
		return false;
	set_kernel(r, w == RS_WANT_WRITABLE ? KM_TAGGED : KM_ABSENT, EPOLLOUT);
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
static uint32_t report_failure(struct reg *r)
{
	r->reported = true;
	r->disarmed = r->events & EPOLLONESHOT;
	set_kernel(r, KM_ABSENT, 0);
	activate(r);
	return (r->events & EPOLLOUT) | EPOLLERR | EPOLLHUP;
}

/*
 * Brings r in line with its socket's state, stepping a pending connect
 * (ready: the kernel reported the attempt).  Returns events to report to
 * the program now (a failure), else 0; lowers *next to the time r next
 * needs looking at.
 */
static uint32_t sync_reg(struct reg *r, int ready, int64_t now, int64_t *next)
{
	struct rs_fd *e = rs_fd_get(r->fd);
	enum rs_fd_state st = e ? rs_fd_state(e) : RS_FD_NONE;

	r->expire = r->seen = false;
	if ((st == RS_FD_CONNECTING || st == RS_FD_BACKOFF) &&
	    sync_pending(r, e, ready, now, next))
		return 0;
	st = e ? rs_fd_state(e) : RS_FD_NONE;
	if (st == RS_FD_FAILED && !r->reported && e->final_error)
		return report_failure(r);
	int64_t dl = st == RS_FD_CONNECTED && io_events(r->events) ?
	    rs_io_wait_deadline(e, io_events(r->events), now) : RS_NEVER;

	if (dl != RS_NEVER) {
		/* Tagged, so that a wait knows which fd an event is for. */
		set_kernel(r, r->disarmed ? KM_ABSENT : KM_TAGGED, r->events);
		activate(r);
		r->expire = dl <= now && !r->disarmed;
		if (!r->disarmed)
			*next = rs_clock_min(*next, dl);
		return 0;
	}
	set_kernel(r, withdrawn(r) ? KM_ABSENT : KM_PROGRAM, 0);
	deactivate(r);
	return 0;
}

/* ---- epoll_ctl ---- */

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
	int64_t next = RS_NEVER;
	struct reg *g;

	if (!worth_recording(fd))
		return kctl(epfd, EPOLL_CTL_ADD, fd, ev->events, ev->data);
	pthread_mutex_lock(&g_lock);
	int r = kctl(epfd, EPOLL_CTL_ADD, fd, ev->events, ev->data);

	if (r == 0 && (g = get(epfd, fd))) {
		g->events = ev->events;
		g->data = ev->data;
		g->kmode = KM_PROGRAM;
		g->disarmed = false;
		sync_reg(g, 0, rs_clock_now_ms(), &next);
	}
	pthread_mutex_unlock(&g_lock);
	return r;
}

/*
 * EPOLL_CTL_MOD and DEL of a recorded fd: while the library holds the
 * kernel registration, only the record changes.
 */
static int ctl_recorded(struct reg *g, int op, struct epoll_event *ev)
{
	int64_t next = RS_NEVER;
	int r = 0;

	if (op == EPOLL_CTL_DEL) {
		if (g->kmode != KM_ABSENT)
			r = kctl(g->epfd, op, g->fd, 0, g->data);
		drop(g);
		return r == -ENOENT ? 0 : r;
	}
	if (g->kmode == KM_PROGRAM &&
	    (r = kctl(g->epfd, op, g->fd, ev->events, ev->data)) < 0)
		return r;
	g->events = ev->events;
	g->data = ev->data;
	g->disarmed = g->reported = false;
	if (g->kmode == KM_TAGGED)
		g->kevents = 0;	/* re-arm a tagged one-shot registration */
	/* A one-shot or failed registration the library had withdrawn. */
	if (!g->active && g->kmode == KM_ABSENT) {
		g->kmode = KM_PROGRAM;
		r = kctl(g->epfd, EPOLL_CTL_ADD, g->fd, ev->events, ev->data);
	}
	sync_reg(g, 0, rs_clock_now_ms(), &next);
	return r;
}

int rs_ept_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	if (!ev && op != EPOLL_CTL_DEL)
		return -EFAULT;
	if (op == EPOLL_CTL_ADD)
		return ctl_add(epfd, fd, ev);
	if (__atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE) == 0)
		return kctl(epfd, op, fd, ev ? ev->events : 0,
		    ev ? ev->data : (epoll_data_t){ 0 });
	pthread_mutex_lock(&g_lock);
	struct reg *g = find(epfd, fd);
	int r = g ? ctl_recorded(g, op, ev) : kctl(epfd, op, fd,
	    ev ? ev->events : 0, ev ? ev->data : (epoll_data_t){ 0 });

	pthread_mutex_unlock(&g_lock);
	return r;
}

/* ---- epoll_wait ---- */

bool rs_ept_tracking(void)
{
	return __atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE) != 0;
}

bool rs_ept_busy(int epfd)
{
	struct inst *i;
	bool busy;

	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&g_lock);
	busy = (i = find_inst(epfd)) && i->active;
	pthread_mutex_unlock(&g_lock);
	return busy;
}

/*
 * Steps every active record of epfd before a wait.  Failures to report
 * are written to ev (at most max).  Returns their count; *next is when a
 * record next needs a look, *zero asks for a wait that does not block.
 */
static int prepare(int epfd, struct epoll_event *ev, int max, int64_t now,
    int64_t *next, bool *zero)
{
	struct inst *i = find_inst(epfd);
	struct reg *r, *an;
	int n = 0;

	for (r = i ? i->active : NULL; r && n < max; r = an) {
		an = r->anext;
		uint32_t got = sync_reg(r, 0, now, next);

		if (got)
			ev[n++] = (struct epoll_event){ got, r->data };
		*zero |= r->expire;
	}
	*zero |= n > 0 || r != NULL;
	return n;
}

/*
 * Translates one tagged event from the kernel.  Returns the events to
 * report with the program's data, or 0 when it was internal.
 */
static uint32_t translate(int epfd, struct epoll_event *e, int64_t now)
{
	int fd = (int)(uint32_t)e->data.u64;
	struct reg *r = find(epfd, fd);
	struct rs_fd *f = rs_fd_get(fd);
	int64_t next = RS_NEVER;

	if (!r || r->kmode != KM_TAGGED)
		return 0;
	e->data = r->data;
	if (f && rs_fd_state(f) == RS_FD_CONNECTED && r->kevents == r->events) {
		r->seen = true;
		if (r->events & EPOLLONESHOT)
			r->disarmed = true;
		return e->events;
	}
	return sync_reg(r, 1, now, &next);
}

/*
 * Rewrites the kernel's n events in place: tagged ones are translated or
 * dropped.  Then, when expire is true (after a wait this call prepared),
 * reports read/write deadlines that passed without an event.
 * Returns the number of events kept.
 */
static int collect(int epfd, struct epoll_event *ev, int n, int max,
    bool expire, int64_t now)
{
	int k = 0;

	for (int j = 0; j < n; j++) {
		struct epoll_event e = ev[j];

		if ((e.data.u64 & TAG_MASK) == TAG &&
		    !(e.events = translate(epfd, &e, now)))
			continue;
		ev[k++] = e;
	}
	struct inst *i = expire ? find_inst(epfd) : NULL;

	for (struct reg *r = i ? i->active : NULL; r && k < max; r = r->anext) {
		struct rs_fd *f = rs_fd_get(r->fd);

		if (!r->expire || r->seen || !f)
			continue;
		r->expire = false;
		ev[k++] = (struct epoll_event){ (uint32_t)rs_io_wait_expired(f,
			io_events(r->events), now), r->data };
		if (r->events & EPOLLONESHOT)
			r->disarmed = true;
	}
	return k;
}

int rs_ept_fixup(int epfd, struct epoll_event *ev, int n)
{
	int j;

	if (!__atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE))
		return n;
	for (j = 0; j < n && (ev[j].data.u64 & TAG_MASK) != TAG; j++)
		;
	if (j == n)
		return n;
	pthread_mutex_lock(&g_lock);
	n = collect(epfd, ev, n, n, false, rs_clock_now_ms());
	pthread_mutex_unlock(&g_lock);
	return n;
}

int rs_ept_wait(int epfd, struct epoll_event *ev, int max, int64_t end_ms,
    const sigset_t *mask)
{
	if (max <= 0)
		return -EINVAL;
	for (;;) {
		int64_t now = rs_clock_now_ms(), next = end_ms;
		bool zero = false;

		pthread_mutex_lock(&g_lock);
		int syn = prepare(epfd, ev, max, now, &next, &zero);

		pthread_mutex_unlock(&g_lock);
		int tmo = zero ? 0 : rs_clock_remaining_ms(next, now);
		int n = syn < max ? rs_real_epoll_pwait(epfd, ev + syn,
		    max - syn, tmo, mask) : 0;

		if (n < 0)
			return syn ? syn : -errno;
		pthread_mutex_lock(&g_lock);
		now = rs_clock_now_ms();
		n = syn + collect(epfd, ev + syn, n, max - syn, true, now);
		pthread_mutex_unlock(&g_lock);
		if (n > 0 || now >= end_ms)
			return n;
	}
}

/* ---- connect() and close() ---- */

void rs_ept_fd_changed(int fd)
{
	int64_t next = RS_NEVER;
	int save = errno;

	if (!__atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&g_lock);
	for (struct inst *i = g_insts; i; i = i->next) {
		struct reg *r = find(i->epfd, fd);

		if (r)
			sync_reg(r, 0, rs_clock_now_ms(), &next);
	}
	pthread_mutex_unlock(&g_lock);
	errno = save;
}

/* Forgets epoll instance epfd and all its records. */
static void forget_inst(int epfd)
{
	struct inst **pp = &g_insts;

	for (unsigned b = 0; g_table && b < NBUCKETS; b++)
		for (struct reg *r = g_table[b], *n; r; r = n) {
			n = r->next;
			if (r->epfd == epfd)
				drop(r);
		}
	while (*pp && (*pp)->epfd != epfd)
		pp = &(*pp)->next;
	if (*pp) {
		struct inst *i = *pp;

		*pp = i->next;
		free(i);
	}
}

/*
 * Drops record r.  When restore is true its number still names the file
 * the record describes, about to be closed: the program's own
 * registration is put back first, since a dup'd copy may keep the file,
 * and with it the registration, alive -- a tagged one would then leak the
 * library's data to the program.  When false, the number was reused
 * behind our back and the kernel is not touched.
 */
static void release(struct reg *r, bool restore)
{
	if (restore && r->kmode != KM_PROGRAM)
		set_kernel(r, withdrawn(r) ? KM_ABSENT : KM_PROGRAM, 0);
	drop(r);
}

/* Releases the records of [first, last] and the instances among them. */
static void drop_range(unsigned first, unsigned last, bool restore)
{
	int save = errno;

	for (struct inst *i = g_insts, *n; i; i = n) {
		n = i->next;
		if ((unsigned)i->epfd >= first && (unsigned)i->epfd <= last)
			forget_inst(i->epfd);
	}
	for (unsigned b = 0; g_table && b < NBUCKETS; b++)
		for (struct reg *r = g_table[b], *n; r; r = n) {
			n = r->next;
			if ((unsigned)r->fd >= first && (unsigned)r->fd <= last)
				release(r, restore);
		}
	errno = save;
}

void rs_ept_fd_closed(int fd)
{
	if (!__atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE) && !g_insts)
		return;
	pthread_mutex_lock(&g_lock);
	if (find_inst(fd))
		forget_inst(fd);
	for (struct inst *i = g_insts; i; i = i->next) {
		struct reg *r = find(i->epfd, fd);

		if (r)
			release(r, true);
	}
	pthread_mutex_unlock(&g_lock);
}

void rs_ept_fd_range_closed(unsigned first, unsigned last)
{
	if (!__atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE) && !g_insts)
		return;
	pthread_mutex_lock(&g_lock);
	drop_range(first, last, true);
	pthread_mutex_unlock(&g_lock);
}

void rs_ept_fd_reused(int fd)
{
	if (!__atomic_load_n(&g_nregs, __ATOMIC_ACQUIRE) && !g_insts)
		return;
	pthread_mutex_lock(&g_lock);
	drop_range((unsigned)fd, (unsigned)fd, false);
	pthread_mutex_unlock(&g_lock);
}

/* The child of a fork must never inherit the record lock held. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&g_lock);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&g_lock);
}

/* Registered by this module itself: start-up knows nothing of epoll. */
__attribute__((constructor)) static void register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}
