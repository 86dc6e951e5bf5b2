/* SPDX-License-Identifier: MIT */
/*
 * epollinst.h - what the library keeps per epoll instance: the records of
 * the registrations it looks after, their timers, and the kernel's copy
 * of each registration.
 *
 * An instance is found from its epoll descriptor without a lock (a table
 * indexed by number); everything inside it is guarded by its own lock,
 * so waits and epoll_ctl calls on unrelated instances never contend.  The
 * lock is never held across a wait or anything else that can block (the
 * system calls made under it are non-blocking epoll_ctl, connect steps
 * and zero-timeout polls; log lines never block).  Instances are never
 * freed: a closed one is emptied and its slot reused by the next epoll
 * descriptor with that number, so a racing lookup never sees freed memory.
 */
#ifndef RS_EPOLLINST_H
#define RS_EPOLLINST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "heap.h"
#include "policy.h"
#include "single.h"

/* data.u64 of a registration the library made: tag in the high half. */
#define RS_EPT_TAG 0x52534c5600000000ULL	/* "RSLV" */
#define RS_EPT_TAG_MASK 0xffffffff00000000ULL

/* What the kernel holds for a record. */
enum rs_ept_kernel {
	RS_EPT_PROGRAM,		/* the program's own registration */
	RS_EPT_TAGGED,		/* ours: tagged data, EPOLLOUT, for a connect */
	RS_EPT_ABSENT,		/* nothing */
	RS_EPT_TAGGED_IN,	/* ours: tagged data, EPOLLIN (and the
				   program's EPOLLOUT), for an HTTP response
				   being judged (httpwait.h) */
	RS_EPT_RELAY,		/* a tagged edge-triggered registration,
				   kept after the edge it reported was
				   shown: see rs_epi_relay() */
};

/* Whether the kernel holds a registration of the library's for mode. */
static inline bool rs_epi_tagged(enum rs_ept_kernel mode)
{
	return mode == RS_EPT_TAGGED || mode == RS_EPT_TAGGED_IN ||
	    mode == RS_EPT_RELAY;
}

/* One registration (epoll instance, fd) of a socket that is or may be
   managed. */
/* Everything an epoll_ctl of a request's steady state reads comes first,
   in one cache line: the four flags that send it down the general path
   are read as one word (`unsettled`). */
struct rs_ept_record {
	int fd;
	uint32_t events;	/* the program's registration */
	epoll_data_t data;
	enum rs_ept_kernel kmode;
	bool live;		/* registered by the program (false: kept
				   after EPOLL_CTL_DEL for the next ADD) */
	short key_io;		/* the directions (POLLIN, POLLOUT) whose
				   deadline the timer is due no later than
				   (epolltrack.c); 0 after rs_epi_timer() */
	union {
		struct {
			bool pending;	/* on the instance's pending list */
			bool disarmed;	/* one-shot fired: the program
					   re-arms */
			bool reported;	/* the connect's failure was
					   reported */
			bool restore;	/* LT failure: the program's
					   registration goes back to the
					   kernel at the next wait */
		};
		uint32_t unsettled;	/* nonzero: one of them is set */
	};
	uint32_t tag_events;	/* what a tagged registration for a connect
				   asks the kernel for (rs_epi_set_kernel()) */
	const struct rs_settings *key_settings;	/* ...under these */
	struct rs_heap_node timer;	/* a read/write timeout */
	struct rs_ept_record *pnext;	/* pending list */
};

struct rs_ept_instance {
	uint32_t lock;			/* see rs_epi_lock() */
	int epfd;			/* the number of its slot */
	unsigned nrecords;		/* atomic: read without the lock */
	unsigned ntagged;		/* atomic: tagged registrations */
	unsigned nbusy;			/* atomic: pending + timers */
	struct rs_ept_record **by_fd;	/* indexed by fd, cap entries */
	unsigned cap;
	struct rs_heap timers;
	struct rs_ept_record *pend;	/* connects under way, failures to
					   report, registrations to restore */
	struct rs_ept_instance *next;	/* all instances, append-only */
};

#define RS_EPI_CHUNK 1024u
#define RS_EPI_MAX_FD (RS_EPI_CHUNK * RS_EPI_CHUNK)

/* The instances by epfd, two levels (epollinst.c); for the inline
   lookups below, which every interposed epoll call makes. */
extern struct rs_ept_instance **rs_epi_slots[RS_EPI_CHUNK];
extern unsigned rs_epi_g_total;

/* Returns the instance of epfd, or NULL; lock-free. */
static inline struct rs_ept_instance *rs_epi_find(int epfd)
{
	if ((unsigned)epfd >= RS_EPI_MAX_FD)
		return NULL;
	struct rs_ept_instance **c = __atomic_load_n(
	    &rs_epi_slots[epfd / RS_EPI_CHUNK], __ATOMIC_ACQUIRE);

	return c ? __atomic_load_n(&c[epfd % RS_EPI_CHUNK],
	    __ATOMIC_ACQUIRE) : NULL;
}

/* The waits of rs_epi_lock() and rs_epi_unlock() (epollinst.c). */
void rs_epi_lock_wait(struct rs_ept_instance *i);
void rs_epi_lock_wake(struct rs_ept_instance *i);

/*
 * Takes i's lock.  A futex word -- 0 free, 1 held, 2 held and waited for
 * -- rather than a pthread mutex, whose lock and unlock cost several times
 * more on a path every epoll_ctl of a managed socket takes; uncontended it
 * is one atomic instruction each way, and none while the process has one
 * thread (single.h): the word then stays 0, which rs_epi_unlock() reads
 * as nothing to give back.  The lock is never held across a wait, so a
 * waiter sleeps only while another thread runs a few non-blocking calls.
 */
static inline void rs_epi_lock(struct rs_ept_instance *i)
{
	uint32_t free_ = 0;

	if (rs_one_thread())
		return;
	if (!__builtin_expect(__atomic_compare_exchange_n(&i->lock, &free_, 1,
	    false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED), 1))
		rs_epi_lock_wait(i);
}

static inline void rs_epi_unlock(struct rs_ept_instance *i)
{
	/* 0: taken with one thread, which no other thread can have come to
	   share since (single.h); held, it is 1 or 2. */
	if (__atomic_load_n(&i->lock, __ATOMIC_RELAXED) == 0)
		return;
	if (__builtin_expect(__atomic_exchange_n(&i->lock, 0,
	    __ATOMIC_RELEASE) != 1, 0))
		rs_epi_lock_wake(i);
}

/* Returns the instance of epfd, making it; NULL on no memory. */
struct rs_ept_instance *rs_epi_get(int epfd);

/* The first of all instances ever made (follow ->next); lock-free. */
struct rs_ept_instance *rs_epi_all(void);

/* Total records in all instances (atomic load). */
static inline unsigned rs_epi_total(void)
{
	return __atomic_load_n(&rs_epi_g_total, __ATOMIC_ACQUIRE);
}

/* Total tagged registrations in all instances (atomic load). */
unsigned rs_epi_tagged_total(void);

/* With i locked: the record of fd, or NULL.  Inline: every epoll_ctl on
   an instance with records asks it. */
static inline struct rs_ept_record *rs_epi_record(
    const struct rs_ept_instance *i, int fd)
{
	return (unsigned)fd < i->cap ? i->by_fd[fd] : NULL;
}

/*
 * With i locked: the record of fd, made or reused (a record kept after a
 * DEL, or a stale one), live, absent from the kernel, everything else
 * cleared; NULL on no memory.
 */
struct rs_ept_record *rs_epi_add(struct rs_ept_instance *i, int fd);

/*
 * With i locked: r is no longer registered (EPOLL_CTL_DEL): cleared and
 * kept, not live, so that the next ADD of the fd allocates nothing.  The
 * kernel is not touched; a timer stays queued, to be taken out by the
 * wait that finds it due (the next ADD usually reuses it).
 */
void rs_epi_idle(struct rs_ept_instance *i, struct rs_ept_record *r);

/* With i locked: frees r (the kernel is not touched). */
void rs_epi_drop(struct rs_ept_instance *i, struct rs_ept_record *r);

/* With i locked: drops every record (the epoll fd was closed). */
void rs_epi_clear(struct rs_ept_instance *i);

/* With i locked: puts r on the pending list (once). */
void rs_epi_pend(struct rs_ept_instance *i, struct rs_ept_record *r);

/* With i locked: takes r off the pending list. */
void rs_epi_unpend(struct rs_ept_instance *i, struct rs_ept_record *r);

/* With i locked: arms r's timer at when_ms (RS_NEVER: disarms it). */
void rs_epi_timer(struct rs_ept_instance *i, struct rs_ept_record *r,
    int64_t when_ms);

/*
 * With i locked: r must be looked at by when_ms (RS_NEVER: never).  Lazy:
 * a timer already due no later is left as it is, since a wait that finds
 * a timer due looks at the socket again and moves the timer on.
 */
void rs_epi_timer_by(struct rs_ept_instance *i, struct rs_ept_record *r,
    int64_t when_ms);

/*
 * With i locked: makes the kernel hold mode for r: the program's
 * registration, the tagged EPOLLOUT of a pending connect, or nothing.
 * Keeps the tagged count.  Returns 0 or -errno of the epoll_ctl.
 */
int rs_epi_set_kernel(struct rs_ept_instance *i, struct rs_ept_record *r,
    enum rs_ept_kernel mode);

/*
 * With i locked: r's tagged edge-triggered registration for a connect
 * (RS_EPT_TAGGED) has just reported the completion, or the one for an
 * HTTP response being judged (RS_EPT_TAGGED_IN) the response, which the
 * program is shown: it stays in the kernel as the program's own, its events
 * translated by the waits, until the program's next epoll_ctl on it (or
 * its close) puts the program's registration back.  Putting it back now
 * would be an EPOLL_CTL_MOD, which re-arms an edge-triggered registration
 * of a ready socket: the kernel would report the edge a second time
 * (ep_modify() queues an item whose poll is ready).  The program's own
 * MOD re-arms it the same way without the library.  Returns whether r
 * could be kept so (its tagged registration is edge-triggered).
 */
bool rs_epi_relay(struct rs_ept_record *r);

/* epoll_ctl through libc, -errno on failure; errno is left alone. */
int rs_epi_kctl(int epfd, int op, int fd, uint32_t events, epoll_data_t d);

#endif /* RS_EPOLLINST_H */
